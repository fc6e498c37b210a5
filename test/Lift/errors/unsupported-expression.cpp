// A conditional expression.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
// CHECK: [[FILE]]:[[@LINE+1]]:14: error: cannot lift this expression; a stencil update uses + - * /, sqrt, fabs, fmin, fmax, std::min, std::max, pow, constants and scalar variables
      v[i] = u[i] > 0 ? u[i - 1] : u[i + 1];
    std::swap(u, v);
  }
}
