//===- Compile.h - From a file name to the Stencil IR -----------*- C++ -*-===//

#ifndef STENCILC_FRONTEND_COMPILE_H
#define STENCILC_FRONTEND_COMPILE_H

#include "stencilc/Frontend/AST.h"
#include "stencilc/IR/Stencil.h"
#include "stencilc/Support/Diagnostics.h"

#include <optional>

namespace stencilc {

/// Adds the file at `path` ("-" for standard input) to the SourceMgr and
/// returns its buffer id, or 0 after reporting why it cannot be read.
unsigned loadSourceFile(llvm::StringRef path, DiagnosticEngine &diags);

/// Parses buffer `bufferId`. Returns nullopt after reporting errors.
std::optional<ast::Module> parseBuffer(unsigned bufferId,
                                       DiagnosticEngine &diags);

/// Parses and lowers buffer `bufferId` to IR.
std::optional<Module> compileBuffer(unsigned bufferId,
                                    DiagnosticEngine &diags);

} // namespace stencilc

#endif // STENCILC_FRONTEND_COMPILE_H
