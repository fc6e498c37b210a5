// fdtd-2d's shape (our own code): three field updates per step, the first
// preceded by a source term that reads a different element in every step.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#define NX 20
#define NY 30
void fields(int tmax, double ex[NX][NY], double ey[NX][NY], double hz[NX][NY],
            const double *pulse) {
#pragma stencil
  for (int t = 0; t < tmax; t++) {
    for (int j = 0; j < NY; j++)
// CHECK: [[FILE]]:[[@LINE+1]]:18: error: 'pulse[t]' depends on the time step 't'; a stencil applies the same update in every step, so a step-dependent source cannot be lifted
      ey[0][j] = pulse[t];
    for (int i = 1; i < NX; i++)
      for (int j = 0; j < NY; j++)
        ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);
    for (int i = 0; i < NX; i++)
      for (int j = 1; j < NY; j++)
        ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);
    for (int i = 0; i < NX - 1; i++)
      for (int j = 0; j < NY - 1; j++)
        hz[i][j] = hz[i][j] - 0.7 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
  }
}
