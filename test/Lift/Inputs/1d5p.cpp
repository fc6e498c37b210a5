// 1d5p: a 5-point 1-D star of radius 2 over raw float pointers, with its
// weights as parameters and two ghost cells at each end held at zero: the
// loop runs over the n interior points, and boundary(dirichlet(0)) says
// what the ghost cells hold. The buffers are swapped through a temporary.

void star1d5p(float *u, float *v, long n, int steps, float c0 = 0.5f,
              float c1 = 0.125f, float c2 = 0.0625f) {
#pragma stencil boundary(dirichlet(0))
  for (int t = 0; t < steps; ++t) {
    for (long i = 2; i < n + 2; ++i)
      v[i] = c2 * u[i - 2] + c1 * u[i - 1] + c0 * u[i] + c1 * u[i + 1] +
             c2 * u[i + 2];
    float *tmp = u;
    u = v;
    v = tmp;
  }
}

#ifdef STENCIL_LIFT_HARNESS
#include "harness.h"
#include <vector>

int main(int argc, char **argv) {
  lift_harness::Run run(argc, argv, 1);
  long n = run.n(0);
  std::vector<float> a(n + 4, 0.0f), b;
  auto at = [](long long i, long long, long long) { return i + 2; };
  run.fill(a.data(), at);
  b = a;
  star1d5p(a.data(), b.data(), n, static_cast<int>(run.steps()));
  run.report("star1d5p_stencil", "u", run.steps() % 2 ? b.data() : a.data(),
             at);
  run.dump(a.data(), a.size());
  run.dump(b.data(), b.size());
  return 0;
}
#endif
