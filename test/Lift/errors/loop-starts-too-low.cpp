// The loop starts at 0 but reads its left neighbour.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
// CHECK: [[FILE]]:[[@LINE+1]]:18: error: the loop over 'i' starts at 0 but the update reads 1 point(s) below it, outside the array
    for (int i = 0; i < n - 1; ++i)
      v[i] = u[i - 1] + u[i + 1];
    std::swap(u, v);
  }
}
