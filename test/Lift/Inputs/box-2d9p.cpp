// box-2d9p: a 3x3 box over a std::vector<float> with linearized indices.
// The new values go to a scratch vector and are copied back: the scratch
// buffer's edges are never read, so they may hold anything.
#include <vector>

void box2d9p(std::vector<float> &u, std::vector<float> &tmp, int rows,
             int cols, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < rows - 1; ++i)
      for (int j = 1; j < cols - 1; ++j)
        tmp[i * cols + j] =
            0.0625f * u[(i - 1) * cols + j - 1] +
            0.125f * u[(i - 1) * cols + j] +
            0.0625f * u[(i - 1) * cols + j + 1] +
            0.125f * u[i * cols + j - 1] + 0.25f * u[i * cols + j] +
            0.125f * u[i * cols + j + 1] +
            0.0625f * u[(i + 1) * cols + j - 1] +
            0.125f * u[(i + 1) * cols + j] +
            0.0625f * u[(i + 1) * cols + j + 1];
    for (int i = 1; i < rows - 1; ++i)
      for (int j = 1; j < cols - 1; ++j)
        u[i * cols + j] = tmp[i * cols + j];
  }
}

#ifdef STENCIL_LIFT_HARNESS
#include "harness.h"

int main(int argc, char **argv) {
  lift_harness::Run run(argc, argv, 2);
  int rows = static_cast<int>(run.n(0)), cols = static_cast<int>(run.n(1));
  std::vector<float> u(rows * cols);
  std::vector<float> tmp(rows * cols, lift_harness::Run::poison());
  auto at = [&](long long i, long long j, long long) { return i * cols + j; };
  run.fill(u.data(), at);
  box2d9p(u, tmp, rows, cols, static_cast<int>(run.steps()));
  run.report("box2d9p_stencil", "u", u.data(), at);
  run.dump(u.data(), u.size());
  run.dump(tmp.data(), tmp.size());
  return 0;
}
#endif
