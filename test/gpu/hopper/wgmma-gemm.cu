//===- wgmma-gemm.cu - stencilc/wgmma.cuh on a Hopper GPU, checked -----===//
//
// One warpgroup (128 threads) computes D = A B for a 64 x N tile with the
// wrappers of runtime/include/stencilc/wgmma.cuh, K-major operands staged
// in shared memory in the layouts KMajorTile documents (no swizzle and 128B
// swizzle), and the result is compared with a CPU reference. Cases: dense
// f16, bf16 and tf32 at N = 8, 64, 128, and 2:4-sparse f16 (and bf16) at
// N = 8, 64, 128 with both sparsity selectors. Every tile holds 256 bytes of
// K in a row, so that each case takes 8 wgmma, steps its descriptors through
// several core matrices, and, swizzled, across two 128-byte swizzle blocks
// of K and inside each.
//
// Inputs are multiples of 1/8 in [-1, 1] and K <= 256, so that every
// operand is exact in its type and every sum exact in f32: a correct wgmma
// gives max_err = 0. The accumulators start at 1e30, which the first wgmma
// (scale-d false) must ignore.
//
// Prints `WGMMA <case> PASS|FAIL max_err=<e>` per case; exits 1 if any case
// fails, 2 without a Hopper GPU. Built and run by test/gpu/wgmma.sh;
// test/CodeGen/nvcc/wgmma.test checks that it builds.
//
//===----------------------------------------------------------------------===//

#include "stencilc/wgmma.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace stencilc::rt::wgmma;

namespace {

#define CHECK_CUDA(expr)                                                       \
  do {                                                                         \
    cudaError_t err_ = (expr);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::printf("WGMMA CUDA error %s at %s:%d\n", cudaGetErrorString(err_),  \
                  __FILE__, __LINE__);                                         \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

enum class Type { F16, BF16, TF32 };

constexpr int kM = 64;
constexpr int kThreads = 128;
/// Bytes of K in a row of every stored tile (A, compressed A, dense B); a
/// sparse B holds twice as many.
constexpr unsigned kRowBytes = 256;
/// wgmma per case: each reads a 32-byte slice of A's rows.
constexpr int kSteps = kRowBytes / 32;

constexpr unsigned elementBytes(Type t) { return t == Type::TF32 ? 4 : 2; }

template <Type T, int N, bool Sparse, int Sel>
__global__ void __launch_bounds__(kThreads)
    gemmKernel(const uint4 *image, KMajorTile ta, KMajorTile tb,
               const unsigned *meta, float *out) {
  extern __shared__ __align__(16) unsigned char raw[];
  // 128B-swizzled tiles start on a 1024-byte boundary of the shared window.
  const unsigned pad = (1024 - sharedAddress(raw) % 1024) % 1024;
  unsigned char *smem = raw + pad;
  const unsigned chunks = (ta.bytes() + tb.bytes()) / 16;
  for (unsigned i = threadIdx.x; i < chunks; i += kThreads)
    reinterpret_cast<uint4 *>(smem)[i] = image[i];
  fenceSharedWrites();
  __syncthreads();
  const unsigned char *a = smem;
  const unsigned char *b = smem + ta.bytes();

  unsigned e[kSteps] = {};
  if constexpr (Sparse) {
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
      e[s] = meta[s * kThreads + threadIdx.x];
  }
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i)
    d[i] = 1e30f;
  constexpr unsigned bStep = Sparse ? 64 : 32;

  fenceOperands(d);
  fence();
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    const std::uint64_t da = descriptor(a, ta, 32 * s);
    const std::uint64_t db = descriptor(b, tb, bStep * s);
    if constexpr (Sparse && T == Type::F16)
      mma_sp_f16<N, Sel>(d, da, db, e[s], s > 0);
    else if constexpr (Sparse && T == Type::BF16)
      mma_sp_bf16<N, Sel>(d, da, db, e[s], s > 0);
    else if constexpr (T == Type::F16)
      mma_f16<N>(d, da, db, s > 0);
    else if constexpr (T == Type::BF16)
      mma_bf16<N>(d, da, db, s > 0);
    else
      mma_tf32<N>(d, da, db, s > 0);
  }
  commit();
  wait<0>();
  fenceOperands(d);
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    const Coord c = accumulatorCoord(threadIdx.x, i);
    out[c.row * N + c.col] = d[i];
  }
}

/// The bits of x in type t (exact for the inputs used here).
std::uint32_t bitsOf(Type t, float x) {
  if (t == Type::F16)
    return __half_as_ushort(__float2half_rn(x));
  if (t == Type::BF16)
    return __bfloat16_as_ushort(__float2bfloat16_rn(x));
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

void put(std::vector<unsigned char> &image, unsigned at, Type t, float x) {
  const std::uint32_t u = bitsOf(t, x);
  std::memcpy(&image[at], &u, elementBytes(t));
}

/// One case: builds A, B, the shared-memory image and the metadata on the
/// host, runs the kernel once, and prints the line of the case.
template <Type T, int N, bool Sparse, int Sel = 0>
bool runCase(Swizzle sw, unsigned seed) {
  constexpr unsigned eb = elementBytes(T);
  // Logical K: a sparse A's rows hold K / 2 stored elements.
  constexpr int K = (Sparse ? 2 : 1) * kRowBytes / eb;
  const KMajorTile ta{sw, kM, kRowBytes};
  const KMajorTile tb{sw, N, K * eb};

  std::mt19937 rng(seed);
  auto value = [&] { return static_cast<float>(int(rng() % 17) - 8) / 8; };
  std::vector<float> A(kM * K, 0.f), B(K * N);
  // Sparse: the nonzero pair (p0 < p1) of every 4-group of every row.
  std::vector<unsigned char> p0(kM * K / 4), p1(kM * K / 4);
  static constexpr unsigned char kPairs[6][2] = {{0, 1}, {0, 2}, {0, 3},
                                                 {1, 2}, {1, 3}, {2, 3}};
  for (int m = 0; m < kM; ++m) {
    if constexpr (!Sparse) {
      for (int k = 0; k < K; ++k)
        A[m * K + k] = value();
    } else {
      for (int g = 0; g < K / 4; ++g) {
        const unsigned char *pair = kPairs[rng() % 6];
        p0[m * K / 4 + g] = pair[0];
        p1[m * K / 4 + g] = pair[1];
        A[m * K + 4 * g + pair[0]] = value();
        A[m * K + 4 * g + pair[1]] = value();
      }
    }
  }
  for (float &x : B)
    x = value();

  std::vector<unsigned char> image(ta.bytes() + tb.bytes(), 0);
  for (int m = 0; m < kM; ++m) {
    if constexpr (!Sparse) {
      for (int k = 0; k < K; ++k)
        put(image, ta.offset(m, k * eb), T, A[m * K + k]);
    } else {
      // Compressed: group g's values at p0 and p1 as elements 2g, 2g + 1.
      for (int g = 0; g < K / 4; ++g) {
        const int at = m * K + 4 * g, q = m * K / 4 + g;
        put(image, ta.offset(m, 2 * g * eb), T, A[at + p0[q]]);
        put(image, ta.offset(m, (2 * g + 1) * eb), T, A[at + p1[q]]);
      }
    }
  }
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      put(image, ta.bytes() + tb.offset(n, k * eb), T, B[k * N + n]);

  // Metadata of step s (K columns 32 s .. 32 s + 31: groups 8 s .. 8 s + 7).
  std::vector<unsigned> meta(kSteps * kThreads, 0);
  if constexpr (Sparse)
    for (int s = 0; s < kSteps; ++s)
      for (int th = 0; th < kThreads; ++th)
        for (int j = 0; j < 8; ++j) {
          const MetadataSlot slot = metadataSlot(th, Sel, j);
          if (slot.row < 0)
            continue;
          const int g = slot.row * K / 4 + 8 * s + slot.group;
          meta[s * kThreads + th] |= metadataNibble(p0[g], p1[g]) << 4 * j;
        }

  uint4 *dImage;
  unsigned *dMeta;
  float *dOut;
  CHECK_CUDA(cudaMalloc(&dImage, image.size()));
  CHECK_CUDA(cudaMalloc(&dMeta, meta.size() * sizeof(unsigned)));
  CHECK_CUDA(cudaMalloc(&dOut, kM * N * sizeof(float)));
  CHECK_CUDA(
      cudaMemcpy(dImage, image.data(), image.size(), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dMeta, meta.data(), meta.size() * sizeof(unsigned),
                        cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dOut, 0xFF, kM * N * sizeof(float))); // NaN
  const unsigned smem = static_cast<unsigned>(image.size()) + 1024;
  auto kernel = gemmKernel<T, N, Sparse, Sel>;
  CHECK_CUDA(cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  kernel<<<1, kThreads, smem>>>(dImage, ta, tb, dMeta, dOut);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> out(kM * N);
  CHECK_CUDA(cudaMemcpy(out.data(), dOut, out.size() * sizeof(float),
                        cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(dImage));
  CHECK_CUDA(cudaFree(dMeta));
  CHECK_CUDA(cudaFree(dOut));

  double maxErr = 0;
  int shown = 0;
  std::string detail;
  for (int m = 0; m < kM; ++m)
    for (int n = 0; n < N; ++n) {
      double ref = 0;
      for (int k = 0; k < K; ++k)
        ref += double(A[m * K + k]) * B[k * N + n];
      const double err = std::fabs(out[m * N + n] - ref);
      if (!(err <= maxErr)) // NaN too
        maxErr = std::isnan(err) ? INFINITY : err;
      if (!(err <= 1e-3) && shown < 4) {
        char line[128];
        std::snprintf(line, sizeof line, "\n  D[%d][%d] = %g, expected %g", m,
                      n, out[m * N + n], ref);
        detail += line;
        ++shown;
      }
    }
  const bool pass = maxErr <= 1e-3;
  const char *type = T == Type::F16 ? "f16" : T == Type::BF16 ? "bf16" : "tf32";
  std::string name = std::string(Sparse ? "sp-" : "") + type + "-n" +
                     std::to_string(N) +
                     (sw == Swizzle::None ? "-none" : "-sw128");
  if (Sparse)
    name += "-sel" + std::to_string(Sel);
  std::printf("WGMMA %s %s max_err=%g%s\n", name.c_str(),
              pass ? "PASS" : "FAIL", maxErr, detail.c_str());
  return pass;
}

template <Type T> int denseCases(unsigned &seed) {
  int failed = 0;
  for (Swizzle sw : {Swizzle::None, Swizzle::B128}) {
    failed += !runCase<T, 8, false>(sw, ++seed);
    failed += !runCase<T, 64, false>(sw, ++seed);
    failed += !runCase<T, 128, false>(sw, ++seed);
  }
  return failed;
}

} // namespace

int main() {
  int device = 0;
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  if (prop.major != 9 || prop.minor != 0) {
    std::printf("WGMMA needs an sm_90 GPU; this is %s (sm_%d%d)\n", prop.name,
                prop.major, prop.minor);
    return 2;
  }
  std::printf("WGMMA device %s\n", prop.name);
  unsigned seed = 0;
  int failed = 0;
  failed += denseCases<Type::F16>(seed);
  failed += denseCases<Type::BF16>(seed);
  failed += denseCases<Type::TF32>(seed);
  failed += !runCase<Type::F16, 8, true, 0>(Swizzle::None, ++seed);
  failed += !runCase<Type::F16, 8, true, 1>(Swizzle::B128, ++seed);
  failed += !runCase<Type::F16, 64, true, 1>(Swizzle::None, ++seed);
  failed += !runCase<Type::F16, 64, true, 0>(Swizzle::B128, ++seed);
  failed += !runCase<Type::F16, 128, true, 0>(Swizzle::None, ++seed);
  failed += !runCase<Type::F16, 128, true, 1>(Swizzle::B128, ++seed);
  failed += !runCase<Type::BF16, 64, true, 1>(Swizzle::None, ++seed);
  failed += !runCase<Type::BF16, 64, true, 0>(Swizzle::B128, ++seed);
  std::printf("WGMMA %s: %d case(s) failed\n", failed ? "FAIL" : "PASS",
              failed);
  return failed ? 1 : 0;
}
