//===- hopper.cuh - Hopper building blocks: TMA, mbarriers, clusters -*- CUDA
//-*-===//
//
// The Hopper (sm_90) pieces that a kernel family is built from, written
// once as templates (docs/architecture.md, "Hopper building blocks";
// issue 25, item 2): mbarriers with transaction counts, the tensor memory
// accelerator (TMA) with its host-side tensor maps, a multi-stage
// producer/consumer pipeline over them, and thread-block clusters with
// distributed shared memory (DSMEM). Each wrapper is one PTX instruction,
// or a short loop of them, written from the PTX ISA (9.7.13.15 mbarrier,
// 9.7.9.25 cp.async.bulk.tensor, 9.7.9.12 mapa, 9.7.13.4 barrier.cluster).
// Generated code embeds it only with the star kernel's TMA ring
// (tma_ring.cuh, stencilc --star-tma).
//
// Where it compiles:
//  - nvcc, device code for sm_90 and sm_90a (and newer): everything.
//  - nvcc, device code below sm_90: an #error, since nothing here exists
//    there. A fat binary whose Hopper kernels are launched only on Hopper
//    defines STENCILC_HOPPER_TRAP_BELOW_SM90 before including it; then the
//    device functions compile, below sm_90, to __trap().
//  - Defining STENCILC_HOPPER_CHECK_TMA before including it makes tmaStore
//    trap at a negative start coordinate (off by default).
//  - A host C++ compiler with the CUDA headers (g++ -x c++): the host part
//    only (tensor-map encoding, cluster launches); the device part needs
//    nvcc and is left out.
//  - The CPU emulation (STENCILC_EMULATE, test/emulation): an #error. The
//    emulation models neither the copy engine nor mbarrier transactions nor
//    clusters, and generated code, which is what it runs, does not include
//    this header; a kernel built on these blocks is checked on a GPU
//    (test/gpu/hopper.sh) instead.
//
// Conventions. Coordinates and extents are innermost axis first (x, then
// y, then z), as the tensor map and cp.async.bulk.tensor take them. Shared
// memory that TMA writes or reads is aligned to 128 bytes (kTmaAlign). The
// x coordinate of every TMA copy is a multiple of 16 bytes (x * sizeof(T)
// % 16 == 0, negative x included); a load's y and z may be anything, a
// store starts at x, y, z >= 0 (tmaStore).
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_HOPPER_CUH
#define STENCILC_HOPPER_CUH

#if defined(STENCILC_EMULATE)
#error "stencilc/hopper.cuh has no CPU emulation (TMA, mbarrier transactions and clusters are not modelled): keep it out of STENCILC_EMULATE builds and test its kernels with test/gpu/hopper.sh"
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900 &&                           \
    !defined(STENCILC_HOPPER_TRAP_BELOW_SM90)
#error "stencilc/hopper.cuh needs sm_90 or later (TMA, mbarrier transactions, clusters): compile with -gencode arch=compute_90,code=sm_90 (or compute_90a/sm_90a), or define STENCILC_HOPPER_TRAP_BELOW_SM90 to build a fat binary whose older code traps"
#endif

#include <cuda.h> // CUtensorMap and its enums only: nothing links -lcuda
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

/// 1 in device code that has the Hopper instructions, else 0.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define STENCILC_HOPPER_SM90 1
#else
#define STENCILC_HOPPER_SM90 0
#endif

/// 1 in device code whose target is arch- or family-specific (sm_90a,
/// sm_100a, sm_100f, ...), where .multicast::cluster copies are meant to
/// be used; ptxas gives plain sm_90 an advisory for them, which
/// -Werror all-warnings makes an error, so tmaLoadMulticast is a
/// compile-time error there.
#if STENCILC_HOPPER_SM90 &&                                                    \
    (defined(__CUDA_ARCH_FEAT_SM90_ALL) || defined(__CUDA_ARCH_SPECIFIC__) ||  \
     defined(__CUDA_ARCH_FAMILY_SPECIFIC__))
#define STENCILC_HOPPER_MULTICAST 1
#else
#define STENCILC_HOPPER_MULTICAST 0
#endif

// What a device function does where the instructions are missing: trap in
// the older device code of a fat binary (STENCILC_HOPPER_TRAP_BELOW_SM90);
// nothing in nvcc's host pass, which compiles the bodies but never runs
// them.
#if defined(__CUDA_ARCH__)
#define STENCILC_HOPPER_MISSING() __trap()
#else
#define STENCILC_HOPPER_MISSING() ((void)0)
#endif

namespace stencilc::rt::hopper {

/// The alignment of shared memory that TMA writes or reads (no swizzle):
/// the PTX ISA asks 128 bytes of the shared-memory operand of
/// cp.async.bulk.tensor.
inline constexpr int kTmaAlign = 128;

/// Whether a TMA store (tmaStore) of a box `boxX` elements wide at x >= 0
/// into an array of `extentX` elements along axis 0 writes nothing past
/// the array's row: the box ends inside the row, or the row is a whole
/// number of 16-byte units. A TMA store writes the last, partial 16-byte
/// unit of a row whole: measured on an H200 (tma-tile, docs/results/
/// session18-call6-hopper.txt), every box that overhung a row of 1001 f32
/// also wrote columns 1001..1003 (up to the next 16 bytes, not to the
/// pitch: 1004..1007 kept their sentinel) with what the staged box held
/// there (zeros from a load's fill), as Triton records for its descriptor
/// stores (triton-lang/triton #11583). A load clips at extentX exactly.
/// x and boxX are multiples of 16 bytes, as every copy's are.
template <class T>
__host__ __device__ constexpr bool
tmaStoreStaysInRow(std::uint64_t extentX, std::int64_t x, std::uint32_t boxX) {
  return x + std::int64_t(boxX) <= std::int64_t(extentX) ||
         extentX * sizeof(T) % 16 == 0;
}

//===----------------------------------------------------------------------===//
// Host: tensor maps (cuTensorMapEncodeTiled through the runtime's driver
// entry point, so that programs need not link -lcuda).
//===----------------------------------------------------------------------===//

/// The tensor-map element type of T: the storage types of stencilc.
template <class T> struct TmaType;
template <> struct TmaType<float> {
  static constexpr CUtensorMapDataType value = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
};
template <> struct TmaType<double> {
  static constexpr CUtensorMapDataType value = CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
};
template <> struct TmaType<__half> {
  static constexpr CUtensorMapDataType value = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
};
template <> struct TmaType<__nv_bfloat16> {
  static constexpr CUtensorMapDataType value =
      CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
};

/// The outcome of encoding a tensor map: cudaSuccess, or an error with a
/// message that names the argument at fault.
struct MapResult {
  cudaError_t status = cudaSuccess;
  std::string message;
  explicit operator bool() const { return status == cudaSuccess; }
};

namespace detail {

using EncodeTiledFn = CUresult (*)(
    CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
    const cuuint64_t *, const cuuint32_t *, const cuuint32_t *,
    CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
    CUtensorMapFloatOOBfill);
using GetErrorStringFn = CUresult (*)(CUresult, const char **);

/// A driver function through the runtime: cudaGetDriverEntryPointByVersion
/// where the runtime has it (12.5 on; cudaGetDriverEntryPoint is deprecated
/// in CUDA 13), asking for the ABI of CUDA 12.0, where the function first
/// appeared.
inline void *driverEntry(const char *name, std::string &why) {
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  const cudaError_t err = cudaGetDriverEntryPointByVersion(
      name, &fn, 12000, cudaEnableDefault, &found);
#else
  const cudaError_t err =
      cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &found);
#endif
  if (err != cudaSuccess) {
    why = std::string("cannot reach the CUDA driver's ") + name + ": " +
          cudaGetErrorString(err);
    return nullptr;
  }
  if (found != cudaDriverEntryPointSuccess || !fn) {
    why = std::string("the CUDA driver has no ") + name +
          (found == cudaDriverEntryPointVersionNotSufficent
               ? " (driver older than CUDA 12.0)"
               : "");
    return nullptr;
  }
  return fn;
}

inline MapResult fail(cudaError_t status, std::string message) {
  return MapResult{status, "stencilc tensor map: " + std::move(message)};
}

} // namespace detail

/// Encodes in `map` the tiled tensor map of a Rank-dimensional array of T
/// at `base` (device memory, 16-byte aligned): `extent[i]` elements along
/// axis i (axis 0 contiguous), `pitch[i]` elements between neighbours
/// along axis i + 1 (pitch[0] >= extent[0], pitch[1] >= pitch[0] *
/// extent[1]; pitch[i] * sizeof(T) a multiple of 16), and a box of
/// `box[i]` elements (at most 256 each; box[0] * sizeof(T) a multiple of
/// 16). No swizzle, no interleave, 128-byte L2 promotion.
///
/// Coordinates: a copy's x (innermost) coordinate must be a multiple of
/// 16 / sizeof(T) elements; the map cannot check it, it is the kernel's
/// (see "TMA copies" below).
///
/// Out-of-bounds boxes: a load whose box reaches outside [0, extent) on any
/// axis, negative coordinates included, fills the elements outside with
/// zeros (+0.0, all bits clear; CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) and
/// still completes the box's full byte count on its mbarrier. A store
/// skips the rows and planes outside, but along axis 0 it writes whole
/// 16-byte units: a box that overhangs the end of a row whose extent[0] *
/// sizeof(T) is no multiple of 16 also writes the elements up to the next
/// 16 bytes (the pitch's padding, or a neighbour's data in a sub-array
/// view) with what the box holds there (tmaStoreStaysInRow).
/// The map holds `base`: encode a new one when the array moves.
template <class T, int Rank>
MapResult encodeTileMap(CUtensorMap *map, const T *base,
                        const std::uint64_t (&extent)[Rank],
                        const std::uint64_t (&pitch)[Rank - 1],
                        const std::uint32_t (&box)[Rank]) {
  static_assert(Rank == 2 || Rank == 3, "tile maps are 2-D or 3-D");
  constexpr std::uint64_t elem = sizeof(T);
  if (!map)
    return detail::fail(cudaErrorInvalidValue, "no CUtensorMap given");
  if (reinterpret_cast<std::uintptr_t>(base) % 16 != 0)
    return detail::fail(cudaErrorInvalidValue,
                        "the array's address must be 16-byte aligned");
  cuuint64_t dims[Rank], strides[Rank - 1];
  cuuint32_t boxDims[Rank], elementStrides[Rank];
  for (int i = 0; i < Rank; ++i) {
    const std::string axis = "axis " + std::to_string(i);
    if (extent[i] == 0 || extent[i] > (std::uint64_t(1) << 32))
      return detail::fail(cudaErrorInvalidValue,
                          axis + ": extent " + std::to_string(extent[i]) +
                              " is not in 1 .. 2^32");
    if (box[i] == 0 || box[i] > 256)
      return detail::fail(cudaErrorInvalidValue,
                          axis + ": box " + std::to_string(box[i]) +
                              " is not in 1 .. 256");
    dims[i] = extent[i];
    boxDims[i] = box[i];
    elementStrides[i] = 1;
  }
  if (box[0] * elem % 16 != 0)
    return detail::fail(cudaErrorInvalidValue,
                        "axis 0: box of " + std::to_string(box[0]) +
                            " elements is " + std::to_string(box[0] * elem) +
                            " bytes, not a multiple of 16");
  std::uint64_t reach = extent[0]; // elements that axes 0 .. i span
  for (int i = 0; i + 1 < Rank; ++i) {
    const std::string axis = "axis " + std::to_string(i + 1);
    const std::uint64_t bytes = pitch[i] * elem;
    if (pitch[i] < reach)
      return detail::fail(cudaErrorInvalidValue,
                          axis + ": pitch " + std::to_string(pitch[i]) +
                              " is less than the " + std::to_string(reach) +
                              " elements of the axes below it");
    if (bytes % 16 != 0 || bytes >= (std::uint64_t(1) << 40))
      return detail::fail(cudaErrorInvalidValue,
                          axis + ": pitch of " + std::to_string(bytes) +
                              " bytes is not a multiple of 16 below 2^40");
    strides[i] = bytes;
    reach = pitch[i] * extent[i + 1];
  }

  std::string why;
  auto encode = reinterpret_cast<detail::EncodeTiledFn>(
      detail::driverEntry("cuTensorMapEncodeTiled", why));
  if (!encode)
    return detail::fail(cudaErrorNotSupported, why);
  const CUresult r =
      encode(map, TmaType<T>::value, Rank, const_cast<T *>(base), dims,
             strides, boxDims, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
             CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r == CUDA_SUCCESS)
    return {};
  const char *text = nullptr;
  std::string ignored;
  if (auto name = reinterpret_cast<detail::GetErrorStringFn>(
          detail::driverEntry("cuGetErrorString", ignored)))
    name(r, &text);
  return detail::fail(cudaErrorInvalidValue,
                      "cuTensorMapEncodeTiled failed with CUresult " +
                          std::to_string(static_cast<int>(r)) +
                          (text ? std::string(" (") + text + ")" : ""));
}

/// The bytes one box of `box` moves: the transaction count of its load.
template <class T, int Rank>
constexpr std::uint32_t boxBytes(const std::uint32_t (&box)[Rank]) {
  std::uint32_t n = sizeof(T);
  for (int i = 0; i < Rank; ++i)
    n *= box[i];
  return n;
}

//===----------------------------------------------------------------------===//
// Host: cluster launches.
//===----------------------------------------------------------------------===//

/// Launches kernel(args...) on `grid` blocks in clusters of `cluster`
/// blocks (each grid axis a multiple of the cluster's; at most 8 blocks
/// in a portable cluster). The arguments are converted to the kernel's
/// parameter types first, as <<<>>> converts them.
template <class... Params, class... Args>
cudaError_t launchCluster(void (*kernel)(Params...), dim3 grid, dim3 block,
                          std::size_t sharedBytes, cudaStream_t stream,
                          dim3 cluster, Args &&...args) {
  static_assert(sizeof...(Params) == sizeof...(Args),
                "launchCluster: one argument per kernel parameter");
  if (cluster.x == 0 || cluster.y == 0 || cluster.z == 0 ||
      grid.x % cluster.x || grid.y % cluster.y || grid.z % cluster.z)
    return cudaErrorInvalidValue;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = cluster.x;
  attr[0].val.clusterDim.y = cluster.y;
  attr[0].val.clusterDim.z = cluster.z;
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = sharedBytes;
  config.stream = stream;
  config.attrs = attr;
  config.numAttrs = 1;
  std::tuple<Params...> values(std::forward<Args>(args)...);
  return std::apply(
      [&](auto &...v) {
        void *argv[] = {static_cast<void *>(&v)..., nullptr};
        return cudaLaunchKernelExC(&config,
                                   reinterpret_cast<const void *>(kernel),
                                   argv);
      },
      values);
}

//===----------------------------------------------------------------------===//
// Device code: nvcc only.
//===----------------------------------------------------------------------===//

#if defined(__CUDACC__)

#define STENCILC_HOPPER_DEV __device__ __forceinline__

/// The shared-state-space address (shared::cta window) of a generic
/// pointer into this block's shared memory.
STENCILC_HOPPER_DEV std::uint32_t sharedAddress(const void *p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

//===----------------------------------------------------------------------===//
// mbarriers (PTX ISA 9.7.13.15). A barrier is one 8-byte word of shared
// memory. Each phase completes when its pending arrivals (the count given
// to init) and its pending transaction bytes (added by expect_tx, removed
// by the copy engine's complete_tx) both reach zero; the next phase then
// starts with the same arrival count. Waiting names the phase by parity.
//===----------------------------------------------------------------------===//

/// Initializes `bar` for `arrivals` arrivals per phase, phase 0 current.
/// One thread initializes; fenceBarrierInit, then a block (or cluster)
/// barrier, must come before any other thread or the copy engine uses it.
STENCILC_HOPPER_DEV void barrierInit(std::uint64_t *bar, unsigned arrivals) {
#if STENCILC_HOPPER_SM90
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(
                   sharedAddress(bar)),
               "r"(arrivals)
               : "memory");
#else
  (void)bar, (void)arrivals;
  STENCILC_HOPPER_MISSING();
#endif
}

/// After barrierInit, in the initializing thread: makes the initialized
/// barriers visible to the copy engine (the async proxy, which completes
/// transactions on them) and to the other blocks of the cluster (whose
/// multicast copies and remote arrivals reach them).
STENCILC_HOPPER_DEV void fenceBarrierInit() {
#if STENCILC_HOPPER_SM90
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#else
  STENCILC_HOPPER_MISSING();
#endif
}

/// Orders this thread's earlier ordinary shared-memory accesses before
/// later accesses of the copy engine (the async proxy): each thread that
/// wrote a tile a TMA store then reads calls it before the block barrier.
STENCILC_HOPPER_DEV void fenceProxyAsync() {
#if STENCILC_HOPPER_SM90
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#else
  STENCILC_HOPPER_MISSING();
#endif
}

/// One arrival on `bar` (release, CTA scope).
STENCILC_HOPPER_DEV void barrierArrive(std::uint64_t *bar) {
#if STENCILC_HOPPER_SM90
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(
                   sharedAddress(bar))
               : "memory");
#else
  (void)bar;
  STENCILC_HOPPER_MISSING();
#endif
}

/// One arrival on the barrier at `bar`'s offset in block `rank` of the
/// cluster (release, cluster scope): how a consumer in one block frees a
/// stage that a producer in another fills. The waiter there uses
/// barrierWaitCluster.
STENCILC_HOPPER_DEV void barrierArriveRemote(std::uint64_t *bar,
                                             unsigned rank) {
#if STENCILC_HOPPER_SM90
  asm volatile("{\n\t.reg .b32 remote;\n\t"
               "mapa.shared::cluster.u32 remote, %0, %1;\n\t"
               "mbarrier.arrive.release.cluster.shared::cluster.b64 _, "
               "[remote];\n\t}" ::"r"(sharedAddress(bar)),
               "r"(rank)
               : "memory");
#else
  (void)bar, (void)rank;
  STENCILC_HOPPER_MISSING();
#endif
}

/// One arrival on `bar` that also expects `bytes` more transaction bytes
/// in the current phase: the producer's call before it issues the copies
/// that will complete them.
STENCILC_HOPPER_DEV void barrierArriveExpectTx(std::uint64_t *bar,
                                               std::uint32_t bytes) {
#if STENCILC_HOPPER_SM90
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                   sharedAddress(bar)),
               "r"(bytes)
               : "memory");
#else
  (void)bar, (void)bytes;
  STENCILC_HOPPER_MISSING();
#endif
}

/// Expects `bytes` more transaction bytes without arriving.
STENCILC_HOPPER_DEV void barrierExpectTx(std::uint64_t *bar,
                                         std::uint32_t bytes) {
#if STENCILC_HOPPER_SM90
  asm volatile(
      "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(
          sharedAddress(bar)),
      "r"(bytes)
      : "memory");
#else
  (void)bar, (void)bytes;
  STENCILC_HOPPER_MISSING();
#endif
}

/// Whether the phase of parity `parity` of `bar` has completed (acquire,
/// CTA scope); the hardware may suspend the thread a while before saying
/// no. Parity 1 on a fresh barrier names the phase before phase 0, which
/// counts as complete: a producer's first wait on an empty stage passes.
STENCILC_HOPPER_DEV bool barrierTryWait(std::uint64_t *bar, unsigned parity) {
#if STENCILC_HOPPER_SM90
  std::uint32_t done;
  asm volatile("{\n\t.reg .pred p;\n\t"
               "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
               "selp.u32 %0, 1, 0, p;\n\t}"
               : "=r"(done)
               : "r"(sharedAddress(bar)), "r"(parity)
               : "memory");
  return done != 0;
#else
  (void)bar, (void)parity;
  STENCILC_HOPPER_MISSING();
  return true;
#endif
}

/// Waits until the phase of parity `parity` of `bar` has completed.
STENCILC_HOPPER_DEV void barrierWait(std::uint64_t *bar, unsigned parity) {
  while (!barrierTryWait(bar, parity)) {
  }
}

/// barrierTryWait with acquire at cluster scope: where arrivals come from
/// other blocks (barrierArriveRemote), whose writes before their release
/// the waiter must see.
STENCILC_HOPPER_DEV bool barrierTryWaitCluster(std::uint64_t *bar,
                                               unsigned parity) {
#if STENCILC_HOPPER_SM90
  std::uint32_t done;
  asm volatile("{\n\t.reg .pred p;\n\t"
               "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, "
               "[%1], %2;\n\t"
               "selp.u32 %0, 1, 0, p;\n\t}"
               : "=r"(done)
               : "r"(sharedAddress(bar)), "r"(parity)
               : "memory");
  return done != 0;
#else
  (void)bar, (void)parity;
  STENCILC_HOPPER_MISSING();
  return true;
#endif
}

/// barrierWait with acquire at cluster scope.
STENCILC_HOPPER_DEV void barrierWaitCluster(std::uint64_t *bar,
                                            unsigned parity) {
  while (!barrierTryWaitCluster(bar, parity)) {
  }
}

//===----------------------------------------------------------------------===//
// TMA copies (PTX ISA 9.7.9.25, cp.async.bulk.tensor). The tensor map is a
// kernel parameter declared `const __grid_constant__ CUtensorMap`, passed
// on by address; the shared-memory box is kTmaAlign-aligned; one thread
// issues each copy. Coordinates are signed element indices of the box's
// first element, innermost first; see encodeTileMap for boxes that reach
// outside the array.
//
// The innermost coordinate x must be a multiple of 16 bytes: x * sizeof(T)
// % 16 == 0 (x = -4 for f32 is fine, x = -3 is not). A copy at any other
// x ends the launch in cudaErrorIllegalInstruction, as Triton records for
// its TMA lowering (triton-lang/triton #7385; the restriction its Gluon
// TMA tutorial states), and as fits how tma-tile and cluster-halo's
// multicast died on an H200 with x = -3 + 64 k and x = 42 in f32 while
// every copy at an aligned x passed; test/gpu/hopper/tma-probe.cu's limit
// steps check it on the GPU at hand. Neither the tensor map nor ptxas can
// catch it (x is a run-time value), and nothing here checks it at run
// time: a stencil's halo offset in x is a whole 16-byte unit, or the box
// starts at the aligned x below and the kernel skips the extra elements.
//===----------------------------------------------------------------------===//

/// Brings the tensor map into the descriptor cache ahead of its first use.
/// The PTX ISA takes `prefetch{.const,.param}.tensormap [a]`, and without
/// a state space a generic address: the generic address of a
/// `const __grid_constant__ CUtensorMap` parameter (what every kernel here
/// passes) is a legal operand, as CUTLASS's prefetch_tma_descriptor uses
/// it. tma-probe's h2a runs it alone behind h1's loads.
STENCILC_HOPPER_DEV void prefetchTensorMap(const CUtensorMap *map) {
#if STENCILC_HOPPER_SM90
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
#else
  (void)map;
  STENCILC_HOPPER_MISSING();
#endif
}

/// Loads the 2-D box at (x, y) into `dst`; its bytes complete on `bar`,
/// whose phase must expect them (barrierArriveExpectTx).
STENCILC_HOPPER_DEV void tmaLoad(void *dst, const CUtensorMap *map,
                                 std::uint64_t *bar, int x, int y) {
#if STENCILC_HOPPER_SM90
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
               "complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
                   sharedAddress(dst)),
               "l"(map), "r"(x), "r"(y), "r"(sharedAddress(bar))
               : "memory");
#else
  (void)dst, (void)map, (void)bar, (void)x, (void)y;
  STENCILC_HOPPER_MISSING();
#endif
}

/// Loads the 3-D box at (x, y, z) into `dst`, completing on `bar`.
STENCILC_HOPPER_DEV void tmaLoad(void *dst, const CUtensorMap *map,
                                 std::uint64_t *bar, int x, int y, int z) {
#if STENCILC_HOPPER_SM90
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::"
               "complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(
                   sharedAddress(dst)),
               "l"(map), "r"(x), "r"(y), "r"(z), "r"(sharedAddress(bar))
               : "memory");
#else
  (void)dst, (void)map, (void)bar, (void)x, (void)y, (void)z;
  STENCILC_HOPPER_MISSING();
#endif
}

namespace detail {
/// Stops the build where a multicast copy is used in plain sm_90 code.
template <class Dummy> STENCILC_HOPPER_DEV void requireMulticast() {
#if STENCILC_HOPPER_SM90 && !STENCILC_HOPPER_MULTICAST
  static_assert(!std::is_same_v<Dummy, Dummy>,
                "stencilc::rt::hopper::tmaLoadMulticast needs an "
                "arch-specific target: compile with -gencode "
                "arch=compute_90a,code=sm_90a");
#endif
}
} // namespace detail

/// Loads the 2-D box at (x, y) once from global memory into `dst` of every
/// block of the cluster whose rank is set in `ctaMask`, at the same shared
/// memory offset, completing its bytes on the barrier at `bar`'s offset in
/// each of them. Every receiving block must have initialized that barrier
/// before the copy can signal it (a cluster barrier between the inits and
/// the first multicast), and each receiving barrier's phase counts the
/// bytes of every copy that lands in its block. Arch-specific targets only
/// (STENCILC_HOPPER_MULTICAST).
template <class Dummy = void>
STENCILC_HOPPER_DEV void tmaLoadMulticast(void *dst, const CUtensorMap *map,
                                          std::uint64_t *bar,
                                          std::uint16_t ctaMask, int x,
                                          int y) {
  detail::requireMulticast<Dummy>();
#if STENCILC_HOPPER_MULTICAST
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
               "complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], "
               "[%4], %5;" ::"r"(sharedAddress(dst)),
               "l"(map), "r"(x), "r"(y), "r"(sharedAddress(bar)), "h"(ctaMask)
               : "memory");
#else
  (void)dst, (void)map, (void)bar, (void)ctaMask, (void)x, (void)y;
  STENCILC_HOPPER_MISSING();
#endif
}

/// The 3-D multicast load.
template <class Dummy = void>
STENCILC_HOPPER_DEV void tmaLoadMulticast(void *dst, const CUtensorMap *map,
                                          std::uint64_t *bar,
                                          std::uint16_t ctaMask, int x, int y,
                                          int z) {
  detail::requireMulticast<Dummy>();
#if STENCILC_HOPPER_MULTICAST
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::"
               "complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3, "
               "%4}], [%5], %6;" ::"r"(sharedAddress(dst)),
               "l"(map), "r"(x), "r"(y), "r"(z), "r"(sharedAddress(bar)),
               "h"(ctaMask)
               : "memory");
#else
  (void)dst, (void)map, (void)bar, (void)ctaMask, (void)x, (void)y, (void)z;
  STENCILC_HOPPER_MISSING();
#endif
}

// Checks a TMA store's start (tmaStore) where STENCILC_HOPPER_CHECK_TMA is
// defined before the header is included: a negative coordinate traps at
// the store (a one-thread compare, off by default) instead of ending the
// launch in an illegal instruction with no place named.
namespace detail {
STENCILC_HOPPER_DEV void checkStoreStart(int x, int y, int z = 0) {
#if defined(STENCILC_HOPPER_CHECK_TMA)
  if ((x | y | z) < 0)
    __trap();
#else
  (void)x, (void)y, (void)z;
#endif
}
} // namespace detail

/// Stores the 2-D box at `src` to (x, y) of the array; the rows past the
/// array's far edge are not written, nor the elements past the end of a
/// row beyond its last 16-byte unit: a box that overhangs the end of a
/// row whose bytes are no multiple of 16 writes that unit whole, elements
/// past the extent included (tmaStoreStaysInRow says when not; measured
/// on an H200 by tma-tile).
///
/// The start must lie in the array's non-negative range: x >= 0 and
/// y >= 0 (z >= 0 in 3-D), unlike a load, which may start at negative
/// coordinates and is zero-filled there. Measured on an H200 (driver
/// 580.159.04): a store at (0, -2) or at (-4, 0) ended the launch in
/// cudaErrorIllegalInstruction, the same store at (80, 40) passed
/// (test/gpu/hopper/tma-probe.cu: step h2b, and the limits h2c and h2d),
/// as did step e's, which overhangs the right edge of a 96-wide f32
/// array (384 bytes a row: no partial 16-byte unit to write whole). As for every copy, x * sizeof(T) is a multiple of
/// 16 bytes. A box that starts before the array is written by ordinary
/// per-thread stores instead (test/gpu/hopper/tma-tile.cu's edge boxes).
/// Nothing checks the start unless STENCILC_HOPPER_CHECK_TMA is defined,
/// which traps at a negative one.
///
/// Every thread that wrote `src` calls fenceProxyAsync and then the block
/// synchronizes before this; the store joins the issuing thread's open
/// bulk group (tmaStoreCommit).
STENCILC_HOPPER_DEV void tmaStore(const CUtensorMap *map, const void *src,
                                  int x, int y) {
#if STENCILC_HOPPER_SM90
  detail::checkStoreStart(x, y);
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group "
               "[%0, {%1, %2}], [%3];" ::"l"(map),
               "r"(x), "r"(y), "r"(sharedAddress(src))
               : "memory");
#else
  (void)map, (void)src, (void)x, (void)y;
  STENCILC_HOPPER_MISSING();
#endif
}

/// Stores the 3-D box at `src` to (x, y, z). As for the 2-D store: x, y
/// and z >= 0 (a negative start gave cudaErrorIllegalInstruction on an
/// H200), x * sizeof(T) a multiple of 16 bytes, overhanging the far edges
/// is fine in y and z, and in x only where tmaStoreStaysInRow.
STENCILC_HOPPER_DEV void tmaStore(const CUtensorMap *map, const void *src,
                                  int x, int y, int z) {
#if STENCILC_HOPPER_SM90
  detail::checkStoreStart(x, y, z);
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group "
               "[%0, {%1, %2, %3}], [%4];" ::"l"(map),
               "r"(x), "r"(y), "r"(z), "r"(sharedAddress(src))
               : "memory");
#else
  (void)map, (void)src, (void)x, (void)y, (void)z;
  STENCILC_HOPPER_MISSING();
#endif
}

/// Closes the issuing thread's bulk group of the stores since the last.
STENCILC_HOPPER_DEV void tmaStoreCommit() {
#if STENCILC_HOPPER_SM90
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#else
  STENCILC_HOPPER_MISSING();
#endif
}

/// Waits until at most N of this thread's bulk groups still read their
/// shared memory: the older ones' sources may then be overwritten.
template <int N> STENCILC_HOPPER_DEV void tmaStoreWaitRead() {
#if STENCILC_HOPPER_SM90
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
#else
  STENCILC_HOPPER_MISSING();
#endif
}

/// Waits until at most N of this thread's bulk groups are pending: the
/// older ones' writes to global memory have then been made.
template <int N> STENCILC_HOPPER_DEV void tmaStoreWait() {
#if STENCILC_HOPPER_SM90
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
#else
  STENCILC_HOPPER_MISSING();
#endif
}

/// Whether this thread is the one that elect.sync picks among the active
/// lanes of its warp (the lowest); every active lane must call it. A
/// producer warp issues its copies from the elected lane.
STENCILC_HOPPER_DEV bool electOne() {
#if STENCILC_HOPPER_SM90
  std::uint32_t elected;
  asm volatile("{\n\t.reg .pred p;\n\t"
               "elect.sync _|p, %1;\n\t"
               "selp.u32 %0, 1, 0, p;\n\t}"
               : "=r"(elected)
               : "r"(__activemask()));
  return elected != 0;
#else
  STENCILC_HOPPER_MISSING();
  return false;
#endif
}

/// A barrier among the `threads` threads (a multiple of 32, whole warps)
/// that call it with the same `id` (1 .. 15; 0 is __syncthreads'): how the
/// consumer warps of a warp-specialized kernel synchronize among
/// themselves while the producer warp runs ahead.
STENCILC_HOPPER_DEV void namedBarrier(unsigned id, unsigned threads) {
#if STENCILC_HOPPER_SM90
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
#else
  (void)id, (void)threads;
  STENCILC_HOPPER_MISSING();
#endif
}

//===----------------------------------------------------------------------===//
// The multi-stage pipeline. Stages buffers in shared memory, each with a
// "full" barrier (the producer's one arrival plus the box bytes the copy
// engine completes) and an "empty" barrier (the consumers' arrivals once
// they are done with the buffer). Producer and consumers each keep a
// PipelineStage, advanced once per box, and pass the same sequence of
// boxes.
//
// Why an "empty" barrier per stage and not __syncthreads: a block barrier
// would make every thread wait for every other at each box, so the
// producer could not run ahead by Stages - 1 boxes, and warp-specialized
// kernels (a producer warp that never consumes) would not work. The empty
// barrier's arrival count is the kernel's choice, fixed at init: one per
// consumer warp (lane 0 after __syncwarp) is cheapest; one per consumer
// thread needs no warp synchronization.
//
//   // once, thread 0:  pipe.init(consumerWarps); then __syncthreads()
//   producer (elected lane):       consumers (every consumer thread):
//     for each box b:                for each box b:
//       pipe.producerAcquire(st)       pipe.consumerWait(st)
//       bar = pipe.producerExpect(st, bytes)   ... read stage st.stage ...
//       tmaLoad(buf[st.stage], map, bar, ...)  pipe.consumerRelease(st)
//       st.advance()                   st.advance()
//
// produceBoxes runs the producer's column for the boxes of one tensor map.
//===----------------------------------------------------------------------===//

/// A position in the pipeline: the stage, and the parity of the phase its
/// barriers are in for this pass over the stages.
template <int Stages> struct PipelineStage {
  static_assert(Stages >= 1, "a pipeline has at least one stage");
  int stage = 0;
  unsigned phase = 0;
  STENCILC_HOPPER_DEV void advance() {
    if (++stage == Stages) {
      stage = 0;
      phase ^= 1u;
    }
  }
};

/// The barriers of a Stages-deep TMA pipeline; place it in shared memory.
template <int Stages> struct TmaPipeline {
  std::uint64_t full[Stages];
  std::uint64_t empty[Stages];

  /// One thread: each full barrier takes the producer's one arrival, each
  /// empty barrier `consumerArrivals`. Synchronize the block (or, when
  /// other blocks' copies or arrivals reach these barriers, the cluster)
  /// before use.
  STENCILC_HOPPER_DEV void init(unsigned consumerArrivals) {
    for (int s = 0; s < Stages; ++s) {
      barrierInit(&full[s], 1);
      barrierInit(&empty[s], consumerArrivals);
    }
    fenceBarrierInit();
  }

  /// Producer: waits until the consumers have released the stage's buffer
  /// from its previous use (at once on the first pass).
  STENCILC_HOPPER_DEV void producerAcquire(const PipelineStage<Stages> &st) {
    barrierWait(&empty[st.stage], st.phase ^ 1u);
  }

  /// Producer: arrives on the stage's full barrier expecting `bytes` and
  /// returns that barrier, for the copies that will bring the bytes.
  STENCILC_HOPPER_DEV std::uint64_t *
  producerExpect(const PipelineStage<Stages> &st, std::uint32_t bytes) {
    barrierArriveExpectTx(&full[st.stage], bytes);
    return &full[st.stage];
  }

  /// Consumer: waits until the stage's bytes have landed.
  STENCILC_HOPPER_DEV void consumerWait(const PipelineStage<Stages> &st) {
    barrierWait(&full[st.stage], st.phase);
  }

  /// Consumer: one arrival on the stage's empty barrier, after its last
  /// read of the buffer.
  STENCILC_HOPPER_DEV void consumerRelease(const PipelineStage<Stages> &st) {
    barrierArrive(&empty[st.stage]);
  }
};

/// The producer's column above for boxes of one tensor map, as a
/// warp-specialized kernel runs it on its producer warp's elected lane:
/// boxes first, first + step, ... below `boxes`, box t into stage buffer
/// `stages + stage * elems` (elems elements of U) at the coordinates
/// origin(t, c) writes into int c[3] (innermost first; Rank of them used),
/// running ahead of the consumers by up to Stages boxes.
template <int Rank, int Stages, class U, class Origin>
STENCILC_HOPPER_DEV void
produceBoxes(TmaPipeline<Stages> &pipe, const CUtensorMap *map, U *stages,
             int elems, int first, int step, int boxes, Origin origin) {
  static_assert(Rank == 2 || Rank == 3, "boxes of rank 2 or 3");
  PipelineStage<Stages> st;
  for (int t = first; t < boxes; t += step) {
    int c[3];
    origin(t, c);
    pipe.producerAcquire(st);
    std::uint64_t *bar =
        pipe.producerExpect(st, elems * static_cast<int>(sizeof(U)));
    U *dst = stages + st.stage * elems;
    if constexpr (Rank == 2)
      tmaLoad(dst, map, bar, c[0], c[1]);
    else
      tmaLoad(dst, map, bar, c[0], c[1], c[2]);
    st.advance();
  }
}

//===----------------------------------------------------------------------===//
// Thread-block clusters (PTX ISA 9.7.13.4 barrier.cluster, 9.7.9.12 mapa).
// Launch with launchCluster or __cluster_dims__.
//===----------------------------------------------------------------------===//

#if STENCILC_HOPPER_SM90
#define STENCILC_HOPPER_SREG(NAME, REG)                                        \
  STENCILC_HOPPER_DEV unsigned NAME() {                                        \
    unsigned r;                                                                \
    asm volatile("mov.u32 %0, " REG ";" : "=r"(r));                            \
    return r;                                                                  \
  }
#else
#define STENCILC_HOPPER_SREG(NAME, REG)                                        \
  STENCILC_HOPPER_DEV unsigned NAME() {                                        \
    STENCILC_HOPPER_MISSING();                                                 \
    return 0;                                                                  \
  }
#endif

/// This block's rank in its cluster, 0 .. clusterSize() - 1 (x fastest).
STENCILC_HOPPER_SREG(clusterRank, "%%cluster_ctarank")
/// The blocks of a cluster.
STENCILC_HOPPER_SREG(clusterSize, "%%cluster_nctarank")
/// This block's position in its cluster, and the cluster's shape.
STENCILC_HOPPER_SREG(clusterBlockX, "%%cluster_ctaid.x")
STENCILC_HOPPER_SREG(clusterBlockY, "%%cluster_ctaid.y")
STENCILC_HOPPER_SREG(clusterBlockZ, "%%cluster_ctaid.z")
STENCILC_HOPPER_SREG(clusterDimX, "%%cluster_nctaid.x")
STENCILC_HOPPER_SREG(clusterDimY, "%%cluster_nctaid.y")
STENCILC_HOPPER_SREG(clusterDimZ, "%%cluster_nctaid.z")
/// The cluster's position in the grid of clusters.
STENCILC_HOPPER_SREG(clusterIdX, "%%clusterid.x")
STENCILC_HOPPER_SREG(clusterIdY, "%%clusterid.y")
STENCILC_HOPPER_SREG(clusterIdZ, "%%clusterid.z")
#undef STENCILC_HOPPER_SREG

/// Arrives on the cluster barrier, releasing this thread's earlier memory
/// accesses (shared memory included) to the cluster. Every thread of every
/// block of the cluster arrives, then waits (.aligned: the warp's threads
/// execute it together).
STENCILC_HOPPER_DEV void clusterArrive() {
#if STENCILC_HOPPER_SM90
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
#else
  STENCILC_HOPPER_MISSING();
#endif
}

/// Waits until every thread of the cluster has arrived, acquiring what
/// they released. Between arrive and wait a thread may do work that needs
/// nothing from the others.
STENCILC_HOPPER_DEV void clusterWait() {
#if STENCILC_HOPPER_SM90
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
  STENCILC_HOPPER_MISSING();
#endif
}

/// clusterArrive then clusterWait: a __syncthreads over the cluster.
STENCILC_HOPPER_DEV void clusterSync() {
  clusterArrive();
  clusterWait();
}

/// The generic address of the object at `local`'s shared-memory offset in
/// block `rank` of the cluster (mapa): ordinary loads and stores through
/// it reach that block's shared memory (DSMEM). That block must not have
/// exited: a cluster barrier after the last remote access keeps it alive.
template <class T> STENCILC_HOPPER_DEV T *mapToRank(T *local, unsigned rank) {
#if STENCILC_HOPPER_SM90
  std::uint64_t remote;
  asm volatile("mapa.u64 %0, %1, %2;"
               : "=l"(remote)
               : "l"(reinterpret_cast<std::uint64_t>(local)), "r"(rank));
  return reinterpret_cast<T *>(remote);
#else
  (void)rank;
  STENCILC_HOPPER_MISSING();
  return local;
#endif
}

/// Copies a strip of `rows` x `cols` elements from block `rank`'s shared
/// memory into this block's: element (r, c) from src[r * srcPitch + c]
/// (src is an address in this block's layout, mapped to `rank`) to
/// dst[r * dstPitch + c]. Threads `thread` of `threads` share the strip,
/// consecutive threads taking consecutive elements of a row. Between the
/// neighbour's last write of the strip and this copy: a cluster barrier;
/// before the neighbour may exit or overwrite it: another.
template <class T>
STENCILC_HOPPER_DEV void copyHaloStrip(T *dst, int dstPitch, const T *src,
                                       int srcPitch, int rows, int cols,
                                       unsigned rank, int thread,
                                       int threads) {
  const T *remote = mapToRank(src, rank);
  for (int i = thread; i < rows * cols; i += threads) {
    const int r = i / cols, c = i - r * cols;
    dst[r * dstPitch + c] = remote[r * srcPitch + c];
  }
}

#undef STENCILC_HOPPER_DEV

#endif // __CUDACC__

} // namespace stencilc::rt::hopper

#undef STENCILC_HOPPER_MISSING

#endif // STENCILC_HOPPER_CUH
