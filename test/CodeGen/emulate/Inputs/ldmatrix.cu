// The CPU emulation's ldmatrix.x4 (test/emulation) against the PTX ISA's
// definition (9.7.14.5.15): lane 8m + r gives the address of row r of matrix
// m, and lane 4g + t gets in register m elements 2t and 2t + 1 of row g of
// matrix m. Rows sit at scattered, 16-byte aligned places of a shared
// buffer of 16-bit values that encode (matrix, row, element).
#include "stencilc/runtime.cuh"

#include <cstdio>

static int failures = 0;

__global__ void probe() {
  STENCILC_DYNAMIC_SHARED(smem);
  unsigned short *const buf = reinterpret_cast<unsigned short *>(smem);
  const int lane = threadIdx.x % 32;
  // Row r of matrix m at row (5 m + 3 r) % 32 of a buffer of 32 rows of
  // 24 elements, starting at element 8 (m % 2) of that row.
  auto at = [](int m, int r) { return (5 * m + 3 * r) % 32 * 24 + 8 * (m % 2); };
  for (int m = 0; m < 4; ++m)
    for (int e = 0; e < 8; ++e)
      buf[at(m, lane % 8) + e] = static_cast<unsigned short>(m << 8 | (lane % 8) << 4 | e);
  __syncthreads();
  unsigned d[4];
  stencilc::rt::tc::ldmatrix_x4(d, buf + at(lane / 8, lane % 8));
  const int g = lane / 4, t = lane % 4;
  for (int m = 0; m < 4; ++m) {
    const unsigned want = (m << 8 | g << 4 | 2 * t) | (m << 8 | g << 4 | (2 * t + 1)) << 16;
    if (d[m] != want) {
      std::printf("lane %d register %d: %08x, expected %08x\n", lane, m, d[m], want);
      ++failures;
    }
  }
}

int main() {
  stencilc_emu::launch(probe, 1, 32, 32 * 24 * 2);
  std::printf("ldmatrix.x4: %s\n", failures ? "FAIL" : "PASS");
  return failures != 0;
}
