//===- weights.h - Rounding weights without breaking their sum --*- C++ -*-===//
//
// Rounding each coefficient of a linear update to a narrower type on its
// own changes the sum of the weights: 0.2 five times rounds to f32 weights
// that sum to 1 + 1.49e-8, and a scheme that conserves the mean then grows
// it by that factor every step (docs/language.md §6.4). roundWeights rounds
// every weight, then moves the rounding error of the sum onto the largest
// weights, so that the rounded weights sum as near to the exact sum as
// single roundings of them allow: exactly, wherever it is representable
// that way.
//
// Plain C++: the compiler folds constant weights with it, and the host code
// that stencilc generates rounds the weights that depend on parameters with
// the same function at run time.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_WEIGHTS_H
#define STENCILC_WEIGHTS_H

#include <algorithm>
#include <cmath>
#include <vector>

namespace stencilc::rt {

/// A sum of doubles kept exactly as an unevaluated hi + lo pair (two-sum
/// and two-product with fma), for the few dozen to few thousand terms of a
/// kernel's weights.
class ExactSum {
public:
  void add(double x) {
    double s = hi_ + x;
    double bb = s - hi_;
    double err = (hi_ - (s - bb)) + (x - bb);
    hi_ = s;
    lo_ += err;
    renormalize();
  }
  /// Adds a * b exactly.
  void addProduct(double a, double b) {
    double p = a * b;
    add(p);
    add(std::fma(a, b, -p));
  }
  /// The sum, rounded once to double.
  double value() const { return hi_ + lo_; }
  /// The sign of the exact sum: -1, 0 or 1.
  int sign() const {
    double v = hi_ != 0 ? hi_ : lo_;
    return (v > 0) - (v < 0);
  }
  /// |this| < |other|, comparing the exact values.
  bool smallerThan(const ExactSum &other) const {
    ExactSum a = *this, b = other;
    if (a.sign() < 0)
      a.negate();
    if (b.sign() < 0)
      b.negate();
    ExactSum d = b;
    d.add(-a.hi_);
    d.add(-a.lo_);
    return d.sign() > 0;
  }
  void negate() {
    hi_ = -hi_;
    lo_ = -lo_;
  }

private:
  void renormalize() {
    double s = hi_ + lo_;
    lo_ = lo_ - (s - hi_);
    hi_ = s;
  }
  double hi_ = 0, lo_ = 0;
};

/// Rounds w[0..n) in place with `round` (a function double -> double that
/// returns the nearest value of the target type) so that
///   sum over i of count[i] * w[i]
/// comes as near to the exact sum of the unrounded weights as moving the
/// largest weights, one rounding step at a time, brings it.
/// `count[i]` is how many taps share weight i (null: one each); a weight
/// with count 0 is rounded but never moved. The rounding error of the sum
/// goes to the weights of largest magnitude first, in the order given for
/// equal magnitudes, so callers list the preferred weight (the centre tap)
/// first. A weight never changes sign and is never moved off zero.
template <class Round>
void roundWeights(double *w, const int *count, int n, Round round) {
  if (n <= 0)
    return;
  auto countOf = [&](int i) { return count ? count[i] : 1; };
  ExactSum exact;
  for (int i = 0; i < n; ++i)
    exact.addProduct(static_cast<double>(countOf(i)), w[i]);
  for (int i = 0; i < n; ++i)
    w[i] = round(w[i]);
  // Largest rounded weight first: weights that round alike tie, and keep
  // the caller's order.
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return std::fabs(w[a]) > std::fabs(w[b]);
  });
  if (!std::isfinite(exact.value()))
    return;
  // residual = exact sum - sum of count * w, exactly: weights that are
  // exact already leave nothing to move.
  auto residualOf = [&]() {
    ExactSum r = exact;
    for (int i = 0; i < n; ++i)
      r.addProduct(-static_cast<double>(countOf(i)), w[i]);
    return r;
  };
  ExactSum residual = residualOf();
  // Each pass moves each weight at most once; a few passes settle the
  // error that one weight's rounding leaves for the next.
  for (int pass = 0; pass < 3 && residual.sign() != 0; ++pass) {
    bool moved = false;
    for (int i : order) {
      if (residual.sign() == 0)
        break;
      int c = countOf(i);
      if (c == 0 || w[i] == 0)
        continue;
      double candidate = round(w[i] + residual.value() / c);
      if (candidate == w[i] || !std::isfinite(candidate) ||
          (candidate > 0) != (w[i] > 0) || candidate == 0)
        continue;
      double old = w[i];
      w[i] = candidate;
      ExactSum next = residualOf();
      if (next.smallerThan(residual)) {
        residual = next;
        moved = true;
      } else {
        w[i] = old;
      }
    }
    if (!moved)
      break;
  }
}

} // namespace stencilc::rt

#endif // STENCILC_WEIGHTS_H
