// Runs the generated kernels of Inputs/heat-periodic.st on the CPU
// (test/emulation) for `steps` steps from random data in [0, 1) on an
// n0 x n1 periodic grid, and checks that the grid's mean drifts by no more
// than rounding (docs/language.md §6.4): each step rounds every new value
// at most (taps + 2) times in f32 (the weight, `taps` accumulations, the
// store), a relative error of rho = (taps + 2) * 2^-24 of the values it
// sums; errors of either sign add up like a random walk, sqrt(steps) * rho.
// A scheme whose weights sum to 1 + e instead drifts by steps * e, which
// for independently rounded weights (e = 1.49e-8) is 3.5 times this bound
// at 10^4 steps.
#include "heat-periodic.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  const long long n0 = std::atoll(argv[1]), n1 = std::atoll(argv[2]),
                  steps = std::atoll(argv[3]);
  const long long points = n0 * n1;
  std::vector<float> host(points);
  unsigned long long state = 12345;
  double before = 0;
  for (float &x : host) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<float>((state >> 40) * 0x1.0p-24);
    before += x;
  }
  before /= points;
  float *u = nullptr;
  if (cudaMalloc(reinterpret_cast<void **>(&u), points * sizeof(float)) !=
          cudaSuccess ||
      cudaMemcpy(u, host.data(), points * sizeof(float),
                 cudaMemcpyHostToDevice) != cudaSuccess ||
      heat_periodic::run(u, n0, n1, steps) != cudaSuccess ||
      cudaMemcpy(host.data(), u, points * sizeof(float),
                 cudaMemcpyDeviceToHost) != cudaSuccess) {
    std::printf("CUDA call failed\n");
    return 1;
  }
  double after = 0;
  for (float x : host)
    after += x;
  after /= points;
  const int taps = 5;
  const double drift = std::fabs(after - before) / before;
  const double bound =
      std::sqrt(static_cast<double>(steps)) * (taps + 2) * 0x1.0p-24;
  std::printf("mean drift %.3e after %lld steps (rounding bound %.3e): %s\n",
              drift, steps, bound, drift <= bound ? "PASS" : "FAIL");
  return drift <= bound ? 0 : 1;
}
