// Four spatial loops.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double *u, double *v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
// CHECK: [[FILE]]:[[@LINE+1]]:5: error: the nest has 4 loops; a stencil has 1 to 3 dimensions
    for (int a = 1; a < n; ++a)
      for (int b = 1; b < n; ++b)
        for (int c = 1; c < n; ++c)
          for (int d = 1; d < n; ++d)
            v[((a * n + b) * n + c) * n + d] = u[((a * n + b) * n + c) * n + d];
    std::swap(u, v);
  }
}
