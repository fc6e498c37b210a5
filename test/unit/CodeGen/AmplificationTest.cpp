//===- AmplificationTest.cpp - Powers of periodic linear steps, bounded ---===//
//
// impulseAmplification (runtime/include/stencilc/amplification.h) against
// closed forms and against the powers of the step's matrix: a bound on the
// largest row sum of each block of A^m, which for a block-circulant A the
// impulse response gives exactly, up to the float64 rounding that the
// routine charges itself.
//
//===----------------------------------------------------------------------===//

#include "stencilc/amplification.h"

#include "gtest/gtest.h"

#include <cmath>
#include <vector>

using namespace stencilc::rt;

namespace {

/// A 1-D periodic linear step of one or more grids: out[g](x) = Sum over
/// taps (g, h, o, c) of c * in[h](x + o).
struct Tap1D {
  int to, from, offset;
  double c;
};

struct Scheme {
  int grids;
  long long n;
  std::vector<Tap1D> taps;

  void operator()(const double *const *in, double *const *out) const {
    for (int g = 0; g < grids; ++g)
      for (long long x = 0; x < n; ++x)
        out[g][x] = 0;
    for (const Tap1D &t : taps)
      for (long long x = 0; x < n; ++x)
        out[t.to][x] += t.c * in[t.from][((x + t.offset) % n + n) % n];
  }
  /// theta as the driver's linearTheta: gamma_K(u_d) |c| per tap (the
  /// coefficients here are exact doubles), summed per source grid.
  double theta() const {
    std::vector<double> perSource(grids, 0.0);
    std::vector<int> count(grids, 0);
    for (const Tap1D &t : taps)
      ++count[t.to];
    // The accumulation above adds one product per tap to out: as many
    // roundings per term as a left-to-right sum of K products.
    for (const Tap1D &t : taps)
      perSource[t.from] +=
          amplification_detail::gamma(count[t.to] + 1) * std::fabs(t.c);
    double m = 0;
    for (double x : perSource)
      m = std::max(m, x);
    return m;
  }
  Amplification amplification(long long powers) const {
    return impulseAmplification(grids, n, powers, theta(),
                                2.0 * (taps.size() + 1) * 0x1.0p-1074, *this);
  }
  /// Block norms of A^m from the dense matrix, in long double.
  std::vector<std::vector<long double>> matrixPowerNorms(long long m) const {
    const long long N = grids * n;
    std::vector<long double> A(N * N, 0), P(N * N, 0), Q(N * N, 0);
    for (const Tap1D &t : taps)
      for (long long x = 0; x < n; ++x)
        A[(t.to * n + x) * N + t.from * n + ((x + t.offset) % n + n) % n] +=
            t.c;
    for (long long i = 0; i < N; ++i)
      P[i * N + i] = 1;
    for (long long k = 0; k < m; ++k) {
      std::fill(Q.begin(), Q.end(), 0);
      for (long long i = 0; i < N; ++i)
        for (long long j = 0; j < N; ++j)
          if (A[i * N + j] != 0)
            for (long long l = 0; l < N; ++l)
              Q[i * N + l] += A[i * N + j] * P[j * N + l];
      std::swap(P, Q);
    }
    std::vector<std::vector<long double>> norm(
        grids, std::vector<long double>(grids, 0));
    for (int g = 0; g < grids; ++g)
      for (int h = 0; h < grids; ++h)
        for (long long x = 0; x < n; ++x) {
          long double row = 0;
          for (long long y = 0; y < n; ++y)
            row += std::fabs(P[(g * n + x) * N + h * n + y]);
          norm[g][h] = std::max(norm[g][h], row);
        }
    return norm;
  }
};

TEST(Amplification, HeatWithNonnegativeWeightsHasNormOne) {
  // u' = 0.25 u[-1] + 0.5 u + 0.25 u[1]: A^m has nonnegative entries and
  // rows summing to 1, so ||A^m||_inf = 1 exactly for every m.
  Scheme heat{1, 37, {{0, 0, -1, 0.25}, {0, 0, 0, 0.5}, {0, 0, 1, 0.25}}};
  Amplification amp = heat.amplification(500);
  ASSERT_EQ(amp.powers, 500);
  for (long long m = 0; m < 500; ++m) {
    EXPECT_GE(amp.at(m, 0, 0), 1.0) << "m = " << m;
    EXPECT_LE(amp.at(m, 0, 0), 1.0 + 1e-12) << "m = " << m;
  }
}

TEST(Amplification, NegativeWeightsMatchTheMatrixPower) {
  // The sharp smoother of test/CodeGen/nvcc/Inputs/bounds.st: Sum |c| =
  // 1.25, so the pointwise bound grows like 1.25^m; its powers' norms stay
  // near 1.
  Scheme sharp{1, 12,
               {{0, 0, -2, -0.0625},
                {0, 0, -1, 0.25},
                {0, 0, 0, 0.625},
                {0, 0, 1, 0.25},
                {0, 0, 2, -0.0625}}};
  Amplification amp = sharp.amplification(41);
  for (long long m : {0LL, 1LL, 2LL, 3LL, 7LL, 20LL, 40LL}) {
    long double exact = sharp.matrixPowerNorms(m)[0][0];
    EXPECT_GE(amp.at(m, 0, 0), static_cast<double>(exact) * (1 - 1e-15))
        << "m = " << m;
    EXPECT_LE(amp.at(m, 0, 0), static_cast<double>(exact) * (1 + 1e-11))
        << "m = " << m;
  }
  EXPECT_NEAR(amp.at(1, 0, 0), 1.25, 1e-12);
  EXPECT_LT(amp.at(40, 0, 0), 1.25);
}

TEST(Amplification, LeapfrogBlocksMatchTheMatrixPower) {
  // The 1-D wave equation as two grids: u' = 2u - v + r (u[-1] - 2u + u[1]),
  // v' = u. On a periodic line the mean of u - v is a Jordan block of the
  // eigenvalue 1: ||A^m|| grows linearly, and so must the bound.
  const double r = 0.25;
  Scheme leapfrog{2, 10,
                  {{0, 0, -1, r},
                   {0, 0, 0, 2 - 2 * r},
                   {0, 0, 1, r},
                   {0, 1, 0, -1},
                   {1, 0, 0, 1}}};
  Amplification amp = leapfrog.amplification(31);
  for (long long m : {1LL, 2LL, 5LL, 10LL, 30LL}) {
    auto exact = leapfrog.matrixPowerNorms(m);
    for (int g = 0; g < 2; ++g)
      for (int h = 0; h < 2; ++h) {
        double e = static_cast<double>(exact[g][h]);
        EXPECT_GE(amp.at(m, g, h), e * (1 - 1e-15))
            << "m = " << m << " block " << g << h;
        // A zero block gets the routine's small allowance for its rounding.
        EXPECT_LE(amp.at(m, g, h), e * (1 + 1e-11) + 1e-12)
            << "m = " << m << " block " << g << h;
      }
  }
  EXPECT_GT(amp.at(30, 0, 0), 10.0);
}

TEST(Amplification, RunningBoundSumsTheRounding) {
  // With ||A^m|| = 1 and the same rounding r each step, the bound after k
  // steps is k r (to within the summation's own allowance).
  Scheme heat{1, 9, {{0, 0, -1, 0.5}, {0, 0, 1, 0.5}}};
  Amplification amp = heat.amplification(100);
  AmplificationBound bound(amp);
  for (int k = 1; k <= 100; ++k) {
    const std::vector<double> &e = bound.add({1e-7});
    EXPECT_GE(e[0], k * 1e-7);
    EXPECT_LE(e[0], k * 1e-7 * (1 + 1e-12));
  }
}

} // namespace
