// box-2d49p: a 7x7 box of uniform weight over global C arrays of fixed
// size, the 49 terms written out. A scratch array takes the new values and
// the interior is copied back; the band of width 3 is never written.
#define N0 40
#define N1 35

float A[N0][N1], B[N0][N1];

void box2d49p(int steps) {
  const float w = 1.0f / 49.0f;
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 3; i < N0 - 3; ++i)
      for (int j = 3; j < N1 - 3; ++j)
        B[i][j] = w *
                   (A[i - 3][j - 3] + A[i - 3][j - 2] + A[i - 3][j - 1] + A[i - 3][j] +
                    A[i - 3][j + 1] + A[i - 3][j + 2] + A[i - 3][j + 3] +
                    A[i - 2][j - 3] + A[i - 2][j - 2] + A[i - 2][j - 1] + A[i - 2][j] +
                    A[i - 2][j + 1] + A[i - 2][j + 2] + A[i - 2][j + 3] +
                    A[i - 1][j - 3] + A[i - 1][j - 2] + A[i - 1][j - 1] + A[i - 1][j] +
                    A[i - 1][j + 1] + A[i - 1][j + 2] + A[i - 1][j + 3] +
                    A[i][j - 3] + A[i][j - 2] + A[i][j - 1] + A[i][j] +
                    A[i][j + 1] + A[i][j + 2] + A[i][j + 3] +
                    A[i + 1][j - 3] + A[i + 1][j - 2] + A[i + 1][j - 1] + A[i + 1][j] +
                    A[i + 1][j + 1] + A[i + 1][j + 2] + A[i + 1][j + 3] +
                    A[i + 2][j - 3] + A[i + 2][j - 2] + A[i + 2][j - 1] + A[i + 2][j] +
                    A[i + 2][j + 1] + A[i + 2][j + 2] + A[i + 2][j + 3] +
                    A[i + 3][j - 3] + A[i + 3][j - 2] + A[i + 3][j - 1] + A[i + 3][j] +
                    A[i + 3][j + 1] + A[i + 3][j + 2] + A[i + 3][j + 3]);
    for (int i = 3; i < N0 - 3; ++i)
      for (int j = 3; j < N1 - 3; ++j)
        A[i][j] = B[i][j];
  }
}

#ifdef STENCIL_LIFT_HARNESS
#include "harness.h"

int main(int argc, char **argv) {
  lift_harness::Run run(argc, argv, 2);
  if (run.n(0) != N0 || run.n(1) != N1)
    return 2;
  for (auto &row : B)
    for (float &x : row)
      x = static_cast<float>(lift_harness::Run::poison());
  auto at = [](long long i, long long j, long long) { return i * N1 + j; };
  run.fill(&A[0][0], at);
  box2d49p(static_cast<int>(run.steps()));
  run.report("box2d49p_stencil", "A", &A[0][0], at);
  run.dump(&A[0][0], N0 * N1);
  run.dump(&B[0][0], N0 * N1);
  return 0;
}
#endif
