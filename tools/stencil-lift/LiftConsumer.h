//===- LiftConsumer.h - Lifts the marked nests of a source ------*- C++ -*-===//
//
// Once the translation unit is parsed, the consumer pairs each recorded
// '#pragma stencil' of the main file with the statement that follows it,
// lifts each nest with NestLifter, and, if all succeeded, prints the .st
// file and rewrites the source with clang's Rewriter: the replaced nests and
// the added #include lines are the only bytes that change.
//
//===----------------------------------------------------------------------===//

#ifndef STENCIL_LIFT_LIFTCONSUMER_H
#define STENCIL_LIFT_LIFTCONSUMER_H

#include "LiftAction.h"
#include "LiftDiagnostics.h"
#include "StencilPragmaHandler.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/Frontend/CompilerInstance.h"

#include <vector>

namespace stencil_lift {

/// Lifts every marked nest once the translation unit is complete.
class LiftConsumer : public clang::ASTConsumer {
public:
  LiftConsumer(clang::CompilerInstance &ci, const LiftOptions &options,
               LiftOutput &output)
      : ci(ci), options(options), output(output), diags(ci.getDiagnostics()) {}

  void HandleTranslationUnit(clang::ASTContext &ctx) override;

  std::vector<StencilPragma> &pragmas() { return pragmaList; }
  std::vector<clang::SourceLocation> &includes() { return includeList; }
  LiftDiagnostics &diagnostics() { return diags; }

private:
  clang::CompilerInstance &ci;
  const LiftOptions &options;
  LiftOutput &output;
  LiftDiagnostics diags;
  std::vector<StencilPragma> pragmaList;
  std::vector<clang::SourceLocation> includeList;
};

} // namespace stencil_lift

#endif // STENCIL_LIFT_LIFTCONSUMER_H
