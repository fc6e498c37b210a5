// A nest in a function template: its types are not known.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
template <typename T> void f(T *u, T *v, int n, int steps) {
// CHECK: [[FILE]]:[[@LINE+1]]:1: error: cannot lift a loop nest inside a template; move it into a function of concrete types
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
      v[i] = u[i - 1] + u[i + 1];
    std::swap(u, v);
  }
}
