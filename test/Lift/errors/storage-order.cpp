// A loop nest that walks the array column by column.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
void f(double (*u)[64], double (*v)[64], int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < 63; ++j)
// CHECK: [[FILE]]:[[@LINE+1]]:9: error: 'v' is stored with 'i' varying fastest, but the innermost loop runs over 'j'; the loops must nest in the array's storage order, slowest axis outermost
        v[j][i] = u[j][i];
    std::swap(u, v);
  }
}
