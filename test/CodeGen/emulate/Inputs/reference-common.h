// Shared by the *-reference.cpp programs: each runs a dsl-example's
// generated CUDA on the CPU (test/emulation) and a plain C++ loop written
// from the original algorithm (PolyBench, COSMO, Rodinia, the textbook
// schemes), not from stencilc's IR, and compares the two.
//
// Both compute in IEEE double (the examples are generated with --type=f64)
// the same formulas, in another order at most: the CUDA-core kernels sum a
// linear update tap by tap with weights folded from the coefficients,
// where the loop evaluates the formula as written. Each step then differs
// by a few units of 2^-52 of the values it combines, some 1e-14 of the
// values over the steps run here. A wrong coefficient, offset, boundary,
// order of updates or step index changes the result by orders of
// magnitude more than the tolerance of 1e-10 of max |reference|.
#ifndef STENCILC_TEST_REFERENCE_COMMON_H
#define STENCILC_TEST_REFERENCE_COMMON_H

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr double kTolerance = 1e-10;

/// A device copy of `host` (host memory under the emulation).
inline double *toDevice(const std::vector<double> &host) {
  double *p = nullptr;
  if (cudaMalloc(reinterpret_cast<void **>(&p), host.size() * sizeof(double)) !=
          cudaSuccess ||
      cudaMemcpy(p, host.data(), host.size() * sizeof(double),
                 cudaMemcpyHostToDevice) != cudaSuccess) {
    std::printf("CUDA call failed\n");
    std::exit(1);
  }
  return p;
}

inline std::vector<double> toHost(const double *p, size_t n) {
  std::vector<double> host(n);
  if (cudaMemcpy(host.data(), p, n * sizeof(double), cudaMemcpyDeviceToHost) !=
      cudaSuccess) {
    std::printf("CUDA call failed\n");
    std::exit(1);
  }
  return host;
}

/// Prints `name`'s largest difference relative to max |ref| and returns
/// whether it is within the tolerance.
inline bool compare(const char *name, const std::vector<double> &got,
                    const std::vector<double> &ref) {
  double maxRef = 0, maxDiff = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    maxRef = std::max(maxRef, std::fabs(ref[i]));
    double d = std::fabs(got[i] - ref[i]);
    maxDiff = std::isnan(d) ? INFINITY : std::max(maxDiff, d);
  }
  double rel = maxDiff / std::max(maxRef, 1e-300);
  bool ok = rel <= kTolerance;
  std::printf("%s: max |ref| %.6g, max relative difference %.3e "
              "(tolerance %.0e): %s\n",
              name, maxRef, rel, kTolerance, ok ? "PASS" : "FAIL");
  return ok;
}

/// Deterministic values in [lo, hi) (a 64-bit LCG).
inline std::vector<double> randomField(size_t n, unsigned long long seed,
                                       double lo, double hi) {
  std::vector<double> v(n);
  for (double &x : v) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x = lo + (hi - lo) * static_cast<double>(seed >> 11) * 0x1.0p-53;
  }
  return v;
}

#endif
