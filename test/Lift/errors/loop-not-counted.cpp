// A spatial loop with a stride of 2.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
// CHECK: [[FILE]]:[[@LINE+1]]:5: error: this loop does not count up by 1 to a bound; a stencil loop reads 'for (int i = a; i < b; ++i)'
    for (int i = 1; i < n - 1; i += 2)
      v[i] = u[i - 1] + u[i + 1];
    std::swap(u, v);
  }
}
