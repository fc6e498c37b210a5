// The swap exchanges other buffers than the one the nest writes.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, double *w, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i) {
      v[i] = u[i - 1] + u[i + 1];
// CHECK: [[FILE]]:[[@LINE+1]]:7: error: 'w' is written but no swap or copy pairs it with the array it is computed from
      w[i] = u[i];
    }
    std::swap(u, v);
  }
}
