//===- tma-probe.cu - Which TMA step breaks, one launch per step ----------===//
//
// A GPU probe of runtime/include/stencilc/hopper.cuh, run first by
// test/gpu/hopper.sh: when the TMA tests die (an illegal instruction, a
// hang), it shows the first step that does. Each step is one or more
// kernel launches, each checked with cudaDeviceSynchronize and against the
// CPU, in order of their distance from what is known to work:
//   a  mbarrier init, one arrival, wait (no copy engine)
//   b  expect_tx and a plain cp.async.bulk (no tensor map) of 1 KiB from
//      global to shared memory completing on the mbarrier
//   c  one 2-D cp.async.bulk.tensor load of a 32 x 32 f32 box through a
//      `const __grid_constant__ CUtensorMap` parameter, no pipeline
//   d  the same map's boxes through TmaPipeline<3>, one producer thread
//      and one consumer warp, wrapping around the stages
//   e  one 2-D TMA store of a 32 x 32 box
//   f  c's kernel and map, boxes across the far corner, the far edges and
//      the near corner (zero fill), every x a multiple of 16 bytes
//   g  tma-tile's first case (2-D f32): its array, pitches and maps
//      exactly (1001 x 77, pitch 1004 in, 1008 out, box 64 x 16), its
//      dynamic shared memory layout (128-byte aligned start, the barrier
//      after the box), a plain one-thread load of its first and its last
//      box, with x moved to a multiple of 16 bytes (-4, not -3)
//   h  tma-tile's warp-specialized kernel on one box of g's map: a
//      producer warp whose elect.sync lane loads through TmaPipeline<3>,
//      four consumer warps meeting at a named barrier; h1 without the
//      tensor-map prefetch and the TMA store of the box, h2a with the
//      prefetch only, h2b with the store only, at step e's (80, 40) (each
//      its own step, so that after a failure hopper.sh runs each later
//      one alone); its stores at negative coordinates are limits (h2c-h2e
//      below)
//   i  tma-tile's 3-D maps (203 x 37 x 11; f32, f64, f16), one box each
//   j  tma-tile's other 2-D maps (f64, f16, bf16), one box each
//   k  cluster-halo's multicast kernel and map, one cluster of 2, its
//      first cluster's box (-8, -4)
// Prints `PROBE <step> PASS` or `PROBE <step> FAIL (<why>)` per launch and
// stops at the first failure (an error such as an illegal instruction is
// sticky: every later launch would fail too), exiting 1.
//
// `tma-probe --list` names the steps; `tma-probe <step>` runs that one
// step alone, printing PROBE-SOLO lines, so that hopper.sh can still try
// the steps after a failure, each in a fresh process.
//
// Limits (never in the default sequence; `tma-probe --limits` names them,
// `tma-probe <limit>` runs one, printing PROBE-LIMIT lines): copies that
// hopper.cuh forbids, each expected to end in cudaErrorIllegalInstruction.
//   limit-load, limit-store, limit-multicast: an innermost box coordinate
//      that is no multiple of 16 bytes, as the TMA kernels had it when
//      they died (tma-tile's boxes at x = -3 + 64 k in f32, cluster-halo's
//      multicast boxes at x = 42 and 142)
//   h2c, h2d, h2e: h's kernel with a TMA store that starts at a negative
//      coordinate: negative y (0, -2), negative x (-4, 0), and both
//      (-4, -2) behind the prefetch (tma-tile's first box, as tma-tile
//      stored it before it kept TMA stores to non-negative starts). On an
//      H200 (driver 580.159.04) all three failed with
//      cudaErrorIllegalInstruction while h2b, the same store at (80, 40),
//      passed: hopper.cuh's tmaStore rule.
// A FAIL there confirms the rule that hopper.cuh states; a PASS refutes
// it (on that GPU and driver).
//
//===----------------------------------------------------------------------===//

#include <stencilc/hopper.cuh>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace hw = stencilc::rt::hopper;

namespace {

constexpr int kBox = 32;                      // box: kBox x kBox f32
constexpr int kBoxBytes = kBox * kBox * 4;    // 4 KiB
constexpr int kArrayX = 96, kArrayY = 160;    // the array of c, d, e
constexpr int kBulkWords = 256;               // b: 1 KiB
constexpr int kPipeBoxes = 7;                 // d: boxes down the array

/// a: init, arrive, wait. flag[0] = 1 when every thread got through.
__global__ void probeBarrier(unsigned *flag) {
  __shared__ std::uint64_t bar;
  if (threadIdx.x == 0) {
    hw::barrierInit(&bar, 1);
    hw::fenceBarrierInit();
  }
  __syncthreads();
  if (threadIdx.x == 0)
    hw::barrierArrive(&bar);
  hw::barrierWait(&bar, 0);
  __syncthreads();
  if (threadIdx.x == 0)
    flag[0] = 1;
}

/// b: a non-tensor bulk copy of kBulkWords words from src, completing on
/// an mbarrier; the block writes what landed to dst.
__global__ void probeBulk(const unsigned *src, unsigned *dst) {
  __shared__ alignas(hw::kTmaAlign) unsigned buf[kBulkWords];
  __shared__ std::uint64_t bar;
  if (threadIdx.x == 0) {
    hw::barrierInit(&bar, 1);
    hw::fenceBarrierInit();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    hw::barrierArriveExpectTx(&bar, sizeof buf);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::"
                 "bytes [%0], [%1], %2, [%3];" ::"r"(hw::sharedAddress(buf)),
                 "l"(__cvta_generic_to_global(src)),
                 "r"(static_cast<unsigned>(sizeof buf)),
                 "r"(hw::sharedAddress(&bar))
                 : "memory");
  }
  hw::barrierWait(&bar, 0);
  for (int i = threadIdx.x; i < kBulkWords; i += blockDim.x)
    dst[i] = buf[i];
}

/// c: one box at (x, y) through the map, no pipeline.
__global__ void probeTensorLoad(const __grid_constant__ CUtensorMap map,
                                unsigned *dst, int x, int y) {
  __shared__ alignas(hw::kTmaAlign) unsigned box[kBox * kBox];
  __shared__ std::uint64_t bar;
  if (threadIdx.x == 0) {
    hw::barrierInit(&bar, 1);
    hw::fenceBarrierInit();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    hw::barrierArriveExpectTx(&bar, kBoxBytes);
    hw::tmaLoad(box, &map, &bar, x, y);
  }
  hw::barrierWait(&bar, 0);
  for (int i = threadIdx.x; i < kBox * kBox; i += blockDim.x)
    dst[i] = box[i];
}

/// d: kPipeBoxes boxes down the array at x = 0, y = b * kBox - 8, through
/// TmaPipeline<3>: thread 0 produces, warp 1 consumes (one arrival).
__global__ void probePipeline(const __grid_constant__ CUtensorMap map,
                              unsigned *dst) {
  constexpr int kStages = 3;
  __shared__ alignas(hw::kTmaAlign) unsigned stage[kStages][kBox * kBox];
  __shared__ hw::TmaPipeline<kStages> pipe;
  if (threadIdx.x == 0)
    pipe.init(1);
  __syncthreads();
  hw::PipelineStage<kStages> st;
  if (threadIdx.x == 0) {
    for (int b = 0; b < kPipeBoxes; ++b) {
      pipe.producerAcquire(st);
      std::uint64_t *bar = pipe.producerExpect(st, kBoxBytes);
      hw::tmaLoad(stage[st.stage], &map, bar, 0, b * kBox - 8);
      st.advance();
    }
  } else if (threadIdx.x >= 32) {
    const int lane = threadIdx.x - 32;
    for (int b = 0; b < kPipeBoxes; ++b) {
      pipe.consumerWait(st);
      for (int i = lane; i < kBox * kBox; i += 32)
        dst[b * kBox * kBox + i] = stage[st.stage][i];
      __syncwarp();
      if (lane == 0)
        pipe.consumerRelease(st);
      st.advance();
    }
  }
}

/// e: one box of pattern values stored at (x, y).
__global__ void probeTensorStore(const __grid_constant__ CUtensorMap map,
                                 int x, int y) {
  __shared__ alignas(hw::kTmaAlign) unsigned box[kBox * kBox];
  for (int i = threadIdx.x; i < kBox * kBox; i += blockDim.x)
    box[i] = 0x5000000u + i;
  hw::fenceProxyAsync();
  __syncthreads();
  if (threadIdx.x == 0) {
    hw::tmaStore(&map, box, x, y);
    hw::tmaStoreCommit();
    hw::tmaStoreWait<0>();
  }
}

//===----------------------------------------------------------------------===//
// g .. k: tma-tile's and cluster-halo's kernels and maps.
//===----------------------------------------------------------------------===//

/// The unsigned integer as wide as T (as in tma-tile: kernels move bits).
template <int Bytes> struct BitsOf;
template <> struct BitsOf<2> { using type = unsigned short; };
template <> struct BitsOf<4> { using type = unsigned int; };
template <> struct BitsOf<8> { using type = unsigned long long; };
template <class T> using Bits = typename BitsOf<sizeof(T)>::type;

/// g, i, j: one box at (x, y, z) of `map`, loaded by thread 0 into dynamic
/// shared memory laid out as tma-tile lays it out (a 128-byte aligned
/// start, the barrier after the box); the block writes it to dst.
template <class U, int Rank>
__global__ void probeTileLoad(const __grid_constant__ CUtensorMap map, U *dst,
                              int elems, int x, int y, int z) {
  extern __shared__ unsigned char raw[];
  unsigned char *base =
      raw + (-hw::sharedAddress(raw) & (hw::kTmaAlign - 1));
  U *box = reinterpret_cast<U *>(base);
  auto *bar = reinterpret_cast<std::uint64_t *>(box + elems);
  if (threadIdx.x == 0) {
    hw::barrierInit(bar, 1);
    hw::fenceBarrierInit();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    hw::barrierArriveExpectTx(bar, elems * static_cast<int>(sizeof(U)));
    if constexpr (Rank == 2)
      hw::tmaLoad(box, &map, bar, x, y);
    else
      hw::tmaLoad(box, &map, bar, x, y, z);
  }
  hw::barrierWait(bar, 0);
  for (int i = threadIdx.x; i < elems; i += blockDim.x)
    dst[i] = box[i];
}

// h: tma-tile's kernel, its constants and its geometry.
constexpr int kStages = 3;
constexpr int kConsumerWarps = 4;
constexpr int kConsumers = 32 * kConsumerWarps;
constexpr int kTileThreads = 32 + kConsumers;

struct Geometry {
  int box[3], lo[3], count[3];
  __host__ __device__ int boxElems() const { return box[0] * box[1] * box[2]; }
  __host__ __device__ int boxes() const {
    return count[0] * count[1] * count[2];
  }
  __host__ __device__ void origin(int t, int (&c)[3]) const {
    c[0] = t % count[0] * box[0] - lo[0];
    t /= count[0];
    c[1] = t % count[1] * box[1] - lo[1];
    c[2] = t / count[1] * box[2] - lo[2];
  }
};

/// What probeStreamBoxes adds to its loads: the tensor-map prefetch, the
/// TMA store of each box (and its waits); both is tma-tile's streamBoxes.
enum StreamMode { kLoadOnly = 0, kPrefetch = 1, kStore = 2 };

/// tma-tile's streamBoxes, statement for statement, with the prefetch and
/// the store each on or off (Mode) and each box stored shifted by
/// (dx, dy) from where it was loaded (tma-tile: no shift).
template <class U, int Rank, int Mode>
__global__ void __launch_bounds__(kTileThreads)
    probeStreamBoxes(const __grid_constant__ CUtensorMap in,
                     const __grid_constant__ CUtensorMap out, U *dump,
                     Geometry g, int dx, int dy) {
  constexpr bool Prefetch = (Mode & kPrefetch) != 0;
  constexpr bool Store = (Mode & kStore) != 0;
  extern __shared__ unsigned char raw[];
  unsigned char *base =
      raw + (-hw::sharedAddress(raw) & (hw::kTmaAlign - 1));
  const int elems = g.boxElems();
  U *stage = reinterpret_cast<U *>(base);
  U *staged = stage + kStages * elems;
  auto *pipe = reinterpret_cast<hw::TmaPipeline<kStages> *>(staged + elems);
  if (threadIdx.x == 0)
    pipe->init(kConsumerWarps);
  __syncthreads();

  hw::PipelineStage<kStages> st;
  if (threadIdx.x < 32) {
    if (hw::electOne()) {
      if constexpr (Prefetch)
        hw::prefetchTensorMap(&in);
      hw::produceBoxes<Rank>(*pipe, &in, stage, elems, blockIdx.x, gridDim.x,
                             g.boxes(),
                             [&](int t, int(&c)[3]) { g.origin(t, c); });
    }
    return;
  }

  const int ct = threadIdx.x - 32;
  for (int t = blockIdx.x; t < g.boxes(); t += gridDim.x) {
    pipe->consumerWait(st);
    if constexpr (Store)
      if (ct == 0)
        hw::tmaStoreWaitRead<0>();
    hw::namedBarrier(1, kConsumers);
    const U *src = stage + st.stage * elems;
    U *boxDump = dump + static_cast<std::size_t>(t) * elems;
    for (int i = ct; i < elems; i += kConsumers) {
      const U v = src[i];
      boxDump[i] = v;
      staged[i] = v;
    }
    hw::fenceProxyAsync();
    __syncwarp();
    if (ct % 32 == 0)
      pipe->consumerRelease(st);
    hw::namedBarrier(1, kConsumers);
    if constexpr (Store)
      if (ct == 0) {
        int c[3];
        g.origin(t, c);
        if constexpr (Rank == 2)
          hw::tmaStore(&out, staged, c[0] + dx, c[1] + dy);
        else
          hw::tmaStore(&out, staged, c[0] + dx, c[1] + dy, c[2]);
        hw::tmaStoreCommit();
      }
    st.advance();
  }
  if constexpr (Store)
    if (ct == 0)
      hw::tmaStoreWait<0>();
}

// k: cluster-halo's multicast kernel, its constants and map; the box's
// origin is a parameter (cluster-halo computes it from %clusterid.x).
constexpr int kMcBoxX = 64, kMcBoxY = 16;
constexpr int kMcArrayX = 200, kMcArrayY = 40;
constexpr int kMcThreads = 128;

__global__ void __launch_bounds__(kMcThreads)
    probeMulticast(const __grid_constant__ CUtensorMap slices,
                   unsigned *landed, int x, int y) {
  __shared__ alignas(hw::kTmaAlign) unsigned box[kMcBoxY][kMcBoxX];
  __shared__ std::uint64_t bar;
  const unsigned rank = hw::clusterRank(), size = hw::clusterSize();
  if (threadIdx.x == 0) {
    hw::barrierInit(&bar, 1);
    hw::fenceBarrierInit();
    hw::barrierArriveExpectTx(&bar, sizeof box);
  }
  hw::clusterSync();
  if (threadIdx.x == 0) {
    const int rows = kMcBoxY / static_cast<int>(size);
    const std::uint16_t all = static_cast<std::uint16_t>((1u << size) - 1u);
    hw::tmaLoadMulticast(&box[rank * rows][0], &slices, &bar, all, x,
                         y + static_cast<int>(rank) * rows);
  }
  hw::barrierWait(&bar, 0);
  for (int i = threadIdx.x; i < kMcBoxY * kMcBoxX; i += blockDim.x)
    landed[blockIdx.x * kMcBoxY * kMcBoxX + i] = box[i / kMcBoxX][i % kMcBoxX];
  hw::clusterSync();
}

//===----------------------------------------------------------------------===//
// Host.
//===----------------------------------------------------------------------===//

unsigned arrayValue(int x, int y) { return 0x1000000u + y * 4096u + x; }

/// The box at (x0, y0) of the array as TMA loads it (zero outside).
unsigned boxValue(int x0, int y0, int i) {
  const int x = x0 + i % kBox, y = y0 + i / kBox;
  return x >= 0 && x < kArrayX && y >= 0 && y < kArrayY ? arrayValue(x, y)
                                                        : 0u;
}

/// PROBE (the default sequence), PROBE-SOLO (one step alone) or
/// PROBE-LIMIT (a limit).
const char *gTag = "PROBE";

/// Prints the launch's line; returns whether it passed.
bool report(const char *step, cudaError_t launch, long long bad,
            const char *what = "") {
  cudaError_t e = launch;
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::printf("%s %s FAIL (%s: %s)\n", gTag, step, cudaGetErrorName(e),
                cudaGetErrorString(e));
    std::fflush(stdout);
    return false;
  }
  if (bad) {
    std::printf("%s %s FAIL (%lld wrong elements%s)\n", gTag, step, bad,
                what);
    std::fflush(stdout);
    return false;
  }
  std::printf("%s %s PASS\n", gTag, step);
  std::fflush(stdout);
  return true;
}

/// Within a step: a failing runtime call fails the step.
#define STEP_CUDA(step, expr)                                                  \
  do {                                                                         \
    const cudaError_t e_ = (expr);                                             \
    if (e_ != cudaSuccess) {                                                   \
      std::printf("%s %s FAIL (%s: %s, at %s)\n", gTag, step,                  \
                  cudaGetErrorName(e_), cudaGetErrorString(e_), #expr);        \
      std::fflush(stdout);                                                     \
      return false;                                                            \
    }                                                                          \
  } while (0)

/// What steps a .. f share: the 96 x 160 array of arrayValue, its maps.
struct Ctx {
  std::vector<unsigned> array, out;
  unsigned *darray = nullptr, *dout = nullptr, *dstore = nullptr;
  CUtensorMap loadMap, storeMap;
  std::size_t outCount = std::size_t(kPipeBoxes) * kBox * kBox;
  cudaError_t fetch(std::size_t n) {
    return cudaMemcpy(out.data(), dout, n * sizeof(unsigned),
                      cudaMemcpyDeviceToHost);
  }
};

bool setup(Ctx &c) {
  const std::size_t arrayCount = std::size_t(kArrayX) * kArrayY;
  c.array.resize(arrayCount);
  for (int y = 0; y < kArrayY; ++y)
    for (int x = 0; x < kArrayX; ++x)
      c.array[y * kArrayX + x] = arrayValue(x, y);
  c.out.resize(c.outCount);
  STEP_CUDA("setup", cudaMalloc(&c.darray, arrayCount * sizeof(unsigned)));
  STEP_CUDA("setup", cudaMalloc(&c.dout, c.outCount * sizeof(unsigned)));
  STEP_CUDA("setup", cudaMalloc(&c.dstore, arrayCount * sizeof(unsigned)));
  STEP_CUDA("setup", cudaMemcpy(c.darray, c.array.data(),
                                arrayCount * sizeof(unsigned),
                                cudaMemcpyHostToDevice));
  // f32 maps: they move 4-byte words, whatever they hold.
  const std::uint64_t extent[2] = {kArrayX, kArrayY}, pitch[1] = {kArrayX};
  const std::uint32_t box[2] = {kBox, kBox};
  hw::MapResult r = hw::encodeTileMap(
      &c.loadMap, reinterpret_cast<const float *>(c.darray), extent, pitch,
      box);
  if (r)
    r = hw::encodeTileMap(&c.storeMap,
                          reinterpret_cast<const float *>(c.dstore), extent,
                          pitch, box);
  if (!r) {
    std::printf("%s setup FAIL (encoding the maps: %s)\n", gTag,
                r.message.c_str());
    return false;
  }
  return true;
}

bool stepA(Ctx &c) {
  STEP_CUDA("a", cudaMemset(c.dout, 0, sizeof(unsigned)));
  probeBarrier<<<1, 64>>>(c.dout);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  if (e == cudaSuccess)
    e = c.fetch(1);
  return report("a-mbarrier-arrive-wait", e, c.out[0] == 1 ? 0 : 1);
}

bool stepB(Ctx &c) {
  STEP_CUDA("b", cudaMemset(c.dout, 0xFF, kBulkWords * sizeof(unsigned)));
  probeBulk<<<1, 64>>>(c.darray, c.dout);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  if (e == cudaSuccess)
    e = c.fetch(kBulkWords);
  long long bad = 0;
  for (int i = 0; e == cudaSuccess && i < kBulkWords; ++i)
    bad += c.out[i] != c.array[i];
  return report("b-bulk-copy-expect-tx", e, bad);
}

/// c, f and a limit: probeTensorLoad's box at (x, y) of the 96 x 160 map.
bool loadProbeBox(Ctx &c, const char *step, int x, int y) {
  STEP_CUDA(step, cudaMemset(c.dout, 0xFF, kBox * kBox * sizeof(unsigned)));
  probeTensorLoad<<<1, 64>>>(c.loadMap, c.dout, x, y);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  if (e == cudaSuccess)
    e = c.fetch(kBox * kBox);
  long long bad = 0;
  for (int i = 0; e == cudaSuccess && i < kBox * kBox; ++i)
    bad += c.out[i] != boxValue(x, y, i);
  return report(step, e, bad);
}

/// c: a box across the left and top edges.
bool stepC(Ctx &c) { return loadProbeBox(c, "c-tensor-load-2d", -8, -4); }

bool stepD(Ctx &c) {
  STEP_CUDA("d", cudaMemset(c.dout, 0xFF, c.outCount * sizeof(unsigned)));
  probePipeline<<<1, 64>>>(c.loadMap, c.dout);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  if (e == cudaSuccess)
    e = c.fetch(c.outCount);
  long long bad = 0;
  for (int b = 0; e == cudaSuccess && b < kPipeBoxes; ++b)
    for (int i = 0; i < kBox * kBox; ++i)
      bad += c.out[b * kBox * kBox + i] != boxValue(0, b * kBox - 8, i);
  return report("d-tensor-load-pipeline", e, bad);
}

/// e and a limit: a box stored at (x, y); its outside part is not written.
bool storeProbeBox(Ctx &c, const char *step, int x, int y) {
  const std::size_t arrayCount = c.array.size();
  STEP_CUDA(step, cudaMemset(c.dstore, 0, arrayCount * sizeof(unsigned)));
  probeTensorStore<<<1, 64>>>(c.storeMap, x, y);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  std::vector<unsigned> stored(arrayCount);
  if (e == cudaSuccess)
    e = cudaMemcpy(stored.data(), c.dstore, arrayCount * sizeof(unsigned),
                   cudaMemcpyDeviceToHost);
  long long bad = 0;
  for (int j = 0; e == cudaSuccess && j < kArrayY; ++j)
    for (int i = 0; i < kArrayX; ++i) {
      const int k = (j - y) * kBox + (i - x);
      const bool inBox = i >= x && i < x + kBox && j >= y && j < y + kBox;
      bad += stored[j * kArrayX + i] != (inBox ? 0x5000000u + k : 0u);
    }
  return report(step, e, bad);
}

/// e: a box across the right edge.
bool stepE(Ctx &c) {
  return storeProbeBox(c, "e-tensor-store-2d", kArrayX - 16, 40);
}

/// f: zero fill at the far corner, the far edges, the near corner; x a
/// multiple of 4 elements (16 bytes) everywhere.
bool stepF(Ctx &c) {
  return loadProbeBox(c, "f1-load-2d-far-corner", kArrayX - 12,
                      kArrayY - 20) &&
         loadProbeBox(c, "f2-load-2d-far-x-odd-y", kArrayX - 28, 131) &&
         loadProbeBox(c, "f3-load-2d-near-corner-odd-y", -28, -31);
}

/// A nonzero bit pattern per index (tma-tile's).
template <class U> U pattern(std::uint64_t i, std::uint64_t salt) {
  std::uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ salt;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  const U u = static_cast<U>(x);
  return u ? u : U(1);
}

/// One of tma-tile's arrays with its input and output maps, set up as
/// tma-tile's runCase sets them up (pitches, guard rows, sentinel).
template <class T, int Rank> struct TileArray {
  using U = Bits<T>;
  int extent[3], box[3];
  std::uint64_t inPitch = 0, outPitch = 0, outRows = 0, outPlanes = 0;
  std::vector<U> host;
  U *din = nullptr, *dout = nullptr;
  U sentinel = pattern<U>(~0ull, 11);
  CUtensorMap in, out;

  TileArray(const int (&e)[3], const int (&b)[3]) {
    for (int i = 0; i < 3; ++i)
      extent[i] = e[i], box[i] = b[i];
  }
  ~TileArray() {
    cudaFree(din);
    cudaFree(dout);
  }
  int boxElems() const { return box[0] * box[1] * box[2]; }
  std::size_t outCount() const { return outPitch * outRows * outPlanes; }
  /// The element (x, y, z) as a load sees it: zero outside the array.
  U at(long long x, long long y, long long z) const {
    const bool inside = x >= 0 && x < extent[0] && y >= 0 &&
                        y < extent[1] && z >= 0 && z < extent[2];
    return inside ? host[(z * extent[1] + y) * inPitch + x] : U(0);
  }

  bool init(const char *step) {
    constexpr int kVec = 16 / sizeof(T);
    const std::uint64_t ex = extent[0], ey = extent[1], ez = extent[2];
    inPitch = (ex + kVec) / kVec * kVec;
    outPitch = inPitch + kVec;
    outRows = ey + 2;
    outPlanes = Rank == 3 ? ez + 1 : 1;
    const std::uint64_t inCount = inPitch * ey * ez;
    host.assign(inCount, pattern<U>(~0ull, 7));
    for (std::uint64_t z = 0; z < ez; ++z)
      for (std::uint64_t y = 0; y < ey; ++y)
        for (std::uint64_t x = 0; x < ex; ++x)
          host[(z * ey + y) * inPitch + x] =
              pattern<U>((z * ey + y) * ex + x, 3);
    STEP_CUDA(step, cudaMalloc(&din, inCount * sizeof(U)));
    STEP_CUDA(step, cudaMalloc(&dout, outCount() * sizeof(U)));
    STEP_CUDA(step, cudaMemcpy(din, host.data(), inCount * sizeof(U),
                               cudaMemcpyHostToDevice));
    const std::vector<U> guard(outCount(), sentinel);
    STEP_CUDA(step, cudaMemcpy(dout, guard.data(), outCount() * sizeof(U),
                               cudaMemcpyHostToDevice));
    hw::MapResult r;
    if constexpr (Rank == 2) {
      const std::uint64_t e[2] = {ex, ey}, pin[1] = {inPitch},
                          pout[1] = {outPitch};
      const std::uint32_t b[2] = {std::uint32_t(box[0]),
                                  std::uint32_t(box[1])};
      r = hw::encodeTileMap(&in, reinterpret_cast<const T *>(din), e, pin, b);
      if (r)
        r = hw::encodeTileMap(&out, reinterpret_cast<const T *>(dout), e,
                              pout, b);
    } else {
      const std::uint64_t e[3] = {ex, ey, ez},
                          pin[2] = {inPitch, inPitch * ey},
                          pout[2] = {outPitch, outPitch * outRows};
      const std::uint32_t b[3] = {std::uint32_t(box[0]),
                                  std::uint32_t(box[1]),
                                  std::uint32_t(box[2])};
      r = hw::encodeTileMap(&in, reinterpret_cast<const T *>(din), e, pin, b);
      if (r)
        r = hw::encodeTileMap(&out, reinterpret_cast<const T *>(dout), e,
                              pout, b);
    }
    if (!r) {
      std::printf("%s %s FAIL (encoding the maps: %s)\n", gTag, step,
                  r.message.c_str());
      return false;
    }
    return true;
  }

  /// Counts the elements of `got` (a box at (x, y, z) as it landed) that
  /// differ from the array; prints the first few.
  long long check(const char *step, const std::vector<U> &got, int x, int y,
                  int z) const {
    long long bad = 0;
    for (int k = 0; k < box[2]; ++k)
      for (int j = 0; j < box[1]; ++j)
        for (int i = 0; i < box[0]; ++i) {
          const U want = at(x + i, y + j, z + k);
          const U g = got[(k * box[1] + j) * box[0] + i];
          if (g != want && bad++ < 3)
            std::printf("  %s: element (%d,%d,%d): got %#llx, want %#llx\n",
                        step, i, j, k, static_cast<unsigned long long>(g),
                        static_cast<unsigned long long>(want));
        }
    return bad;
  }
};

/// g, i, j: probeTileLoad's box at (x, y, z) of a's input map.
template <class T, int Rank>
bool loadTileBox(TileArray<T, Rank> &a, const char *step, int x, int y,
                 int z = 0) {
  using U = Bits<T>;
  const int elems = a.boxElems();
  U *ddst = nullptr;
  STEP_CUDA(step, cudaMalloc(&ddst, elems * sizeof(U)));
  STEP_CUDA(step, cudaMemset(ddst, 0xA5, elems * sizeof(U)));
  const std::size_t smem =
      hw::kTmaAlign + elems * sizeof(U) + sizeof(std::uint64_t);
  auto kernel = probeTileLoad<U, Rank>;
  STEP_CUDA(step, cudaFuncSetAttribute(
                      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                      int(smem)));
  kernel<<<1, 128, smem>>>(a.in, ddst, elems, x, y, z);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  std::vector<U> got(elems);
  if (e == cudaSuccess)
    e = cudaMemcpy(got.data(), ddst, elems * sizeof(U),
                   cudaMemcpyDeviceToHost);
  cudaFree(ddst);
  return report(step, e, e == cudaSuccess ? a.check(step, got, x, y, z) : 0);
}

/// tma-tile's first case, with the first box's x a multiple of 16 bytes.
const int kTileExtent2[3] = {1001, 77, 1};
const int kTileLo2[3] = {4, 2, 0};

/// g: tma-tile's first case's maps and shared-memory layout, its first
/// box and its last (across the far corner), loaded by one thread.
bool stepG(Ctx &) {
  TileArray<float, 2> a(kTileExtent2, {64, 16, 1});
  if (!a.init("g"))
    return false;
  const int lastX = (1001 + 4 + 63) / 64 * 64 - 64 - 4; // 956
  const int lastY = (77 + 2 + 15) / 16 * 16 - 16 - 2;   // 62
  return loadTileBox(a, "g1-tile-2d-f32-first-box", -kTileLo2[0],
                     -kTileLo2[1]) &&
         loadTileBox(a, "g2-tile-2d-f32-last-box", lastX, lastY);
}

/// h: tma-tile's kernel, one block, one box (tma-tile's first, loaded at
/// (-4, -2)), with the prefetch and the store as Mode says, the store at
/// (sx, sy).
template <int Mode>
bool streamOneBox(const char *step, int sx = -kTileLo2[0],
                  int sy = -kTileLo2[1]) {
  constexpr bool Full = (Mode & kStore) != 0;
  using U = Bits<float>;
  TileArray<float, 2> a(kTileExtent2, {64, 16, 1});
  if (!a.init(step))
    return false;
  Geometry g;
  for (int i = 0; i < 3; ++i) {
    g.box[i] = a.box[i];
    g.lo[i] = kTileLo2[i];
    g.count[i] = 1;
  }
  const int elems = g.boxElems();
  U *ddump = nullptr;
  STEP_CUDA(step, cudaMalloc(&ddump, elems * sizeof(U)));
  STEP_CUDA(step, cudaMemset(ddump, 0xA5, elems * sizeof(U)));
  const std::size_t smem = hw::kTmaAlign +
                           (kStages + 1) * elems * sizeof(U) +
                           sizeof(hw::TmaPipeline<kStages>);
  auto kernel = probeStreamBoxes<U, 2, Mode>;
  STEP_CUDA(step, cudaFuncSetAttribute(
                      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                      int(smem)));
  int c0[3];
  g.origin(0, c0);
  kernel<<<1, kTileThreads, smem>>>(a.in, a.out, ddump, g, sx - c0[0],
                                    sy - c0[1]);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  std::vector<U> got(elems), out(a.outCount());
  if (e == cudaSuccess)
    e = cudaMemcpy(got.data(), ddump, elems * sizeof(U),
                   cudaMemcpyDeviceToHost);
  if (e == cudaSuccess)
    e = cudaMemcpy(out.data(), a.dout, out.size() * sizeof(U),
                   cudaMemcpyDeviceToHost);
  cudaFree(ddump);
  long long bad = 0;
  if (e == cudaSuccess) {
    int c[3];
    g.origin(0, c);
    bad = a.check(step, got, c[0], c[1], c[2]);
    // The output: the part of the box stored at (sx, sy) inside the array
    // (with a store), the rest still the sentinel. The box holds what was
    // loaded at c, zeros outside the input.
    for (std::uint64_t y = 0; y < a.outRows; ++y)
      for (std::uint64_t x = 0; x < a.outPitch; ++x) {
        const long long bx = (long long)x - sx, by = (long long)y - sy;
        const bool stored = Full && x < std::uint64_t(a.extent[0]) &&
                            y < std::uint64_t(a.extent[1]) && bx >= 0 &&
                            bx < g.box[0] && by >= 0 && by < g.box[1];
        const U want = stored ? a.at(c[0] + bx, c[1] + by, 0) : a.sentinel;
        if (out[y * a.outPitch + x] != want && bad++ < 3)
          std::printf("  %s: output (%llu,%llu): got %#llx, want %#llx\n",
                      step, (unsigned long long)x, (unsigned long long)y,
                      (unsigned long long)out[y * a.outPitch + x],
                      (unsigned long long)want);
      }
  }
  return report(step, e, bad);
}

// h1: the loads alone; h2a-h2d: h1 with one addition each, so that what
// broke h2e (tma-tile's old kernel in full) shows; h2e: the prefetch and
// the store at tma-tile's first box, (-4, -2): negative x and y. h1-h2b
// are steps; h2c-h2e, stores that start at a negative coordinate, are
// limits (hopper.cuh, tmaStore).
bool stepH1(Ctx &) {
  return streamOneBox<kLoadOnly>("h1-warp-specialized-load");
}
/// h2a: + the tensor-map prefetch (generic address of the parameter).
bool stepH2a(Ctx &) {
  return streamOneBox<kPrefetch>("h2a-warp-specialized-prefetch");
}
/// h2b: + the store at step e's coordinates (80, 40): non-negative.
bool stepH2b(Ctx &) {
  return streamOneBox<kStore>("h2b-warp-specialized-store-e-coords",
                              kArrayX - 16, 40);
}
/// h2c (a limit): + the store at negative y only (x = 0).
bool limitH2c(Ctx &) {
  return streamOneBox<kStore>("h2c-warp-specialized-store-y-negative", 0,
                              -kTileLo2[1]);
}
/// h2d (a limit): + the store at negative x only (x = -4, 16 bytes;
/// y = 0).
bool limitH2d(Ctx &) {
  return streamOneBox<kStore>("h2d-warp-specialized-store-x-negative",
                              -kTileLo2[0], 0);
}
/// h2e (a limit): tma-tile's old kernel in full (the old h2).
bool limitH2e(Ctx &) {
  return streamOneBox<kPrefetch | kStore>(
      "h2e-warp-specialized-prefetch-store");
}

/// i: tma-tile's 3-D maps (its boxes), one box each at tma-tile's first
/// box's y and z, x a multiple of 16 bytes.
template <class T>
bool load3d(const char *step, int boxX, int boxZ) {
  TileArray<T, 3> a({203, 37, 11}, {boxX, 8, boxZ});
  if (!a.init(step))
    return false;
  return loadTileBox(a, step, -int(16 / sizeof(T)), -1, -2);
}

bool stepI(Ctx &) {
  return load3d<float>("i1-tile-3d-f32", 32, 4) &&
         load3d<double>("i2-tile-3d-f64", 16, 4) &&
         load3d<__half>("i3-tile-3d-f16", 64, 2);
}

/// j: tma-tile's other 2-D maps, one box each.
template <class T> bool load2d(const char *step, int boxX) {
  TileArray<T, 2> a(kTileExtent2, {boxX, 16, 1});
  if (!a.init(step))
    return false;
  return loadTileBox(a, step, -int(16 / sizeof(T)), -2);
}

bool stepJ(Ctx &) {
  return load2d<__half>("j1-tile-2d-f16", 64) &&
         load2d<double>("j2-tile-2d-f64", 32) &&
         load2d<__nv_bfloat16>("j3-tile-2d-bf16", 64);
}

/// k and a limit: probeMulticast in one cluster of 2 on cluster-halo's
/// map (200 x 40, box 64 x 8), the box at (x, y).
bool multicastBox(const char *step, int x, int y) {
  constexpr int kCluster = 2;
  std::vector<unsigned> array(kMcArrayX * kMcArrayY);
  for (int i = 0; i < kMcArrayX * kMcArrayY; ++i)
    array[i] = (unsigned(i / kMcArrayX) * 100003u + unsigned(i % kMcArrayX) +
                7u) |
               1u;
  const std::size_t landedCount = std::size_t(kCluster) * kMcBoxX * kMcBoxY;
  unsigned *darray = nullptr, *dlanded = nullptr;
  STEP_CUDA(step, cudaMalloc(&darray, array.size() * sizeof(unsigned)));
  STEP_CUDA(step, cudaMalloc(&dlanded, landedCount * sizeof(unsigned)));
  STEP_CUDA(step, cudaMemcpy(darray, array.data(),
                             array.size() * sizeof(unsigned),
                             cudaMemcpyHostToDevice));
  STEP_CUDA(step, cudaMemset(dlanded, 0xFF, landedCount * sizeof(unsigned)));
  CUtensorMap map;
  const std::uint64_t extent[2] = {kMcArrayX, kMcArrayY},
                      pitch[1] = {kMcArrayX};
  const std::uint32_t box[2] = {kMcBoxX, std::uint32_t(kMcBoxY / kCluster)};
  const hw::MapResult r = hw::encodeTileMap(
      &map, reinterpret_cast<const float *>(darray), extent, pitch, box);
  if (!r) {
    std::printf("%s %s FAIL (encoding the map: %s)\n", gTag, step,
                r.message.c_str());
    return false;
  }
  cudaError_t e =
      hw::launchCluster(probeMulticast, dim3(kCluster), dim3(kMcThreads), 0,
                        nullptr, dim3(kCluster), map, dlanded, x, y);
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  std::vector<unsigned> landed(landedCount);
  if (e == cudaSuccess)
    e = cudaMemcpy(landed.data(), dlanded, landedCount * sizeof(unsigned),
                   cudaMemcpyDeviceToHost);
  cudaFree(darray);
  cudaFree(dlanded);
  long long bad = 0;
  for (int b = 0; e == cudaSuccess && b < kCluster; ++b)
    for (int j = 0; j < kMcBoxY; ++j)
      for (int i = 0; i < kMcBoxX; ++i) {
        const int ax = x + i, ay = y + j;
        const unsigned want =
            ax >= 0 && ax < kMcArrayX && ay >= 0 && ay < kMcArrayY
                ? array[ay * kMcArrayX + ax]
                : 0u;
        const unsigned got = landed[(b * kMcBoxY + j) * kMcBoxX + i];
        if (got != want && bad++ < 3)
          std::printf("  %s: block %d element (%d,%d): got %#x, want %#x\n",
                      step, b, i, j, got, want);
      }
  return report(step, e, bad);
}

/// k: cluster-halo's first cluster's box.
bool stepK(Ctx &) { return multicastBox("k-multicast-cluster-2", -8, -4); }

// The limits: innermost coordinates that are no multiple of 16 bytes.
bool limitLoad(Ctx &c) {
  return loadProbeBox(c, "limit-load-x-12-bytes-off", -3, -2);
}
bool limitStore(Ctx &c) {
  return storeProbeBox(c, "limit-store-x-4-bytes-off", kArrayX - 15, 40);
}
bool limitMulticast(Ctx &) {
  return multicastBox("limit-multicast-x-8-bytes-off", 42, -4);
}

struct Step {
  const char *name;
  bool (*run)(Ctx &);
};

const Step kSteps[] = {{"a", stepA},     {"b", stepB},     {"c", stepC},
                       {"d", stepD},     {"e", stepE},     {"f", stepF},
                       {"g", stepG},     {"h1", stepH1},   {"h2a", stepH2a},
                       {"h2b", stepH2b}, {"i", stepI},     {"j", stepJ},
                       {"k", stepK}};
const Step kLimits[] = {{"limit-load", limitLoad},
                        {"limit-store", limitStore},
                        {"limit-multicast", limitMulticast},
                        {"h2c", limitH2c},
                        {"h2d", limitH2d},
                        {"h2e", limitH2e}};

} // namespace

int main(int argc, char **argv) {
  if (argc == 2 && !std::strcmp(argv[1], "--list")) {
    for (const Step &s : kSteps)
      std::printf("%s\n", s.name);
    return 0;
  }
  if (argc == 2 && !std::strcmp(argv[1], "--limits")) {
    for (const Step &s : kLimits)
      std::printf("%s\n", s.name);
    return 0;
  }
  const Step *only = nullptr;
  if (argc == 2) {
    for (const Step &s : kSteps)
      if (!std::strcmp(argv[1], s.name))
        only = &s, gTag = "PROBE-SOLO";
    for (const Step &s : kLimits)
      if (!std::strcmp(argv[1], s.name))
        only = &s, gTag = "PROBE-LIMIT";
  }
  if (argc > 2 || (argc == 2 && !only)) {
    std::fprintf(stderr, "usage: tma-probe [--list | --limits | STEP]\n");
    return 2;
  }

  int device = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                             device) != cudaSuccess ||
      major < 9) {
    std::printf("%s setup FAIL (needs a GPU of compute capability 9.0)\n",
                gTag);
    return 1;
  }
  Ctx ctx;
  if (!setup(ctx))
    return 1;
  if (only)
    return only->run(ctx) ? 0 : 1;
  for (const Step &s : kSteps)
    if (!s.run(ctx))
      return 1;
  cudaFree(ctx.darray);
  cudaFree(ctx.dout);
  cudaFree(ctx.dstore);
  std::printf("tma-probe: PASS\n");
  return 0;
}
