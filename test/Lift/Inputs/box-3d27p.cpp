// box-3d27p: a 3x3x3 box over C arrays passed as pointers to planes, with
// local constants for the face, edge and corner sums. Axes 0 and 1 are
// held fixed at their edges; along axis 2 the loop covers the nz grid
// points between two ghost planes that hold 0.5.
#include <utility>

constexpr int NY = 16, NZ = 24;

void box3d27p(float (*u)[NY][NZ], float (*v)[NY][NZ], int nx, int ny,
              int nz, int steps) {
#pragma stencil boundary(fixed, fixed, dirichlet(0.5))
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < nx - 1; ++i)
      for (int j = 1; j < ny - 1; ++j)
        for (int k = 1; k < nz + 1; ++k) {
          float faces = u[i - 1][j][k] + u[i + 1][j][k] + u[i][j - 1][k] +
                        u[i][j + 1][k] + u[i][j][k - 1] + u[i][j][k + 1];
          float edges = u[i - 1][j - 1][k] + u[i - 1][j + 1][k] +
                        u[i + 1][j - 1][k] + u[i + 1][j + 1][k] +
                        u[i - 1][j][k - 1] + u[i - 1][j][k + 1] +
                        u[i + 1][j][k - 1] + u[i + 1][j][k + 1] +
                        u[i][j - 1][k - 1] + u[i][j - 1][k + 1] +
                        u[i][j + 1][k - 1] + u[i][j + 1][k + 1];
          float corners = u[i - 1][j - 1][k - 1] + u[i - 1][j - 1][k + 1] +
                          u[i - 1][j + 1][k - 1] + u[i - 1][j + 1][k + 1] +
                          u[i + 1][j - 1][k - 1] + u[i + 1][j - 1][k + 1] +
                          u[i + 1][j + 1][k - 1] + u[i + 1][j + 1][k + 1];
          v[i][j][k] = 0.125f * u[i][j][k] + 0.0625f * faces +
                       0.03125f * edges + 0.015625f * corners;
        }
    std::swap(u, v);
  }
}

#ifdef STENCIL_LIFT_HARNESS
#include "harness.h"
#include <vector>

int main(int argc, char **argv) {
  lift_harness::Run run(argc, argv, 3);
  int nx = static_cast<int>(run.n(0)), ny = static_cast<int>(run.n(1)),
      nz = static_cast<int>(run.n(2));
  if (ny > NY || nz + 2 > NZ)
    return 2;
  std::vector<float> a(static_cast<size_t>(nx) * NY * NZ,
                       static_cast<float>(lift_harness::Run::poison()));
  for (int i = 0; i < nx; ++i)
    for (int j = 0; j < ny; ++j)
      a[(i * NY + j) * NZ] = a[(i * NY + j) * NZ + nz + 1] = 0.5f;
  auto at = [](long long i, long long j, long long k) {
    return (i * NY + j) * NZ + k + 1;
  };
  run.fill(a.data(), at);
  std::vector<float> b = a;
  auto planes = [](std::vector<float> &x) {
    return reinterpret_cast<float(*)[NY][NZ]>(x.data());
  };
  box3d27p(planes(a), planes(b), nx, ny, nz, static_cast<int>(run.steps()));
  run.report("box3d27p_stencil", "u", run.steps() % 2 ? b.data() : a.data(),
             at);
  run.dump(a.data(), a.size());
  run.dump(b.data(), b.size());
  return 0;
}
#endif
