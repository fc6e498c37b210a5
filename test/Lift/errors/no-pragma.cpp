// A source without '#pragma stencil' has nothing to lift; that is an error,
// so a build rule that expects a .st file does not go on without one.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st 2>&1 | FileCheck %s -DFILE=%s --strict-whitespace --implicit-check-not=error:
// RUN: ls %t | count 0
// CHECK: {{^}}stencil-lift: error: [[FILE]]: no loop nest is marked '#pragma stencil'{{$}}
void f(double *u, int n) {
  for (int i = 0; i < n; ++i)
    u[i] = 0;
}
