// Three updates in one step, each reading what the one before it wrote in
// the same step (fdtd-2d without its source term; our own code).
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#define NX 20
#define NY 30
void fields(int tmax, double ex[NX][NY], double ey[NX][NY], double hz[NX][NY]) {
#pragma stencil
  for (int t = 0; t < tmax; t++) {
    for (int i = 1; i < NX; i++)
      for (int j = 0; j < NY; j++)
        ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);
    for (int i = 0; i < NX; i++)
      for (int j = 1; j < NY; j++)
        ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);
// CHECK: [[FILE]]:[[@LINE+1]]:5: error: the time loop holds 3 loop nests; stencil-lift lifts one nest followed by its buffer exchange, or two sweeps of one stencil (A to B, then B to A)
    for (int i = 0; i < NX - 1; i++)
      for (int j = 0; j < NY - 1; j++)
        hz[i][j] = hz[i][j] - 0.7 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
  }
}
