/* pb-heat-3d: the 3-D heat equation written the way PolyBench/C writes its
 * kernels (our own code): plain fixed-size 3-D array parameters
 * `double A[N][N][N]`, a time loop that counts 1..TSTEPS inclusive against
 * the compile-time constant, and two sweeps per trip (A into B, B into A).
 * The weights 0.125 and 2 are powers of two: on small integers the result
 * is exact in any order of the additions. -DN and -DTSTEPS set the sizes;
 * main() writes A and B to the file its first argument names. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 10
#endif
#ifndef TSTEPS
#define TSTEPS 3
#endif
#define SCALAR_VAL(x) x
#define _PB_N n

static void kernel_heat(int n, double A[N][N][N], double B[N][N][N]) {
  int t, i, j, k;
#pragma stencil
  for (t = 1; t <= TSTEPS; t++) {
    for (i = 1; i < _PB_N - 1; i++)
      for (j = 1; j < _PB_N - 1; j++)
        for (k = 1; k < _PB_N - 1; k++)
          B[i][j][k] =
              SCALAR_VAL(0.125) * (A[i + 1][j][k] - SCALAR_VAL(2.0) * A[i][j][k] + A[i - 1][j][k]) +
              SCALAR_VAL(0.125) * (A[i][j + 1][k] - SCALAR_VAL(2.0) * A[i][j][k] + A[i][j - 1][k]) +
              SCALAR_VAL(0.125) * (A[i][j][k + 1] - SCALAR_VAL(2.0) * A[i][j][k] + A[i][j][k - 1]) +
              A[i][j][k];
    for (i = 1; i < _PB_N - 1; i++)
      for (j = 1; j < _PB_N - 1; j++)
        for (k = 1; k < _PB_N - 1; k++)
          A[i][j][k] =
              SCALAR_VAL(0.125) * (B[i + 1][j][k] - SCALAR_VAL(2.0) * B[i][j][k] + B[i - 1][j][k]) +
              SCALAR_VAL(0.125) * (B[i][j + 1][k] - SCALAR_VAL(2.0) * B[i][j][k] + B[i][j - 1][k]) +
              SCALAR_VAL(0.125) * (B[i][j][k + 1] - SCALAR_VAL(2.0) * B[i][j][k] + B[i][j][k - 1]) +
              B[i][j][k];
  }
}

int main(int argc, char **argv) {
  int n = N, i, j, k;
  double(*A)[N][N] = (double(*)[N][N])malloc(sizeof(double) * N * N * N);
  double(*B)[N][N] = (double(*)[N][N])malloc(sizeof(double) * N * N * N);
  if (argc < 2 || !A || !B)
    return 2;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      for (k = 0; k < n; k++)
        A[i][j][k] = B[i][j][k] = (double)((i + 2 * j + 3 * (n - k)) % 9);
  kernel_heat(n, A, B);
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
