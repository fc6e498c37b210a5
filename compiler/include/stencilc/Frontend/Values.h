//===- Values.h - Every value finite in the type that holds it --*- C++ -*-===//
//
// The rule of docs/language.md §4.7: each value a stencil's code holds must
// be finite once rounded to the type that holds it. A parameter's default
// is held in its declared type, then in the stencil's compute type; a
// dirichlet value stands for the grid outside the domain and is held in the
// grid's element type; a constant of an expression is folded in double and
// held in the compute type. Sema checks this after lowering, and the driver
// again after `--type` changes the element type, so the emitters never
// meet infinity or NaN.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_FRONTEND_VALUES_H
#define STENCILC_FRONTEND_VALUES_H

#include "stencilc/IR/Stencil.h"
#include "stencilc/Support/Diagnostics.h"

#include <string>

namespace stencilc {

/// The error for a constant expression that folds to `v`, infinity or NaN.
std::string constantNotFinite(double v);

/// Reports, at its source location, every value of `s` that is not finite
/// in the type that holds it (see the file comment): parameter defaults,
/// dirichlet values, and the live constants and linear-form coefficients
/// that are not finite in the compute type. (Sema reports a constant
/// expression of the source that folds to infinity or NaN as it lowers it.)
/// `typeOption`, when not empty, is the `--type=...` flag that set the
/// element type; a note names it. Returns false when anything was reported.
bool checkValuesFit(const Stencil &s, DiagnosticEngine &diags,
                    llvm::StringRef typeOption = "");
bool checkValuesFit(const Module &m, DiagnosticEngine &diags,
                    llvm::StringRef typeOption = "");

} // namespace stencilc

#endif // STENCILC_FRONTEND_VALUES_H
