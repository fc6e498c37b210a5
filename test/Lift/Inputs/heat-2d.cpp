// heat-2d: the 5-point 2-D heat stencil over C arrays of NY columns, passed
// as pointers to rows and swapped with std::swap. The grid is nx x ny with
// ny <= NY: the columns past ny are padding the loop never touches, and the
// rewritten code copies rows of the pitch NY.
#include <utility>

constexpr int NY = 64;

void heat2d(double (*u)[NY], double (*v)[NY], int nx, int ny, int steps) {
#pragma stencil
  for (int t = 0; t < steps; t++) {
    for (int i = 1; i < nx - 1; i++)
      for (int j = 1; j < ny - 1; j++)
        v[i][j] = 0.5 * u[i][j] +
                  0.125 * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] +
                           u[i][j + 1]);
    std::swap(u, v);
  }
}

#ifdef STENCIL_LIFT_HARNESS
#include "harness.h"
#include <vector>

int main(int argc, char **argv) {
  lift_harness::Run run(argc, argv, 2);
  int nx = static_cast<int>(run.n(0)), ny = static_cast<int>(run.n(1));
  if (ny > NY)
    return 2;
  std::vector<double> a(nx * NY, lift_harness::Run::poison()), b;
  auto at = [](long long i, long long j, long long) { return i * NY + j; };
  run.fill(a.data(), at);
  b = a;
  auto rows = [](std::vector<double> &x) {
    return reinterpret_cast<double(*)[NY]>(x.data());
  };
  heat2d(rows(a), rows(b), nx, ny, static_cast<int>(run.steps()));
  run.report("heat2d_stencil", "u", run.steps() % 2 ? b.data() : a.data(),
             at);
  run.dump(a.data(), a.size());
  run.dump(b.data(), b.size());
  return 0;
}
#endif
