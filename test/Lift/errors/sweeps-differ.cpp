// Two sweeps per trip of the time loop that are not one stencil: the
// second weighs the centre differently.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#define N 64
void sweeps(int tsteps, int n, double A[N][N], double B[N][N]) {
#pragma stencil
  for (int t = 0; t < tsteps; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        B[i][j] = 0.25 * (A[i][j - 1] + A[i][j + 1] + A[i - 1][j] + A[i + 1][j]);
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
// CHECK: [[FILE]]:[[@LINE+1]]:19: error: the second sweep differs from the first: '0.5' where the first sweep has '0.25'; a time loop of two sweeps lifts only when the second is the first with its two arrays exchanged
        A[i][j] = 0.5 * (B[i][j - 1] + B[i][j + 1] + B[i - 1][j] + B[i + 1][j]);
  }
}
