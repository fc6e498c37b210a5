//===- amplification.h - Powers of a periodic linear step -------*- C++ -*-===//
//
// The amplification bound of --check (docs/benchmarks.md, "Error bounds",
// "Linear schemes on periodic grids: the amplification of the rounding").
// For an update that is affine in the state with constant coefficients, on
// a grid periodic along every axis it reads across, the error obeys
// e_{k+1} = A e_k + delta_k with A the step's linear part: a block-circulant
// operator, one circulant block per pair of updated grids. Then
//
//   |e_n(g, x)| <= Sum_{k<n} Sum_h ||(A^{n-1-k})_{g<-h}||_inf r_k(h),
//   r_k(h) >= max_y |delta_k(h, y)|,
//
// and because each block commutes with the shifts of the grid, its largest
// row sum equals its column sum: the l1 norm over grid g of A^m applied to
// one unit impulse in grid h. impulseAmplification propagates one impulse
// per grid through the float64 linear step and bounds that norm from above,
// its own rounding included. Plain C++: the driver and the unit tests
// include it.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_AMPLIFICATION_H
#define STENCILC_AMPLIFICATION_H

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace stencilc::rt {

/// Upper bounds a(m, g, h) >= max_x Sum_y |A^m[(g, x), (h, y)]| for
/// m = 0 .. powers - 1: the infinity norm of block (g, h) of the m-th power
/// of a block-circulant step A.
struct Amplification {
  int grids = 0;
  long long powers = 0;
  std::vector<double> norm; // (m * grids + g) * grids + h

  double at(long long m, int g, int h) const {
    return norm[static_cast<size_t>((m * grids + g) * grids + h)];
  }
};

namespace amplification_detail {
constexpr double kUd = 0x1.0p-53;
inline double gamma(double n) {
  double nu = n * kUd;
  return nu < 1 ? nu / (1 - nu) : INFINITY;
}
} // namespace amplification_detail

/// Bounds the block norms of A^0 .. A^(powers-1) for `grids` state grids of
/// `points` values each. `step(in, out)` applies the computed operator Â
/// once in double: out[g] from in[0 .. grids-1] (arrays of `points`).
/// What Â's evaluation may differ from A by, summed over every point of
/// every grid, is at most `theta` times the l1 norm of its argument plus
/// `eta` per point and grid: theta = max over source grids h of
/// Sum over the taps that read h of (gamma_K(u_d) |c_i| + Delta_i), with
/// Delta_i the coefficient's own error in double, and eta the underflow
/// of K products and additions, 2 K eta_d.
///
/// With v_m the computed impulse response and w_m = A^m e_h the exact one,
/// v_{j+1} = A v_j + f_j, so w_m - v_m = -Sum_{j<m} A^{m-1-j} f_j and
///   a(m, g, h) <= ||v_m||_{1,g} + Sum_{j<m} beta_{m-1-j} (theta ||v_j||_1
///                 + eta points grids),
/// beta_k = max over blocks of a(k, ., .). The sum is bounded by m times
/// its largest factors; the l1 sums in double by gamma_points(u_d).
template <class Step>
Amplification impulseAmplification(int grids, long long points,
                                   long long powers, double theta, double eta,
                                   Step &&step) {
  using namespace amplification_detail;
  Amplification amp;
  amp.grids = grids;
  amp.powers = powers;
  const size_t blocks = static_cast<size_t>(grids) * grids;
  std::vector<double> sums(static_cast<size_t>(powers) * blocks, 0.0);
  std::vector<std::vector<double>> cur(grids), next(grids);
  std::vector<const double *> in(grids);
  std::vector<double *> out(grids);
  for (int h = 0; h < grids; ++h) {
    for (int g = 0; g < grids; ++g) {
      cur[g].assign(static_cast<size_t>(points), 0.0);
      next[g].assign(static_cast<size_t>(points), 0.0);
    }
    cur[h][0] = 1;
    for (long long m = 0; m < powers; ++m) {
      for (int g = 0; g < grids; ++g) {
        double s = 0;
        for (double x : cur[g])
          s += std::fabs(x);
        sums[(m * grids + g) * grids + h] = s;
      }
      if (m + 1 == powers)
        break;
      for (int g = 0; g < grids; ++g) {
        in[g] = cur[g].data();
        out[g] = next[g].data();
      }
      step(in.data(), out.data());
      std::swap(cur, next);
    }
  }
  // The computed l1 sums are within gamma_{points-1}(u_d) of the exact
  // sums of the computed vectors; each bound below rounds a few more times.
  const double sumRel = 1 + gamma(static_cast<double>(points) + 4);
  const double absolute = eta * static_cast<double>(points) * grids;
  amp.norm.assign(sums.size(), 0.0);
  double beta = 0;                      // max over k < m of a(k, ., .)
  std::vector<double> vmax(grids, 0.0); // max over j < m of ||v_j||_1, per h
  for (long long m = 0; m < powers; ++m) {
    double betaNext = beta;
    for (int h = 0; h < grids; ++h) {
      const double drift =
          static_cast<double>(m) * beta * (theta * vmax[h] + absolute);
      for (int g = 0; g < grids; ++g) {
        size_t i = (m * grids + g) * grids + h;
        amp.norm[i] = (sums[i] + drift) * sumRel;
        betaNext = std::max(betaNext, amp.norm[i]);
      }
    }
    for (int h = 0; h < grids; ++h) {
      double v = 0;
      for (int g = 0; g < grids; ++g)
        v += sums[(m * grids + g) * grids + h];
      vmax[h] = std::max(vmax[h], v * sumRel);
    }
    beta = betaNext;
  }
  return amp;
}

/// The amplification bound of one run, step by step: after each step k the
/// caller passes r_k(h) >= max_y |delta_k(h, y)| (the largest error one step
/// adds to grid h from exact inputs) and gets, per grid g,
///   E(g) = Sum_{j<=k} Sum_h a(k - j, g, h) r_j(h),
/// a bound on every |e_{k+1}(g, x)|. The sum of nonnegative terms in double
/// is inflated by gamma of its length.
class AmplificationBound {
public:
  explicit AmplificationBound(const Amplification &amp) : amp(amp) {}

  /// Adds step k's r (one value per state grid) and returns the bound after
  /// it, one value per state grid.
  const std::vector<double> &add(const std::vector<double> &r) {
    using namespace amplification_detail;
    const int G = amp.grids;
    rounding.push_back(r);
    const long long k = static_cast<long long>(rounding.size()) - 1;
    bound.assign(G, 0.0);
    for (int g = 0; g < G; ++g) {
      double e = 0;
      for (long long j = 0; j <= k; ++j)
        for (int h = 0; h < G; ++h)
          e += amp.at(k - j, g, h) * rounding[j][h];
      bound[g] = e * (1 + gamma(static_cast<double>((k + 1) * G) + 2));
    }
    return bound;
  }
  /// The powers available: add() may be called this many times.
  long long capacity() const { return amp.powers; }

private:
  const Amplification &amp;
  std::vector<std::vector<double>> rounding;
  std::vector<double> bound;
};

} // namespace stencilc::rt

#endif // STENCILC_AMPLIFICATION_H
