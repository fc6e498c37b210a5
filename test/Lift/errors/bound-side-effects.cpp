// A loop bound that calls a function: the lifted code would call it once, the loop once per iteration.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
int size();
void f(double *u, double *v, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
// CHECK: [[FILE]]:[[@LINE+1]]:25: error: the loop bound 'size()' may have side effects; the lifted code evaluates it once
    for (int i = 1; i < size(); ++i)
      v[i] = u[i - 1] + u[i + 1];
    std::swap(u, v);
  }
}
