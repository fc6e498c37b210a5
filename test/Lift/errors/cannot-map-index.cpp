// A 1-D array read in a 2-D nest.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, const double *c, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < n - 1; ++j)
// CHECK: [[FILE]]:[[@LINE+1]]:24: error: cannot map the index of 'c' onto the 2-D nest: use one subscript per axis, or one linearized index such as i * pitch + j
        v[i * n + j] = c[j] * u[i * n + j];
    std::swap(u, v);
  }
}
