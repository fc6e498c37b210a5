// heat-3d: the 7-point 3-D heat stencil over std::vector<double> with
// linearized indices ((i * ny + j) * nz + k), a run-time coefficient, and
// the member swap of std::vector.
#include <vector>

void heat3d(std::vector<double> &u, std::vector<double> &v, int nx, int ny,
            int nz, int steps, double alpha = 0.125) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < nx - 1; ++i)
      for (int j = 1; j < ny - 1; ++j)
        for (int k = 1; k < nz - 1; ++k)
          v[(i * ny + j) * nz + k] =
              u[(i * ny + j) * nz + k] +
              alpha * (u[((i - 1) * ny + j) * nz + k] +
                       u[((i + 1) * ny + j) * nz + k] +
                       u[(i * ny + j - 1) * nz + k] +
                       u[(i * ny + j + 1) * nz + k] +
                       u[(i * ny + j) * nz + k - 1] +
                       u[(i * ny + j) * nz + k + 1] -
                       6 * u[(i * ny + j) * nz + k]);
    u.swap(v);
  }
}

#ifdef STENCIL_LIFT_HARNESS
#include "harness.h"

int main(int argc, char **argv) {
  lift_harness::Run run(argc, argv, 3);
  int nx = static_cast<int>(run.n(0)), ny = static_cast<int>(run.n(1)),
      nz = static_cast<int>(run.n(2));
  std::vector<double> u(static_cast<size_t>(nx) * ny * nz), v;
  auto at = [&](long long i, long long j, long long k) {
    return (i * ny + j) * nz + k;
  };
  run.fill(u.data(), at);
  v = u;
  heat3d(u, v, nx, ny, nz, static_cast<int>(run.steps()));
  run.report("heat3d_stencil", "u", u.data(), at);
  run.dump(u.data(), u.size());
  run.dump(v.data(), v.size());
  return 0;
}
#endif
