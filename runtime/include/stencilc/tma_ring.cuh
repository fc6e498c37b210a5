//===- tma_ring.cuh - A ring of shared planes that TMA fills ----*- CUDA -*-===//
//
// The Hopper piece of the 3-D star kernel (StarKernelEmitter.cpp; issue
// 25, item 1), built on hopper.cuh's mbarriers and TMA: a ring of NB plane
// buffers in shared memory, one mbarrier each, filled plane after plane
// (plane k into slot k % NB). For each plane one thread either issues the
// plane's box as one TMA copy (load) or, where the block writes the plane
// itself (through the boundary rules), arrives without bytes (skip), so
// that plane k always completes phase k / NB of its slot's barrier; every
// thread waits for plane k (wait) before the block barrier after which it
// reads the plane. The block barrier that follows a plane's last read also
// frees its slot: the ring needs no "empty" barriers.
//
// Where it compiles:
//  - nvcc, any GPU. kAvailable is true in device code for sm_90 and newer;
//    below, the functions compile to __trap() (hopper.cuh's
//    STENCILC_HOPPER_TRAP_BELOW_SM90) and a kernel must not call them: it
//    tests kAvailable, so a fat binary's older code takes its other path.
//    Each wrapper is hopper.cuh's instructions; nothing else is PTX here.
//  - The CPU emulation (STENCILC_EMULATE, test/emulation) runs it as a
//    Hopper GPU would (stencilc_emu::tmaLoad): a load poisons its slot when
//    issued and lands at its plane's first wait, so a kernel that reads a
//    slot too early or too late fails its check; STENCILC_EMU_NO_TMA set
//    makes encodePlaneMap say no, as on a GPU without TMA.
//  - A host compiler with the CUDA headers: the host part.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_TMA_RING_CUH
#define STENCILC_TMA_RING_CUH

#if !defined(STENCILC_EMULATE)
#ifndef STENCILC_HOPPER_TRAP_BELOW_SM90
#define STENCILC_HOPPER_TRAP_BELOW_SM90
#endif
#ifndef STENCILC_HOPPER_CUH
#include "stencilc/hopper.cuh"
#endif
#else
#include <cuda.h> // CUtensorMap
#endif

#include <cuda_runtime.h>

#include <cstdint>

namespace stencilc::rt::tma {

/// Whether this code may issue TMA copies: device code for sm_90 or newer
/// (host code: false, and never asked).
#if (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900) ||                       \
    defined(STENCILC_EMULATE)
inline constexpr bool kAvailable = true;
#else
inline constexpr bool kAvailable = false;
#endif

/// The alignment of a slot's shared memory (no swizzle).
inline constexpr int kAlign = 128;

/// Encodes in `map` the 3-D tensor map of the n0 x n1 x n2 array at `base`
/// (axis 2 contiguous) for boxes of boxW x boxH x 1 elements (axis 2, axis
/// 1, one plane), and says whether the kernel may use it: the current
/// device is of compute capability 9.0 or newer, `base` is 16-byte
/// aligned, a row is a whole number of 16-byte units, the extents are
/// below 2^31, and the driver encoded the map.
template <class T>
bool encodePlaneMap(CUtensorMap *map, const T *base, long long n0,
                    long long n1, long long n2, int boxW, int boxH) {
#if defined(STENCILC_EMULATE)
  return stencilc_emu::tmaEncode(map, base, sizeof(T), n0, n1, n2, boxW,
                                 boxH);
#else
  int device = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                             device) != cudaSuccess ||
      major < 9)
    return false;
  const long long limit = 1LL << 31;
  if (n0 <= 0 || n1 <= 0 || n2 <= 0 || n0 >= limit || n1 >= limit ||
      n2 >= limit || n2 * static_cast<long long>(sizeof(T)) % 16 != 0)
    return false;
  const std::uint64_t extent[3] = {std::uint64_t(n2), std::uint64_t(n1),
                                   std::uint64_t(n0)};
  const std::uint64_t pitch[2] = {std::uint64_t(n2), std::uint64_t(n2 * n1)};
  const std::uint32_t box[3] = {std::uint32_t(boxW), std::uint32_t(boxH), 1};
  return static_cast<bool>(hopper::encodeTileMap<T, 3>(map, base, extent,
                                                       pitch, box));
#endif
}

#if defined(__CUDACC__) || defined(STENCILC_EMULATE)

/// Whether shared memory at `p` may take a TMA box.
__device__ __forceinline__ bool aligned(const void *p) {
#if defined(STENCILC_EMULATE)
  return stencilc_emu::tmaAligned(p, kAlign);
#else
  return hopper::sharedAddress(p) % kAlign == 0;
#endif
}

/// The barriers of a ring of NB planes; place it in shared memory.
template <int NB> struct PlaneRing {
  static_assert(NB >= 1, "a ring has at least one plane");
  std::uint64_t full[NB];

  /// One thread, then a block barrier before any other use.
  __device__ __forceinline__ void init() {
#if defined(STENCILC_EMULATE)
    stencilc_emu::tmaInit(full, NB);
#else
    for (int s = 0; s < NB; ++s)
      hopper::barrierInit(&full[s], 1);
    hopper::fenceBarrierInit();
#endif
  }

  /// One thread: plane k's box of `bytes` at (x, y, z) of `map` into
  /// `dst`, its slot. Every thread that wrote the slot by ordinary stores
  /// since the copy engine last filled it has called fenceProxyAsync
  /// (skip does) and the block has synchronized since.
  __device__ __forceinline__ void load(int k, void *dst, const CUtensorMap *map,
                                       int x, int y, int z,
                                       std::uint32_t bytes) {
#if defined(STENCILC_EMULATE)
    stencilc_emu::tmaLoad(&full[k % NB], k, NB, dst, map, x, y, z, bytes);
#else
    std::uint64_t *bar = &full[k % NB];
    hopper::barrierArriveExpectTx(bar, bytes);
    hopper::tmaLoad(dst, map, bar, x, y, z);
#endif
  }

  /// Every thread, after writing its part of plane k by ordinary stores:
  /// orders those stores before a later copy into the slot, and one
  /// thread (`arrive`) completes the plane's phase without bytes.
  __device__ __forceinline__ void skip(int k, bool arrive) {
#if defined(STENCILC_EMULATE)
    if (arrive)
      stencilc_emu::tmaSkip(&full[k % NB], k, NB);
#else
    hopper::fenceProxyAsync();
    if (arrive)
      hopper::barrierArrive(&full[k % NB]);
#endif
  }

  /// Every thread: waits until plane k has landed (or been skipped).
  __device__ __forceinline__ void wait(int k) {
#if defined(STENCILC_EMULATE)
    stencilc_emu::tmaWait(&full[k % NB], k, NB);
#else
    hopper::barrierWait(&full[k % NB], static_cast<unsigned>(k / NB) & 1u);
#endif
  }
};

#endif // __CUDACC__ || STENCILC_EMULATE

} // namespace stencilc::rt::tma

#endif // STENCILC_TMA_RING_CUH
