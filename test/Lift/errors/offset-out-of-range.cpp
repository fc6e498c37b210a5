// A read 9 points away.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 9; i < n - 9; ++i)
// CHECK: [[FILE]]:[[@LINE+1]]:21: error: offset 9 of 'u' is out of range; a stencil reads at most 8 points away
      v[i] = u[i] + u[i + 9];
    std::swap(u, v);
  }
}
