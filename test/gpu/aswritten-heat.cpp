// The error of evaluating periodic heat (alpha = 0.2) as written, in f32,
// against float64: the yardstick of issue 22 for the generated kernels. The
// data are the --emit-main driver's (splitmix64 from seed 42, uniform in
// [0, 1), rounded to f32), the update is the folded expression of
// test/CodeGen/emulate/Inputs/heat-periodic.st in its order, and the error
// is the driver's: max|f32 - f64| / max|f64| after `steps` steps. Built
// with -ffp-contract=off, so every operation rounds on its own.
//   aswritten-heat N0 N1 STEPS
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

static uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

template <class T>
static void step(const std::vector<T> &u, std::vector<T> &out, long n0,
                 long n1) {
  const T alpha = static_cast<T>(0.2), four = 4;
  for (long i = 0; i < n0; ++i)
    for (long j = 0; j < n1; ++j) {
      auto at = [&](long a, long b) {
        return u[((a + n0) % n0) * n1 + (b + n1) % n1];
      };
      T c = at(i, j);
      T s = at(i - 1, j) + at(i + 1, j);
      s = s + at(i, j - 1);
      s = s + at(i, j + 1);
      s = s - four * c;
      out[i * n1 + j] = c + alpha * s;
    }
}

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  const long n0 = std::atol(argv[1]), n1 = std::atol(argv[2]),
             steps = std::atol(argv[3]);
  uint64_t seed = 42;
  std::vector<float> f(n0 * n1), fn(n0 * n1);
  std::vector<double> d(n0 * n1), dn(n0 * n1);
  for (long i = 0; i < n0 * n1; ++i) {
    f[i] = static_cast<float>(static_cast<double>(nextRandom(seed) >> 11) *
                              0x1.0p-53);
    d[i] = f[i];
  }
  for (long s = 0; s < steps; ++s) {
    step(f, fn, n0, n1);
    step(d, dn, n0, n1);
    f.swap(fn);
    d.swap(dn);
  }
  double maxRef = 0, maxDiff = 0;
  for (long i = 0; i < n0 * n1; ++i) {
    maxRef = std::max(maxRef, std::fabs(d[i]));
    maxDiff = std::max(maxDiff, std::fabs(f[i] - d[i]));
  }
  std::printf("as written in f32: max relative error %.3e after %ld steps\n",
              maxDiff / maxRef, steps);
}
