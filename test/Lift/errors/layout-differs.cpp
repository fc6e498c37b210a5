// One array read with two row pitches.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, int n, int m, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < n - 1; ++j)
// CHECK: [[FILE]]:[[@LINE+2]]:39: error: the layout of 'u' differs between its accesses: row pitch 'm' here, 'n' before
// CHECK: [[FILE]]:[[@LINE+1]]:9: note: the earlier access is here
        v[i * n + j] = u[i * n + j] + u[i * m + j];
    std::swap(u, v);
  }
}
