// First-order upwind (donor-cell) advection in the textbook form
// q_new = q - c (u+ (q_i - q_{i-1}) + u- (q_{i+1} - q_i)), u+ = max(u, 0),
// u- = min(u, 0), in x and y, written here against
// dsl-examples/upwind-2d.st on a doubly periodic n0 x n1 domain (x is axis
// 1), with velocities of both signs.
#include "reference-common.h"
#include "upwind-2d.h"

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  const long long n0 = std::atoll(argv[1]), n1 = std::atoll(argv[2]),
                  steps = std::atoll(argv[3]);
  const size_t points = n0 * n1;
  std::vector<double> q = randomField(points, 3, 0, 1);
  const std::vector<double> vx = randomField(points, 4, -1, 1);
  const std::vector<double> vy = randomField(points, 5, -1, 1);
  double *dq = toDevice(q), *dvx = toDevice(vx), *dvy = toDevice(vy);
  const double c = static_cast<float>(0.4); // the example's f32 default
  if (upwind2d::run(dq, dvx, dvy, n0, n1, steps) != cudaSuccess) {
    std::printf("run failed\n");
    return 1;
  }
  auto at = [&](long long i, long long j) {
    i = (i % n0 + n0) % n0;
    j = (j % n1 + n1) % n1;
    return i * n1 + j;
  };
  std::vector<double> next(points);
  for (long long s = 0; s < steps; ++s) {
    for (long long i = 0; i < n0; ++i)
      for (long long j = 0; j < n1; ++j) {
        const double u = vx[at(i, j)], v = vy[at(i, j)], x = q[at(i, j)];
        const double fx = std::max(u, 0.0) * (x - q[at(i, j - 1)]) +
                          std::min(u, 0.0) * (q[at(i, j + 1)] - x);
        const double fy = std::max(v, 0.0) * (x - q[at(i - 1, j)]) +
                          std::min(v, 0.0) * (q[at(i + 1, j)] - x);
        next[at(i, j)] = x - c * (fx + fy);
      }
    std::swap(q, next);
  }
  return compare("q", toHost(dq, points), q) ? 0 : 1;
}
