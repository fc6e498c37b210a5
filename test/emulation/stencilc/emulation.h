//===- emulation.h - Run generated CUDA on the CPU, for tests ---*- C++ -*-===//
//
// CI has no GPU, but the code stencilc emits must still be executed there.
// Compiled with a host C++ compiler as
//
//   g++ -std=c++20 -x c++ -DSTENCILC_EMULATE -include stencilc/emulation.h
//
// a generated .cu runs on the CPU: each kernel launch runs its blocks one
// after another, each CUDA thread of a block a fiber (ucontext) on the one
// OS thread, __syncthreads() a switch to the next fiber until every fiber
// of the block has reached it, dynamic shared memory a per-launch buffer,
// and device memory ordinary host memory. Fibers make a barrier cost a
// jump rather than a futex round trip across 256 OS threads, which long
// runs (10^4 steps) need. It checks indexing, barriers and
// boundary logic; it says nothing about speed, and it is not a CUDA
// implementation beyond what the generated code and its driver use
// (cp.async and the star kernel's TMA ring land as late as a GPU may land
// them).
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_EMULATION_H
#define STENCILC_EMULATION_H

#include <cuda_runtime.h>

#include <setjmp.h>
#include <ucontext.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

// Attributes the host compiler does not know.
#undef __launch_bounds__
#define __launch_bounds__(...)
// Static shared memory: one array for all threads, which share the OS
// thread; blocks run one after another.
#undef __shared__
#define __shared__ static

inline uint3 threadIdx;
inline uint3 blockIdx;
inline uint3 gridDim;

namespace stencilc_emu {

inline unsigned char *blockShared = nullptr;

inline unsigned char *sharedMemory() { return blockShared; }

/// The fibers of a block: each runs the kernel for one CUDA thread and
/// switches back to the scheduler at every __syncthreads(). A fiber is
/// made once (makecontext) and then serves every block of every launch;
/// switches are _setjmp/_longjmp, which, unlike swapcontext, make no system
/// call.
struct Fibers {
  static constexpr size_t kStackBytes = 256 * 1024;
  struct Fiber {
    ucontext_t start;
    jmp_buf context;
    std::unique_ptr<char[]> stack;
    bool started = false, done = false;
  };
  jmp_buf scheduler;
  std::vector<Fiber> fibers;
  unsigned current = 0, threads = 0, exited = 0;
  void (*body)(void *) = nullptr;
  void *bodyArg = nullptr;
};
inline Fibers fibers;

/// Back to the scheduler; returns when the scheduler resumes this fiber.
inline void yieldFiber() {
  if (!_setjmp(fibers.fibers[fibers.current].context))
    _longjmp(fibers.scheduler, 1);
}

/// A barrier of `count` threads (less those that have exited) that spins
/// by yielding: threads may yield at different points (warp collectives
/// wait on their own barriers), so one yield is not a barrier by itself.
struct Barrier {
  unsigned arrived = 0, generation = 0;
  void releaseIf(unsigned live) {
    if (arrived && arrived >= live) {
      arrived = 0;
      ++generation;
    }
  }
  void wait(const unsigned &live) {
    const unsigned gen = generation;
    ++arrived;
    releaseIf(live);
    while (generation == gen)
      yieldFiber();
  }
};
inline Barrier blockBarrier;
/// Warp w's barrier, and its live lanes.
inline std::vector<Barrier> warpBarriers;
inline std::vector<unsigned> warpLive;

inline void fiberMain() {
  for (;;) {
    fibers.body(fibers.bodyArg);
    fibers.fibers[fibers.current].done = true;
    ++fibers.exited;
    blockBarrier.releaseIf(fibers.threads - fibers.exited);
    const unsigned w = fibers.current / 32;
    --warpLive[w];
    warpBarriers[w].releaseIf(warpLive[w]);
    yieldFiber();
  }
}

/// A thread's cp.async copies (stencilc::rt::copyAsync) that have not
/// landed: the source's bytes as issued (kernels read only their input
/// this way, which no thread writes), the destination, and the group each
/// belongs to (the commits before it). A copy lands when its thread waits
/// for its group, the latest the GPU may land it, so a kernel that reads a
/// slot before its wait and barrier reads the slot's old bytes here.
struct AsyncCopy {
  void *dst;
  unsigned char bytes[16];
  unsigned size, group;
};
struct AsyncCopies {
  std::vector<AsyncCopy> pending;
  unsigned committed = 0;
};
inline std::vector<AsyncCopies> asyncCopies; ///< By thread of the block.

inline void copyAsync(void *dst, const void *src, unsigned size) {
  AsyncCopies &c = asyncCopies[fibers.current];
  AsyncCopy a{dst, {}, size, c.committed};
  std::memcpy(a.bytes, src, size);
  c.pending.push_back(a);
}
inline void copyAsyncCommit() { ++asyncCopies[fibers.current].committed; }
/// cp.async.wait_group n: every committed group but the n newest lands.
inline void copyAsyncWait(unsigned n) {
  AsyncCopies &c = asyncCopies[fibers.current];
  if (c.committed < n)
    return;
  const unsigned upTo = c.committed - n; // groups below land
  size_t kept = 0;
  for (AsyncCopy &a : c.pending) {
    if (a.group < upTo)
      std::memcpy(a.dst, a.bytes, a.size);
    else
      c.pending[kept++] = a;
  }
  c.pending.resize(kept);
}

/// TMA for the star kernel's ring (stencilc/tma_ring.cuh), as a Hopper GPU
/// runs it. The tensor map holds the array and the box. A load poisons its
/// slot at once (bytes 0xFF: NaN in every float type), as the copy engine
/// may write it from then on, so a read of the slot's previous plane after
/// the issue fails the check; it lands when a thread first waits for it,
/// the latest the GPU may land it, so a read before the wait fails too.
/// Each slot's barrier word counts the planes that completed in it; a load
/// into a slot whose last plane has not completed, a wait for a plane that
/// was never issued or was overwritten, a block that exits with a load not
/// waited for, and a copy that breaks TMA's alignment rules abort.
struct TmaMap {
  const unsigned char *base;
  size_t elem;
  long long extent[3]; ///< Innermost first.
  int box[3];
};
// A CUtensorMap (cuda.h, which this header leaves out: programs that
// include it define macros such as N) holds 128 bytes.
static_assert(sizeof(TmaMap) <= 128, "a tensor map holds a TmaMap");
struct TmaLoad {
  TmaMap map;
  unsigned char *dst;
  long long at[3];
  long long plane;
};
inline std::map<const void *, TmaLoad> tmaLoads; ///< By barrier.

[[noreturn]] inline void tmaFail(const char *what, long long plane) {
  std::fprintf(stderr, "stencilc emulation: TMA ring, plane %lld: %s\n", plane,
               what);
  std::abort();
}
/// Encodes the map, as a GPU of compute capability 9.0 would take it
/// (false with STENCILC_EMU_NO_TMA set: a GPU without TMA).
inline bool tmaEncode(void *map, const void *base, size_t elem, long long n0,
                      long long n1, long long n2, int boxW, int boxH) {
  if (std::getenv("STENCILC_EMU_NO_TMA") ||
      reinterpret_cast<uintptr_t>(base) % 16 != 0 || n2 * elem % 16 != 0 ||
      boxW <= 0 || boxW > 256 || boxH <= 0 || boxH > 256 ||
      boxW * elem % 16 != 0)
    return false;
  TmaMap m{static_cast<const unsigned char *>(base),
           elem,
           {n2, n1, n0},
           {boxW, boxH, 1}};
  std::memset(map, 0, 128);
  std::memcpy(map, &m, sizeof m);
  return true;
}
/// Whether shared memory at `p` is aligned to `align` bytes, counted from
/// the block's dynamic shared memory, which the GPU aligns.
inline bool tmaAligned(const void *p, unsigned align) {
  return (static_cast<const unsigned char *>(p) - blockShared) % align == 0;
}
inline void tmaInit(std::uint64_t *bars, int n) {
  for (int s = 0; s < n; ++s) {
    if (tmaLoads.count(&bars[s]))
      tmaFail("a block exited with it in flight", tmaLoads[&bars[s]].plane);
    bars[s] = 0;
  }
}
inline void tmaLoad(std::uint64_t *bar, long long plane, int slots, void *dst,
                    const void *map, int x, int y, int z, unsigned bytes) {
  TmaLoad l;
  std::memcpy(&l.map, map, sizeof l.map);
  if (*bar != static_cast<std::uint64_t>(plane / slots) || tmaLoads.count(bar))
    tmaFail("issued into a slot whose last plane has not landed", plane);
  if (x * static_cast<long long>(l.map.elem) % 16 != 0 ||
      !tmaAligned(dst, 128) ||
      bytes != l.map.elem * l.map.box[0] * l.map.box[1] * l.map.box[2])
    tmaFail("breaks TMA's rules (x on 16 bytes, a slot on 128, the box's "
            "bytes)",
            plane);
  l.dst = static_cast<unsigned char *>(dst);
  l.at[0] = x, l.at[1] = y, l.at[2] = z;
  l.plane = plane;
  std::memset(dst, 0xFF, bytes);
  tmaLoads[bar] = l;
}
inline void tmaSkip(std::uint64_t *bar, long long plane, int slots) {
  if (*bar != static_cast<std::uint64_t>(plane / slots) || tmaLoads.count(bar))
    tmaFail("written into a slot whose last plane has not landed", plane);
  *bar = plane / slots + 1;
}
/// Waits for plane `plane`: yields to the block's other threads until one
/// has issued (or skipped) it, as mbarrier.try_wait spins on the GPU.
inline void tmaWait(std::uint64_t *bar, long long plane, int slots) {
  const std::uint64_t phase = plane / slots;
  for (long spins = 0; *bar == phase && !tmaLoads.count(bar); ++spins) {
    if (spins == 1000000)
      tmaFail("waited for, never issued", plane);
    yieldFiber();
  }
  auto it = tmaLoads.find(bar);
  if (it != tmaLoads.end() && it->second.plane == plane) {
    const TmaLoad &l = it->second;
    const size_t e = l.map.elem;
    unsigned char *out = l.dst;
    for (int k = 0; k < l.map.box[2]; ++k)
      for (int j = 0; j < l.map.box[1]; ++j)
        for (int i = 0; i < l.map.box[0]; ++i, out += e) {
          const long long q[3] = {l.at[0] + i, l.at[1] + j, l.at[2] + k};
          bool in = true;
          for (int a = 0; a < 3; ++a)
            in &= q[a] >= 0 && q[a] < l.map.extent[a];
          if (in)
            std::memcpy(
                out,
                l.map.base +
                    ((q[2] * l.map.extent[1] + q[1]) * l.map.extent[0] + q[0]) *
                        e,
                e);
          else
            std::memset(out, 0, e);
        }
    *bar = plane / slots + 1;
    tmaLoads.erase(it);
  }
  if (*bar != phase + 1)
    tmaFail("waited for, but not in its slot", plane);
}

/// Runs body(arg) once per thread of a block of `threads` threads, each up
/// to its next barrier in turn, until all have returned.
inline void runBlock(unsigned threads, void (*body)(void *), void *arg) {
  if (fibers.fibers.size() < threads)
    fibers.fibers.resize(threads);
  fibers.body = body;
  fibers.bodyArg = arg;
  fibers.threads = threads;
  fibers.exited = 0;
  blockBarrier = Barrier{};
  asyncCopies.assign(threads, AsyncCopies{});
  warpBarriers.assign((threads + 31) / 32, Barrier{});
  warpLive.assign((threads + 31) / 32, 0);
  for (unsigned t = 0; t < threads; ++t) {
    fibers.fibers[t].done = false;
    ++warpLive[t / 32];
  }
  // One round runs every live fiber to its next barrier (or its end). A
  // barrier that some threads skip by returning early would be undefined
  // in CUDA; here it simply completes.
  for (bool live = true; live;) {
    live = false;
    for (unsigned t = 0; t < threads; ++t) {
      Fibers::Fiber &f = fibers.fibers[t];
      if (f.done)
        continue;
      fibers.current = t;
      threadIdx = {t, 0, 0};
      if (!_setjmp(fibers.scheduler)) {
        if (f.started)
          _longjmp(f.context, 1);
        f.started = true;
        f.stack.reset(new char[Fibers::kStackBytes]);
        getcontext(&f.start);
        f.start.uc_stack.ss_sp = f.stack.get();
        f.start.uc_stack.ss_size = Fibers::kStackBytes;
        f.start.uc_link = nullptr;
        makecontext(&f.start, fiberMain, 0);
        setcontext(&f.start);
      }
      live |= !f.done;
    }
  }
}

/// Runs kernel(args...) on `blocks` blocks of `threads` threads with `smem`
/// bytes of dynamic shared memory, one block after another.
template <class Kernel, class... Args>
void launch(Kernel kernel, unsigned blocks, unsigned threads, size_t smem,
            const Args &...args) {
  std::vector<unsigned char> shared(smem + 16);
  blockShared = shared.data();
  auto call = [&]() { kernel(args...); };
  using Call = decltype(call);
  gridDim = {blocks, 1, 1};
  for (unsigned b = 0; b < blocks; ++b) {
    blockIdx = {b, 0, 0};
    runBlock(threads, [](void *c) { (*static_cast<Call *>(c))(); }, &call);
  }
  if (!tmaLoads.empty())
    tmaFail("the kernel ended with it in flight",
            tmaLoads.begin()->second.plane);
}

} // namespace stencilc_emu

inline void __syncthreads() {
  stencilc_emu::blockBarrier.wait(stencilc_emu::fibers.threads -
                                  stencilc_emu::fibers.exited);
}
inline void __syncwarp(unsigned = 0xFFFFFFFFu) {
  const unsigned w = threadIdx.x / 32;
  stencilc_emu::warpBarriers[w].wait(stencilc_emu::warpLive[w]);
}
inline unsigned __float_as_uint(float x) {
  unsigned u;
  std::memcpy(&u, &x, 4);
  return u;
}
inline float __uint_as_float(unsigned u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

namespace stencilc_emu {

/// Warp collectives: every lane posts its words, the warp meets, each
/// lane reads what it needs of the others', and the warp meets again
/// before the posts are reused.
struct WarpPost {
  unsigned a[8], b[8], e;
  const void *p;
};
inline std::vector<WarpPost> warpPosts;

inline WarpPost *postWarp(const WarpPost &mine) {
  const unsigned need = (fibers.threads + 31) / 32 * 32;
  if (warpPosts.size() < need)
    warpPosts.resize(need);
  warpPosts[threadIdx.x] = mine;
  __syncwarp();
  return &warpPosts[threadIdx.x / 32 * 32];
}

inline float halfToFloat(unsigned h) {
  const unsigned sign = (h >> 15) & 1, exp = (h >> 10) & 31, man = h & 1023;
  float v = exp == 0    ? std::ldexp(static_cast<float>(man), -24)
            : exp == 31 ? (man ? NAN : INFINITY)
                        : std::ldexp(static_cast<float>(man | 1024), exp - 25);
  return sign ? -v : v;
}

/// mma.sync / mma.sp::ordered_metadata.sync, f32 accumulators, with the
/// fragment layouts of docs/PTX.md: `shape` is "m16n8k<K>", `types`
/// "tf32.tf32", "f16.f16" or "bf16.bf16"; `sel` the sparsity selector.
/// Products are exact in float and added in increasing k, as the CPU
/// emulator of the MatrixProgram (IR/MatrixEmulator.h) adds them.
inline void mma(const char *shape, const char *types, bool sparse,
                float (&d)[4], const unsigned *a, int na, const unsigned *b,
                int nb, unsigned e, int sel) {
  WarpPost mine{};
  for (int r = 0; r < na; ++r)
    mine.a[r] = a[r];
  for (int r = 0; r < nb; ++r)
    mine.b[r] = b[r];
  mine.e = e;
  const WarpPost *lanes = postWarp(mine);
  const int k = std::atoi(std::strchr(shape, 'k') + 1);
  const bool tf32 = types[0] == 't', bf16 = types[0] == 'b';
  const int E = tf32 ? 1 : 2; // elements per register
  auto value = [&](unsigned w, int h) -> float {
    if (tf32)
      return __uint_as_float(w & 0xFFFFE000u);
    const unsigned bits = (w >> (16 * h)) & 0xFFFFu;
    return bf16 ? __uint_as_float(bits << 16) : halfToFloat(bits);
  };
  // A element i of lane (g, t): its row, and its column (sparse: the
  // compressed column, group * (values per group) + stored value).
  auto aAt = [&](int g, int t, int i, int &row, int &col) {
    const int r = i / E, h = i % E;
    if (!sparse) {
      if (tf32 && k == 4)
        row = g + 8 * i, col = t;
      else if (tf32)
        row = g + 8 * (i & 1), col = t + 4 * (i >> 1);
      else if (k == 8)
        row = g + 8 * (i >> 1), col = 2 * t + (i & 1);
      else
        row = g + 8 * ((i >> 1) & 1), col = 2 * t + (i & 1) + 8 * (i >> 2);
    } else if (tf32) {
      row = g + 8 * (r & 1), col = t + 4 * (r >> 1);
    } else {
      row = g + 8 * (r & 1), col = 2 * (t + 4 * (r >> 1)) + h;
    }
  };
  // B element i of lane (g, t): its row (k); its column is g.
  auto bRow = [&](int t, int i) {
    if (tf32)
      return t + 4 * i;
    if (k == 8)
      return 2 * t + i;
    return 2 * t + (i & 1) + 8 * (i >> 1);
  };
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  // The lane's two rows of A (expanded to the logical K) and two columns
  // of B, gathered once for its four accumulators.
  float logical[2][32] = {}, bcols[2][32] = {};
  for (int half = 0; half < 2; ++half) {
    const int row = g + 8 * half, col = 2 * t + half;
    float arow[32] = {};
    for (int l = 0; l < 32; ++l)
      for (int i = 0; i < na * E; ++i) {
        int r, cc;
        aAt(l / 4, l % 4, i, r, cc);
        if (r == row)
          arow[cc] = value(lanes[l].a[i / E], i % E);
      }
    for (int l = 0; l < 32; ++l)
      if (l / 4 == col)
        for (int i = 0; i < nb * E; ++i)
          bcols[half][bRow(l % 4, i)] = value(lanes[l].b[i / E], i % E);
    if (!sparse) {
      for (int kk = 0; kk < k; ++kk)
        logical[half][kk] = arow[kk];
    } else {
      // Metadata: one register (lane 4g + sel) for k16 f16 and k8 tf32,
      // two (lanes 4g + 2 sel, + 1) for k32 f16 and k16 tf32.
      const int groupSize = tf32 ? 2 : 4, groups = k / groupSize;
      const bool two = groups == 8;
      for (int grp = 0; grp < groups; ++grp) {
        const int src = two ? 4 * (row % 8) + 2 * sel + grp / 4
                            : 4 * (row % 8) + sel;
        const unsigned nib =
            (lanes[src].e >> (4 * ((row / 8) * 4 + grp % 4))) & 15u;
        if (tf32) {
          logical[half][2 * grp + ((nib & 3) >> 1)] += arow[grp];
        } else {
          logical[half][4 * grp + (nib & 3)] += arow[2 * grp];
          logical[half][4 * grp + ((nib >> 2) & 3)] += arow[2 * grp + 1];
        }
      }
    }
  }
  for (int c = 0; c < 4; ++c) {
    float sum = d[c];
    for (int kk = 0; kk < k; ++kk)
      sum += logical[c >> 1][kk] * bcols[c & 1][kk];
    d[c] = sum;
  }
  __syncwarp();
}

/// movmatrix.m8n8.trans.b16: lane 4g + t gets rows 2t and 2t + 1 of
/// column g of the 8x8 matrix whose row g, columns 2t and 2t + 1 it held.
inline unsigned transpose8x8(unsigned w) {
  WarpPost mine{};
  mine.a[0] = w;
  const WarpPost *lanes = postWarp(mine);
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  auto at = [&](int r, int c) {
    return (lanes[4 * r + c / 2].a[0] >> (16 * (c & 1))) & 0xFFFFu;
  };
  const unsigned out = at(2 * t, g) | at(2 * t + 1, g) << 16;
  __syncwarp();
  return out;
}

/// ldmatrix.sync.aligned.m8n8.x4.shared.b16 (PTX ISA 9.7.14.5.15): lane
/// 8m + r gives the address of row r of matrix m; lane 4g + t gets in d[m]
/// the 32-bit word of elements 2t and 2t + 1 of row g of matrix m.
inline void ldmatrixX4(unsigned (&d)[4], const void *row) {
  WarpPost mine{};
  mine.p = row;
  const WarpPost *lanes = postWarp(mine);
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  for (int m = 0; m < 4; ++m)
    std::memcpy(&d[m], static_cast<const char *>(lanes[8 * m + g].p) + 4 * t,
                4);
  __syncwarp();
}

} // namespace stencilc_emu
// CUDA's integer min and max overloads that the generated kernels call.
inline int min(int a, int b) { return a < b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }

struct CUevent_st {
  std::chrono::steady_clock::time_point at;
};

extern "C" {
inline cudaError_t cudaFuncSetAttribute(const void *, enum cudaFuncAttribute,
                                        int) {
  return cudaSuccess;
}
inline cudaError_t cudaGetLastError(void) { return cudaSuccess; }
inline cudaError_t cudaMalloc(void **p, size_t n) {
  *p = std::malloc(n ? n : 1);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaFree(void *p) {
  std::free(p);
  return cudaSuccess;
}
inline cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t) {
  return cudaMalloc(p, n);
}
inline cudaError_t cudaFreeAsync(void *p, cudaStream_t) { return cudaFree(p); }
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n,
                              enum cudaMemcpyKind) {
  std::memmove(d, s, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n,
                                   enum cudaMemcpyKind k, cudaStream_t) {
  return cudaMemcpy(d, s, n, k);
}
inline cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t) {
  std::memset(p, v, n);
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreate(cudaStream_t *s) {
  *s = nullptr;
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned) {
  *s = nullptr;
  return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
// One CPU thread runs every stream in order: waiting is a no-op.
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) {
  return cudaSuccess;
}
inline cudaError_t cudaMallocHost(void **p, size_t n) {
  return cudaMalloc(p, n);
}
inline cudaError_t cudaFreeHost(void *p) { return cudaFree(p); }
inline cudaError_t cudaGetDeviceCount(int *n) {
  *n = 1;
  return cudaSuccess;
}
inline cudaError_t cudaSetDevice(int) { return cudaSuccess; }
inline cudaError_t cudaGetDevice(int *d) {
  *d = 0;
  return cudaSuccess;
}
// Two SMs of one block each: persistent kernels then run several tiles
// per block, through both of their buffers.
inline cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a,
                                          int) {
  *v = a == cudaDevAttrMultiProcessorCount ? 2 : 0;
  return cudaSuccess;
}
inline cudaError_t
cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *,
                                                       int, size_t,
                                                       unsigned) {
  *n = 1;
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaEventCreate(cudaEvent_t *e) {
  *e = new CUevent_st;
  return cudaSuccess;
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned) {
  return cudaEventCreate(e);
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
  e->at = std::chrono::steady_clock::now();
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a,
                                        cudaEvent_t b) {
  *ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
  return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
inline const char *cudaGetErrorString(cudaError_t) {
  return "error (emulated CUDA)";
}
}

/// The C++ overload nvcc's headers provide for kernel pointers.
template <class T>
cudaError_t cudaFuncSetAttribute(T *, enum cudaFuncAttribute, int) {
  return cudaSuccess;
}

#endif // STENCILC_EMULATION_H
