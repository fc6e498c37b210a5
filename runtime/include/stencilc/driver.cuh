//===- driver.cuh - The standalone driver of --emit-main --------*- CUDA -*-===//
//
// `stencilc --emit-main` appends a main() that calls driverMain<Problem>(),
// where Problem describes one generated stencil: its grids, its entry point
// and a float64 host reference of one time step. The driver fills the grids
// with fresh random data, optionally checks the GPU result against the
// reference (--check) and times the entry point with CUDA events.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_DRIVER_CUH
#define STENCILC_DRIVER_CUH

// Generated code embeds runtime.cuh before this file; the guard keeps the
// include from needing an include path then.
#ifndef STENCILC_RUNTIME_CUH
#include "stencilc/runtime.cuh"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

namespace stencilc::rt {

/// Reports a failing CUDA call with its location and leaves the driver.
#define STENCILC_DRIVER_CHECK(expr)                                            \
  do {                                                                         \
    cudaError_t stencilc_err_ = (expr);                                        \
    if (stencilc_err_ != cudaSuccess) {                                        \
      std::fprintf(stderr, "%s:%d: CUDA error: %s (%s)\n", __FILE__,          \
                   __LINE__, cudaGetErrorString(stencilc_err_), #expr);       \
      return 3;                                                                \
    }                                                                          \
  } while (0)

/// A cudaMalloc'd array freed on scope exit.
template <class T> class DeviceBuffer {
public:
  DeviceBuffer() = default;
  ~DeviceBuffer() {
    if (ptr)
      cudaFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  cudaError_t allocate(size_t count) {
    return cudaMalloc(reinterpret_cast<void **>(&ptr), count * sizeof(T));
  }
  T *get() const { return ptr; }

private:
  T *ptr = nullptr;
};

/// Elapsed time between two CUDA events.
class EventTimer {
public:
  EventTimer() {
    cudaEventCreate(&begin);
    cudaEventCreate(&end);
  }
  ~EventTimer() {
    cudaEventDestroy(begin);
    cudaEventDestroy(end);
  }
  void start(cudaStream_t s) { cudaEventRecord(begin, s); }
  void stop(cudaStream_t s) { cudaEventRecord(end, s); }
  /// Milliseconds, after waiting for the stop event.
  float milliseconds() {
    cudaEventSynchronize(end);
    float ms = 0;
    cudaEventElapsedTime(&ms, begin, end);
    return ms;
  }

private:
  cudaEvent_t begin, end;
};

/// splitmix64: a small, fast generator, identical on every platform.
inline uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Uniform in [0, 1).
inline double uniform01(uint64_t &state) {
  return static_cast<double>(nextRandom(state) >> 11) * 0x1.0p-53;
}

/// The bound on max|gpu - ref| / max|ref| that --check accepts, per element
/// type (docs/benchmarks.md justifies each).
template <class Elem> double errorBound(long long steps) {
  double s = static_cast<double>(std::max(steps, 4LL));
  if constexpr (std::is_same_v<Elem, double>)
    return 1e-12;
  else if constexpr (std::is_same_v<Elem, float>)
    return 1e-5;
  else if constexpr (std::is_same_v<Elem, __half>)
    return 2.0 * s * 0x1.0p-11;
  else
    return 2.0 * s * 0x1.0p-8;
}

template <class Elem> const char *typeName() {
  if constexpr (std::is_same_v<Elem, double>)
    return "f64";
  else if constexpr (std::is_same_v<Elem, float>)
    return "f32";
  else if constexpr (std::is_same_v<Elem, __half>)
    return "f16";
  else
    return "bf16";
}

/// Parses "A", "AxB" or "AxBxC" into `dims` sizes; a single number is used
/// for every axis.
inline bool parseSizes(const char *text, int dims, long long *n) {
  long long v[3] = {0, 0, 0};
  int count = 0;
  const char *p = text;
  while (*p && count < 3) {
    char *end = nullptr;
    v[count++] = std::strtoll(p, &end, 10);
    if (end == p)
      return false;
    p = end;
    if (*p == 'x')
      ++p;
    else if (*p)
      return false;
  }
  if (*p || (count != 1 && count != dims))
    return false;
  for (int a = 0; a < dims; ++a) {
    n[a] = count == 1 ? v[0] : v[a];
    if (n[a] <= 0)
      return false;
  }
  return true;
}

/// Returns the value of "--stencil=NAME", or null.
inline const char *stencilArg(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--stencil=", 10) == 0)
      return argv[i] + 10;
  return nullptr;
}

/// Runs the float64 host reference of P for `steps` steps from `host`.
template <class P>
std::vector<std::vector<double>>
referenceRun(const std::vector<std::vector<typename P::Elem>> &host,
             const long long *n, long long points, long long steps) {
  constexpr int G = P::kNumGrids;
  std::vector<std::vector<double>> cur(G), next(G);
  for (int g = 0; g < G; ++g) {
    cur[g].resize(points);
    for (long long i = 0; i < points; ++i)
      cur[g][i] = Convert<double>::from(host[g][i]);
    next[g] = cur[g];
  }
  std::vector<const double *> in(G);
  std::vector<double *> out(G);
  for (long long s = 0; s < steps; ++s) {
    for (int g = 0; g < G; ++g) {
      in[g] = cur[g].data();
      out[g] = next[g].data();
    }
    P::referenceStep(in.data(), out.data(), n);
    for (int g = 0; g < G; ++g)
      if (P::kUpdated[g])
        std::swap(cur[g], next[g]);
  }
  return cur;
}

template <class P> int driverMain(int argc, char **argv) {
  using Elem = typename P::Elem;
  constexpr int G = P::kNumGrids;
  long long n[3] = {1, 1, 1};
  static const long long kDefault[3][3] = {
      {10240000, 1, 1}, {10240, 10240, 1}, {512, 512, 512}};
  for (int a = 0; a < P::kDims; ++a)
    n[a] = kDefault[P::kDims - 1][a];
  long long steps = P::kDefaultSteps;
  bool check = false, cpuOnly = false;
  uint64_t seed = 42;
  int reps = 5;
  double minTime = 0;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (std::strncmp(arg, "--size=", 7) == 0) {
      if (!parseSizes(arg + 7, P::kDims, n)) {
        std::fprintf(stderr, "error: bad --size '%s'; expected %s\n", arg + 7,
                     P::kDims == 1   ? "N"
                     : P::kDims == 2 ? "N or N0xN1"
                                     : "N or N0xN1xN2");
        return 2;
      }
    } else if (std::strncmp(arg, "--steps=", 8) == 0) {
      steps = std::atoll(arg + 8);
    } else if (std::strcmp(arg, "--check") == 0) {
      check = true;
    } else if (std::strcmp(arg, "--cpu-only") == 0) {
      cpuOnly = true;
    } else if (std::strncmp(arg, "--seed=", 7) == 0) {
      seed = std::strtoull(arg + 7, nullptr, 10);
    } else if (std::strncmp(arg, "--reps=", 7) == 0) {
      reps = std::atoi(arg + 7);
    } else if (std::strncmp(arg, "--min-time=", 11) == 0) {
      minTime = std::atof(arg + 11);
    } else if (std::strncmp(arg, "--stencil=", 10) == 0) {
      // Chosen by main().
    } else if (std::strcmp(arg, "--help") == 0) {
      std::printf("usage: %s [--stencil=NAME] [--size=N|N0xN1[xN2]] "
                  "[--steps=S] [--check] [--seed=N] [--reps=N] [--min-time=SEC] "
                  "[--cpu-only]\n"
                  "  Runs stencil %s (%s, %d-D) on random data.\n"
                  "  --check  compare against a float64 CPU reference\n"
                  "  --cpu-only  run only the CPU reference and print the "
                  "sum of each updated grid\n"
                  "  --reps   timed runs; the median is reported (0: none)\n"
                  "  --min-time=SEC  raise the timed steps until one run "
                  "lasts SEC seconds\n",
                  argv[0], P::kName, typeName<Elem>(), P::kDims);
      return 0;
    } else {
      std::fprintf(stderr, "error: unknown option '%s' (see --help)\n", arg);
      return 2;
    }
  }
  if (steps < 0 || reps < 0) {
    std::fprintf(stderr, "error: --steps and --reps must not be negative\n");
    return 2;
  }
  long long points = 1;
  for (int a = 0; a < P::kDims; ++a)
    points *= n[a];

  // Fresh random inputs in [0, 1), rounded to the element type.
  std::vector<std::vector<Elem>> host(G, std::vector<Elem>(points));
  for (int g = 0; g < G; ++g)
    for (long long i = 0; i < points; ++i)
      host[g][i] = Convert<Elem>::from(uniform01(seed));

  if (cpuOnly) {
    std::vector<std::vector<double>> ref =
        referenceRun<P>(host, n, points, steps);
    for (int g = 0; g < G; ++g) {
      if (!P::kUpdated[g])
        continue;
      double sum = 0;
      for (double x : ref[g])
        sum += x;
      std::printf("%s.%s sum %.17g\n", P::kName, P::kGridNames[g], sum);
    }
    return 0;
  }

  DeviceBuffer<Elem> grids[G], scratch[G], initial[G];
  Elem *gridPtrs[G], *scratchPtrs[G];
  for (int g = 0; g < G; ++g) {
    STENCILC_DRIVER_CHECK(grids[g].allocate(points));
    STENCILC_DRIVER_CHECK(initial[g].allocate(points));
    STENCILC_DRIVER_CHECK(cudaMemcpy(initial[g].get(), host[g].data(),
                                     points * sizeof(Elem),
                                     cudaMemcpyHostToDevice));
    gridPtrs[g] = grids[g].get();
    scratchPtrs[g] = nullptr;
    if (P::kUpdated[g]) {
      STENCILC_DRIVER_CHECK(scratch[g].allocate(points));
      scratchPtrs[g] = scratch[g].get();
    }
  }
  cudaStream_t stream;
  STENCILC_DRIVER_CHECK(cudaStreamCreate(&stream));
  // Restores the initial state; every buffer a run may leave unwritten is
  // poisoned with NaN (all bits set) first.
  auto reset = [&]() -> cudaError_t {
    for (int g = 0; g < G; ++g) {
      STENCILC_TRY(cudaMemcpyAsync(gridPtrs[g], initial[g].get(),
                                   points * sizeof(Elem),
                                   cudaMemcpyDeviceToDevice, stream));
      if (scratchPtrs[g])
        STENCILC_TRY(cudaMemsetAsync(scratchPtrs[g], 0xFF,
                                     points * sizeof(Elem), stream));
    }
    return cudaSuccess;
  };

  std::printf("%s %s size=", P::kName, typeName<Elem>());
  for (int a = 0; a < P::kDims; ++a)
    std::printf("%s%lld", a ? "x" : "", n[a]);
  std::printf(" steps=%lld fuse=%d\n", steps, P::kFuse);

  int status = 0;
  // Tensor cores that multiply in a narrower type than the grid's (tf32
  // for f32) get the bound of that type: 2 * steps * its unit roundoff.
  double err = 0,
         bound = std::max(errorBound<Elem>(steps),
                          2.0 * static_cast<double>(std::max(steps, 4LL)) *
                              P::kOperandRoundoff);
  if (check) {
    STENCILC_DRIVER_CHECK(reset());
    STENCILC_DRIVER_CHECK(P::run(gridPtrs, scratchPtrs, n, steps, stream));
    STENCILC_DRIVER_CHECK(cudaStreamSynchronize(stream));
    std::vector<std::vector<double>> cur =
        referenceRun<P>(host, n, points, steps);
    std::vector<Elem> result(points);
    for (int g = 0; g < G; ++g) {
      if (!P::kUpdated[g])
        continue;
      STENCILC_DRIVER_CHECK(cudaMemcpy(result.data(), gridPtrs[g],
                                       points * sizeof(Elem),
                                       cudaMemcpyDeviceToHost));
      double maxRef = 0, maxDiff = 0;
      bool finite = true;
      for (long long i = 0; i < points; ++i) {
        double got = Convert<double>::from(result[i]);
        double want = cur[g][i];
        if (!std::isfinite(got) && std::isfinite(want))
          finite = false;
        maxRef = std::max(maxRef, std::fabs(want));
        maxDiff = std::max(maxDiff, std::fabs(got - want));
      }
      double e = finite ? maxDiff / std::max(maxRef, 1e-300) : INFINITY;
      err = std::max(err, e);
    }
    bool pass = err <= bound; // NaN fails.
    std::printf("check: max relative error %.3e (bound %.1e): %s\n", err,
                bound, pass ? "PASS" : "FAIL");
    if (!pass)
      status = 1;
  }

  double gstencils = 0, medianMs = 0;
  long long timedSteps = steps;
  if (reps > 0 && steps > 0) {
    EventTimer timer;
    STENCILC_DRIVER_CHECK(reset());
    STENCILC_DRIVER_CHECK(P::run(gridPtrs, scratchPtrs, n, steps, stream));
    STENCILC_DRIVER_CHECK(cudaStreamSynchronize(stream));
    // Grow the step count until one run lasts minTime (DESIGN.md section 8), in
    // whole fused passes.
    while (minTime > 0) {
      STENCILC_DRIVER_CHECK(reset());
      timer.start(stream);
      STENCILC_DRIVER_CHECK(
          P::run(gridPtrs, scratchPtrs, n, timedSteps, stream));
      timer.stop(stream);
      double seconds = timer.milliseconds() * 1e-3;
      if (seconds >= minTime || timedSteps > (1LL << 40))
        break;
      double factor = std::min(16.0, 1.2 * minTime / std::max(seconds, 1e-6));
      long long next = static_cast<long long>(timedSteps * factor) + 1;
      timedSteps = (next + P::kFuse - 1) / P::kFuse * P::kFuse;
    }
    std::vector<float> times;
    for (int r = 0; r < reps; ++r) {
      STENCILC_DRIVER_CHECK(reset());
      timer.start(stream);
      STENCILC_DRIVER_CHECK(
          P::run(gridPtrs, scratchPtrs, n, timedSteps, stream));
      timer.stop(stream);
      times.push_back(timer.milliseconds());
    }
    STENCILC_DRIVER_CHECK(cudaGetLastError());
    std::sort(times.begin(), times.end());
    medianMs = times[times.size() / 2];
    gstencils = static_cast<double>(points) *
                static_cast<double>(timedSteps) / (medianMs * 1e-3) / 1e9;
    std::printf("time: %lld steps, median %.3f ms of %d runs, %.2f "
                "GStencils/s\n",
                timedSteps, medianMs, reps, gstencils);
  }
  std::printf("RESULT stencil=%s type=%s size=", P::kName, typeName<Elem>());
  for (int a = 0; a < P::kDims; ++a)
    std::printf("%s%lld", a ? "x" : "", n[a]);
  std::printf(" steps=%lld fuse=%d", steps, P::kFuse);
  if (check)
    std::printf(" err=%.3e bound=%.1e status=%s", err, bound,
                status ? "FAIL" : "PASS");
  if (gstencils > 0)
    std::printf(" timed_steps=%lld ms=%.3f gstencils=%.2f", timedSteps,
                medianMs, gstencils);
  std::printf("\n");
  cudaStreamDestroy(stream);
  return status;
}

} // namespace stencilc::rt

#endif // STENCILC_DRIVER_CUH
