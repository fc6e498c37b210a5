//===- cluster-halo.cu - Halo exchange through DSMEM, and multicast -------===//
//
// A GPU test of the cluster building blocks of
// runtime/include/stencilc/hopper.cuh (run by test/gpu/hopper.sh).
//
// Halo exchange: a grid of 16 x 2 blocks in clusters of C = 2, 4 and 8
// blocks along x (launchCluster). Each block owns a tile of kTileY rows x
// kTileX columns of a 2-D field; it reads its tile from global memory and
// "computes" it (value * 2 + 1, as bits, so that a computed value differs
// from the one in global memory), then, after a cluster barrier, fills the
// kHalo columns on either side of its tile: from the neighbouring block's
// computed tile through DSMEM (copyHaloStrip) where the neighbour is in
// the same cluster, else from global memory (zero beyond the field's
// edge). A second cluster barrier keeps every block alive until its
// neighbours have read it. Each block writes its whole tile, halos
// included, and its cluster registers; the CPU checks both bit for bit:
// a halo from the wrong rank, the wrong columns, or read before the
// neighbour wrote it shows.
//
// Multicast (sm_90a): clusters of C = 2 and 4 blocks; block r of a cluster
// loads rows r * 16 / C .. of a 64 x 16 box with one
// .multicast::cluster TMA load into every block of the cluster, each
// block's mbarrier expecting the whole box. Each cluster's box lies at its
// own place, some across the array's edge (zero-filled). Every block
// writes out what landed; the CPU checks it against the array.
//
// Prints one line per case and PASS or FAIL; exits non-zero on failure.
//
//===----------------------------------------------------------------------===//

#include <stencilc/hopper.cuh>

#include <cstdio>
#include <vector>

namespace hw = stencilc::rt::hopper;

namespace {

constexpr int kTileX = 64, kTileY = 16, kHalo = 3;
constexpr int kRowPitch = kTileX + 2 * kHalo; // shared tile, halos included
constexpr int kBlocksX = 16, kBlocksY = 2;
constexpr int kWidth = kBlocksX * kTileX, kHeight = kBlocksY * kTileY;
constexpr int kThreads = 128;
constexpr int kInfo = 8; // cluster registers written per block

__host__ __device__ unsigned computed(unsigned v) { return v * 2u + 1u; }

__global__ void __launch_bounds__(kThreads)
    exchangeHalos(const unsigned *field, unsigned *tiles, unsigned *info) {
  __shared__ unsigned tile[kTileY][kRowPitch];
  const int x0 = blockIdx.x * kTileX, y0 = blockIdx.y * kTileY;
  for (int i = threadIdx.x; i < kTileY * kTileX; i += blockDim.x) {
    const int r = i / kTileX, c = i % kTileX;
    tile[r][kHalo + c] = computed(field[(y0 + r) * kWidth + x0 + c]);
  }
  const unsigned rank = hw::clusterRank(), size = hw::clusterSize();
  // The tiles are written: release them to the cluster.
  hw::clusterSync();

  // Left halo: columns 0 .. kHalo - 1 are the left neighbour's last kHalo
  // computed columns, at kTileX .. kTileX + kHalo - 1 of its tile.
  if (rank > 0)
    hw::copyHaloStrip(&tile[0][0], kRowPitch, &tile[0][kTileX], kRowPitch,
                      kTileY, kHalo, rank - 1, threadIdx.x, blockDim.x);
  else
    for (int i = threadIdx.x; i < kTileY * kHalo; i += blockDim.x) {
      const int r = i / kHalo, c = i % kHalo, x = x0 - kHalo + c;
      tile[r][c] = x >= 0 ? field[(y0 + r) * kWidth + x] : 0u;
    }
  // Right halo: the right neighbour's first kHalo computed columns.
  if (rank + 1 < size)
    hw::copyHaloStrip(&tile[0][kHalo + kTileX], kRowPitch, &tile[0][kHalo],
                      kRowPitch, kTileY, kHalo, rank + 1, threadIdx.x,
                      blockDim.x);
  else
    for (int i = threadIdx.x; i < kTileY * kHalo; i += blockDim.x) {
      const int r = i / kHalo, c = i % kHalo, x = x0 + kTileX + c;
      tile[r][kHalo + kTileX + c] =
          x < kWidth ? field[(y0 + r) * kWidth + x] : 0u;
    }
  // No block leaves (its shared memory with it) while a neighbour reads.
  hw::clusterArrive();
  const unsigned block = blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) {
    unsigned *p = info + block * kInfo;
    p[0] = rank;
    p[1] = size;
    p[2] = hw::clusterBlockX();
    p[3] = hw::clusterBlockY();
    p[4] = hw::clusterDimX();
    p[5] = hw::clusterDimY() * hw::clusterDimZ();
    p[6] = hw::clusterIdX();
    p[7] = hw::clusterIdY();
  }
  // The wait also orders the other threads' halo writes before the copy
  // out: a cluster barrier includes every thread of this block.
  hw::clusterWait();
  for (int i = threadIdx.x; i < kTileY * kRowPitch; i += blockDim.x)
    tiles[block * kTileY * kRowPitch + i] = tile[i / kRowPitch][i % kRowPitch];
}

#define CHECK_CUDA(expr)                                                       \
  do {                                                                         \
    cudaError_t e_ = (expr);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      std::printf("  CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_),      \
                  __FILE__, __LINE__, cudaGetErrorString(e_));                 \
      return false;                                                            \
    }                                                                          \
  } while (0)

unsigned fieldValue(int x, int y) {
  return static_cast<unsigned>(y) * 100003u + static_cast<unsigned>(x) + 7u;
}

bool runExchange(int cluster) {
  std::vector<unsigned> field(kWidth * kHeight);
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x)
      field[y * kWidth + x] = fieldValue(x, y);
  const int blocks = kBlocksX * kBlocksY;
  const std::size_t tileCount = std::size_t(blocks) * kTileY * kRowPitch;
  unsigned *dfield = nullptr, *dtiles = nullptr, *dinfo = nullptr;
  CHECK_CUDA(cudaMalloc(&dfield, field.size() * sizeof(unsigned)));
  CHECK_CUDA(cudaMalloc(&dtiles, tileCount * sizeof(unsigned)));
  CHECK_CUDA(cudaMalloc(&dinfo, blocks * kInfo * sizeof(unsigned)));
  CHECK_CUDA(cudaMemcpy(dfield, field.data(), field.size() * sizeof(unsigned),
                        cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dtiles, 0xFF, tileCount * sizeof(unsigned)));
  CHECK_CUDA(hw::launchCluster(exchangeHalos, dim3(kBlocksX, kBlocksY),
                               dim3(kThreads), 0, nullptr, dim3(cluster),
                               dfield, dtiles, dinfo));
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<unsigned> tiles(tileCount), info(blocks * kInfo);
  CHECK_CUDA(cudaMemcpy(tiles.data(), dtiles, tileCount * sizeof(unsigned),
                        cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(info.data(), dinfo, info.size() * sizeof(unsigned),
                        cudaMemcpyDeviceToHost));
  cudaFree(dfield);
  cudaFree(dtiles);
  cudaFree(dinfo);

  long long bad = 0, viaDsmem = 0;
  for (int by = 0; by < kBlocksY; ++by)
    for (int bx = 0; bx < kBlocksX; ++bx) {
      const int block = by * kBlocksX + bx, rank = bx % cluster;
      const unsigned want[kInfo] = {unsigned(rank),      unsigned(cluster),
                                    unsigned(rank),      0u,
                                    unsigned(cluster),   1u,
                                    unsigned(bx / cluster), unsigned(by)};
      for (int k = 0; k < kInfo; ++k)
        if (info[block * kInfo + k] != want[k] && bad++ < 10)
          std::printf("  cluster %d: block (%d,%d) register %d: got %u, "
                      "want %u\n",
                      cluster, bx, by, k, info[block * kInfo + k], want[k]);
      for (int r = 0; r < kTileY; ++r)
        for (int c = 0; c < kRowPitch; ++c) {
          const int x = bx * kTileX + c - kHalo, y = by * kTileY + r;
          // Whose value it is: this block's interior, a neighbour in the
          // cluster (computed, through DSMEM), or global memory.
          const bool interior = c >= kHalo && c < kHalo + kTileX;
          const bool left = c < kHalo, right = c >= kHalo + kTileX;
          const bool peer = (left && rank > 0) ||
                            (right && rank + 1 < cluster);
          unsigned expect;
          if (interior || peer)
            expect = computed(fieldValue(x, y));
          else
            expect = x >= 0 && x < kWidth ? fieldValue(x, y) : 0u;
          viaDsmem += peer;
          const unsigned got = tiles[(block * kTileY + r) * kRowPitch + c];
          if (got != expect && bad++ < 10)
            std::printf("  cluster %d: block (%d,%d) tile (%d,%d)%s: got %u, "
                        "want %u\n",
                        cluster, bx, by, r, c,
                        peer ? " (halo from a neighbour's shared memory)"
                             : "",
                        got, expect);
        }
    }
  std::printf("  halo exchange, clusters of %d: %lld halo elements through "
              "DSMEM: %s\n",
              cluster, viaDsmem, bad ? "FAIL" : "ok");
  return bad == 0;
}

//===----------------------------------------------------------------------===//
// Multicast.
//===----------------------------------------------------------------------===//

constexpr int kBoxX = 64, kBoxY = 16;
constexpr int kArrayX = 200, kArrayY = 40;

/// Where cluster i's box lies: some inside, some across an edge. Every x
/// is a multiple of 4 elements: an innermost TMA coordinate must be a
/// multiple of 16 bytes (hopper.cuh, "TMA copies"; with boxes at x = 42
/// and 142 the multicast died with an illegal instruction).
__host__ __device__ void boxOrigin(int i, int &x, int &y) {
  x = (i % 4) * 52 - 8; // -8, 44, 96, 148 (to 212 > kArrayX)
  y = (i / 4) * 30 - 4; // -4, 26 (to 42 > kArrayY)
}

__global__ void __launch_bounds__(kThreads)
    multicastBoxes(const __grid_constant__ CUtensorMap slices,
                   unsigned *landed) {
  __shared__ alignas(hw::kTmaAlign) unsigned box[kBoxY][kBoxX];
  __shared__ std::uint64_t bar;
  const unsigned rank = hw::clusterRank(), size = hw::clusterSize();
  if (threadIdx.x == 0) {
    hw::barrierInit(&bar, 1);
    hw::fenceBarrierInit();
    hw::barrierArriveExpectTx(&bar, sizeof box);
  }
  // Every block's barrier exists and expects the box before any block's
  // copy can signal it.
  hw::clusterSync();
  if (threadIdx.x == 0) {
    int x, y;
    boxOrigin(static_cast<int>(hw::clusterIdX()), x, y);
    const int rows = kBoxY / static_cast<int>(size);
    const std::uint16_t all = static_cast<std::uint16_t>((1u << size) - 1u);
    hw::tmaLoadMulticast(&box[rank * rows][0], &slices, &bar, all, x,
                         y + static_cast<int>(rank) * rows);
  }
  hw::barrierWait(&bar, 0);
  for (int i = threadIdx.x; i < kBoxY * kBoxX; i += blockDim.x)
    landed[blockIdx.x * kBoxY * kBoxX + i] = box[i / kBoxX][i % kBoxX];
  // Nobody leaves while a copy it issued may still be landing elsewhere.
  hw::clusterSync();
}

bool runMulticast(int cluster) {
  std::vector<unsigned> array(kArrayX * kArrayY);
  for (int i = 0; i < kArrayX * kArrayY; ++i)
    array[i] = fieldValue(i % kArrayX, i / kArrayX) | 1u;
  const int clusters = 8, blocks = clusters * cluster;
  const std::size_t landedCount = std::size_t(blocks) * kBoxX * kBoxY;
  unsigned *darray = nullptr, *dlanded = nullptr;
  CHECK_CUDA(cudaMalloc(&darray, array.size() * sizeof(unsigned)));
  CHECK_CUDA(cudaMalloc(&dlanded, landedCount * sizeof(unsigned)));
  CHECK_CUDA(cudaMemcpy(darray, array.data(), array.size() * sizeof(unsigned),
                        cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dlanded, 0xFF, landedCount * sizeof(unsigned)));
  CUtensorMap map;
  const std::uint64_t extent[2] = {kArrayX, kArrayY}, pitch[1] = {kArrayX};
  const std::uint32_t box[2] = {kBoxX, std::uint32_t(kBoxY / cluster)};
  // f32 elements: the map moves 4-byte words, whatever they hold.
  const hw::MapResult r = hw::encodeTileMap(
      &map, reinterpret_cast<const float *>(darray), extent, pitch, box);
  if (!r) {
    std::printf("  multicast: %s\n", r.message.c_str());
    return false;
  }
  CHECK_CUDA(hw::launchCluster(multicastBoxes, dim3(blocks), dim3(kThreads),
                               0, nullptr, dim3(cluster), map, dlanded));
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<unsigned> landed(landedCount);
  CHECK_CUDA(cudaMemcpy(landed.data(), dlanded, landedCount * sizeof(unsigned),
                        cudaMemcpyDeviceToHost));
  cudaFree(darray);
  cudaFree(dlanded);

  long long bad = 0;
  for (int b = 0; b < blocks; ++b) {
    int x0, y0;
    boxOrigin(b / cluster, x0, y0);
    for (int j = 0; j < kBoxY; ++j)
      for (int i = 0; i < kBoxX; ++i) {
        const int x = x0 + i, y = y0 + j;
        const unsigned want = x >= 0 && x < kArrayX && y >= 0 && y < kArrayY
                                  ? array[y * kArrayX + x]
                                  : 0u;
        const unsigned got = landed[(b * kBoxY + j) * kBoxX + i];
        if (got != want && bad++ < 10)
          std::printf("  multicast, clusters of %d: block %d element (%d,%d) "
                      "(from rank %d's copy): got %#x, want %#x\n",
                      cluster, b, i, j, j / (kBoxY / cluster), got, want);
      }
  }
  std::printf("  multicast, clusters of %d: %s\n", cluster,
              bad ? "FAIL" : "ok");
  return bad == 0;
}

} // namespace

int main() {
  int device = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                             device) != cudaSuccess ||
      major < 9) {
    std::printf("cluster-halo: FAIL (needs a GPU of compute capability "
                "9.0)\n");
    return 1;
  }
  bool ok = true;
  for (int cluster : {2, 4, 8})
    ok &= runExchange(cluster);
  for (int cluster : {2, 4})
    ok &= runMulticast(cluster);
  std::printf("cluster-halo: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
