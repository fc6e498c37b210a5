// Rodinia hotspot's shape (our own code): the time loop calls a function
// that sweeps the grid in blocks, with separate edge cases, then swaps the
// two pointers.
// RUN: rm -rf %t && mkdir %t
// RUN: not %stencil-lift %s -o %t/out.st --rewrite-output=%t/out.cpp 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=error:
// RUN: ls %t | count 0
void one_step(float *out, const float *in, const float *power, int rows,
              int cols, float k) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      int up = r > 0 ? r - 1 : r, down = r < rows - 1 ? r + 1 : r;
      out[r * cols + c] = in[r * cols + c] +
                          k * (power[r * cols + c] + in[up * cols + c] +
                               in[down * cols + c] - 2.f * in[r * cols + c]);
    }
}

void simulate(float *result, float *temp, const float *power, int rows,
              int cols, int iterations, float k) {
  float *out = result, *in = temp;
#pragma stencil
  for (int i = 0; i < iterations; i++) {
// CHECK: [[FILE]]:[[@LINE+1]]:5: error: the time loop calls 'one_step' where the loop nest should be; stencil-lift does not look into called functions: write the spatial loops in the time loop
    one_step(out, in, power, rows, cols, k);
    float *tmp = in;
    in = out;
    out = tmp;
  }
}
