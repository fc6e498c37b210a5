//===- SymbolicSum.h - Integer sums of source expressions -------*- C++ -*-===//
//
// Loop bounds, grid extents and host offsets are sums like `nx - 2` or
// `n + 4 - 2`: integer constants plus source expressions the lifter cannot
// evaluate (atoms, kept as their source text). The rewritten code evaluates
// them where the loop nest stood, so a SymbolicSum prints back as C++; sums
// that cancel (`(n + 2) - 2`) print in their simplest form.
//
//===----------------------------------------------------------------------===//

#ifndef STENCIL_LIFT_SYMBOLICSUM_H
#define STENCIL_LIFT_SYMBOLICSUM_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stencil_lift {

/// Σ coeff · atom + constant, with atoms compared by their source text.
class SymbolicSum {
public:
  SymbolicSum() = default;
  static SymbolicSum constant(int64_t value);
  static SymbolicSum atom(const std::string &text);
  /// Splits an integer expression at + and -; integer constant
  /// subexpressions fold, anything else becomes an atom.
  static SymbolicSum fromExpr(const clang::Expr *expr,
                              const clang::ASTContext &ctx);

  SymbolicSum operator+(const SymbolicSum &other) const;
  SymbolicSum operator-(const SymbolicSum &other) const;
  SymbolicSum operator+(int64_t value) const;
  SymbolicSum operator-(int64_t value) const;
  bool operator==(const SymbolicSum &other) const;
  bool operator!=(const SymbolicSum &other) const { return !(*this == other); }

  /// The value, when no atom is left.
  std::optional<int64_t> asConstant() const;
  /// The sum as a C++ expression, e.g. `nx - 2`; parenthesized when it is
  /// not a single term, so it can be embedded in a larger expression.
  std::string str() const;

private:
  void addAtom(const std::string &text, int64_t coeff);

  std::vector<std::pair<std::string, int64_t>> atoms;
  int64_t value = 0;
};

} // namespace stencil_lift

#endif // STENCIL_LIFT_SYMBOLICSUM_H
