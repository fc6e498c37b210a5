// An in-place update (Gauss-Seidel): the nest reads the array it writes.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
// CHECK: [[FILE]]:[[@LINE+2]]:7: error: aliasing write: the nest writes 'v' and also reads it; compute into a second buffer and swap the two after the nest
// CHECK: [[FILE]]:[[@LINE+1]]:21: note: 'v' is read here
      v[i] = 0.5 * (v[i - 1] + u[i + 1]);
    std::swap(u, v);
  }
}
