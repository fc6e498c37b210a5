// A vector of vectors: each row is its own allocation.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
#include <vector>
void f(std::vector<std::vector<double>> &u, std::vector<std::vector<double>> &v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < n - 1; ++j)
// CHECK: [[FILE]]:[[@LINE+1]]:9: error: the rows of 'v' are not contiguous (a vector of vectors or a pointer to pointers); use one flat array with linearized indices
        v[i][j] = u[i][j - 1] + u[i][j + 1];
    u.swap(v);
  }
}
