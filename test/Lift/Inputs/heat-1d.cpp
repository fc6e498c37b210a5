// heat-1d: the 3-point 1-D heat stencil, as a naive loop over a
// std::vector. The ends are never written: they stay at their initial
// values, the `fixed` boundary of the language.
#include <utility>
#include <vector>

void heat1d(std::vector<double> &u, std::vector<double> &v, int steps) {
  const int n = static_cast<int>(u.size());
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
      v[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1];
    std::swap(u, v);
  }
}

#ifdef STENCIL_LIFT_HARNESS
#include "harness.h"

int main(int argc, char **argv) {
  lift_harness::Run run(argc, argv, 1);
  std::vector<double> u(run.n(0)), v;
  run.fill(u.data(), [&](long long i, long long, long long) { return i; });
  v = u;
  heat1d(u, v, static_cast<int>(run.steps()));
  run.report("heat1d_stencil", "u", u.data(),
             [&](long long i, long long, long long) { return i; });
  run.dump(u.data(), u.size());
  run.dump(v.data(), v.size());
  return 0;
}
#endif
