//===- tma-probe.cu - Which TMA step breaks, one launch per step ----------===//
//
// A GPU probe of runtime/include/stencilc/hopper.cuh, run first by
// test/gpu/hopper.sh: when the TMA tests die (an illegal instruction, a
// hang), it shows the first step that does. Each step is its own kernel
// launch, checked with cudaDeviceSynchronize, in order of what it adds:
//   a  mbarrier init, one arrival, wait (no copy engine)
//   b  expect_tx and a plain cp.async.bulk (no tensor map) of 1 KiB from
//      global to shared memory completing on the mbarrier
//   c  one 2-D cp.async.bulk.tensor load of a 32 x 32 f32 box through a
//      `const __grid_constant__ CUtensorMap` parameter, no pipeline
//   d  the same map's boxes through TmaPipeline<3>, one producer thread
//      and one consumer warp, wrapping around the stages
//   e  one 2-D TMA store of a 32 x 32 box
// Prints `PROBE <step> PASS` or `PROBE <step> FAIL (<why>)` per step and
// stops at the first failure (an error such as an illegal instruction is
// sticky: every later launch would fail too), exiting 1.
//
//===----------------------------------------------------------------------===//

#include <stencilc/hopper.cuh>

#include <cstdio>
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

unsigned arrayValue(int x, int y) { return 0x1000000u + y * 4096u + x; }

/// The box at (x0, y0) of the array as TMA loads it (zero outside).
unsigned boxValue(int x0, int y0, int i) {
  const int x = x0 + i % kBox, y = y0 + i / kBox;
  return x >= 0 && x < kArrayX && y >= 0 && y < kArrayY ? arrayValue(x, y)
                                                        : 0u;
}

/// Prints the step's line; returns whether it passed.
bool report(const char *step, cudaError_t launch, long long bad,
            const char *what = "") {
  cudaError_t e = launch;
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::printf("PROBE %s FAIL (%s: %s)\n", step, cudaGetErrorName(e),
                cudaGetErrorString(e));
    return false;
  }
  if (bad) {
    std::printf("PROBE %s FAIL (%lld wrong elements%s)\n", step, bad, what);
    return false;
  }
  std::printf("PROBE %s PASS\n", step);
  std::fflush(stdout);
  return true;
}

#define PROBE_CUDA(step, expr)                                                 \
  do {                                                                         \
    const cudaError_t e_ = (expr);                                             \
    if (e_ != cudaSuccess) {                                                   \
      std::printf("PROBE %s FAIL (%s: %s, at %s)\n", step,                    \
                  cudaGetErrorName(e_), cudaGetErrorString(e_), #expr);        \
      return 1;                                                                \
    }                                                                          \
  } while (0)

} // namespace

int main() {
  int device = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                             device) != cudaSuccess ||
      major < 9) {
    std::printf("PROBE setup FAIL (needs a GPU of compute capability 9.0)\n");
    return 1;
  }

  const std::size_t arrayCount = std::size_t(kArrayX) * kArrayY;
  std::vector<unsigned> array(arrayCount);
  for (int y = 0; y < kArrayY; ++y)
    for (int x = 0; x < kArrayX; ++x)
      array[y * kArrayX + x] = arrayValue(x, y);
  unsigned *darray = nullptr, *dout = nullptr, *dstore = nullptr;
  const std::size_t outCount = std::size_t(kPipeBoxes) * kBox * kBox;
  PROBE_CUDA("setup", cudaMalloc(&darray, arrayCount * sizeof(unsigned)));
  PROBE_CUDA("setup", cudaMalloc(&dout, outCount * sizeof(unsigned)));
  PROBE_CUDA("setup", cudaMalloc(&dstore, arrayCount * sizeof(unsigned)));
  PROBE_CUDA("setup", cudaMemcpy(darray, array.data(),
                                 arrayCount * sizeof(unsigned),
                                 cudaMemcpyHostToDevice));
  std::vector<unsigned> out(outCount);
  auto fetch = [&](std::size_t n) {
    return cudaMemcpy(out.data(), dout, n * sizeof(unsigned),
                      cudaMemcpyDeviceToHost);
  };

  // a
  PROBE_CUDA("a", cudaMemset(dout, 0, sizeof(unsigned)));
  probeBarrier<<<1, 64>>>(dout);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  if (e == cudaSuccess)
    e = fetch(1);
  if (!report("a-mbarrier-arrive-wait", e, out[0] == 1 ? 0 : 1))
    return 1;

  // b
  PROBE_CUDA("b", cudaMemset(dout, 0xFF, kBulkWords * sizeof(unsigned)));
  probeBulk<<<1, 64>>>(darray, dout);
  e = cudaGetLastError();
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  if (e == cudaSuccess)
    e = fetch(kBulkWords);
  long long bad = 0;
  for (int i = 0; e == cudaSuccess && i < kBulkWords; ++i)
    bad += out[i] != array[i];
  if (!report("b-bulk-copy-expect-tx", e, bad))
    return 1;

  // The maps (f32: they move 4-byte words, whatever they hold).
  CUtensorMap loadMap, storeMap;
  const std::uint64_t extent[2] = {kArrayX, kArrayY}, pitch[1] = {kArrayX};
  const std::uint32_t box[2] = {kBox, kBox};
  hw::MapResult r = hw::encodeTileMap(
      &loadMap, reinterpret_cast<const float *>(darray), extent, pitch, box);
  if (r)
    r = hw::encodeTileMap(&storeMap, reinterpret_cast<const float *>(dstore),
                          extent, pitch, box);
  if (!r) {
    std::printf("PROBE c-tensor-load FAIL (encoding the map: %s)\n",
                r.message.c_str());
    return 1;
  }

  // c: a box across the left and top edges.
  const int cx = -8, cy = -4;
  PROBE_CUDA("c", cudaMemset(dout, 0xFF, kBox * kBox * sizeof(unsigned)));
  probeTensorLoad<<<1, 64>>>(loadMap, dout, cx, cy);
  e = cudaGetLastError();
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  if (e == cudaSuccess)
    e = fetch(kBox * kBox);
  bad = 0;
  for (int i = 0; e == cudaSuccess && i < kBox * kBox; ++i)
    bad += out[i] != boxValue(cx, cy, i);
  if (!report("c-tensor-load-2d", e, bad))
    return 1;

  // d
  PROBE_CUDA("d", cudaMemset(dout, 0xFF, outCount * sizeof(unsigned)));
  probePipeline<<<1, 64>>>(loadMap, dout);
  e = cudaGetLastError();
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  if (e == cudaSuccess)
    e = fetch(outCount);
  bad = 0;
  for (int b = 0; e == cudaSuccess && b < kPipeBoxes; ++b)
    for (int i = 0; i < kBox * kBox; ++i)
      bad += out[b * kBox * kBox + i] != boxValue(0, b * kBox - 8, i);
  if (!report("d-tensor-load-pipeline", e, bad))
    return 1;

  // e: a box across the right edge (its outside part is not written).
  const int ex = kArrayX - 16, ey = 40;
  PROBE_CUDA("e", cudaMemset(dstore, 0, arrayCount * sizeof(unsigned)));
  probeTensorStore<<<1, 64>>>(storeMap, ex, ey);
  e = cudaGetLastError();
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  std::vector<unsigned> stored(arrayCount);
  if (e == cudaSuccess)
    e = cudaMemcpy(stored.data(), dstore, arrayCount * sizeof(unsigned),
                   cudaMemcpyDeviceToHost);
  bad = 0;
  for (int y = 0; e == cudaSuccess && y < kArrayY; ++y)
    for (int x = 0; x < kArrayX; ++x) {
      const int i = (y - ey) * kBox + (x - ex);
      const bool inBox = x >= ex && x < ex + kBox && y >= ey && y < ey + kBox;
      bad += stored[y * kArrayX + x] != (inBox ? 0x5000000u + i : 0u);
    }
  if (!report("e-tensor-store-2d", e, bad))
    return 1;

  cudaFree(darray);
  cudaFree(dout);
  cudaFree(dstore);
  std::printf("tma-probe: PASS\n");
  return 0;
}
