// A triangular nest.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
// CHECK: [[FILE]]:[[@LINE+1]]:27: error: the bounds of the loop over 'j' depend on 'i'; a stencil runs over a rectangular box
      for (int j = 1; j < i; ++j)
        v[i * n + j] = u[i * n + j - 1];
    std::swap(u, v);
  }
}
