// The leapfrog scheme for the 2-D acoustic wave equation,
// u^{n+1} = 2 u^n - u^{n-1} + r^2 (discrete Laplacian of u^n) + s^n, with
// u = 0 outside the domain and a Ricker wavelet
// s^n = (1 - 2 a^2) exp(-a^2), a = pi f0 (n dt - t0), at one point, written
// here against dsl-examples/wave-source.st. The parameters are the
// example's defaults, which it holds as f32 values.
#include "reference-common.h"
#include "wave-source.h"

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  const long long n0 = std::atoll(argv[1]), n1 = std::atoll(argv[2]),
                  steps = std::atoll(argv[3]);
  const size_t points = n0 * n1;
  const double r2 = 0.25f, dt = 0.002f, f0 = 25.0f, t0 = 0.04f;
  const long long sx = 20, sy = 30;
  std::vector<double> u = randomField(points, 8, -0.01, 0.01);
  std::vector<double> prev = randomField(points, 9, -0.01, 0.01);
  double *du = toDevice(u), *dp = toDevice(prev);
  if (wave2d::run(du, dp, n0, n1, steps) != cudaSuccess) {
    std::printf("run failed\n");
    return 1;
  }
  auto value = [&](long long i, long long j) {
    return i < 0 || i >= n0 || j < 0 || j >= n1 ? 0.0 : u[i * n1 + j];
  };
  std::vector<double> next(points);
  for (long long n = 0; n < steps; ++n) {
    const double a = M_PI * f0 * (n * dt - t0);
    const double source = (1 - 2 * a * a) * std::exp(-a * a);
    for (long long i = 0; i < n0; ++i)
      for (long long j = 0; j < n1; ++j) {
        const double x = value(i, j);
        double v = 2 * x - prev[i * n1 + j] +
                   r2 * (value(i - 1, j) + value(i + 1, j) + value(i, j - 1) +
                         value(i, j + 1) - 4 * x);
        if (i == sx && j == sy)
          v += source;
        next[i * n1 + j] = v;
      }
    prev = u;
    std::swap(u, next);
  }
  bool ok = compare("u", toHost(du, points), u);
  ok &= compare("uprev", toHost(dp, points), prev);
  return ok ? 0 : 1;
}
