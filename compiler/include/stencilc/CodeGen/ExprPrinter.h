//===- ExprPrinter.h - C++ text of one expression node ----------*- C++ -*-===//
//
// The C++ the emitters print for an expression node of the Stencil IR, on
// the device (in the compute type), in the host's float64 reference and in
// the driver's tracked error bound: one spelling per operator, calling the
// helpers of runtime/include/stencilc/runtime.cuh (min_, exp_, select_, ...)
// that driver.cuh overloads for its Tracked values. Also the small helpers
// every emitter shares: C++ element types and exact literals.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_CODEGEN_EXPRPRINTER_H
#define STENCILC_CODEGEN_EXPRPRINTER_H

#include "stencilc/IR/Stencil.h"

#include <functional>
#include <optional>
#include <string>

namespace stencilc {

/// `__half`, `__nv_bfloat16`, `float`, `double`.
std::string cppElemType(ElemType t);
/// The host type of a parameter field: f64 stays double, the rest float.
std::string paramFieldType(ElemType t);
/// Makes a C++ floating literal of a number printed with %g: "2" is an int.
std::string ensureFraction(std::string s);
/// A decimal literal that reads back to exactly `v` in the given type
/// (float when `asFloat`, else double): the fewest digits that round-trip,
/// so subnormals and -0.0 keep their value. Nullopt when `v` is not finite
/// in that type; C++ has no literal for infinity or NaN, and Sema rejects
/// such values (Frontend/Values.h), so that is an internal error.
std::optional<std::string> literalText(double v, bool asFloat);
/// `base + d` written the way a person would.
std::string plus(const std::string &base, int d);

/// How the nodes of one printed expression are named and read.
struct ExprContext {
  /// Device code (parameters are a.p_NAME) or host code (p_NAME).
  bool forDevice = true;
  /// The C++ type of the values: "Comp", "double" or "T" (Tracked).
  std::string type = "Comp";
  /// A constant as a literal of `type`.
  std::function<std::string(double)> literal;
  /// The name of the value of node i.
  std::function<std::string(int)> name;
  /// The value of a leaf that depends on the point or the step: Read,
  /// StageRead, NewRead, Step and Coord.
  std::function<std::string(const Node &)> leaf;
};

/// The right-hand side that computes node `n` of `s`.
std::string nodeExpression(const Stencil &s, const Node &n,
                           const ExprContext &ctx);

} // namespace stencilc

#endif // STENCILC_CODEGEN_EXPRPRINTER_H
