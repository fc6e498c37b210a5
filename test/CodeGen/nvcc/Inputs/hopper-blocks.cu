//===- hopper-blocks.cu - Every building block of hopper.cuh, compiled ----===//
//
// Input of test/CodeGen/nvcc/hopper-header.test: one kernel per group of
// building blocks of runtime/include/stencilc/hopper.cuh, instantiated so
// that nvcc emits their PTX, and a host main() that encodes the tensor
// maps (it links and runs without a GPU only as far as the driver lets it;
// the test does not run it). The kernels' names are what the test's
// CHECK-LABELs find.
//
//===----------------------------------------------------------------------===//

#include <stencilc/hopper.cuh>

namespace hw = stencilc::rt::hopper;

/// The mbarrier wrappers and a 3-stage pipeline of 2-D boxes; a TMA store;
/// a named barrier.
__global__ void pipeline2d(const __grid_constant__ CUtensorMap in,
                           const __grid_constant__ CUtensorMap out,
                           int boxes) {
  constexpr int kStages = 3, kW = 32, kH = 8;
  __shared__ alignas(hw::kTmaAlign) float buf[kStages][kH][kW];
  __shared__ hw::TmaPipeline<kStages> pipe;
  if (threadIdx.x == 0) {
    hw::prefetchTensorMap(&in);
    pipe.init(blockDim.x / 32);
  }
  __syncthreads();
  hw::PipelineStage<kStages> st;
  for (int b = 0; b < boxes; ++b) {
    if (threadIdx.x == 0) {
      pipe.producerAcquire(st);
      std::uint64_t *bar = pipe.producerExpect(st, sizeof buf[0]);
      hw::tmaLoad(buf[st.stage], &in, bar, b * kW, -1);
    }
    pipe.consumerWait(st);
    hw::fenceProxyAsync();
    hw::namedBarrier(1, blockDim.x);
    if (threadIdx.x == 0) {
      hw::tmaStore(&out, buf[st.stage], b * kW, 0);
      hw::tmaStoreCommit();
      hw::tmaStoreWaitRead<0>();
    }
    __syncwarp();
    if (threadIdx.x % 32 == 0)
      pipe.consumerRelease(st);
    st.advance();
  }
  if (threadIdx.x == 0)
    hw::tmaStoreWait<0>();
}

/// 3-D loads and stores, the lone expect_tx, try_wait, and elect.sync.
__global__ void tile3d(const __grid_constant__ CUtensorMap in,
                       const __grid_constant__ CUtensorMap out, int *flag) {
  __shared__ alignas(hw::kTmaAlign) double box[4][4][16];
  __shared__ std::uint64_t bar;
  if (threadIdx.x == 0) {
    hw::barrierInit(&bar, 1);
    hw::fenceBarrierInit();
  }
  __syncthreads();
  if (threadIdx.x < 32 && hw::electOne()) {
    hw::barrierExpectTx(&bar, sizeof box);
    hw::tmaLoad(box, &in, &bar, -2, 3, 5);
    hw::barrierArrive(&bar);
  }
  if (!hw::barrierTryWait(&bar, 0))
    hw::barrierWait(&bar, 0);
  hw::fenceProxyAsync();
  __syncthreads();
  if (threadIdx.x == 0) {
    hw::tmaStore(&out, box, 0, 3, 5); // a store starts at x, y, z >= 0
    hw::tmaStoreCommit();
    hw::tmaStoreWait<0>();
    *flag = 1;
  }
}

/// Cluster registers, the cluster barrier, DSMEM halo copies, a remote
/// arrival and the multicast loads.
__global__ void clusterHalo(const __grid_constant__ CUtensorMap map2,
                            const __grid_constant__ CUtensorMap map3,
                            float *out) {
  __shared__ alignas(hw::kTmaAlign) float tile[8][40];
  __shared__ alignas(hw::kTmaAlign) float box[2][8][32];
  __shared__ std::uint64_t bar;
  const unsigned rank = hw::clusterRank(), size = hw::clusterSize();
  if (threadIdx.x == 0) {
    hw::barrierInit(&bar, size);
    hw::fenceBarrierInit();
  }
  for (int i = threadIdx.x; i < 8 * 32; i += blockDim.x)
    tile[i / 32][4 + i % 32] = static_cast<float>(rank * 1000 + i);
  hw::clusterSync();
  if (rank > 0)
    hw::copyHaloStrip(&tile[0][0], 40, &tile[0][32], 40, 8, 4, rank - 1,
                      threadIdx.x, blockDim.x);
  hw::clusterArrive();
  hw::clusterWait();
  // Rank 0 multicasts the boxes to every block; each block expects them
  // and takes one arrival from each block.
  if (threadIdx.x == 0) {
    hw::barrierArriveExpectTx(&bar, sizeof box);
    const std::uint16_t all = static_cast<std::uint16_t>((1u << size) - 1);
#if !defined(__CUDA_ARCH__) || STENCILC_HOPPER_MULTICAST
    if (rank == 0) {
      hw::tmaLoadMulticast(box[0], &map2, &bar, all, 0, 0);
      hw::tmaLoadMulticast(box[1], &map3, &bar, all, 0, 0, 1);
    }
#else
    // Plain sm_90: each block loads its own.
    hw::tmaLoad(box[0], &map2, &bar, 0, 0);
    hw::tmaLoad(box[1], &map3, &bar, 0, 0, 1);
    (void)all;
#endif
    for (unsigned r = 0; r < size; ++r)
      if (r != rank)
        hw::barrierArriveRemote(&bar, r);
  }
  hw::barrierWaitCluster(&bar, 0);
  const unsigned where = hw::clusterBlockX() + hw::clusterBlockY() +
                         hw::clusterBlockZ() + hw::clusterDimX() +
                         hw::clusterDimY() + hw::clusterDimZ() +
                         hw::clusterIdX() + hw::clusterIdY() +
                         hw::clusterIdZ();
  out[blockIdx.x * blockDim.x + threadIdx.x] =
      tile[threadIdx.x % 8][threadIdx.x % 40] + box[1][0][threadIdx.x % 32] +
      static_cast<float>(where);
  hw::clusterSync();
}

int main() {
  // Host side: the encoder for every element type and both ranks, and a
  // cluster launch; run without a GPU they fail with a message, which is
  // all main() checks (it is not run by the test).
  CUtensorMap m2, m3, mh, mb;
  float *f = nullptr;
  double *d = nullptr;
  __half *h = nullptr;
  __nv_bfloat16 *b = nullptr;
  const std::uint64_t e2[2] = {1000, 77}, p2[1] = {1000};
  const std::uint64_t e3[3] = {64, 20, 9}, p3[2] = {64, 64 * 20};
  const std::uint32_t box2[2] = {32, 8}, box3[3] = {16, 4, 4};
  hw::MapResult r[4] = {hw::encodeTileMap(&m2, f, e2, p2, box2),
                        hw::encodeTileMap(&m3, d, e3, p3, box3),
                        hw::encodeTileMap(&mh, h, e2, p2, box2),
                        hw::encodeTileMap(&mb, b, e2, p2, box2)};
  for (const auto &x : r)
    if (!x)
      std::printf("%s\n", x.message.c_str());
  return hw::launchCluster(clusterHalo, dim3(4), dim3(128), 0, nullptr,
                           dim3(2), m2, m3, static_cast<float *>(nullptr)) ==
                 cudaSuccess
             ? 0
             : 1;
}
