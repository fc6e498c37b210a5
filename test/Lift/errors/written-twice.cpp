// Two writes to one array.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i) {
      v[i] = u[i - 1];
// CHECK: [[FILE]]:[[@LINE+2]]:7: error: 'v' is written twice in the nest
// CHECK: [[FILE]]:[[@LINE-2]]:7: note: the first write is here
      v[i] = u[i + 1];
    }
    std::swap(u, v);
  }
}
