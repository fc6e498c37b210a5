// A source clang rejects is not lifted: clang's own errors are shown, and
// nothing is written or rewritten.
// RUN: rm -rf %t && mkdir %t && cp %s %t/in.cpp
// RUN: not %stencil-lift %t/in.cpp -o %t/out.st --rewrite 2>&1 | FileCheck %s
// RUN: cmp %s %t/in.cpp
// RUN: ls %t | FileCheck %s --check-prefix=LS --implicit-check-not=out
// CHECK: error: use of undeclared identifier 'w'
// LS: in.cpp
#include <utility>
void f(double *u, double *v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
      v[i] = u[i - 1] + w[i + 1];
    std::swap(u, v);
  }
}
