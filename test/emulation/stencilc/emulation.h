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
// implementation beyond what the generated code and its driver use.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_EMULATION_H
#define STENCILC_EMULATION_H

#include <cuda_runtime.h>

#include <setjmp.h>
#include <ucontext.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

// Attributes the host compiler does not know.
#undef __launch_bounds__
#define __launch_bounds__(...)

inline uint3 threadIdx;
inline uint3 blockIdx;

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
  unsigned current = 0;
  void (*body)(void *) = nullptr;
  void *bodyArg = nullptr;
};
inline Fibers fibers;

/// Back to the scheduler; returns when the scheduler resumes this fiber.
inline void yieldFiber() {
  if (!_setjmp(fibers.fibers[fibers.current].context))
    _longjmp(fibers.scheduler, 1);
}

inline void fiberMain() {
  for (;;) {
    fibers.body(fibers.bodyArg);
    fibers.fibers[fibers.current].done = true;
    yieldFiber();
  }
}

/// Runs body(arg) once per thread of a block of `threads` threads, each up
/// to its next barrier in turn, until all have returned.
inline void runBlock(unsigned threads, void (*body)(void *), void *arg) {
  if (fibers.fibers.size() < threads)
    fibers.fibers.resize(threads);
  fibers.body = body;
  fibers.bodyArg = arg;
  for (unsigned t = 0; t < threads; ++t)
    fibers.fibers[t].done = false;
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
  for (unsigned b = 0; b < blocks; ++b) {
    blockIdx = {b, 0, 0};
    runBlock(threads, [](void *c) { (*static_cast<Call *>(c))(); }, &call);
  }
}

} // namespace stencilc_emu

inline void __syncthreads() { stencilc_emu::yieldFiber(); }
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
