// varcoef-2d: nonlinear diffusion with a read-only coefficient array k,
// clipped with std::min and std::fmax; its constants come from a constexpr
// struct (read as parameters) and a default argument. The time loop counts
// down, so the pragma gives the step count.
#include <algorithm>
#include <cmath>
#include <utility>

struct Physics {
  double dt, cap;
};
constexpr Physics kPhysics{0.125, 0.75};

void varcoef2d(double *u, double *v, const double *k, int nx, int ny,
               int nsteps, double floor = 0.0625) {
#pragma stencil steps(nsteps)
  for (int t = nsteps; t > 0; --t) {
    for (int i = 1; i < nx - 1; ++i)
      for (int j = 1; j < ny - 1; ++j) {
        const int c = i * ny + j;
        double lap = u[c - ny] + u[c + ny] + u[c - 1] + u[c + 1] - 4 * u[c];
        v[c] = std::min(std::fmax(u[c] + kPhysics.dt * k[c] * lap, floor),
                        kPhysics.cap) +
               0.0625 * std::sqrt(std::pow(u[c], 2));
      }
    std::swap(u, v);
  }
}

#ifdef STENCIL_LIFT_HARNESS
#include "harness.h"
#include <vector>

int main(int argc, char **argv) {
  lift_harness::Run run(argc, argv, 2);
  int nx = static_cast<int>(run.n(0)), ny = static_cast<int>(run.n(1));
  std::vector<double> a(nx * ny), k(nx * ny), b;
  auto at = [&](long long i, long long j, long long) { return i * ny + j; };
  run.fill(a.data(), at);
  run.fill(k.data(), at);
  b = a;
  varcoef2d(a.data(), b.data(), k.data(), nx, ny,
            static_cast<int>(run.steps()));
  run.report("varcoef2d_stencil", "u", run.steps() % 2 ? b.data() : a.data(),
             at);
  run.dump(a.data(), a.size());
  run.dump(b.data(), b.size());
  run.dump(k.data(), k.size());
  return 0;
}
#endif
