// A branch in the loop body.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i) {
// CHECK: [[FILE]]:[[@LINE+1]]:7: error: unsupported statement in the loop nest; the innermost loop may hold only array assignments and local constants
      if (u[i] > 0)
        v[i] = u[i - 1] + u[i + 1];
    }
    std::swap(u, v);
  }
}
