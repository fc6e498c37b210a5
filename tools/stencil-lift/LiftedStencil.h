//===- LiftedStencil.h - What a lifted loop nest is -------------*- C++ -*-===//
//
// The description of one lifted nest that the analysis (NestLifter) hands to
// the two writers: StencilWriter prints it as a `.st` stencil, and
// HostCallWriter prints the C++ block that replaces the nest. Everything here
// is either .st text or C++ source text valid where the nest stood; the
// writers never look at the clang AST again.
//
//===----------------------------------------------------------------------===//

#ifndef STENCIL_LIFT_LIFTEDSTENCIL_H
#define STENCIL_LIFT_LIFTEDSTENCIL_H

#include "SymbolicSum.h"

#include "clang/Basic/SourceLocation.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace stencil_lift {

/// The boundary kinds of the language (docs/language.md §6.3).
enum class BoundaryKind { Fixed, Dirichlet, Periodic, Clamp };

/// One boundary condition, for one axis or all.
struct BoundarySpec {
  BoundaryKind kind = BoundaryKind::Fixed;
  /// The constant of dirichlet(c), as .st text.
  std::string value;
  std::string str() const;
};

/// One array of the nest: one grid of the stencil.
struct LiftedArray {
  std::string name;        ///< The .st grid name.
  std::string cName;       ///< The C++ variable the nest reads.
  std::string partner;     ///< The buffer it is computed into; empty when
                           ///< the nest only reads the array.
  unsigned subscripts = 1; ///< Subscripts per access: `u[i][j]` has 2.
  std::string rowPitch;    ///< Host elements between rows (2-D and 3-D).
  std::string slicePitch;  ///< Host elements between planes (3-D).
  std::vector<BoundarySpec> boundary; ///< One per axis.
  bool updated() const { return !partner.empty(); }
};

/// A scalar variable the update reads: a run-time parameter.
struct LiftedParam {
  std::string name;         ///< The .st name, also the Params field.
  std::string value;        ///< The C++ expression that supplies it.
  std::string type;         ///< f32 or f64.
  std::string defaultValue; ///< .st constant.
};

/// A local constant of the innermost loop body.
struct LiftedLet {
  std::string name;
  std::string expr;
};

/// `grid' = expr;`
struct LiftedUpdate {
  unsigned array;
  std::string expr;
};

/// One spatial axis, slowest first.
struct LiftedAxis {
  std::string counter;
  SymbolicSum lo, hi; ///< The loop's range [lo, hi).
  /// Host index of the grid's first point, and the grid's extent.
  SymbolicSum origin, extent;
  /// Where the loop's range starts inside the grid (the fixed band below).
  int64_t computedOffset = 0;
};

/// How the time loop exchanges the buffers between steps: a swap, a
/// copy-back nest, or a second sweep that computes the first array back
/// from the second (two steps per trip).
enum class Exchange { Swap, CopyBack, TwoSweep };

struct LiftedStencil {
  std::string name;
  std::string function; ///< The enclosing C++ function.
  unsigned dims = 0;
  std::string elemType; ///< f32 or f64.
  std::string cType;    ///< float or double.
  std::vector<LiftedArray> arrays;
  std::vector<LiftedParam> params;
  std::vector<LiftedLet> lets;
  std::vector<LiftedUpdate> updates;
  std::vector<LiftedAxis> axes;
  std::string steps; ///< C++ expression.
  std::optional<int64_t> constantSteps;
  std::string target; ///< target(...) clause, verbatim.
  Exchange exchange = Exchange::Swap;
  std::string swapText; ///< The swap statements, verbatim.
  /// Whether the loop reads the fixed band of both buffers of a grid in
  /// alternate steps: the rewrite then runs the stencil only where the two
  /// bands are equal, and `loopText` otherwise.
  bool checkBands = false;
  std::string loopText; ///< The time loop, verbatim.
  /// The text the rewrite replaces: from the start of the pragma's line to
  /// the end of the time loop.
  clang::SourceLocation replaceBegin, replaceEnd;
  unsigned firstLine = 0, lastLine = 0;
  unsigned indent = 0; ///< Column of the time loop, for the inserted text.
};

} // namespace stencil_lift

#endif // STENCIL_LIFT_LIFTEDSTENCIL_H
