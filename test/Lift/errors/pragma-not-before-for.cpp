// The pragma marks a statement that is not a loop.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
void f(double *u, int n) {
// CHECK: [[FILE]]:[[@LINE+1]]:1: error: '#pragma stencil' must be followed by a for loop
#pragma stencil
  u[0] = 1;
}
