// Two nests, the second one not liftable: the first is not rewritten
// either, with --rewrite in place the source stays byte for byte as it was,
// and no .st file appears.
// RUN: rm -rf %t && mkdir %t && cp %s %t/in.cpp
// RUN: not %stencil-lift %t/in.cpp -o %t/out.st --rewrite 2>&1 | FileCheck %s --implicit-check-not=error:
// RUN: cmp %s %t/in.cpp
// RUN: ls %t | FileCheck %s --check-prefix=LS --implicit-check-not=out
// CHECK: in.cpp:29:16: error: data-dependent index
// LS: in.cpp
#include <utility>
void good(double *u, double *v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
      v[i] = u[i - 1] + u[i + 1];
    std::swap(u, v);
  }
}

void bad(double *u, double *v, const int *idx, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
      // A gather: the index comes from memory. The error is reported at
      // idx[i], on the line below.
      //
      //
      //
      v[i] = u[idx[i]];
    std::swap(u, v);
  }
}
