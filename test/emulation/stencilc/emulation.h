//===- emulation.h - Run generated CUDA on the CPU, for tests ---*- C++ -*-===//
//
// CI has no GPU, but the code stencilc emits must still be executed there.
// Compiled with a host C++ compiler as
//
//   g++ -std=c++20 -x c++ -DSTENCILC_EMULATE -include stencilc/emulation.h
//
// a generated .cu runs on the CPU: each kernel launch runs its blocks one
// after another, each with one OS thread per CUDA thread, __syncthreads() a
// std::barrier across them, dynamic shared memory a per-launch buffer, and
// device memory ordinary host memory. It checks indexing, barriers and
// boundary logic; it says nothing about speed, and it is not a CUDA
// implementation beyond what the generated code and its driver use.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_EMULATION_H
#define STENCILC_EMULATION_H

#include <cuda_runtime.h>

#include <barrier>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

// Attributes the host compiler does not know.
#undef __launch_bounds__
#define __launch_bounds__(...)

inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;

namespace stencilc_emu {

inline thread_local std::barrier<> *blockBarrier = nullptr;
inline thread_local unsigned char *blockShared = nullptr;

inline unsigned char *sharedMemory() { return blockShared; }

/// Runs kernel(args...) on `blocks` blocks of `threads` threads with `smem`
/// bytes of dynamic shared memory. Every thread walks the blocks in order
/// and meets the others at a barrier after each, so shared memory is reused
/// only once all threads left the block.
template <class Kernel, class... Args>
void launch(Kernel kernel, unsigned blocks, unsigned threads, size_t smem,
            const Args &...args) {
  std::vector<unsigned char> shared(smem + 16);
  std::barrier<> barrier(threads);
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      threadIdx = {t, 0, 0};
      blockBarrier = &barrier;
      blockShared = shared.data();
      for (unsigned b = 0; b < blocks; ++b) {
        blockIdx = {b, 0, 0};
        kernel(args...);
        barrier.arrive_and_wait();
      }
    });
  for (std::thread &t : pool)
    t.join();
}

} // namespace stencilc_emu

inline void __syncthreads() { stencilc_emu::blockBarrier->arrive_and_wait(); }
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
inline cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaEventCreate(cudaEvent_t *e) {
  *e = new CUevent_st;
  return cudaSuccess;
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
