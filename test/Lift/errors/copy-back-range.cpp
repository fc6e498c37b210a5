// A copy-back loop over a different range than the nest.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
void f(double *u, double *v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
      v[i] = u[i - 1] + u[i + 1];
// CHECK: [[FILE]]:[[@LINE+1]]:5: error: the copy-back loop must copy each computed point back, as in 'u[i] = unew[i]', over the loop nest's own range
    for (int i = 0; i < n; ++i)
      u[i] = v[i];
  }
}
