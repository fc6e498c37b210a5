// Input of test/CodeGen/nvcc/hopper-errors.test: a multicast TMA load,
// which plain sm_90 code may not use.
#include <stencilc/hopper.cuh>

__global__ void multicast(const __grid_constant__ CUtensorMap map) {
  __shared__ alignas(stencilc::rt::hopper::kTmaAlign) float box[8][32];
  __shared__ std::uint64_t bar;
  stencilc::rt::hopper::tmaLoadMulticast(box, &map, &bar, 3, 0, 0);
}
