/* pb-jacobi-2d: a 5-point Jacobi sweep written the way PolyBench/C writes
 * its kernels (our own code): element type and constants through macros,
 * loop bounds through a macro that picks the run-time size, arrays as
 * macro-built fixed-size parameters, and the two-sweep idiom: A into B,
 * then B back into A, in one trip of the time loop. The sizes come from
 * -DGRID_N and -DTRIPS; main() starts A and B with equal edges, or with
 * different ones when its second argument is "differ", and writes both
 * arrays to the file its first argument names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GRID_N
#define GRID_N 24
#endif
#ifndef TRIPS
#define TRIPS 3
#endif
#define DATA_TYPE double
#define SCALAR_VAL(x) x
#define PAD 0
/* The fixed size for the type, the run-time one for the loops. */
#define RUNTIME_BOUND(fixed, runtime) runtime
#define _PB_N RUNTIME_BOUND(GRID_N, n)
#define _PB_TSTEPS RUNTIME_BOUND(TRIPS, tsteps)
#define ARRAY_2D(name, d0, d1) name[d0 + PAD][d1 + PAD]

static void kernel_sweeps(int tsteps, int n, DATA_TYPE ARRAY_2D(A, GRID_N, GRID_N),
                          DATA_TYPE ARRAY_2D(B, GRID_N, GRID_N)) {
  int t, i, j;
#pragma stencil
  for (t = 0; t < _PB_TSTEPS; t++) {
    for (i = 1; i < _PB_N - 1; i++)
      for (j = 1; j < _PB_N - 1; j++)
        B[i][j] = SCALAR_VAL(0.2) * (A[i][j] + A[i][j - 1] + A[i][1 + j] +
                                     A[1 + i][j] + A[i - 1][j]);
    for (i = 1; i < _PB_N - 1; i++)
      for (j = 1; j < _PB_N - 1; j++)
        A[i][j] = SCALAR_VAL(0.2) * (B[i][j] + B[i][j - 1] + B[i][1 + j] +
                                     B[1 + i][j] + B[i - 1][j]);
  }
}

int main(int argc, char **argv) {
  int n = GRID_N, tsteps = TRIPS, i, j;
  DATA_TYPE(*A)[GRID_N + PAD] = (DATA_TYPE(*)[GRID_N + PAD])malloc(
      sizeof(DATA_TYPE) * (GRID_N + PAD) * (GRID_N + PAD));
  DATA_TYPE(*B)[GRID_N + PAD] = (DATA_TYPE(*)[GRID_N + PAD])malloc(
      sizeof(DATA_TYPE) * (GRID_N + PAD) * (GRID_N + PAD));
  int differ = argc > 2 && strcmp(argv[2], "differ") == 0;
  if (argc < 2 || !A || !B)
    return 2;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      A[i][j] = (DATA_TYPE)((i * 5 + j * 3) % 11);
      B[i][j] = differ ? (DATA_TYPE)((i + 2 * j) % 7) : A[i][j];
    }
  kernel_sweeps(tsteps, n, A, B);
  FILE *out = fopen(argv[1], "wb");
  if (!out)
    return 2;
  fwrite(A, sizeof(DATA_TYPE), (size_t)n * (GRID_N + PAD), out);
  fwrite(B, sizeof(DATA_TYPE), (size_t)n * (GRID_N + PAD), out);
  fclose(out);
  free(A);
  free(B);
  return 0;
}
