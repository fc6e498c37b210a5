// An array reached through a struct member.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <utility>
struct State { double *u; };
void f(State &s, double *u, double *v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
// CHECK: [[FILE]]:[[@LINE+1]]:23: error: arrays must be named variables; cannot lift the access through 's.u'
      v[i] = u[i] + s.u[i + 1];
    std::swap(u, v);
  }
}
