// A call the lifter cannot see into.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
double source(double x);
void f(double *u, double *v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
// CHECK: [[FILE]]:[[@LINE+1]]:21: error: call to 'source' may have side effects; a stencil update may call only sqrt, fabs, fmin, fmax, std::min, std::max and pow
      v[i] = u[i] + source(u[i - 1]);
    std::swap(u, v);
  }
}
