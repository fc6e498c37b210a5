// A boundary kind the language does not have.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
void f(double *u, double *v, int n, int steps) {
// CHECK: [[FILE]]:[[@LINE+1]]:26: error: unknown boundary 'wrap'; expected dirichlet(c), periodic, clamp or fixed
#pragma stencil boundary(wrap)
  for (int t = 0; t < steps; ++t) {
  }
}
