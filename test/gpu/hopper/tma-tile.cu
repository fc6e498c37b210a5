//===- tma-tile.cu - TMA boxes through a 3-stage pipeline, on a GPU -------===//
//
// A GPU test of runtime/include/stencilc/hopper.cuh (run by
// test/gpu/hopper.sh): a warp-specialized kernel streams the boxes of a
// 2-D or 3-D array through TmaPipeline<3> (one producer warp, whose
// elected lane issues the loads, and four consumer warps), each block
// taking every gridDim.x-th box so that the pipeline wraps around its
// stages several times. The boxes tile the array from a negative origin
// (its x a multiple of 16 bytes, as TMA requires of an innermost
// coordinate) and overhang its far edges, so that many cross the array's
// boundary.
// The consumers copy each box, as it landed in shared memory, to a dump
// in global memory, and store it back to an output array with a wider
// pitch and guard rows: a box that starts at x, y, z >= 0 and, where a
// row's bytes are no multiple of 16, ends inside the row, through a
// staging buffer that one thread stores with a TMA store (clipped at the
// far edges in y and z), an edge box with ordinary per-thread stores of
// its elements inside the array: one that starts at a negative
// coordinate, since a TMA store must not (hopper.cuh, tmaStore: an
// illegal instruction on an H200), and one that overhangs the end of a
// row of 1001 or 203 elements, since a TMA store writes the row's last
// 16-byte unit whole, the padding past the row included
// (hopper.cuh, tmaStoreStaysInRow: the zeros of the load's fill in
// columns 1001..1003 of f32 on an H200).
//
// The CPU then checks, bit for bit, for f32, f64, f16 and bf16 in 2-D
// and f32, f64 and f16 in 3-D:
//  - every dumped box against the input (zero bits outside the array:
//    TMA's out-of-bounds fill), so a wrong coordinate order, pitch,
//    stage index or phase shows;
//  - the output array against the input, and its padding and guard rows
//    still holding their sentinel, so a store that writes outside the
//    array, or misses a box, shows.
// Prints one line per case and PASS or FAIL; exits non-zero on failure.
//
//===----------------------------------------------------------------------===//

#include <stencilc/hopper.cuh>

#include <cstdio>
#include <cstring>
#include <vector>

namespace hw = stencilc::rt::hopper;

namespace {

constexpr int kStages = 3;
constexpr int kConsumerWarps = 4;
constexpr int kConsumers = 32 * kConsumerWarps;
constexpr int kThreads = 32 + kConsumers;
constexpr int kBlocks = 8;

/// The unsigned integer as wide as T: the kernels move bits, not values.
template <int Bytes> struct BitsOf;
template <> struct BitsOf<2> { using type = unsigned short; };
template <> struct BitsOf<4> { using type = unsigned int; };
template <> struct BitsOf<8> { using type = unsigned long long; };
template <class T> using Bits = typename BitsOf<sizeof(T)>::type;

/// The boxes: box[i] elements along axis i, the first box at -lo[i], and
/// count[i] boxes along axis i (axis 2 has box 1, count 1 in 2-D), over
/// an array of extent[i] elements.
struct Geometry {
  int box[3], lo[3], count[3], extent[3];
  __host__ __device__ int boxElems() const { return box[0] * box[1] * box[2]; }
  __host__ __device__ int boxes() const {
    return count[0] * count[1] * count[2];
  }
  /// Whether a box at c of T may be stored by TMA: no coordinate
  /// negative, and nothing written past the end of a row.
  template <class T>
  __host__ __device__ bool tmaStorable(const int (&c)[3]) const {
    return c[0] >= 0 && c[1] >= 0 && c[2] >= 0 &&
           hw::tmaStoreStaysInRow<T>(extent[0], c[0], box[0]);
  }
  /// The coordinates of box t's first element.
  __host__ __device__ void origin(int t, int (&c)[3]) const {
    c[0] = t % count[0] * box[0] - lo[0];
    t /= count[0];
    c[1] = t % count[1] * box[1] - lo[1];
    c[2] = t / count[1] * box[2] - lo[2];
  }
};

/// The kernel: see the file comment. Dynamic shared memory holds, from a
/// 128-byte aligned start, the kStages stage buffers, the staging buffer
/// of the store, and the pipeline's barriers.
template <class U, int Rank>
__global__ void __launch_bounds__(kThreads)
    streamBoxes(const __grid_constant__ CUtensorMap in,
                const __grid_constant__ CUtensorMap out, U *dump,
                U *outArray, long long outPitch, long long outPlane,
                Geometry g) {
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
    // The producer warp: its elected lane runs ahead by up to kStages
    // boxes, then the warp is done.
    if (hw::electOne()) {
      hw::prefetchTensorMap(&in);
      hw::produceBoxes<Rank>(*pipe, &in, stage, elems, blockIdx.x, gridDim.x,
                             g.boxes(),
                             [&](int t, int(&c)[3]) { g.origin(t, c); });
    }
    return;
  }

  const int ct = threadIdx.x - 32; // consumer thread
  for (int t = blockIdx.x; t < g.boxes(); t += gridDim.x) {
    pipe->consumerWait(st);
    // The previous box's store must have read the staging buffer.
    if (ct == 0)
      hw::tmaStoreWaitRead<0>();
    hw::namedBarrier(1, kConsumers);
    const U *src = stage + st.stage * elems;
    U *boxDump = dump + static_cast<std::size_t>(t) * elems;
    int c[3];
    g.origin(t, c);
    const bool byTma = g.tmaStorable<U>(c);
    for (int i = ct; i < elems; i += kConsumers) {
      const U v = src[i];
      boxDump[i] = v;
      if (byTma) {
        staged[i] = v;
        continue;
      }
      // An edge box: each element inside the array, stored directly.
      const int x = c[0] + i % g.box[0];
      const int y = c[1] + i / g.box[0] % g.box[1];
      const int z = c[2] + i / (g.box[0] * g.box[1]);
      if (x >= 0 && x < g.extent[0] && y >= 0 && y < g.extent[1] && z >= 0 &&
          z < g.extent[2])
        outArray[z * outPlane + y * outPitch + x] = v;
    }
    hw::fenceProxyAsync();
    __syncwarp();
    if (ct % 32 == 0)
      pipe->consumerRelease(st);
    hw::namedBarrier(1, kConsumers);
    if (ct == 0 && byTma) {
      if constexpr (Rank == 2)
        hw::tmaStore(&out, staged, c[0], c[1]);
      else
        hw::tmaStore(&out, staged, c[0], c[1], c[2]);
      hw::tmaStoreCommit();
    }
    st.advance();
  }
  if (ct == 0)
    hw::tmaStoreWait<0>();
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

/// A nonzero bit pattern per index, so that a zero fill inside the array,
/// or an element from the wrong place, shows.
template <class U> U pattern(std::uint64_t i, std::uint64_t salt) {
  std::uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ salt;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  const U u = static_cast<U>(x);
  return u ? u : U(1);
}

/// One case: an array of `extent` (innermost first; extent[2] = 1 in 2-D)
/// read through boxes of `box` from -lo. Returns whether it passed.
template <class T, int Rank>
bool runCase(const char *name, const int (&extent)[3], const int (&box)[3],
             const int (&lo)[3]) {
  using U = Bits<T>;
  constexpr int kVec = 16 / sizeof(T); // pitches: whole 16-byte units
  const std::uint64_t ex = extent[0], ey = extent[1], ez = extent[2];
  // The input's pitch has a little padding; the output's more, and guard
  // rows (and a guard plane in 3-D) after the array.
  const std::uint64_t inPitch = (ex + kVec) / kVec * kVec;
  const std::uint64_t outPitch = inPitch + kVec;
  const std::uint64_t outRows = ey + 2, outPlanes = Rank == 3 ? ez + 1 : 1;
  const std::uint64_t inCount = inPitch * ey * ez;
  const std::uint64_t outCount = outPitch * outRows * outPlanes;
  const U marker = pattern<U>(~0ull, 7), sentinel = pattern<U>(~0ull, 11);

  std::vector<U> hin(inCount, marker);
  for (std::uint64_t z = 0; z < ez; ++z)
    for (std::uint64_t y = 0; y < ey; ++y)
      for (std::uint64_t x = 0; x < ex; ++x)
        hin[(z * ey + y) * inPitch + x] = pattern<U>((z * ey + y) * ex + x, 3);

  Geometry g;
  for (int i = 0; i < 3; ++i) {
    g.box[i] = box[i];
    g.lo[i] = lo[i];
    g.count[i] = (extent[i] + lo[i] + box[i] - 1) / box[i];
    g.extent[i] = extent[i];
  }
  // Every box's x must be a multiple of 16 bytes (TMA faults with an
  // illegal instruction otherwise): the first box's, and the box's width.
  if (lo[0] * sizeof(U) % 16 != 0) {
    std::printf("  %s: a box at x = -%d is %zu bytes off a multiple of 16\n",
                name, lo[0], lo[0] * sizeof(U) % 16);
    return false;
  }
  // Each stage buffer starts kTmaAlign-aligned only if a box's bytes are a
  // multiple of it.
  if (g.boxElems() * sizeof(U) % hw::kTmaAlign != 0) {
    std::printf("  %s: a box of %zu bytes is no multiple of %d\n", name,
                g.boxElems() * sizeof(U), hw::kTmaAlign);
    return false;
  }
  const std::size_t dumpCount =
      static_cast<std::size_t>(g.boxes()) * g.boxElems();

  U *din = nullptr, *dout = nullptr, *ddump = nullptr;
  CHECK_CUDA(cudaMalloc(&din, inCount * sizeof(U)));
  CHECK_CUDA(cudaMalloc(&dout, outCount * sizeof(U)));
  CHECK_CUDA(cudaMalloc(&ddump, dumpCount * sizeof(U)));
  CHECK_CUDA(cudaMemcpy(din, hin.data(), inCount * sizeof(U),
                        cudaMemcpyHostToDevice));
  std::vector<U> hout(outCount, sentinel);
  CHECK_CUDA(cudaMemcpy(dout, hout.data(), outCount * sizeof(U),
                        cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(ddump, 0xA5, dumpCount * sizeof(U)));

  CUtensorMap inMap, outMap;
  hw::MapResult r;
  if constexpr (Rank == 2) {
    const std::uint64_t e[2] = {ex, ey}, pin[1] = {inPitch},
                        pout[1] = {outPitch};
    const std::uint32_t b[2] = {std::uint32_t(box[0]), std::uint32_t(box[1])};
    r = hw::encodeTileMap(&inMap, reinterpret_cast<const T *>(din), e, pin, b);
    if (r)
      r = hw::encodeTileMap(&outMap, reinterpret_cast<const T *>(dout), e,
                            pout, b);
  } else {
    const std::uint64_t e[3] = {ex, ey, ez}, pin[2] = {inPitch, inPitch * ey},
                        pout[2] = {outPitch, outPitch * outRows};
    const std::uint32_t b[3] = {std::uint32_t(box[0]), std::uint32_t(box[1]),
                                std::uint32_t(box[2])};
    r = hw::encodeTileMap(&inMap, reinterpret_cast<const T *>(din), e, pin, b);
    if (r)
      r = hw::encodeTileMap(&outMap, reinterpret_cast<const T *>(dout), e,
                            pout, b);
  }
  if (!r) {
    std::printf("  %s: %s\n", name, r.message.c_str());
    return false;
  }

  const std::size_t smem = hw::kTmaAlign +
                           (kStages + 1) * g.boxElems() * sizeof(U) +
                           sizeof(hw::TmaPipeline<kStages>);
  auto kernel = streamBoxes<U, Rank>;
  CHECK_CUDA(cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  kernel<<<kBlocks, kThreads, smem>>>(
      inMap, outMap, ddump, dout, static_cast<long long>(outPitch),
      static_cast<long long>(outPitch * outRows), g);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());

  std::vector<U> hdump(dumpCount);
  CHECK_CUDA(cudaMemcpy(hdump.data(), ddump, dumpCount * sizeof(U),
                        cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(hout.data(), dout, outCount * sizeof(U),
                        cudaMemcpyDeviceToHost));
  cudaFree(din);
  cudaFree(dout);
  cudaFree(ddump);

  // The CPU copy: each box as TMA should have landed it, and the output.
  long long bad = 0, crossing = 0, byTma = 0;
  for (int t = 0; t < g.boxes(); ++t) {
    int c[3];
    g.origin(t, c);
    byTma += g.tmaStorable<U>(c);
    bool crosses = false;
    for (int k = 0; k < box[2]; ++k)
      for (int j = 0; j < box[1]; ++j)
        for (int i = 0; i < box[0]; ++i) {
          const long long x = c[0] + i, y = c[1] + j, z = c[2] + k;
          const bool inside = x >= 0 && x < extent[0] && y >= 0 &&
                              y < extent[1] && z >= 0 && z < extent[2];
          crosses |= !inside;
          const U want = inside ? hin[(z * ey + y) * inPitch + x] : U(0);
          const U got =
              hdump[static_cast<std::size_t>(t) * g.boxElems() +
                    (k * box[1] + j) * box[0] + i];
          if (got != want && bad++ < 5)
            std::printf("  %s: box %d (%d,%d,%d) element (%d,%d,%d): got "
                        "%#llx, want %#llx\n",
                        name, t, c[0], c[1], c[2], i, j, k,
                        static_cast<unsigned long long>(got),
                        static_cast<unsigned long long>(want));
        }
    crossing += crosses;
  }
  for (std::uint64_t z = 0; z < outPlanes; ++z)
    for (std::uint64_t y = 0; y < outRows; ++y)
      for (std::uint64_t x = 0; x < outPitch; ++x) {
        const bool inside = x < ex && y < ey && z < ez;
        const U want = inside ? hin[(z * ey + y) * inPitch + x] : sentinel;
        const U got = hout[(z * outRows + y) * outPitch + x];
        if (got != want && bad++ < 10)
          std::printf("  %s: output (%llu,%llu,%llu)%s: got %#llx, want "
                      "%#llx\n",
                      name, static_cast<unsigned long long>(x),
                      static_cast<unsigned long long>(y),
                      static_cast<unsigned long long>(z),
                      inside ? "" : " (outside the array)",
                      static_cast<unsigned long long>(got),
                      static_cast<unsigned long long>(want));
      }
  std::printf("  %s: %d boxes (%lld cross the edge, %lld stored by TMA), "
              "%d per block: %s\n",
              name, g.boxes(), crossing, byTma,
              (g.boxes() + kBlocks - 1) / kBlocks, bad ? "FAIL" : "ok");
  return bad == 0;
}

} // namespace

int main() {
  int device = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                             device) != cudaSuccess ||
      major < 9) {
    std::printf("tma-tile: FAIL (needs a GPU of compute capability 9.0)\n");
    return 1;
  }
  bool ok = true;
  // 2-D: 1001 x 77 (odd sizes), boxes of 16 rows starting 16 bytes before
  // the array's start in x (an innermost coordinate must be a multiple of
  // 16 bytes: hopper.cuh, "TMA copies") and 2 rows before it in y; the box
  // row is 128 or 256 bytes.
  ok &= runCase<float, 2>("2d f32", {1001, 77, 1}, {64, 16, 1}, {4, 2, 0});
  ok &= runCase<double, 2>("2d f64", {1001, 77, 1}, {32, 16, 1}, {2, 2, 0});
  ok &= runCase<__half, 2>("2d f16", {1001, 77, 1}, {64, 16, 1}, {8, 2, 0});
  ok &= runCase<__nv_bfloat16, 2>("2d bf16", {1001, 77, 1}, {64, 16, 1},
                                  {8, 2, 0});
  // 3-D: 203 x 37 x 11, boxes of 32 x 8 x 4 (f32) starting at 16 bytes
  // before the array's start in x, (-1, -2) in y and z.
  ok &= runCase<float, 3>("3d f32", {203, 37, 11}, {32, 8, 4}, {4, 1, 2});
  ok &= runCase<double, 3>("3d f64", {203, 37, 11}, {16, 8, 4}, {2, 1, 2});
  ok &= runCase<__half, 3>("3d f16", {203, 37, 11}, {64, 8, 2}, {8, 1, 2});
  std::printf("tma-tile: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
