// An index loaded from memory: the point read depends on the data.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, const int *idx, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
// CHECK: [[FILE]]:[[@LINE+1]]:16: error: data-dependent index: the index of 'u' reads memory ('idx[i]'); a stencil reads at constant offsets from the loop point
      v[i] = u[idx[i]];
    std::swap(u, v);
  }
}
