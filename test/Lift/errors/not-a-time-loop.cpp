// The pragma marks the spatial loop itself: there is no time loop and no swap.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
void f(double *u, double *v, int n) {
#pragma stencil
// CHECK: [[FILE]]:[[@LINE+1]]:3: error: the marked loop is not a time loop: its body must end by swapping the buffers (std::swap(u, unew)) or copying them back
  for (int i = 1; i < n - 1; ++i)
    v[i] = u[i - 1] + u[i + 1];
}
