// pow with a fractional exponent.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <cmath>
#include <utility>
void f(double *u, double *v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
// CHECK: [[FILE]]:[[@LINE+1]]:29: error: pow needs an integer exponent from -64 to 64
      v[i] = std::pow(u[i], 1.5);
    std::swap(u, v);
  }
}
