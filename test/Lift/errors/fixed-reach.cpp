// Two updates that read different distances: with the fixed boundary one band cannot fit both.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, double *p, double *q, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i) {
      v[i] = u[i - 1] + u[i + 1];
// CHECK: [[FILE]]:[[@LINE+1]]:7: error: with the fixed boundary every update must read as far as the nest does: 'q' reaches -0:+0 along 'i', the nest -1:+1
      q[i] = 0.5 * p[i];
    }
    std::swap(u, v);
    std::swap(p, q);
  }
}
