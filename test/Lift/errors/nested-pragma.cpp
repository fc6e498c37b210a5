// A marked nest inside another marked nest.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, int n, int steps) {
#pragma stencil
  for (int r = 0; r < 2; ++r) {
    for (int q = 0; q < 1; ++q) {
// CHECK: [[FILE]]:[[@LINE+1]]:1: error: '#pragma stencil' inside a loop nest that another '#pragma stencil' marks
#pragma stencil
      for (int t = 0; t < steps; ++t) {
        for (int i = 1; i < n - 1; ++i)
          v[i] = u[i - 1] + u[i + 1];
        std::swap(u, v);
      }
    }
    std::swap(u, v);
  }
}
