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
#ifndef STENCILC_AMPLIFICATION_H
#include "stencilc/amplification.h"
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
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

//===----------------------------------------------------------------------===//
// The host's threads. The float64 reference, its error bound and the
// amplification bound's impulse steps are Jacobi sweeps: every point of a
// sweep reads only the previous sweep's arrays (or a stage's, finished
// before) and writes its own element, with the same operations in the same
// order whichever thread computes it. Splitting a sweep's outermost axis
// over threads therefore changes no bit of any result, and makes 10^4-step
// --check runs (test/gpu/fidelity.sh) take minutes instead of hours.
//===----------------------------------------------------------------------===//

/// A fixed set of worker threads that run one sweep at a time. The
/// emitter's host loops call hostRows() once per sweep, tens of thousands
/// of times per run: the workers live as long as the program and wait on a
/// condition variable between sweeps, rather than being started per sweep.
/// Threads claim the rows in chunks as they come, the caller's thread too:
/// where the cores are shared (test/gpu/fidelity.sh runs one program per
/// core), a worker that is not running only leaves its rows to the others
/// rather than holding up the sweep.
class HostPool {
public:
  using Body = std::function<void(long long, long long)>;

  /// The process's pool: STENCILC_HOST_THREADS threads if set (1: serial),
  /// else one per hardware thread.
  static HostPool &get() {
    static HostPool pool(defaultThreads());
    return pool;
  }

  int threads() const { return static_cast<int>(workers.size()) + 1; }

  /// Runs body(lo, hi) over slices of [0, count) that cover it once, on
  /// every thread of the pool, and returns when all have finished.
  void run(long long count, const Body &body) {
    // Serial where there is nothing to split, or from inside a sweep.
    if (workers.empty() || count <= 1 || inSweep()) {
      if (count > 0)
        body(0, count);
      return;
    }
    unsigned long long gen;
    {
      std::lock_guard<std::mutex> lock(mutex);
      job = &body;
      jobCount = count;
      // About four chunks a thread: small enough to even out, few enough
      // that claiming them costs nothing beside the rows.
      chunk = std::max<long long>(1, count / (4LL * threads()));
      next = finished = 0;
      gen = ++generation;
    }
    wake.notify_all();
    inSweep() = true;
    drain(gen);
    inSweep() = false;
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [&] { return finished == jobCount; });
    job = nullptr;
  }

  ~HostPool() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
    }
    wake.notify_all();
    for (std::thread &t : workers)
      t.join();
  }

private:
  explicit HostPool(int count) {
    for (int w = 1; w < count; ++w)
      workers.emplace_back([this] { work(); });
  }

  static int defaultThreads() {
    if (const char *env = std::getenv("STENCILC_HOST_THREADS"))
      return std::max(1, std::atoi(env));
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }

  static bool &inSweep() {
    thread_local bool flag = false;
    return flag;
  }

  /// Runs chunks of sweep `gen` until none is left. A claim names its
  /// sweep, so a thread that wakes late never runs a finished sweep's body.
  void drain(unsigned long long gen) {
    for (;;) {
      const Body *body;
      long long lo, hi;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (generation != gen || next >= jobCount)
          return;
        lo = next;
        hi = next = std::min(jobCount, next + chunk);
        body = job;
      }
      (*body)(lo, hi);
      std::lock_guard<std::mutex> lock(mutex);
      finished += hi - lo;
      if (finished == jobCount)
        done.notify_one();
    }
  }

  void work() {
    inSweep() = true;
    unsigned long long seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stop || generation != seen; });
        if (stop)
          return;
        seen = generation;
      }
      drain(seen);
    }
  }

  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable wake, done;
  const Body *job = nullptr;
  long long jobCount = 0, chunk = 1, next = 0, finished = 0;
  unsigned long long generation = 0;
  bool stop = false;
};

/// One sweep of the host reference or bound over axis 0's rows [0, rows):
/// body(lo, hi) runs the rows lo .. hi-1, on several threads at once
/// (HostPool: bit-identical to one thread).
template <class Body> void hostRows(long long rows, Body &&body) {
  HostPool::get().run(rows, HostPool::Body(std::ref(body)));
}

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

//===----------------------------------------------------------------------===//
// The error bound of --check and --reference-only (docs/benchmarks.md, "Error
// bounds", derives every term). Alongside the float64 reference u_k the
// driver keeps, per updated grid and point, E_k >= |gpu_k - u_k|, to first
// order in the unit roundoffs. boundStep, printed per stencil by the
// emitter, evaluates each update with Tracked values: one evaluation in
// double that also bounds how far the GPU's and the reference's own
// evaluations of the same expression may lie from its exact value.
//===----------------------------------------------------------------------===//

/// Unit roundoff of rounding to nearest in T.
template <class T> constexpr double unitRoundoff() {
  if constexpr (std::is_same_v<T, double>)
    return 0x1.0p-53;
  else if constexpr (std::is_same_v<T, float>)
    return 0x1.0p-24;
  else if constexpr (std::is_same_v<T, __half>)
    return 0x1.0p-11;
  else
    return 0x1.0p-8;
}

/// The absolute error a rounding to T may add where the result is
/// subnormal, which the relative unit roundoff does not cover: half the
/// smallest subnormal (for double that half is not a double; its double).
template <class T> constexpr double underflowError() {
  if constexpr (std::is_same_v<T, double>)
    return 0x1.0p-1074;
  else if constexpr (std::is_same_v<T, float>)
    return 0x1.0p-150;
  else if constexpr (std::is_same_v<T, __half>)
    return 0x1.0p-25;
  else
    return 0x1.0p-134;
}

/// gamma_n = n u / (1 - n u): the relative error of n roundings of unit u.
inline double gammaBound(double n, double u) {
  double nu = n * u;
  return nu < 1 ? nu / (1 - nu) : INFINITY;
}

/// A value of one point's update as the float64 reference computes it
/// (`v`), with bounds on how far other evaluations of the same expression
/// lie from its exact value at the reference's inputs:
///  - `gpu`: the GPU's, in compute type C, with exact grid reads;
///  - `full`: the GPU's, with each grid read off by that read's bound (E of
///    the previous step at the read point);
///  - `ref`: the reference's own, in double.
/// `grad` holds d v / d (read k) for the first R reads of the step (the
/// emitter numbers them); it is the exact derivative while `smooth`, and
/// stops being one where min, max, abs or sqrt may have a kink within the
/// error bounds.
template <class C, int R> struct Tracked {
  double v = 0, gpu = 0, full = 0, ref = 0;
  bool smooth = true;
  std::array<double, R> grad{};

  static constexpr double kU = unitRoundoff<C>(), kEta = underflowError<C>();
  static constexpr double kUd = 0x1.0p-53, kEtaD = 0x1.0p-1074;

  Tracked() = default;
  /// A constant of the expression: the IR holds it as a double, the
  /// reference uses that double, the GPU its rounding to C.
  Tracked(double c) : v(c) {
    gpu = full = std::fabs(static_cast<double>(Convert<C>::from(c)) - c);
  }
  /// A parameter: the reference's value and the GPU's (both rounded to the
  /// declared type first, the GPU's then to C).
  static Tracked param(double ref, C gpuValue) {
    Tracked t;
    t.v = ref;
    t.gpu = t.full = std::fabs(static_cast<double>(gpuValue) - ref);
    return t;
  }
  /// Read number k (-1: not numbered) of a grid value inside the domain,
  /// whose GPU value is within `err` of `value`.
  static Tracked read(double value, double err, int k) {
    Tracked t;
    t.v = value;
    t.full = err;
    if (k >= 0 && k < R)
      t.grad[k] = 1;
    return t;
  }
  /// A read outside the domain across a dirichlet axis: the reference uses
  /// the constant d, the GPU its rounding to C or, where a kernel stores it
  /// in the grid's type, to Elem.
  template <class Elem> static Tracked dirichlet(double d, int k) {
    Tracked t = read(d, 0, k);
    t.full =
        std::max(std::fabs(static_cast<double>(Convert<C>::from(d)) - d),
                 std::fabs(Convert<double>::from(Convert<Elem>::from(d)) - d));
    return t;
  }

  /// One rounding of a result v whose operands carry the bound `prop`: the
  /// result may be off by prop, its rounding by u (|v| + prop) + eta.
  static double rounded(double prop, double v, double u, double eta) {
    return prop + u * (std::fabs(v) + prop) + eta;
  }
};

template <class C, int R> Tracked<C, R> operator-(const Tracked<C, R> &a) {
  Tracked<C, R> t = a;
  t.v = -a.v;
  for (int k = 0; k < R; ++k)
    t.grad[k] = -a.grad[k];
  return t;
}

/// a + s * b, s = +-1.
template <class C, int R>
Tracked<C, R> addSigned(const Tracked<C, R> &a, const Tracked<C, R> &b,
                        double s) {
  using T = Tracked<C, R>;
  T t;
  t.v = s > 0 ? a.v + b.v : a.v - b.v;
  t.gpu = T::rounded(a.gpu + b.gpu, t.v, T::kU, T::kEta);
  t.full = T::rounded(a.full + b.full, t.v, T::kU, T::kEta);
  t.ref = T::rounded(a.ref + b.ref, t.v, T::kUd, T::kEtaD);
  t.smooth = a.smooth && b.smooth;
  for (int k = 0; k < R; ++k)
    t.grad[k] = a.grad[k] + s * b.grad[k];
  return t;
}
template <class C, int R>
Tracked<C, R> operator+(const Tracked<C, R> &a, const Tracked<C, R> &b) {
  return addSigned(a, b, 1.0);
}
template <class C, int R>
Tracked<C, R> operator-(const Tracked<C, R> &a, const Tracked<C, R> &b) {
  return addSigned(a, b, -1.0);
}

template <class C, int R>
Tracked<C, R> operator*(const Tracked<C, R> &a, const Tracked<C, R> &b) {
  using T = Tracked<C, R>;
  T t;
  t.v = a.v * b.v;
  // |a'b' - ab| <= |a| eb + |b| ea + ea eb.
  auto prop = [&](double ea, double eb) {
    return std::fabs(a.v) * eb + std::fabs(b.v) * ea + ea * eb;
  };
  t.gpu = T::rounded(prop(a.gpu, b.gpu), t.v, T::kU, T::kEta);
  t.full = T::rounded(prop(a.full, b.full), t.v, T::kU, T::kEta);
  t.ref = T::rounded(prop(a.ref, b.ref), t.v, T::kUd, T::kEtaD);
  t.smooth = a.smooth && b.smooth;
  for (int k = 0; k < R; ++k)
    t.grad[k] = b.v * a.grad[k] + a.v * b.grad[k];
  return t;
}

template <class C, int R>
Tracked<C, R> operator/(const Tracked<C, R> &a, const Tracked<C, R> &b) {
  using T = Tracked<C, R>;
  T t;
  t.v = a.v / b.v;
  // |a'/b' - a/b| <= (|b| ea + |a| eb) / (|b| (|b| - eb)) while eb < |b|;
  // beyond, b' may be 0 and no bound holds.
  auto prop = [&](double ea, double eb) {
    double m = std::fabs(b.v);
    return eb < m ? (m * ea + std::fabs(a.v) * eb) / (m * (m - eb)) : INFINITY;
  };
  t.gpu = T::rounded(prop(a.gpu, b.gpu), t.v, T::kU, T::kEta);
  t.full = T::rounded(prop(a.full, b.full), t.v, T::kU, T::kEta);
  t.ref = T::rounded(prop(a.ref, b.ref), t.v, T::kUd, T::kEtaD);
  t.smooth = a.smooth && b.smooth;
  for (int k = 0; k < R; ++k)
    t.grad[k] = (a.grad[k] - t.v * b.grad[k]) / b.v;
  return t;
}

/// Whether every derivative of a and b agrees, so that a choice between
/// them cannot change the derivative.
template <class C, int R>
bool sameGrad(const Tracked<C, R> &a, const Tracked<C, R> &b) {
  for (int k = 0; k < R; ++k)
    if (a.grad[k] != b.grad[k])
      return false;
  return true;
}

/// min and max are exact and 1-Lipschitz: each bound is the larger of the
/// operands'. The derivative is the chosen operand's where the operands are
/// farther apart than their bounds, so the GPU chooses the same one.
template <class C, int R>
Tracked<C, R> choose(const Tracked<C, R> &a, const Tracked<C, R> &b, bool takeA,
                     double value) {
  Tracked<C, R> t = takeA ? a : b;
  t.v = value;
  t.gpu = std::max(a.gpu, b.gpu);
  t.full = std::max(a.full, b.full);
  t.ref = std::max(a.ref, b.ref);
  t.smooth = a.smooth && b.smooth &&
             (std::fabs(a.v - b.v) > a.full + b.full || sameGrad(a, b));
  return t;
}
template <class C, int R>
Tracked<C, R> min_(const Tracked<C, R> &a, const Tracked<C, R> &b) {
  double m = std::fmin(a.v, b.v);
  return choose(a, b, m == a.v, m);
}
template <class C, int R>
Tracked<C, R> max_(const Tracked<C, R> &a, const Tracked<C, R> &b) {
  double m = std::fmax(a.v, b.v);
  return choose(a, b, m == a.v, m);
}

template <class C, int R> Tracked<C, R> abs_(const Tracked<C, R> &a) {
  Tracked<C, R> t = a;
  t.v = std::fabs(a.v);
  double s = a.v < 0 ? -1.0 : 1.0;
  for (int k = 0; k < R; ++k)
    t.grad[k] = s * a.grad[k];
  Tracked<C, R> zero;
  t.smooth = a.smooth && (std::fabs(a.v) > a.full || sameGrad(a, zero));
  return t;
}

template <class C, int R> Tracked<C, R> sqrt_(const Tracked<C, R> &a) {
  using T = Tracked<C, R>;
  T t;
  t.v = std::sqrt(a.v);
  // |sqrt(x') - sqrt(x)| <= min(|x' - x| / sqrt(x), sqrt(|x' - x|)).
  auto prop = [&](double e) {
    return a.v > 0 ? std::min(e / t.v, std::sqrt(e)) : std::sqrt(e);
  };
  t.gpu = T::rounded(prop(a.gpu), t.v, T::kU, T::kEta);
  t.full = T::rounded(prop(a.full), t.v, T::kU, T::kEta);
  t.ref = T::rounded(prop(a.ref), t.v, T::kUd, T::kEtaD);
  T zero;
  t.smooth = a.smooth && (a.v > a.full || sameGrad(a, zero));
  for (int k = 0; k < R; ++k)
    t.grad[k] = a.v > 0 ? a.grad[k] / (2 * t.v) : 0.0;
  return t;
}

/// x^N by the same multiplications as the device's ipow, each bounded as
/// one product.
template <int N, class C, int R> Tracked<C, R> ipow(const Tracked<C, R> &x) {
  if constexpr (N == 0) {
    return Tracked<C, R>(1.0);
  } else if constexpr (N < 0) {
    return Tracked<C, R>(1.0) / ipow<-N>(x);
  } else {
    Tracked<C, R> r = x;
    for (int i = 1; i < N; ++i)
      r = r * x;
    return r;
  }
}

/// E of the next step: `pre` plus the GPU's rounding of the value to Elem,
/// where Elem is narrower than the compute type C (f16, bf16); f32 and f64
/// results are already in their grid's type.
template <class Elem, class C> double storeBound(double pre, double v) {
  if constexpr (std::is_same_v<Elem, C>)
    return pre;
  else
    return pre + unitRoundoff<Elem>() * (std::fabs(v) + pre) +
           underflowError<Elem>();
}

//===----------------------------------------------------------------------===//
// The functions, conditions and choices of the language (docs/language.md
// §5), tracked (docs/benchmarks.md, "Error bounds": functions and
// conditions).
//===----------------------------------------------------------------------===//

/// The functions whose results are not correctly rounded.
enum class Fn { Exp, Log, Sin, Cos, Tanh, Pow };

/// The most ulps by which CUDA's function of type C may differ from the
/// correctly rounded result (CUDA C++ Programming Guide, Mathematical
/// Functions appendix: float without --use_fast_math, and double). Where
/// editions of the guide differ, the larger number: sin and cos of double
/// at 2, powf at 8.
template <class C> constexpr double gpuUlps(Fn f) {
  constexpr bool single = std::is_same_v<C, float>;
  switch (f) {
  case Fn::Exp:
    return single ? 2 : 1;
  case Fn::Log:
    return 1;
  case Fn::Sin:
  case Fn::Cos:
    return 2;
  case Fn::Tanh:
    return single ? 2 : 1;
  case Fn::Pow:
    return single ? 8 : 2;
  }
  return 8;
}

/// The ulps the float64 reference's own functions (the host's C library)
/// may be off the exact value: an assumption, like the tensor cores'
/// accumulation model; glibc documents at most 2 for these in double on
/// x86-64.
constexpr double hostUlps() { return 2; }

/// The error of a function's result y (within prop of the function of the
/// value the tracked operands stand for) when it is k ulps from the
/// correctly rounded result: k + 1/2 ulps of y, an ulp being at most
/// 2 u |y| for a normal y and 2 eta for a subnormal one.
inline double functionRounded(double prop, double v, double k, double u,
                              double eta) {
  return prop + (2 * k + 1) * (u * (std::fabs(v) + prop) + eta);
}

/// y = f(a) for a function f whose change over an operand bound e is at
/// most change(e), and whose derivative at a.v is d.
template <class C, int R, class Change>
Tracked<C, R> applyFunction(const Tracked<C, R> &a, double v, double d, Fn f,
                            Change change) {
  using T = Tracked<C, R>;
  T t;
  t.v = v;
  const double k = gpuUlps<C>(f);
  t.gpu = functionRounded(change(a.gpu), v, k, T::kU, T::kEta);
  t.full = functionRounded(change(a.full), v, k, T::kU, T::kEta);
  t.ref = functionRounded(change(a.ref), v, hostUlps(), T::kUd, T::kEtaD);
  t.smooth = a.smooth;
  for (int k = 0; k < R; ++k)
    t.grad[k] = d * a.grad[k];
  return t;
}

template <class C, int R> Tracked<C, R> exp_(const Tracked<C, R> &a) {
  const double v = std::exp(a.v);
  // |exp(x + e) - exp(x)| <= exp(x) (exp(e) - 1).
  return applyFunction(a, v, v, Fn::Exp,
                       [&](double e) { return v * std::expm1(e); });
}

template <class C, int R> Tracked<C, R> log_(const Tracked<C, R> &a) {
  // |log(x') - log(x)| <= -log(1 - e / x) while e < x; beyond, x' may be
  // 0 or negative and no bound holds.
  return applyFunction(a, std::log(a.v), 1 / a.v, Fn::Log, [&](double e) {
    return e < a.v ? -std::log1p(-e / a.v) : INFINITY;
  });
}

template <class C, int R> Tracked<C, R> sin_(const Tracked<C, R> &a) {
  // 1-Lipschitz, and no two values differ by more than 2.
  return applyFunction(a, std::sin(a.v), std::cos(a.v), Fn::Sin,
                       [](double e) { return std::min(e, 2.0); });
}

template <class C, int R> Tracked<C, R> cos_(const Tracked<C, R> &a) {
  return applyFunction(a, std::cos(a.v), -std::sin(a.v), Fn::Cos,
                       [](double e) { return std::min(e, 2.0); });
}

template <class C, int R> Tracked<C, R> tanh_(const Tracked<C, R> &a) {
  const double v = std::tanh(a.v);
  return applyFunction(a, v, 1 - v * v, Fn::Tanh,
                       [](double e) { return std::min(e, 2.0); });
}

/// floor is exact but jumps: within e of x its values span
/// floor(x + e) - floor(x - e). The exact operand lies within `ref` of the
/// reference's, so each bound takes the reference's bound as well.
template <class C, int R> Tracked<C, R> floor_(const Tracked<C, R> &a) {
  Tracked<C, R> t;
  t.v = std::floor(a.v);
  auto jump = [&](double e) {
    return std::floor(a.v + e) - std::floor(a.v - e);
  };
  t.gpu = jump(a.gpu + a.ref);
  t.full = jump(a.full + a.ref);
  t.ref = jump(a.ref);
  t.smooth = a.smooth && t.full == 0;
  return t;
}

/// pow with a real exponent. Where x > 0 beyond its bound, x^y is monotone
/// in each operand, so its extremes over the operands' bounds lie at the
/// corners; a negative x with an exact integer y likewise through |x|.
/// Elsewhere (x' may be 0, or of either sign) no bound holds.
template <class C, int R>
Tracked<C, R> powr_(const Tracked<C, R> &x, const Tracked<C, R> &y) {
  using T = Tracked<C, R>;
  const double v = std::pow(x.v, y.v);
  const bool integral = std::floor(y.v) == y.v;
  auto change = [&](double ex, double ey) {
    if (ex == 0 && ey == 0)
      return 0.0;
    const double m = std::fabs(x.v);
    if (!(m > ex) || (x.v < 0 && (ey != 0 || !integral)))
      return static_cast<double>(INFINITY);
    double worst = 0;
    for (double xc : {m - ex, m + ex})
      for (double yc : {y.v - ey, y.v + ey})
        worst = std::max(worst, std::fabs(std::pow(xc, yc) - std::fabs(v)));
    return worst;
  };
  T t;
  t.v = v;
  const double k = gpuUlps<C>(Fn::Pow);
  t.gpu = functionRounded(change(x.gpu, y.gpu), v, k, T::kU, T::kEta);
  t.full = functionRounded(change(x.full, y.full), v, k, T::kU, T::kEta);
  t.ref =
      functionRounded(change(x.ref, y.ref), v, hostUlps(), T::kUd, T::kEtaD);
  const double dx = y.v * std::pow(x.v, y.v - 1);
  const double dy = x.v > 0 ? v * std::log(x.v) : 0;
  bool yReads = false;
  for (int k = 0; k < R; ++k) {
    t.grad[k] = dx * x.grad[k] + dy * y.grad[k];
    yReads |= y.grad[k] != 0;
  }
  t.smooth = x.smooth && y.smooth && (x.v > 0 || !yReads);
  return t;
}

/// fma(a, b, c): the product's propagation plus c's, one rounding.
template <class C, int R>
Tracked<C, R> fma_(const Tracked<C, R> &a, const Tracked<C, R> &b,
                   const Tracked<C, R> &c) {
  using T = Tracked<C, R>;
  T t;
  t.v = std::fma(a.v, b.v, c.v);
  auto prop = [&](double ea, double eb, double ec) {
    return std::fabs(a.v) * eb + std::fabs(b.v) * ea + ea * eb + ec;
  };
  t.gpu = T::rounded(prop(a.gpu, b.gpu, c.gpu), t.v, T::kU, T::kEta);
  t.full = T::rounded(prop(a.full, b.full, c.full), t.v, T::kU, T::kEta);
  t.ref = T::rounded(prop(a.ref, b.ref, c.ref), t.v, T::kUd, T::kEtaD);
  t.smooth = a.smooth && b.smooth && c.smooth;
  for (int k = 0; k < R; ++k)
    t.grad[k] = b.v * a.grad[k] + a.v * b.grad[k] + c.grad[k];
  return t;
}

/// A condition as the reference decides it (`v`), and whether the GPU
/// must decide it alike: with exact reads (`sureGpu`), and with each read
/// off by its bound (`sureFull`). It may not where the operands of a
/// comparison lie within their bounds of each other: the GPU's and the
/// reference's operands each lie within full + ref of the reference's
/// value.
struct TrackedCond {
  bool v = false, sureGpu = true, sureFull = true;
};

/// The comparison `holds` of a and b.
template <class C, int R>
TrackedCond compare(const Tracked<C, R> &a, const Tracked<C, R> &b,
                    bool holds) {
  TrackedCond c;
  c.v = holds;
  const double gap = std::fabs(a.v - b.v);
  auto sure = [&](double ea, double eb) {
    const double e = ea + a.ref + eb + b.ref;
    if (std::isnan(gap) || std::isnan(e))
      return false;
    // Operands known exactly compare exactly (equal ones too: i0 < 5 at
    // i0 = 5); otherwise only a gap wider than both bounds decides.
    return e == 0 || gap > e;
  };
  c.sureGpu = sure(a.gpu, b.gpu);
  c.sureFull = sure(a.full, b.full);
  return c;
}
template <class C, int R>
TrackedCond lt_(const Tracked<C, R> &a, const Tracked<C, R> &b) {
  return compare(a, b, a.v < b.v);
}
template <class C, int R>
TrackedCond le_(const Tracked<C, R> &a, const Tracked<C, R> &b) {
  return compare(a, b, a.v <= b.v);
}
template <class C, int R>
TrackedCond gt_(const Tracked<C, R> &a, const Tracked<C, R> &b) {
  return compare(a, b, a.v > b.v);
}
template <class C, int R>
TrackedCond ge_(const Tracked<C, R> &a, const Tracked<C, R> &b) {
  return compare(a, b, a.v >= b.v);
}
template <class C, int R>
TrackedCond eq_(const Tracked<C, R> &a, const Tracked<C, R> &b) {
  return compare(a, b, a.v == b.v);
}
template <class C, int R>
TrackedCond ne_(const Tracked<C, R> &a, const Tracked<C, R> &b) {
  return compare(a, b, a.v != b.v);
}
/// a && b is decided where both are, or where one is surely false.
inline TrackedCond and_(const TrackedCond &a, const TrackedCond &b) {
  TrackedCond c;
  c.v = a.v && b.v;
  c.sureGpu =
      (a.sureGpu && b.sureGpu) || (a.sureGpu && !a.v) || (b.sureGpu && !b.v);
  c.sureFull = (a.sureFull && b.sureFull) || (a.sureFull && !a.v) ||
               (b.sureFull && !b.v);
  return c;
}
inline TrackedCond or_(const TrackedCond &a, const TrackedCond &b) {
  TrackedCond c;
  c.v = a.v || b.v;
  c.sureGpu =
      (a.sureGpu && b.sureGpu) || (a.sureGpu && a.v) || (b.sureGpu && b.v);
  c.sureFull =
      (a.sureFull && b.sureFull) || (a.sureFull && a.v) || (b.sureFull && b.v);
  return c;
}
inline TrackedCond not_(const TrackedCond &a) {
  TrackedCond c = a;
  c.v = !a.v;
  return c;
}

/// select(c, a, b) takes the choice the reference takes. Where the GPU may
/// decide otherwise, its value may be the other choice, off the taken
/// one's exact value by the other's bound plus the distance of the two
/// exact values, at most |a.v - b.v| + a.ref + b.ref.
template <class C, int R>
Tracked<C, R> select_(const TrackedCond &c, const Tracked<C, R> &a,
                      const Tracked<C, R> &b) {
  const Tracked<C, R> &taken = c.v ? a : b, &other = c.v ? b : a;
  Tracked<C, R> t = taken;
  const double apart = std::fabs(a.v - b.v) + a.ref + b.ref;
  auto either = [](double x, double y) {
    return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y);
  };
  if (!c.sureGpu)
    t.gpu = either(taken.gpu, other.gpu + apart);
  if (!c.sureFull)
    t.full = either(taken.full, other.full + apart);
  t.smooth = taken.smooth && c.sureFull;
  return t;
}
template <class C, int R>
Tracked<C, R> select_(bool c, const Tracked<C, R> &a, const Tracked<C, R> &b) {
  return c ? a : b;
}

/// A value stored in element type E before a later update reads it: the
/// reference keeps it as it is; the GPU rounds it where E is narrower than
/// the compute type C.
template <class E, class C, int R>
Tracked<C, R> roundVia(const Tracked<C, R> &a) {
  Tracked<C, R> t = a;
  t.gpu = storeBound<E, C>(a.gpu, a.v);
  t.full = storeBound<E, C>(a.full, a.v);
  return t;
}

/// The rounding of a tensor-core pass, charged at the step where the pass
/// starts, at each point p whose one-step taps c_i read u(p + o_i) (zero
/// for the CUDA cores):
///   rho Sum_i |c_i| |u(p + o_i)|            (operands and sums)
///   + coeffSpread spread + coeffAbs maxAbs   (the rounded coefficients)
///   + (spreadRho spread + centreRho maxAbs) Sum_i |c_i|   (centred passes)
///   + eta,
/// where spread = max u - min u and maxAbs = max |u| over the grid, which
/// the driver sets at each pass. tensorCoreRounding<P> derives the rest
/// (docs/benchmarks.md, "Error bounds").
struct TensorCoreRounding {
  double rho = 0, eta = 0, coeffSpread = 0, coeffAbs = 0;
  double spreadRho = 0, centreRho = 0, spread = 0, maxAbs = 0;
  /// Not charged as they are: the coefficients' largest error relative to
  /// their weight, and Sum |c| of one step; the driver moves coeffRel
  /// into rho at a pass where that bounds the coefficients' errors
  /// better than coeffSpread and coeffAbs.
  double coeffRel = 0, l1 = 0;
};

/// The bound of one step of a linear update, fed tap by tap: the reads'
/// bounds propagate through |c_i|, and the GPU's rounding is the largest of
/// its three ways of evaluating the update: the expression as written
/// (`root.gpu`), the sum of taps of the CUDA-core strips (constant first,
/// then one product and one addition per tap), and the tensor cores.
template <class C> struct LinearBound {
  double sum = 0;      // Sum |c_i| |x_i| + |c_0|
  double inErr = 0;    // Sum |c_i| eps_i
  double coeffErr = 0; // Sum dc_i |x_i| + dc_0
  // roundWeights (docs/language.md §6.4) moves the rounding error of the
  // weights' sum, at most Sum dc_i + |C(Sum c_i) - Sum c_i|, onto some of
  // them, re-rounded (u max|c_i| more): charged at the largest |x_i|. It
  // is zero where the weights and their sum are exact in C.
  double weightErr = 0, weightSum = 0, maxC = 0, maxX = 0;
  double l1 = 0; // Sum |c_i|
  int taps = 0;
  bool hasConstant = false;

  template <int R> void tap(const Tracked<C, R> &c, const Tracked<C, R> &x) {
    sum += std::fabs(c.v) * std::fabs(x.v);
    inErr += std::fabs(c.v) * x.full;
    coeffErr += c.gpu * std::fabs(x.v);
    weightErr += c.gpu;
    weightSum += c.v;
    maxC = std::max(maxC, std::fabs(c.v));
    maxX = std::max(maxX, std::fabs(x.v));
    l1 += std::fabs(c.v);
    ++taps;
  }
  template <int R> void constant(const Tracked<C, R> &c) {
    sum += std::fabs(c.v);
    coeffErr += c.gpu;
    hasConstant = true;
  }
  /// The bound before the GPU rounds the value to the grid's type.
  template <int R>
  double bound(const Tracked<C, R> &root, const TensorCoreRounding &tc) const {
    constexpr double u = unitRoundoff<C>(), eta = underflowError<C>();
    // A strip starts from the constant (or 0, which the first addition
    // leaves exact) and adds the products in turn: each term meets its
    // product's rounding and at most `taps` (without a constant, taps - 1)
    // additions.
    int roundings = hasConstant ? taps + 1 : taps;
    double moved = weightErr + std::fabs(static_cast<double>(
                                   static_cast<C>(weightSum)) - weightSum);
    if (moved > 0)
      moved += u * maxC;
    double strips = coeffErr + moved * maxX +
                    gammaBound(roundings, u) * sum + 2.0 * (taps + 1) * eta;
    double tensor = tc.rho * sum + tc.coeffSpread * tc.spread +
                    tc.coeffAbs * tc.maxAbs +
                    (tc.spreadRho * tc.spread + tc.centreRho * tc.maxAbs) * l1 +
                    tc.eta;
    return inErr + std::max({root.gpu, strips, tensor}) + root.ref;
  }
};

/// The bound before rounding of a nonlinear update: the reads' bounds
/// propagated node by node (`full`), or, where the derivatives hold,
/// through them, plus the rounding with exact reads; `eps[k]` is the bound
/// of read k.
template <class C, int R>
double nonlinearBound(const Tracked<C, R> &root, const double *eps) {
  double prop = root.full;
  if (R > 0 && root.smooth) {
    double viaGrad = root.gpu;
    for (int k = 0; k < R; ++k)
      viaGrad += std::fabs(root.grad[k]) * eps[k];
    prop = std::min(prop, viaGrad);
  }
  return prop + root.ref;
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

/// The per-step rounding of P's tensor-core passes (zero without them). A
/// pass of t = P::kFuse steps multiplies the grid by the fused kernel
/// C = c^(t) (TemporalFusion: t-fold self-convolution of the taps c),
/// evaluated by the host in double, rounded to the operand type, with
/// products summed in the compute type. Each error is bounded against
/// W = |c|^(t), so that one step's term rho Sum_i |c_i| |u(p + o_i)| of the
/// step-by-step bound, carried t - 1 steps further, covers the whole pass
/// (docs/benchmarks.md, "Error bounds").
template <class P> TensorCoreRounding tensorCoreRounding() {
  TensorCoreRounding tc;
  if constexpr (P::kTensorCore) {
    using Comp = std::conditional_t<std::is_same_v<typename P::Elem, double>,
                                    double, float>;
    constexpr int K = P::kBaseTaps;
    long long off[K][3];
    double c[K], cErr[K];
    P::baseTaps(off, c, cErr);
    struct Fused {
      double value = 0, weight = 0, err = 0;
    };
    using Key = std::array<long long, 3>;
    std::map<Key, Fused> cur, base;
    for (int i = 0; i < K; ++i)
      base[{off[i][0], off[i][1], off[i][2]}] =
          Fused{c[i], std::fabs(c[i]), cErr[i]};
    cur = base;
    // The fused coefficients, here in double: each is a sum of at most K
    // products, each rounded once, added in turn; `err` bounds the
    // distance of `value` from the exact coefficient.
    const double g = gammaBound(K, 0x1.0p-53);
    for (int k = 1; k < P::kFuse; ++k) {
      std::map<Key, Fused> next;
      for (const auto &[p, b] : base)
        for (const auto &[q, f] : cur) {
          Fused &n = next[{p[0] + q[0], p[1] + q[1], p[2] + q[2]}];
          double prod = b.value * f.value;
          n.value += prod;
          n.weight += b.weight * f.weight;
          n.err += std::fabs(b.value) * f.err + b.err * std::fabs(f.value) +
                   b.err * f.err + g * std::fabs(prod);
        }
      cur = std::move(next);
    }
    // The host's coefficients of one row of A, evaluated and rounded as
    // run() rounds them: each fused tap once. Each is within
    // |hat - value| + err of the exact C_j.
    constexpr int R = P::kTcRowTapCount;
    long long roff[R][3];
    double rc[R];
    P::tcRowTaps(roff, rc);
    std::map<Key, double> rounded;
    for (int i = 0; i < R; ++i)
      rounded[{roff[i][0], roff[i][1], roff[i][2]}] += rc[i];
    double weights = 0, absDelta = 0, sumDelta = 0, errs = 0, coeff = 0;
    int taps = 0;
    for (const auto &[q, f] : cur) {
      weights += f.weight;
      auto it = rounded.find(q);
      const double hat = it == rounded.end() ? 0.0 : it->second;
      absDelta += std::fabs(hat - f.value);
      sumDelta += hat - f.value;
      errs += f.err;
      double e = std::fabs(hat - f.value) + f.err;
      if (e > 0)
        coeff = std::max(coeff, f.weight > 0 ? e / f.weight : INFINITY);
      taps += f.value != 0;
    }
    for (const auto &[q, hat] : rounded)
      if (!cur.count(q)) {
        absDelta += std::fabs(hat);
        sumDelta += hat;
        coeff = INFINITY;
      }
    for (int i = 0; i < K; ++i)
      tc.l1 += std::fabs(c[i]);
    taps = std::max(taps, P::kTensorTaps);
    // The terms charged at the pass's first step that do not scale with
    // the reads there are carried t - 1 steps by the step-by-step bound,
    // which multiplies them by (Sum |c|)^(t-1): charged larger where that
    // shrinks them.
    const double shrink = std::pow(std::min(1.0, tc.l1), P::kFuse - 1);
    // The coefficients' errors dC_j, bounded two ways; the driver takes
    // the smaller at each pass: each relative to its weight (coeffRel,
    // times Sum |c_i| |u|), or through their sum, which roundWeights keeps:
    // Sum_j dC_j u_j = Sum_j dC_j (u_j - m) + m Sum_j dC_j, with m halfway
    // between the grid's least and largest value.
    tc.coeffRel = coeff;
    tc.coeffSpread = shrink > 0 ? (absDelta + errs) / 2 / shrink : INFINITY;
    tc.coeffAbs =
        shrink > 0 ? (std::fabs(sumDelta) + errs) / shrink : INFINITY;
    // The products of coefficients and (tf32) rounded grid values are
    // exact in the compute type. The tensor cores add them in blocks,
    // aligning each block's values to its largest and dropping the bits
    // below one ulp of it: a block of k values errs by up to k ulps (2 u_c
    // each) of its largest value, so M products in blocks of any size err
    // by at most 2M ulps of sums no larger than Sum |C_j x_j|; 2M + 1 also
    // covers a DMMA's product rounding (docs/benchmarks.md, "Error bounds").
    const double ug = P::kOperandRoundoff, uc = unitRoundoff<Comp>();
    const double sums = gammaBound(2 * taps + 1, 2 * uc);
    if constexpr (P::kCentred) {
      // Sum C_j (u_j - r) + r S: the operands u_j - r (one f32 rounding,
      // then tf32) and the sums of their products are within the spread;
      // S in f32 and the final fma round values up to max |u| Sum |C|
      // once each.
      tc.spreadRho = (ug + uc) * (1 + ug) + sums * (1 + ug) * (1 + uc);
      tc.centreRho = 2 * uc;
    } else {
      tc.rho = ug + sums * (1 + ug);
    }
    // Subnormal operands (absolute errors), carried like the rest.
    double eta = P::kOperandUnderflow * weights +
                 2.0 * (2 * taps + 1) * underflowError<Comp>();
    tc.eta = shrink > 0 ? eta / shrink : INFINITY;
  }
  return tc;
}

/// Whether P's step is affine with constant coefficients on a grid that
/// wraps wherever it is read across (the emitter's kAmplification), and runs
/// on CUDA cores: then the amplification bound applies (amplification.h).
template <class P, class = void> struct AmplificationApplies {
  static constexpr bool value = false;
};
template <class P>
struct AmplificationApplies<P, std::void_t<decltype(P::kAmplification)>> {
  static constexpr bool value = P::kAmplification && !P::kTensorCore;
};

/// The amplification bound during a reference run (docs/benchmarks.md,
/// "Linear schemes on periodic grids"): bounds on the norms of the powers
/// of the step's linear part, and the running bound.
template <class P> class AmplificationRun {
public:
  AmplificationRun(const long long *n, long long points, long long steps)
      : n(n) {
    constexpr int G = P::kNumGrids;
    for (int g = 0; g < G; ++g)
      if (P::kUpdated[g])
        state.push_back(g);
    const int S = static_cast<int>(state.size());
    double theta = 0, eta = 0;
    auto step = [&](const double *const *in, double *const *out) {
      std::vector<const double *> gin(G, nullptr);
      std::vector<double *> gout(G, nullptr);
      for (int k = 0; k < S; ++k) {
        gin[state[k]] = in[k];
        gout[state[k]] = out[k];
      }
      if constexpr (AmplificationApplies<P>::value)
        P::linearStep(gin.data(), gout.data(), n);
    };
    if constexpr (AmplificationApplies<P>::value) {
      theta = P::linearTheta();
      eta = 2.0 * P::kLinearTaps * 0x1.0p-1074;
    }
    amp = impulseAmplification(S, points, std::max(steps, 2LL), theta, eta,
                               step);
    running = std::make_unique<AmplificationBound>(amp);
    zero.assign(G, std::vector<double>(points, 0.0));
    local = zero;
  }

  /// After step s (the reference from `in` to `out`, the pointwise bound
  /// from `err` to `errNext`): bounds the step's own error delta_s, adds it
  /// to the amplification bound and lowers errNext to that bound where it
  /// is smaller. amplified[g]: whether it lowered any updated grid's bound
  /// at this step or before (the grids' bounds feed each other's, and the
  /// pointwise recursion starts from the lowered values).
  void afterStep(const double *const *in, const double *const *out,
                 long long s, const std::vector<std::vector<double>> &err,
                 std::vector<std::vector<double>> &errNext,
                 std::vector<bool> *amplified) {
    if constexpr (AmplificationApplies<P>::value) {
      constexpr int G = P::kNumGrids;
      const int S = static_cast<int>(state.size());
      // delta_s: the same bound with E = 0, the step's error from exact
      // inputs, never the propagated one.
      std::vector<const double *> zeroIn(G);
      std::vector<double *> localOut(G);
      for (int g = 0; g < G; ++g) {
        zeroIn[g] = zero[g].data();
        localOut[g] = local[g].data();
      }
      P::boundStep(in, out, zeroIn.data(), localOut.data(), n, s,
                   TensorCoreRounding());
      std::vector<double> maxErr(S, 0.0), r(S, 0.0);
      for (int k = 0; k < S; ++k)
        for (double e : err[state[k]])
          maxErr[k] = std::isnan(e) ? NAN : std::max(maxErr[k], e);
      for (int k = 0; k < S; ++k) {
        const int g = state[k];
        for (double e : local[g])
          r[k] = std::isnan(e) || std::isnan(r[k]) ? NAN : std::max(r[k], e);
        // The rounding to a narrower grid type also sees the propagated
        // error: |A e_s| <= Sum_h a(1, g, h) max E_s(h).
        if (P::kStoreRoundoff[g] > 0)
          for (int h = 0; h < S; ++h)
            r[k] += P::kStoreRoundoff[g] * amp.at(1, k, h) * maxErr[h];
      }
      const std::vector<double> &bound = running->add(r);
      for (int k = 0; k < S; ++k)
        for (double &e : errNext[state[k]])
          // Both bound |e|; a NaN pointwise bound gives way too.
          if (!(e <= bound[k])) {
            e = bound[k];
            lowered = true;
          }
      if (amplified)
        for (int g : state)
          (*amplified)[g] = lowered;
    }
  }

private:
  const long long *n;
  std::vector<int> state; // the updated grids, in order
  Amplification amp;
  std::unique_ptr<AmplificationBound> running;
  std::vector<std::vector<double>> zero, local;
  bool lowered = false;
};

/// The float64 host reference of P run for `steps` steps from `host`; with
/// `bound`, also the bound E on |gpu - reference| of every updated grid
/// after those steps (zero for read-only grids). Where the amplification
/// bound applies (and `amplification` allows it), E is the smaller of the
/// pointwise bound and that one at every step, and `amplified[g]` tells
/// whether the latter lowered grid g's largest bound after the last step.
/// `host` holds each grid's values in its own element type (P::load).
template <class P>
std::vector<std::vector<double>>
referenceRun(const std::vector<std::vector<unsigned char>> &host,
             const long long *n, long long points, long long steps,
             std::vector<std::vector<double>> *bound = nullptr,
             std::vector<bool> *amplified = nullptr,
             bool amplification = true) {
  constexpr int G = P::kNumGrids;
  std::vector<std::vector<double>> cur(G), next(G), err, errNext;
  for (int g = 0; g < G; ++g) {
    cur[g].resize(points);
    for (long long i = 0; i < points; ++i)
      cur[g][i] = P::load(g, host[g].data(), i);
    next[g] = cur[g];
  }
  if (amplified)
    amplified->assign(G, false);
  TensorCoreRounding tc, none;
  std::unique_ptr<AmplificationRun<P>> ampRun;
  if (bound) {
    // The GPU starts from the same values: E_0 = 0.
    err.assign(G, std::vector<double>(points, 0.0));
    errNext = err;
    tc = tensorCoreRounding<P>();
    if (AmplificationApplies<P>::value && amplification && steps > 0)
      ampRun = std::make_unique<AmplificationRun<P>>(n, points, steps);
  }
  std::vector<const double *> in(G), errIn(G);
  std::vector<double *> out(G), errOut(G);
  for (long long s = 0; s < steps; ++s) {
    for (int g = 0; g < G; ++g) {
      in[g] = cur[g].data();
      out[g] = next[g].data();
      if (bound) {
        errIn[g] = err[g].data();
        errOut[g] = errNext[g].data();
      }
    }
    // s is the step index t of this step (run() counts from 0).
    P::referenceStep(in.data(), out.data(), n, s);
    if (bound) {
      // run() starts a pass every kFuse steps; only full passes use the
      // tensor cores.
      TensorCoreRounding pass = none;
      if (P::kTensorCore && s % P::kFuse == 0 && s + P::kFuse <= steps) {
        double maxValue = 0, lo = INFINITY, hi = -INFINITY;
        for (int g = 0; g < G; ++g)
          if (P::kUpdated[g])
            for (double x : cur[g]) {
              maxValue = std::max(maxValue, std::fabs(x));
              lo = std::min(lo, x);
              hi = std::max(hi, x);
            }
        pass = tc;
        pass.maxAbs = maxValue;
        pass.spread = hi >= lo ? hi - lo : 0;
        if (tc.coeffRel * tc.l1 * pass.maxAbs <=
            tc.coeffSpread * pass.spread + tc.coeffAbs * pass.maxAbs) {
          pass.rho += tc.coeffRel;
          pass.coeffSpread = pass.coeffAbs = 0;
        }
      }
      P::boundStep(in.data(), out.data(), errIn.data(), errOut.data(), n, s,
                   pass);
      if (ampRun)
        ampRun->afterStep(in.data(), out.data(), s, err, errNext, amplified);
    }
    for (int g = 0; g < G; ++g)
      if (P::kUpdated[g]) {
        std::swap(cur[g], next[g]);
        if (bound)
          std::swap(err[g], errNext[g]);
      }
  }
  if (bound)
    *bound = std::move(err);
  return cur;
}

/// A bound on max |gpu - ref| / max |ref| of 0.5 or more says nothing
/// useful: the driver then reports the check as inconclusive.
constexpr double kMeaningfulBound = 0.5;

/// The bound's summary for one updated grid.
struct GridBound {
  double maxRef = 0, maxBound = 0;
  double relative() const { return maxBound / std::max(maxRef, 1e-300); }
};

inline GridBound summarizeBound(const std::vector<double> &ref,
                                const std::vector<double> &bound) {
  GridBound b;
  for (size_t i = 0; i < ref.size(); ++i) {
    b.maxRef = std::max(b.maxRef, std::fabs(ref[i]));
    // NaN (a reference that overflowed) makes the bound NaN.
    b.maxBound = std::isnan(bound[i]) || std::isnan(b.maxBound)
                     ? NAN
                     : std::max(b.maxBound, bound[i]);
  }
  return b;
}

/// FNV-1a over the bits of every value: --reference-only prints it, so
/// that runs with different numbers of host threads (STENCILC_HOST_THREADS)
/// can be compared bit for bit.
inline uint64_t digest(const std::vector<double> &values) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (double x : values) {
    uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    for (int b = 0; b < 64; b += 8) {
      h ^= (bits >> b) & 0xff;
      h *= 0x100000001b3ull;
    }
  }
  return h;
}

inline bool meaningful(double relativeBound) {
  return std::isfinite(relativeBound) && relativeBound < kMeaningfulBound;
}

template <class P> int driverMain(int argc, char **argv) {
  constexpr int G = P::kNumGrids;
  long long n[3] = {1, 1, 1};
  static const long long kDefault[3][3] = {
      {10240000, 1, 1}, {10240, 10240, 1}, {512, 512, 512}};
  for (int a = 0; a < P::kDims; ++a)
    n[a] = kDefault[P::kDims - 1][a];
  long long steps = P::kDefaultSteps;
  bool check = false, cpuOnly = false, referenceOnly = false;
  // --pointwise-bound: the pointwise bound alone, without the amplification
  // bound (to compare the two).
  bool amplification = true;
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
    } else if (std::strcmp(arg, "--reference-only") == 0) {
      referenceOnly = true;
    } else if (std::strcmp(arg, "--pointwise-bound") == 0) {
      amplification = false;
    } else if (std::strncmp(arg, "--seed=", 7) == 0) {
      seed = std::strtoull(arg + 7, nullptr, 10);
    } else if (std::strncmp(arg, "--reps=", 7) == 0) {
      reps = std::atoi(arg + 7);
    } else if (std::strncmp(arg, "--min-time=", 11) == 0) {
      minTime = std::atof(arg + 11);
    } else if (std::strncmp(arg, "--stencil=", 10) == 0) {
      // Chosen by main().
    } else if (std::strcmp(arg, "--help") == 0) {
      std::printf(
          "usage: %s [--stencil=NAME] [--size=N|N0xN1[xN2]] "
          "[--steps=S] [--check] [--seed=N] [--reps=N] [--min-time=SEC] "
          "[--cpu-only] [--reference-only] [--pointwise-bound]\n"
          "  Runs stencil %s (%s, %d-D) on random data.\n"
          "  --check  compare against a float64 CPU reference, within "
          "an error bound\n"
          "           derived for this stencil and step count\n"
          "  --cpu-only  run only the CPU reference and print the "
          "sum of each updated grid\n"
          "  --reference-only  run only the CPU reference and the "
          "error bound --check\n"
          "           would use, without the GPU\n"
          "  (the CPU reference runs on every hardware thread, or on "
          "STENCILC_HOST_THREADS)\n"
          "  --pointwise-bound  bound the error point by point only, "
          "without the\n"
          "           amplification bound of linear periodic steps\n"
          "  --reps   timed runs; the median is reported (0: none)\n"
          "  --min-time=SEC  raise the timed steps until one run "
          "lasts SEC seconds\n",
          argv[0], P::kName, P::kTypeName, P::kDims);
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

  // Fresh random inputs in [0, 1), rounded to each grid's element type.
  std::vector<std::vector<unsigned char>> host(G);
  for (int g = 0; g < G; ++g) {
    host[g].resize(points * P::kElemBytes[g]);
    for (long long i = 0; i < points; ++i)
      P::store(g, host[g].data(), i, uniform01(seed));
  }

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

  auto printHeader = [&]() {
    std::printf("%s %s size=", P::kName, P::kTypeName);
    for (int a = 0; a < P::kDims; ++a)
      std::printf("%s%lld", a ? "x" : "", n[a]);
    std::printf(" steps=%lld fuse=%d\n", steps, P::kFuse);
  };
  auto printResultStart = [&]() {
    std::printf("RESULT stencil=%s type=%s size=", P::kName, P::kTypeName);
    for (int a = 0; a < P::kDims; ++a)
      std::printf("%s%lld", a ? "x" : "", n[a]);
    std::printf(" steps=%lld fuse=%d", steps, P::kFuse);
  };

  if (referenceOnly) {
    // No CUDA call: this runs where there is no GPU.
    printHeader();
    std::vector<std::vector<double>> bound;
    std::vector<bool> amplified;
    std::vector<std::vector<double>> ref = referenceRun<P>(
        host, n, points, steps, &bound, &amplified, amplification);
    double relative = 0;
    bool decidedByAmplification = false;
    for (int g = 0; g < G; ++g) {
      if (!P::kUpdated[g])
        continue;
      GridBound b = summarizeBound(ref[g], bound[g]);
      std::printf("bound: %s.%s max|ref| %.17g max bound %.17g relative "
                  "%.17g\n",
                  P::kName, P::kGridNames[g], b.maxRef, b.maxBound,
                  b.relative());
      if (!(b.relative() <= relative))
        decidedByAmplification = amplified[g];
      relative =
          std::isnan(b.relative()) ? NAN : std::max(relative, b.relative());
    }
    std::printf("bound: relative %.3e, %s\n", relative,
                meaningful(relative)
                    ? "meaningful"
                    : "not meaningful (0.5 or more, or not finite): a check "
                      "would be inconclusive");
    printResultStart();
    std::printf(" bound=%.3e bound_kind=%s\n", relative,
                decidedByAmplification ? "amplification" : "pointwise");
    // Last, after the lines that scripts and tests read in order.
    for (int g = 0; g < G; ++g)
      if (P::kUpdated[g])
        std::printf("digest: %s.%s ref %016llx bound %016llx\n", P::kName,
                    P::kGridNames[g],
                    static_cast<unsigned long long>(digest(ref[g])),
                    static_cast<unsigned long long>(digest(bound[g])));
    return 0;
  }

  DeviceBuffer<unsigned char> grids[G], scratch[G], initial[G];
  void *gridPtrs[G], *scratchPtrs[G];
  for (int g = 0; g < G; ++g) {
    const size_t bytes = points * P::kElemBytes[g];
    STENCILC_DRIVER_CHECK(grids[g].allocate(bytes));
    STENCILC_DRIVER_CHECK(initial[g].allocate(bytes));
    STENCILC_DRIVER_CHECK(cudaMemcpy(initial[g].get(), host[g].data(),
                                     points * P::kElemBytes[g],
                                     cudaMemcpyHostToDevice));
    gridPtrs[g] = grids[g].get();
    scratchPtrs[g] = nullptr;
    if (P::kUpdated[g]) {
      STENCILC_DRIVER_CHECK(scratch[g].allocate(bytes));
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
                                   points * P::kElemBytes[g],
                                   cudaMemcpyDeviceToDevice, stream));
      if (scratchPtrs[g])
        STENCILC_TRY(cudaMemsetAsync(scratchPtrs[g], 0xFF,
                                     points * P::kElemBytes[g], stream));
    }
    return cudaSuccess;
  };

  printHeader();

  int status = 0;
  // The check: every point within its own bound E (docs/benchmarks.md,
  // "Error bounds"). The report is relative to max |ref|, per grid, the
  // largest over the grids.
  double err = 0, bound = 0;
  bool decidedByAmplification = false;
  const char *verdict = "PASS";
  if (check) {
    STENCILC_DRIVER_CHECK(reset());
    STENCILC_DRIVER_CHECK(P::run(gridPtrs, scratchPtrs, n, steps, stream));
    STENCILC_DRIVER_CHECK(cudaStreamSynchronize(stream));
    std::vector<std::vector<double>> bounds;
    std::vector<bool> amplified;
    std::vector<std::vector<double>> cur = referenceRun<P>(
        host, n, points, steps, &bounds, &amplified, amplification);
    std::vector<unsigned char> result;
    long long over = 0;
    for (int g = 0; g < G; ++g) {
      if (!P::kUpdated[g])
        continue;
      result.resize(points * P::kElemBytes[g]);
      STENCILC_DRIVER_CHECK(cudaMemcpy(result.data(), gridPtrs[g],
                                       points * P::kElemBytes[g],
                                       cudaMemcpyDeviceToHost));
      GridBound b = summarizeBound(cur[g], bounds[g]);
      double maxDiff = 0;
      bool finite = true;
      for (long long i = 0; i < points; ++i) {
        double got = P::load(g, result.data(), i);
        double want = cur[g][i];
        if (!std::isfinite(got) && std::isfinite(want))
          finite = false;
        double diff = std::fabs(got - want);
        maxDiff = std::max(maxDiff, diff);
        // The bound is itself summed in double: a relative margin of
        // 2^-40 covers its rounding. NaN differences count as over.
        if (!(diff <= bounds[g][i] * (1 + 0x1.0p-40)))
          ++over;
      }
      double e = finite ? maxDiff / std::max(b.maxRef, 1e-300) : INFINITY;
      err = std::max(err, e);
      if (!(b.relative() <= bound))
        decidedByAmplification = amplified[g];
      bound = std::isnan(b.relative()) ? NAN : std::max(bound, b.relative());
    }
    // A bound that says nothing cannot pass a check; a result outside even
    // such a bound (where it is finite) still fails.
    if (over > 0 && !std::isnan(bound))
      verdict = "FAIL";
    else if (!meaningful(bound))
      verdict = "INCONCLUSIVE";
    std::printf("check: max relative error %.3e (bound %.3e): %s", err, bound,
                verdict);
    if (verdict[0] == 'F')
      std::printf(" (%lld points beyond their own bound)", over);
    else if (verdict[0] == 'I')
      std::printf(" (the bound is 0.5 of max|ref| or more, or not finite)");
    std::printf("\n");
    if (verdict[0] == 'F')
      status = 1;
    else if (verdict[0] == 'I')
      status = 4;
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
  printResultStart();
  if (check)
    std::printf(" err=%.3e bound=%.3e status=%s bound_kind=%s", err, bound,
                verdict, decidedByAmplification ? "amplification" : "pointwise");
  if (gstencils > 0)
    std::printf(" timed_steps=%lld ms=%.3f gstencils=%.2f", timedSteps,
                medianMs, gstencils);
  std::printf("\n");
  cudaStreamDestroy(stream);
  return status;
}

} // namespace stencilc::rt

#endif // STENCILC_DRIVER_CUH
