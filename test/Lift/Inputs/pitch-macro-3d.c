/* pitch-macro-3d: one 7-point sweep per step over fixed-size 3-D array
 * parameters `double A[N][N][N]` and a copy-back, with the grid size N and
 * the step count STEPS compile-time macros. The rewrite must take the
 * pitches and the step count from N and STEPS, not from the values of the
 * build that was lifted: the test builds it with other -DN and -DSTEPS.
 * main() writes A and B to the file its first argument names. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 8
#endif
#ifndef STEPS
#define STEPS 2
#endif

static void smooth(double A[N][N][N], double B[N][N][N]) {
#pragma stencil
  for (int t = 0; t < STEPS; t++) {
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        for (int k = 1; k < N - 1; k++)
          B[i][j][k] = 0.25 * A[i][j][k] +
                       0.125 * (A[i - 1][j][k] + A[i + 1][j][k] + A[i][j - 1][k] +
                                A[i][j + 1][k] + A[i][j][k - 1] + A[i][j][k + 1]);
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        for (int k = 1; k < N - 1; k++)
          A[i][j][k] = B[i][j][k];
  }
}

int main(int argc, char **argv) {
  double(*A)[N][N] = (double(*)[N][N])malloc(sizeof(double) * N * N * N);
  double(*B)[N][N] = (double(*)[N][N])calloc((size_t)N * N * N, sizeof(double));
  if (argc < 2 || !A || !B)
    return 2;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++)
        A[i][j][k] = (double)((3 * i + j + 5 * k) % 8);
  smooth(A, B);
  FILE *out = fopen(argv[1], "wb");
  if (!out)
    return 2;
  fwrite(A, sizeof(double), (size_t)N * N * N, out);
  fwrite(B, sizeof(double), (size_t)N * N * N, out);
  fclose(out);
  free(A);
  free(B);
  return 0;
}
