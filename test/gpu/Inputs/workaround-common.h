// Shared by workaround-fdtd.cpp and workaround-hdiff.cpp: timing with CUDA
// events (median of `reps` runs, each from the same initial data, restored
// outside the timed region) and device buffers. Compiled by nvcc on the GPU
// machine, or by the CPU emulation's host compiler in CI (test/emulation),
// where the times mean nothing but the comparison does.
#ifndef STENCILC_GPU_WORKAROUND_COMMON_H
#define STENCILC_GPU_WORKAROUND_COMMON_H

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define WA_CHECK(expr)                                                         \
  do {                                                                         \
    cudaError_t e_ = (expr);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      std::printf("CUDA error %d at %s:%d (%s)\n", static_cast<int>(e_),       \
                  __FILE__, __LINE__, #expr);                                  \
      std::exit(3);                                                            \
    }                                                                          \
  } while (0)

inline double *deviceCopy(const std::vector<double> &host) {
  double *p = nullptr;
  WA_CHECK(
      cudaMalloc(reinterpret_cast<void **>(&p), host.size() * sizeof(double)));
  WA_CHECK(cudaMemcpy(p, host.data(), host.size() * sizeof(double),
                      cudaMemcpyHostToDevice));
  return p;
}

inline double *deviceBuffer(size_t n) {
  double *p = nullptr;
  WA_CHECK(cudaMalloc(reinterpret_cast<void **>(&p), n * sizeof(double)));
  return p;
}

inline std::vector<double> hostCopy(const double *p, size_t n) {
  std::vector<double> h(n);
  WA_CHECK(cudaMemcpy(h.data(), p, n * sizeof(double), cudaMemcpyDeviceToHost));
  return h;
}

/// Median milliseconds of `reps` runs of `body`, each after `reset`.
inline double medianMs(int reps, cudaStream_t stream,
                       const std::function<void()> &reset,
                       const std::function<void()> &body) {
  cudaEvent_t begin, end;
  WA_CHECK(cudaEventCreate(&begin));
  WA_CHECK(cudaEventCreate(&end));
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    reset();
    WA_CHECK(cudaStreamSynchronize(stream));
    WA_CHECK(cudaEventRecord(begin, stream));
    body();
    WA_CHECK(cudaEventRecord(end, stream));
    WA_CHECK(cudaEventSynchronize(end));
    float t = 0;
    WA_CHECK(cudaEventElapsedTime(&t, begin, end));
    ms.push_back(t);
  }
  WA_CHECK(cudaEventDestroy(begin));
  WA_CHECK(cudaEventDestroy(end));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// max |a - b| / max |b|.
inline double relativeDifference(const std::vector<double> &a,
                                 const std::vector<double> &b) {
  double d = 0, m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, std::fabs(a[i] - b[i]));
    m = std::max(m, std::fabs(b[i]));
  }
  return d / std::max(m, 1e-300);
}

/// How many points of a and b differ by more than `tol` of max |b|.
inline long long pointsBeyond(const std::vector<double> &a,
                              const std::vector<double> &b, double tol) {
  double m = 0;
  for (double x : b)
    m = std::max(m, std::fabs(x));
  long long k = 0;
  for (size_t i = 0; i < a.size(); ++i)
    k += !(std::fabs(a[i] - b[i]) <= tol * m);
  return k;
}

#endif
