//===- Sema.h - Name resolution, checking and lowering to IR ----*- C++ -*-===//
//
// Checks a parsed module against the rules of docs/language.md and lowers it
// to the Stencil IR: resolves names, expands box/star shorthands, folds
// constants, checks offsets, dimensions, types and boundaries, and attaches
// the linear form of each update.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_FRONTEND_SEMA_H
#define STENCILC_FRONTEND_SEMA_H

#include "stencilc/Frontend/AST.h"
#include "stencilc/IR/Stencil.h"
#include "stencilc/Support/Diagnostics.h"

#include <optional>

namespace stencilc {

/// Lowers `module` to IR. Returns nullopt after reporting at least one
/// error.
std::optional<Module> lowerToIR(const ast::Module &module,
                                DiagnosticEngine &diags);

/// True when `name` would clash with C++ or with the generated interface.
bool isReservedName(llvm::StringRef name);

} // namespace stencilc

#endif // STENCILC_FRONTEND_SEMA_H
