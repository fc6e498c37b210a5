// A time loop over a floating-point clock.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, int n, double dt, double end) {
#pragma stencil
// CHECK: [[FILE]]:[[@LINE+1]]:3: error: cannot count the steps of this time loop; give them with '#pragma stencil steps(N)'
  for (double time = 0; time < end; time += dt) {
    for (int i = 1; i < n - 1; ++i)
      v[i] = u[i - 1] + u[i + 1];
    std::swap(u, v);
  }
}
