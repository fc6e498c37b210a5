// A clause the pragma does not have.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
void f(double *u, double *v, int n, int steps) {
// CHECK: [[FILE]]:[[@LINE+1]]:17: error: unknown clause 'fuse' in '#pragma stencil'; expected steps, boundary or target
#pragma stencil fuse(4)
  for (int t = 0; t < steps; ++t) {
  }
}
