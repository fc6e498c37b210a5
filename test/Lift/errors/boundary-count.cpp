// Neither one condition nor one per axis.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, int n, int steps) {
// CHECK: [[FILE]]:[[@LINE+1]]:17: error: boundary lists 2 conditions for a 1-D nest; give one, or one per axis
#pragma stencil boundary(fixed, clamp)
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
      v[i] = u[i - 1] + u[i + 1];
    std::swap(u, v);
  }
}
