// The spatial range grows with the time step: not one grid for all steps.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
// CHECK: [[FILE]]:[[@LINE+1]]:27: error: the bounds of the loop over 'i' depend on 't'; a stencil runs over a rectangular box
    for (int i = 1; i < n - t; ++i)
      v[i] = u[i - 1] + u[i + 1];
    std::swap(u, v);
  }
}
