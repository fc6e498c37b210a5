// A float coefficient array in a double stencil.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, const float *k, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
// CHECK: [[FILE]]:[[@LINE+1]]:21: error: 'k' holds 'float' but 'v' holds 'double'; all arrays of a stencil share one element type
      v[i] = u[i] + k[i] * u[i + 1];
    std::swap(u, v);
  }
}
