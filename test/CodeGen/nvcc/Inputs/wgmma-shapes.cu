//===- wgmma-shapes.cu - Every wrapper of stencilc/wgmma.cuh, instantiated ===//
//
// Compiled by test/CodeGen/nvcc/wgmma.test: one kernel per operand type
// calls its wrapper for every N, in increasing order, so that the PTX shows
// each wgmma shape once, in that order.
//
//===----------------------------------------------------------------------===//

#include "stencilc/wgmma.cuh"

using namespace stencilc::rt::wgmma;

namespace {

/// Runs the wrapper for one N on a zero accumulator and stores the result,
/// so that nothing is optimized away.
template <int N, class Mma>
__device__ void one(float *out, std::uint64_t a, std::uint64_t b, Mma mma) {
  float d[N / 2] = {};
  fenceOperands(d);
  fence();
  mma(d, a, b);
  commit();
  wait<0>();
  fenceOperands(d);
  for (int i = 0; i < N / 2; ++i)
    out[i * 128 + threadIdx.x] += d[i];
}

template <template <int> class Op>
__device__ void allN(float *out, std::uint64_t a, std::uint64_t b) {
  one<8>(out, a, b, Op<8>());
  one<16>(out, a, b, Op<16>());
  one<32>(out, a, b, Op<32>());
  one<64>(out, a, b, Op<64>());
  one<128>(out, a, b, Op<128>());
  one<256>(out, a, b, Op<256>());
}

template <int N> struct F16 {
  __device__ void operator()(float (&d)[N / 2], std::uint64_t a,
                             std::uint64_t b) const {
    mma_f16<N>(d, a, b, true);
  }
};
template <int N> struct BF16 {
  __device__ void operator()(float (&d)[N / 2], std::uint64_t a,
                             std::uint64_t b) const {
    mma_bf16<N>(d, a, b, false);
  }
};
template <int N> struct TF32 {
  __device__ void operator()(float (&d)[N / 2], std::uint64_t a,
                             std::uint64_t b) const {
    mma_tf32<N>(d, a, b, true);
  }
};
template <int N> struct SpF16 {
  __device__ void operator()(float (&d)[N / 2], std::uint64_t a,
                             std::uint64_t b) const {
    mma_sp_f16<N, 0>(d, a, b, 0x44444444u, true);
  }
};
template <int N> struct SpBF16 {
  __device__ void operator()(float (&d)[N / 2], std::uint64_t a,
                             std::uint64_t b) const {
    mma_sp_bf16<N, 1>(d, a, b, 0xEEEEEEEEu, true);
  }
};

} // namespace

__global__ void wgmmaF16(float *out, std::uint64_t a, std::uint64_t b) {
  allN<F16>(out, a, b);
}
__global__ void wgmmaBF16(float *out, std::uint64_t a, std::uint64_t b) {
  allN<BF16>(out, a, b);
}
__global__ void wgmmaTF32(float *out, std::uint64_t a, std::uint64_t b) {
  allN<TF32>(out, a, b);
}
__global__ void wgmmaSpF16(float *out, std::uint64_t a, std::uint64_t b) {
  allN<SpF16>(out, a, b);
}
__global__ void wgmmaSpBF16(float *out, std::uint64_t a, std::uint64_t b) {
  allN<SpBF16>(out, a, b);
}

/// The descriptor, fences and waits with other arguments.
__global__ void wgmmaSync(float *out) {
  __shared__ __align__(1024) unsigned char tile[64 * 128];
  tile[threadIdx.x] = 1;
  fenceSharedWrites();
  __syncthreads();
  constexpr KMajorTile kTile{Swizzle::B128, 64, 128};
  float d[4] = {};
  fence();
  mma_f16<8>(d, descriptor(tile, kTile, 32), descriptor(tile, kTile, 64),
             false);
  commit();
  wait<1>();
  wait<0>();
  fenceOperands(d);
  out[threadIdx.x] = d[0] + d[1] + d[2] + d[3];
}
