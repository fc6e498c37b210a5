//===- AffineIndex.h - Array indices as polynomials -------------*- C++ -*-===//
//
// An array index such as `(i + 1) * ny + j - 1` is read as a polynomial:
// a sum of integer multiples of monomials, each the product of at most one
// loop counter and of symbols (loop-invariant values such as a row pitch,
// kept as their source text). Expanding the products is what lets the
// lifter see `(i + 1) * ny` and `i * ny + ny` as the same access, split a
// linearized index into one offset per axis, and recognize each axis's
// pitch: the symbols that multiply its counter.
//
//===----------------------------------------------------------------------===//

#ifndef STENCIL_LIFT_AFFINEINDEX_H
#define STENCIL_LIFT_AFFINEINDEX_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stencil_lift {

/// A polynomial in the loop counters and symbols, at most linear in the
/// counters.
class AffineIndex {
public:
  /// counter · Π symbols; counter -1 for none. Symbols are sorted, so the
  /// order of factors in the source does not matter.
  struct Monomial {
    int counter = -1;
    std::vector<std::string> symbols;
    bool operator<(const Monomial &o) const {
      return counter != o.counter ? counter < o.counter : symbols < o.symbols;
    }
    bool operator==(const Monomial &o) const {
      return counter == o.counter && symbols == o.symbols;
    }
  };

  static AffineIndex constant(int64_t value);
  static AffineIndex counter(int axis);
  static AffineIndex symbol(const std::string &text);

  AffineIndex operator+(const AffineIndex &o) const;
  AffineIndex operator-(const AffineIndex &o) const;
  /// The product, or nothing when two counters would multiply.
  std::optional<AffineIndex> times(const AffineIndex &o) const;

  const std::map<Monomial, int64_t> &terms() const { return termMap; }
  /// The symbols of a monomial as C++ (`ny * nz`), with its coefficient.
  static std::string symbolText(const std::vector<std::string> &symbols,
                                int64_t coeff);

private:
  void add(const Monomial &m, int64_t coeff);
  std::map<Monomial, int64_t> termMap;
};

} // namespace stencil_lift

#endif // STENCIL_LIFT_AFFINEINDEX_H
