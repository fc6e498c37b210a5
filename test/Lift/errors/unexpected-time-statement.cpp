// Other work in the time loop.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, int n, int steps, double &total) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
      v[i] = u[i - 1] + u[i + 1];
    std::swap(u, v);
// CHECK: [[FILE]]:[[@LINE+1]]:5: error: unexpected statement in the time loop; it may hold only the loop nest and the buffer swap
    total += u[1];
  }
}
