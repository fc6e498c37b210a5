//===- stencil-probe.cu - Measure a GPU's ceilings for the cost model -----===//
//
// Runs our own microkernels on CUDA device 0 and writes the hardware
// description that `stencilc --hw=FILE` reads (docs/cost-model.md): memory
// and shared-memory bandwidth, CUDA-core FMA rates, and dense and 2:4 sparse
// tensor-core rates, each the best of several timed runs after a warm-up.
// Every kernel also checks its own result against a value known in advance,
// so a kernel the compiler trimmed, or an mma with wrong operands, stops the
// probe instead of yielding a number. The file is written only when every
// measurement succeeded, through a temporary file renamed into place.
//
// Self-contained on purpose: `nvcc -O3 -std=c++17 stencil-probe.cu` builds it
// on a GPU machine without the rest of the tree.
//
//===----------------------------------------------------------------------===//

#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// What failed and why; main() prints it as `stencil-probe: error: <text>`.
struct Failure {
  std::string text;
};

[[noreturn]] void fail(const std::string &what, const std::string &why) {
  throw Failure{what + ": " + why};
}

void check(cudaError_t status, const std::string &what) {
  if (status != cudaSuccess)
    fail(what, cudaGetErrorString(status));
}

/// After a launch: a bad configuration shows at once, a fault in the kernel
/// only when it is waited for.
void checkLaunch(const char *kernel) {
  check(cudaGetLastError(), std::string("launching ") + kernel);
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

constexpr int kThreads = 256;

// Device-memory bandwidth: a grid-stride copy with 16-byte accesses, four in
// flight per thread.
__global__ void __launch_bounds__(kThreads)
    copyKernel(const int4 *__restrict__ src, int4 *__restrict__ dst, size_t n) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    int4 a = src[i], b = src[i + stride], c = src[i + 2 * stride],
         d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < n; i += stride)
    dst[i] = src[i];
}

__host__ __device__ unsigned copyPattern(size_t word) {
  return unsigned(word) * 2654435761u + 12345u;
}

__global__ void fillKernel(unsigned *p, size_t n) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    p[i] = copyPattern(i);
}

__global__ void verifyCopyKernel(const unsigned *p, size_t n,
                                 unsigned long long *bad) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  unsigned long long wrong = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    wrong += p[i] != copyPattern(i);
  if (wrong)
    atomicAdd(bad, wrong);
}

// Shared-memory bandwidth: every warp reads 32 consecutive 4-byte words per
// load (one per bank, so no conflicts) and adds them up. The window moves
// each iteration, so no load is loop-invariant. Word i holds base + i, base
// a kernel argument, so the sum is exact modulo 2^32 and known on the host.
constexpr unsigned kSharedWindow = 2048; // words, a power of two
constexpr int kSharedUnroll = 16;
constexpr unsigned kSharedStep = 7 * 32; // words the window moves

__global__ void __launch_bounds__(kThreads)
    sharedKernel(unsigned base, int iters, unsigned expect, unsigned perLane,
                 unsigned *out, unsigned *bad) {
  __shared__ unsigned s[kSharedWindow + 32 * kSharedUnroll];
  for (unsigned i = threadIdx.x; i < kSharedWindow + 32 * kSharedUnroll;
       i += blockDim.x)
    s[i] = base + i;
  __syncthreads();
  unsigned lane = threadIdx.x & 31;
  unsigned acc[kSharedUnroll] = {};
  unsigned offset = 0;
  for (int it = 0; it < iters; ++it) {
    const unsigned *p = s + offset + lane;
#pragma unroll
    for (int k = 0; k < kSharedUnroll; ++k)
      acc[k] += p[32 * k];
    offset = (offset + kSharedStep) & (kSharedWindow - 1);
  }
  unsigned total = 0;
#pragma unroll
  for (int k = 0; k < kSharedUnroll; ++k)
    total += acc[k];
  if (total != expect + lane * perLane)
    atomicAdd(bad, 1u);
  if (blockIdx.x == 0 && threadIdx.x == 0)
    *out = total;
}

// CUDA-core FMA rate: kFmaChains independent chains x = x * a + b per
// thread. a = b = 1 at run time, unknown to the compiler, so chain j ends at
// seed + j + iters * kFmaUnroll exactly.
constexpr int kFmaChains = 8;
constexpr int kFmaUnroll = 8;

__device__ __forceinline__ float fmaOf(float x, float a, float b) {
  return fmaf(x, a, b);
}
__device__ __forceinline__ double fmaOf(double x, double a, double b) {
  return fma(x, a, b);
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    fmaKernel(T seed, T a, T b, T expect, int iters, T *out, unsigned *bad) {
  T x[kFmaChains];
#pragma unroll
  for (int j = 0; j < kFmaChains; ++j)
    x[j] = seed + T(j);
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < kFmaUnroll; ++u)
#pragma unroll
      for (int j = 0; j < kFmaChains; ++j)
        x[j] = fmaOf(x[j], a, b);
  }
  unsigned wrong = 0;
#pragma unroll
  for (int j = 0; j < kFmaChains; ++j)
    wrong += x[j] != expect + T(j);
  if (wrong)
    atomicAdd(bad, wrong);
  if (blockIdx.x == 0 && threadIdx.x == 0)
    *out = x[0];
}

// Tensor cores: each warp runs kMmaChains independent accumulator chains
// d = A * B + d with fixed fragments (docs/PTX.md has the layouts). All A
// values are 1. Dense B is all 1, so one mma adds K to every accumulator.
// Sparse A keeps positions {0,1} of every 4-group (metadata nibble 0x4; for
// tf32's 1:2 pairs, position 0); sparse B is 1 on the rows at those
// positions and 2 on the others, so one mma adds K/2 only if the hardware
// honours the metadata.
constexpr int kMmaChains = 8;

constexpr unsigned kF16One = 0x3C003C00u;  // two f16 1.0
constexpr unsigned kF16Two = 0x40004000u;  // two f16 2.0
constexpr unsigned kBf16One = 0x3F803F80u; // two bf16 1.0
constexpr unsigned kBf16Two = 0x40004000u; // two bf16 2.0
constexpr unsigned kTf32One = 0x3F800000u; // 1.0f
constexpr unsigned kTf32Two = 0x40000000u; // 2.0f
constexpr unsigned kMeta01 = 0x44444444u;  // nonzeros at {0,1} (tf32: at 0)

/// One tensor-core instruction shape: its fragments, the mma itself, and
/// what one mma adds to every accumulator with the operands of operands().
struct DenseF16 {
  static constexpr int kM = 16, kN = 8, kK = 16, kA = 4, kB = 2, kC = 4;
  static constexpr int kPerMma = 16;
  using Acc = float;
  using Reg = unsigned;
  __device__ static void operands(unsigned, Reg (&a)[kA], Reg (&b)[kB]) {
    for (Reg &r : a)
      r = kF16One;
    for (Reg &r : b)
      r = kF16One;
  }
  __device__ static void mma(Acc (&d)[kC], const Reg (&a)[kA],
                             const Reg (&b)[kB]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]));
  }
};

struct DenseBf16 {
  static constexpr int kM = 16, kN = 8, kK = 16, kA = 4, kB = 2, kC = 4;
  static constexpr int kPerMma = 16;
  using Acc = float;
  using Reg = unsigned;
  __device__ static void operands(unsigned, Reg (&a)[kA], Reg (&b)[kB]) {
    for (Reg &r : a)
      r = kBf16One;
    for (Reg &r : b)
      r = kBf16One;
  }
  __device__ static void mma(Acc (&d)[kC], const Reg (&a)[kA],
                             const Reg (&b)[kB]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]));
  }
};

struct DenseTf32 {
  static constexpr int kM = 16, kN = 8, kK = 8, kA = 4, kB = 2, kC = 4;
  static constexpr int kPerMma = 8;
  using Acc = float;
  using Reg = unsigned;
  __device__ static void operands(unsigned, Reg (&a)[kA], Reg (&b)[kB]) {
    for (Reg &r : a)
      r = kTf32One;
    for (Reg &r : b)
      r = kTf32One;
  }
  __device__ static void mma(Acc (&d)[kC], const Reg (&a)[kA],
                             const Reg (&b)[kB]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]));
  }
};

struct DenseF64k4 {
  static constexpr int kM = 8, kN = 8, kK = 4, kA = 1, kB = 1, kC = 2;
  static constexpr int kPerMma = 4;
  using Acc = double;
  using Reg = double;
  __device__ static void operands(unsigned, Reg (&a)[kA], Reg (&b)[kB]) {
    a[0] = 1.0;
    b[0] = 1.0;
  }
  __device__ static void mma(Acc (&d)[kC], const Reg (&a)[kA],
                             const Reg (&b)[kB]) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 "
                 "{%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a[0]), "d"(b[0]));
  }
};

/// sm_90 only: ptxas rejects the shape for sm_80, where mma() is empty (and
/// the host never launches it; if it did, the check would fail).
struct DenseF64k16 {
  static constexpr int kM = 16, kN = 8, kK = 16, kA = 8, kB = 4, kC = 4;
  static constexpr int kPerMma = 16;
  using Acc = double;
  using Reg = double;
  __device__ static void operands(unsigned, Reg (&a)[kA], Reg (&b)[kB]) {
    for (Reg &r : a)
      r = 1.0;
    for (Reg &r : b)
      r = 1.0;
  }
  __device__ static void mma(Acc (&d)[kC], const Reg (&a)[kA],
                             const Reg (&b)[kB]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
                 "{%12,%13,%14,%15}, {%0,%1,%2,%3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]),
                   "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]), "d"(b[1]),
                   "d"(b[2]), "d"(b[3]));
#else
    (void)d;
    (void)a;
    (void)b;
#endif
  }
};

// Sparse f16/bf16 m16n8k32: B register r, half h is row 2t+h+8r, at position
// (2t+h) & 3 of its 4-group: positions {0,1} on lanes with even t, {2,3} on
// odd t. Every lane's metadata register is 0x44444444, selector 0.
struct SparseF16 {
  static constexpr int kM = 16, kN = 8, kK = 32, kA = 4, kB = 4, kC = 4;
  static constexpr int kPerMma = 16;
  using Acc = float;
  using Reg = unsigned;
  __device__ static void operands(unsigned lane, Reg (&a)[kA], Reg (&b)[kB]) {
    for (Reg &r : a)
      r = kF16One;
    for (Reg &r : b)
      r = (lane & 1) ? kF16Two : kF16One;
  }
  __device__ static void mma(Acc (&d)[kC], const Reg (&a)[kA],
                             const Reg (&b)[kB]) {
    asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col."
                 "f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, %13;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(kMeta01), "n"(0));
  }
};

struct SparseBf16 {
  static constexpr int kM = 16, kN = 8, kK = 32, kA = 4, kB = 4, kC = 4;
  static constexpr int kPerMma = 16;
  using Acc = float;
  using Reg = unsigned;
  __device__ static void operands(unsigned lane, Reg (&a)[kA], Reg (&b)[kB]) {
    for (Reg &r : a)
      r = kBf16One;
    for (Reg &r : b)
      r = (lane & 1) ? kBf16Two : kBf16One;
  }
  __device__ static void mma(Acc (&d)[kC], const Reg (&a)[kA],
                             const Reg (&b)[kB]) {
    asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col."
                 "f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, %13;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(kMeta01), "n"(0));
  }
};

// Sparse tf32 m16n8k16 (1:2 along K): B register i is row t+4i, at position
// t & 1 of its pair; nibble 0x4 keeps position 0.
struct SparseTf32 {
  static constexpr int kM = 16, kN = 8, kK = 16, kA = 4, kB = 4, kC = 4;
  static constexpr int kPerMma = 8;
  using Acc = float;
  using Reg = unsigned;
  __device__ static void operands(unsigned lane, Reg (&a)[kA], Reg (&b)[kB]) {
    for (Reg &r : a)
      r = kTf32One;
    for (Reg &r : b)
      r = (lane & 1) ? kTf32Two : kTf32One;
  }
  __device__ static void mma(Acc (&d)[kC], const Reg (&a)[kA],
                             const Reg (&b)[kB]) {
    asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col."
                 "f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, %13;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(kMeta01), "n"(0));
  }
};

/// Chain j starts at seed + j and must end at expect + j.
template <class Op>
__global__ void __launch_bounds__(kThreads)
    mmaKernel(typename Op::Acc seed, typename Op::Acc expect, int iters,
              typename Op::Acc *out, unsigned *bad) {
  using Acc = typename Op::Acc;
  typename Op::Reg a[Op::kA], b[Op::kB];
  Op::operands(threadIdx.x & 31, a, b);
  Acc acc[kMmaChains][Op::kC];
#pragma unroll
  for (int j = 0; j < kMmaChains; ++j)
#pragma unroll
    for (int i = 0; i < Op::kC; ++i)
      acc[j][i] = seed + Acc(j);
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int j = 0; j < kMmaChains; ++j)
      Op::mma(acc[j], a, b);
  }
  unsigned wrong = 0;
#pragma unroll
  for (int j = 0; j < kMmaChains; ++j)
#pragma unroll
    for (int i = 0; i < Op::kC; ++i)
      wrong += acc[j][i] != expect + Acc(j);
  if (wrong)
    atomicAdd(bad, wrong);
  if (blockIdx.x == 0 && threadIdx.x == 0)
    *out = acc[0][0];
}

//===----------------------------------------------------------------------===//
// Host helpers
//===----------------------------------------------------------------------===//

/// A plain decimal (never an exponent) with at most `decimals` decimals and
/// no trailing zeros.
std::string decimal(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.')
      s.pop_back();
  }
  return s;
}

/// Device memory, freed on every path (errors are thrown).
template <class T> class DeviceArray {
public:
  DeviceArray(size_t n, const char *what) {
    check(cudaMalloc(&ptr, n * sizeof(T)), std::string("allocating ") + what);
  }
  ~DeviceArray() { cudaFree(ptr); }
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;
  T *get() const { return ptr; }

private:
  T *ptr = nullptr;
};

template <class T> T readBack(const DeviceArray<T> &p, const char *what) {
  T value;
  check(cudaMemcpy(&value, p.get(), sizeof(T), cudaMemcpyDeviceToHost),
        std::string("reading the result of ") + what);
  return value;
}

template <class T> void zero(const DeviceArray<T> &p, const char *what) {
  check(cudaMemset(p.get(), 0, sizeof(T)), std::string("clearing ") + what);
}

class EventPair {
public:
  EventPair() {
    check(cudaEventCreate(&start), "creating a CUDA event");
    check(cudaEventCreate(&stop), "creating a CUDA event");
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair &) = delete;
  EventPair &operator=(const EventPair &) = delete;
  cudaEvent_t start = nullptr, stop = nullptr;
};

/// Milliseconds of one run of `launch` (which enqueues work and returns),
/// timed with CUDA events on the default stream.
template <class Launch> double timeOnce(const char *what, Launch &&launch) {
  EventPair ev;
  check(cudaEventRecord(ev.start), std::string("timing ") + what);
  launch();
  checkLaunch(what);
  check(cudaEventRecord(ev.stop), std::string("timing ") + what);
  check(cudaEventSynchronize(ev.stop), std::string("running ") + what);
  float ms = 0;
  check(cudaEventElapsedTime(&ms, ev.start, ev.stop),
        std::string("timing ") + what);
  return ms;
}

struct Timing {
  double bestMs = 0, medianMs = 0;
  int runs = 0;
};

/// One warm-up run, then `runs` timed runs.
template <class Launch>
Timing timeRuns(const char *what, int runs, Launch &&launch) {
  timeOnce(what, launch);
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r)
    ms.push_back(timeOnce(what, launch));
  std::sort(ms.begin(), ms.end());
  Timing t;
  t.bestMs = ms.front();
  t.medianMs = ms[ms.size() / 2];
  t.runs = runs;
  if (!(t.bestMs > 0))
    fail(std::string("timing ") + what, "a run took no measurable time");
  return t;
}

/// The iteration count for which one run of `launchIters(iters)` takes about
/// `targetMs`, at most `maxIters`: grows the count until a run is long
/// enough for launch overhead not to matter, then scales.
template <class Launch>
int calibrate(const char *what, int maxIters, double targetMs,
              Launch &&launchIters) {
  int iters = std::min(64, maxIters);
  for (;;) {
    double ms = timeOnce(what, [&] { launchIters(iters); });
    if (iters >= maxIters)
      return maxIters;
    if (ms >= targetMs / 8 && ms > 0) {
      double scaled = double(iters) * targetMs / ms;
      return int(std::clamp(scaled, 1.0, double(maxIters)));
    }
    iters = int(std::min<long long>(4LL * iters, maxIters));
  }
}

/// Blocks of kThreads that fill every SM once.
template <class Kernel> int fullGrid(Kernel kernel, int sms, const char *what) {
  int perSm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kThreads,
                                                      0),
        std::string("computing the occupancy of ") + what);
  if (perSm < 1)
    fail(std::string("computing the occupancy of ") + what,
         "no block of " + std::to_string(kThreads) + " threads fits an SM");
  return perSm * sms;
}

//===----------------------------------------------------------------------===//
// Measurements
//===----------------------------------------------------------------------===//

struct Settings {
  int runs;        // timed runs of compute kernels
  int copyRuns;    // timed runs of the copies
  double targetMs; // length of one compute run
};

/// One row of the table on standard error.
struct Row {
  std::string what;
  double best, median;
  const char *unit;
  int runs;
  std::string method;
};

void printHeader() {
  std::fprintf(stderr, "%-28s %10s %-7s %10s %5s  %s\n", "measurement", "best",
               "unit", "median", "runs", "method");
}

void printRow(const Row &r) {
  std::fprintf(stderr, "%-28s %10.1f %-7s %10.1f %5d  %s\n", r.what.c_str(),
               r.best, r.unit, r.median, r.runs, r.method.c_str());
}

struct Device {
  std::string name;
  int major = 0, minor = 0, sms = 0, clockKHz = 0;
  size_t sharedPerSm = 0, l2Bytes = 0;
};

Device queryDevice() {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess)
    fail("no CUDA device", cudaGetErrorString(status));
  if (count == 0)
    fail("no CUDA device", cudaGetErrorString(cudaErrorNoDevice));
  check(cudaSetDevice(0), "selecting CUDA device 0");
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "querying CUDA device 0");
  Device d;
  d.name = prop.name;
  auto attr = [](cudaDeviceAttr a, const char *what) {
    int v = 0;
    check(cudaDeviceGetAttribute(&v, a, 0),
          std::string("querying the ") + what + " of CUDA device 0");
    return v;
  };
  d.major = attr(cudaDevAttrComputeCapabilityMajor, "compute capability");
  d.minor = attr(cudaDevAttrComputeCapabilityMinor, "compute capability");
  d.sms = attr(cudaDevAttrMultiProcessorCount, "SM count");
  d.clockKHz = attr(cudaDevAttrClockRate, "clock rate");
  d.sharedPerSm = size_t(attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                              "shared memory per SM"));
  d.l2Bytes = size_t(attr(cudaDevAttrL2CacheSize, "L2 size"));
  if (d.sms <= 0 || d.clockKHz <= 0 || d.sharedPerSm == 0 || d.l2Bytes == 0)
    fail("querying CUDA device 0",
         "the driver reports a zero SM count, clock, shared memory or L2");
  return d;
}

/// bandwidth-gbs: the better of our copy kernel and cudaMemcpy, counting
/// bytes read plus bytes written.
double measureBandwidth(const Device &dev, const Settings &set) {
  constexpr size_t kMiB = size_t(1) << 20;
  size_t freeBytes = 0, totalBytes = 0;
  check(cudaMemGetInfo(&freeBytes, &totalBytes), "querying free device memory");
  // Two buffers of 1 GiB, or what 80% of free memory allows, in 16 MiB
  // steps.
  size_t bytes = std::min<size_t>(1024 * kMiB, freeBytes / 10 * 4);
  bytes = bytes / (16 * kMiB) * (16 * kMiB);
  if (bytes < 64 * kMiB)
    fail("allocating the copy buffers",
         "less than 160 MiB of device memory is free");
  size_t words = bytes / 4, vectors = bytes / 16;
  DeviceArray<unsigned> src(words, "the copy source"),
      dst(words, "the copy target");
  DeviceArray<unsigned long long> bad(1, "the copy check");
  int grid = fullGrid(copyKernel, dev.sms, "the copy kernel");

  fillKernel<<<grid, kThreads>>>(src.get(), words);
  checkLaunch("the fill kernel");
  auto verify = [&](const char *what) {
    zero(bad, "the copy check");
    verifyCopyKernel<<<grid, kThreads>>>(dst.get(), words, bad.get());
    checkLaunch("the copy check");
    unsigned long long wrong = readBack(bad, "the copy check");
    if (wrong)
      fail(std::string(what) + " gave a wrong result",
           std::to_string(wrong) + " of " + std::to_string(words) +
               " words differ from the source");
  };

  std::string size = "2 x " + std::to_string(bytes / kMiB) + " MiB";
  if (bytes < 4 * dev.l2Bytes)
    size += " (less than 4x L2: may read from L2)";
  double traffic = 2.0 * double(bytes);

  check(cudaMemset(dst.get(), 0, bytes), "clearing the copy target");
  Timing k = timeRuns("the copy kernel", set.copyRuns, [&] {
    copyKernel<<<grid, kThreads>>>(reinterpret_cast<const int4 *>(src.get()),
                                   reinterpret_cast<int4 *>(dst.get()),
                                   vectors);
  });
  verify("the copy kernel");
  Row kernelRow{"bandwidth: copy kernel",
                traffic / k.bestMs / 1e6,
                traffic / k.medianMs / 1e6,
                "GB/s",
                k.runs,
                "grid-stride copy, 16-byte loads/stores, " + size +
                    ", bytes read + written"};
  printRow(kernelRow);

  check(cudaMemset(dst.get(), 0, bytes), "clearing the copy target");
  Timing m = timeRuns("cudaMemcpy", set.copyRuns, [&] {
    check(
        cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice),
        "cudaMemcpyAsync device to device");
  });
  verify("cudaMemcpy");
  Row memcpyRow{"bandwidth: cudaMemcpy",
                traffic / m.bestMs / 1e6,
                traffic / m.medianMs / 1e6,
                "GB/s",
                m.runs,
                "cudaMemcpyDeviceToDevice, " + size + ", bytes read + written"};
  printRow(memcpyRow);
  return std::max(kernelRow.best, memcpyRow.best);
}

/// shared-gbs: 4-byte conflict-free loads by every thread of full SMs.
double measureShared(const Device &dev, const Settings &set) {
  const char *what = "the shared-memory kernel";
  int grid = fullGrid(sharedKernel, dev.sms, what);
  DeviceArray<unsigned> out(1, what), bad(1, what);
  zero(bad, what);
  // The sum of lane 0's loads, and what each lane adds to it, modulo 2^32.
  const unsigned base = 12345;
  auto expected = [&](int iters, unsigned &expect, unsigned &perLane) {
    unsigned offsets = 0, offset = 0;
    for (int it = 0; it < iters; ++it) {
      offsets += offset;
      offset = (offset + kSharedStep) & (kSharedWindow - 1);
    }
    unsigned u = kSharedUnroll;
    expect = u * offsets + unsigned(iters) * (16u * u * (u - 1) + u * base);
    perLane = unsigned(iters) * u;
  };
  auto launch = [&](int iters) {
    unsigned expect, perLane;
    expected(iters, expect, perLane);
    sharedKernel<<<grid, kThreads>>>(base, iters, expect, perLane, out.get(),
                                     bad.get());
  };
  int iters = calibrate(what, 1 << 28, set.targetMs, launch);
  Timing t = timeRuns(what, set.runs, [&] { launch(iters); });
  unsigned wrong = readBack(bad, what);
  if (wrong)
    fail(std::string(what) + " gave a wrong result",
         std::to_string(wrong) + " threads summed the wrong words");
  double bytes = double(grid) * kThreads * double(iters) * kSharedUnroll * 4;
  Row r{"shared memory",
        bytes / t.bestMs / 1e6,
        bytes / t.medianMs / 1e6,
        "GB/s",
        t.runs,
        "LDS.32, 32 consecutive words per warp load, " +
            std::to_string(grid / dev.sms) + " blocks x " +
            std::to_string(kThreads) + " threads per SM"};
  printRow(r);
  return r.best;
}

/// cuda-core.*-tflops: independent FMA chains, 2 flops per FMA.
template <class T> double measureFma(const Device &dev, const Settings &set) {
  bool f32 = sizeof(T) == 4;
  const char *what = f32 ? "the FFMA kernel" : "the DFMA kernel";
  int grid = fullGrid(fmaKernel<T>, dev.sms, what);
  DeviceArray<T> out(1, what);
  DeviceArray<unsigned> bad(1, what);
  zero(bad, what);
  const T seed = 3;
  auto launch = [&](int iters) {
    T expect = T(double(seed) + double(iters) * kFmaUnroll);
    fmaKernel<T><<<grid, kThreads>>>(seed, T(1), T(1), expect, iters, out.get(),
                                     bad.get());
  };
  // f32 chains stay below 2^23, where every integer is exact.
  int maxIters = f32 ? (1 << 23) / kFmaUnroll : 1 << 28;
  int iters = calibrate(what, maxIters, set.targetMs, launch);
  Timing t = timeRuns(what, set.runs, [&] { launch(iters); });
  unsigned wrong = readBack(bad, what);
  if (wrong)
    fail(std::string(what) + " gave a wrong result",
         std::to_string(wrong) + " chains ended at the wrong value");
  double flops =
      double(grid) * kThreads * double(iters) * kFmaUnroll * kFmaChains * 2;
  Row r{f32 ? "CUDA cores: f32 FMA" : "CUDA cores: f64 FMA",
        flops / t.bestMs / 1e9,
        flops / t.medianMs / 1e9,
        "TFLOP/s",
        t.runs,
        std::string(f32 ? "FFMA" : "DFMA") + ", " + std::to_string(kFmaChains) +
            " chains per thread, " + std::to_string(grid / dev.sms) +
            " blocks x " + std::to_string(kThreads) + " threads per SM"};
  printRow(r);
  return r.best;
}

/// tc.* and sptc.*: kMmaChains accumulator chains per warp, full SMs; flops
/// are 2*m*n*k per mma with the logical (dense) K.
template <class Op>
double measureMma(const Device &dev, const Settings &set, const char *label,
                  const char *shape) {
  using Acc = typename Op::Acc;
  std::string what = std::string("the ") + label + " kernel";
  int grid = fullGrid(mmaKernel<Op>, dev.sms, what.c_str());
  DeviceArray<Acc> out(1, what.c_str());
  DeviceArray<unsigned> bad(1, what.c_str());
  zero(bad, what.c_str());
  const Acc seed = 1;
  int lastIters = 0;
  auto launch = [&](int iters) {
    lastIters = iters;
    Acc expect = Acc(double(seed) + double(iters) * Op::kPerMma);
    mmaKernel<Op>
        <<<grid, kThreads>>>(seed, expect, iters, out.get(), bad.get());
  };
  // f32 accumulators stay below 2^23, where every integer is exact.
  int maxIters = sizeof(Acc) == 4 ? (1 << 23) / Op::kPerMma : 1 << 28;
  int iters = calibrate(what.c_str(), maxIters, set.targetMs, launch);
  Timing t = timeRuns(what.c_str(), set.runs, [&] { launch(iters); });
  unsigned wrong = readBack(bad, what.c_str());
  if (wrong) {
    Acc got = readBack(out, what.c_str());
    fail(label + std::string(" gave a wrong result"),
         std::to_string(wrong) + " accumulators differ; thread 0 holds " +
             decimal(double(got), 3) + " where " +
             decimal(double(seed) + double(lastIters) * Op::kPerMma, 3) +
             " was expected");
  }
  double flops = double(grid) * (kThreads / 32) * double(iters) * kMmaChains *
                 2.0 * Op::kM * Op::kN * Op::kK;
  Row r{label,
        flops / t.bestMs / 1e9,
        flops / t.medianMs / 1e9,
        "TFLOP/s",
        t.runs,
        std::string(shape) + ", " + std::to_string(kMmaChains) +
            " chains per warp, " +
            std::to_string(grid / dev.sms * kThreads / 32) + " warps per SM"};
  printRow(r);
  return r.best;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

/// The device name as one line of free text without a comment.
std::string cleanName(const std::string &name) {
  std::string s;
  for (char c : name)
    s += (c == '#' || (unsigned char)c < 0x20) ? ' ' : c;
  while (!s.empty() && s.back() == ' ')
    s.pop_back();
  return s.empty() ? "unnamed GPU" : s;
}

struct Result {
  double bandwidth, shared, f32, f64;
  double tcF16, tcBf16, tcTf32, tcF64;
  double spF16, spBf16, spTf32;
};

std::string describe(const Device &dev, const Result &r) {
  char date[32] = "unknown date";
  std::time_t now = std::time(nullptr);
  std::tm tm;
  if (localtime_r(&now, &tm))
    std::strftime(date, sizeof date, "%Y-%m-%d", &tm);
  std::string name = cleanName(dev.name);
  std::string s = "# stencilc hardware description\n";
  s += "# written by stencil-probe on " + std::string(date) + " from " + name +
       "\n";
  auto line = [&](const char *key, const std::string &value) {
    s += std::string(key) + " = " + value + "\n";
  };
  auto rate = [&](const char *key, double value) {
    if (!(value > 0) || !std::isfinite(value))
      fail(std::string("measuring ") + key,
           "the result " + std::to_string(value) + " is not positive");
    line(key, decimal(value, value >= 1 ? 3 : 6));
  };
  line("name", name);
  line("arch", "sm_" + std::to_string(dev.major) + std::to_string(dev.minor));
  line("sms", std::to_string(dev.sms));
  line("clock-mhz", decimal(dev.clockKHz / 1000.0, 3));
  line("shared-kib-per-sm", decimal(double(dev.sharedPerSm) / 1024, 4));
  line("l2-mib", decimal(double(dev.l2Bytes) / (1 << 20), 4));
  rate("bandwidth-gbs", r.bandwidth);
  rate("shared-gbs", r.shared);
  rate("cuda-core.f32-tflops", r.f32);
  rate("cuda-core.f64-tflops", r.f64);
  rate("tc.f16-tflops", r.tcF16);
  rate("tc.bf16-tflops", r.tcBf16);
  rate("tc.tf32-tflops", r.tcTf32);
  rate("tc.f64-tflops", r.tcF64);
  rate("sptc.f16-tflops", r.spF16);
  rate("sptc.bf16-tflops", r.spBf16);
  rate("sptc.tf32-tflops", r.spTf32);
  return s;
}

/// Fails early, before minutes of measuring, when `path` cannot be written:
/// its directory is missing or read-only, or it is a directory.
void checkWritable(const std::string &path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    fail("cannot write '" + path + "'", std::strerror(EISDIR));
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "."
                    : slash == 0               ? "/"
                                               : path.substr(0, slash);
  if (access(dir.c_str(), W_OK) != 0)
    fail("cannot write '" + path + "'", std::strerror(errno));
}

/// Writes `text` to a temporary file beside `path` and renames it into
/// place, so `path` is either the old file or the complete new one.
void writeAtomically(const std::string &path, const std::string &text) {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = mkstemp(&tmp[0]);
  if (fd < 0)
    fail("cannot write '" + path + "'", std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      close(fd);
      unlink(tmp.c_str());
      fail("cannot write '" + path + "'", std::strerror(err));
    }
    done += size_t(n);
  }
  // The file mkstemp made is private (0600); a description is not.
  fchmod(fd, 0644);
  if (close(fd) != 0 || rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    fail("cannot write '" + path + "'", std::strerror(err));
  }
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

const char kUsage[] =
    "USAGE: stencil-probe [-o FILE] [--quick]\n"
    "\n"
    "Measures the ceilings of CUDA device 0 with stencil-probe's own\n"
    "microkernels (memory and shared-memory bandwidth, CUDA-core FMA rates,\n"
    "dense and sparse tensor-core rates) and writes the hardware description\n"
    "that stencilc --hw=FILE reads (docs/cost-model.md). A table of every\n"
    "measurement goes to standard error. Choose another GPU with\n"
    "CUDA_VISIBLE_DEVICES.\n"
    "\n"
    "OPTIONS:\n"
    "  -o FILE   Write the description to FILE ('-' or no -o: standard\n"
    "            output). FILE is written only if every measurement\n"
    "            succeeded.\n"
    "  --quick   Fewer and shorter runs: a fast check, less precise.\n"
    "  --help    Print this help and exit.\n"
    "\n"
    "Exit status: 0 on success, 1 on any error (no GPU, a CUDA error, a\n"
    "kernel that computed a wrong result, an unwritable FILE).\n";

struct Options {
  std::string output; // empty: standard output
  bool quick = false;
};

/// Returns false when --help was printed.
bool parseOptions(int argc, char **argv, Options &opts) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return false;
    }
    if (arg == "--quick") {
      opts.quick = true;
    } else if (arg == "-o") {
      if (i + 1 == argc || argv[i + 1][0] == '\0')
        throw Failure{"option '-o' needs a file name"};
      opts.output = argv[++i];
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw Failure{"unknown option '" + arg + "'"};
    } else {
      throw Failure{"unexpected argument '" + arg +
                    "'; stencil-probe takes only options"};
    }
  }
  if (opts.output == "-")
    opts.output.clear();
  return true;
}

int run(int argc, char **argv) {
  Options opts;
  if (!parseOptions(argc, argv, opts))
    return 0;
  if (!opts.output.empty())
    checkWritable(opts.output);

  Device dev = queryDevice();
  Settings set = opts.quick ? Settings{3, 5, 5.0} : Settings{10, 20, 25.0};
  std::fprintf(stderr,
               "stencil-probe: %s, sm_%d%d, %d SMs, %d MHz, %zu KiB shared "
               "per SM, %.1f MiB L2\n",
               dev.name.c_str(), dev.major, dev.minor, dev.sms,
               dev.clockKHz / 1000, dev.sharedPerSm / 1024,
               double(dev.l2Bytes) / (1 << 20));
  std::fprintf(stderr,
               "Each value: the best of the runs (CUDA events around each "
               "run, after one warm-up run);\nthe median alongside. Compute "
               "kernels run about %.0f ms each, after calibration.\n\n",
               set.targetMs);
  printHeader();

  Result r;
  r.bandwidth = measureBandwidth(dev, set);
  r.shared = measureShared(dev, set);
  r.f32 = measureFma<float>(dev, set);
  r.f64 = measureFma<double>(dev, set);
  r.tcF16 = measureMma<DenseF16>(dev, set, "tc.f16",
                                 "mma.sync m16n8k16 f16, f32 acc");
  r.tcBf16 = measureMma<DenseBf16>(dev, set, "tc.bf16",
                                   "mma.sync m16n8k16 bf16, f32 acc");
  r.tcTf32 = measureMma<DenseTf32>(dev, set, "tc.tf32",
                                   "mma.sync m16n8k8 tf32, f32 acc");
  r.tcF64 =
      measureMma<DenseF64k4>(dev, set, "tc.f64 m8n8k4", "mma.sync m8n8k4 f64");
  if (dev.major >= 9)
    r.tcF64 = std::max(
        r.tcF64, measureMma<DenseF64k16>(dev, set, "tc.f64 m16n8k16",
                                         "mma.sync m16n8k16 f64 (sm_90)"));
  r.spF16 = measureMma<SparseF16>(
      dev, set, "sptc.f16",
      "mma.sp::ordered_metadata m16n8k32 f16 2:4, logical K");
  r.spBf16 = measureMma<SparseBf16>(
      dev, set, "sptc.bf16",
      "mma.sp::ordered_metadata m16n8k32 bf16 2:4, logical K");
  r.spTf32 = measureMma<SparseTf32>(
      dev, set, "sptc.tf32",
      "mma.sp::ordered_metadata m16n8k16 tf32 1:2, logical K");
  std::fprintf(stderr, "\nbandwidth-gbs is the better of the two copies; "
                       "tc.f64 the faster f64 shape.\n");

  std::string text = describe(dev, r);
  // stencilc's --arch values (compiler/lib/Support/GpuArch.cpp).
  const int cc = dev.major * 10 + dev.minor;
  if (cc != 80 && cc != 86 && cc != 89 && cc != 90 && cc != 100 && cc != 120)
    std::fprintf(stderr,
                 "stencil-probe: warning: arch sm_%d%d is written as measured, "
                 "but stencilc targets sm_80, sm_86, sm_89, sm_90, sm_100 and "
                 "sm_120 only\n",
                 dev.major, dev.minor);
  if (opts.output.empty()) {
    if (std::fputs(text.c_str(), stdout) == EOF || std::fflush(stdout) != 0)
      fail("cannot write to standard output", std::strerror(errno));
  } else {
    writeAtomically(opts.output, text);
    std::fprintf(stderr, "stencil-probe: wrote %s\n", opts.output.c_str());
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const Failure &f) {
    std::fflush(stdout);
    std::fprintf(stderr, "stencil-probe: error: %s\n", f.text.c_str());
    return 1;
  }
}
