// star-2d13p: a radius-3 star over raw double pointers whose rows are
// `pitch` elements apart (pitch >= cols, as from an aligned allocator),
// indexed through a local linear index, with run-time weights.
#include <utility>

void star2d13p(double *u, double *v, long rows, long cols, long pitch,
               int steps, double w0 = 0.25, double w1 = 0.125,
               double w2 = 0.0625, double w3 = 0.0078125) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (long i = 3; i < rows - 3; ++i)
      for (long j = 3; j < cols - 3; ++j) {
        const long c = i * pitch + j;
        v[c] = w0 * u[c] +
               w1 * (u[c - pitch] + u[c + pitch] + u[c - 1] + u[c + 1]) +
               w2 * (u[c - 2 * pitch] + u[c + 2 * pitch] + u[c - 2] +
                     u[c + 2]) +
               w3 * (u[c - 3 * pitch] + u[c + 3 * pitch] + u[c - 3] +
                     u[c + 3]);
      }
    std::swap(u, v);
  }
}

#ifdef STENCIL_LIFT_HARNESS
#include "harness.h"
#include <vector>

int main(int argc, char **argv) {
  lift_harness::Run run(argc, argv, 2);
  long rows = run.n(0), cols = run.n(1), pitch = cols + 5;
  std::vector<double> a(rows * pitch, lift_harness::Run::poison()), b;
  auto at = [&](long long i, long long j, long long) { return i * pitch + j; };
  run.fill(a.data(), at);
  b = a;
  star2d13p(a.data(), b.data(), rows, cols, pitch,
            static_cast<int>(run.steps()));
  run.report("star2d13p_stencil", "u", run.steps() % 2 ? b.data() : a.data(),
             at);
  run.dump(a.data(), a.size());
  run.dump(b.data(), b.size());
  return 0;
}
#endif
