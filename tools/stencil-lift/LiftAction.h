//===- LiftAction.h - The clang action that lifts a source ------*- C++ -*-===//
//
// The frontend action stencil-lift runs over its input: it registers the
// '#pragma stencil' handler and the include tracker with the preprocessor,
// parses the file, and lets LiftConsumer lift the marked nests. What it
// produces (the .st text, the rewritten source) goes into a LiftOutput the
// driver owns; the driver writes files only when nothing failed.
//
//===----------------------------------------------------------------------===//

#ifndef STENCIL_LIFT_LIFTACTION_H
#define STENCIL_LIFT_LIFTACTION_H

#include "clang/Frontend/FrontendAction.h"

#include <string>

namespace stencil_lift {

/// What the driver asks for.
struct LiftOptions {
  std::string stName;     ///< The .st file, named in comments.
  std::string header;     ///< The generated header the rewrite includes.
  std::string sourceName; ///< The input, named in the .st file.
};

/// What the action produced; filled only when every nest was lifted.
struct LiftOutput {
  unsigned pragmas = 0; ///< '#pragma stencil' seen in the main file.
  bool lifted = false;
  std::string stencilText;
  std::string rewritten;
};

/// Parses the input and lifts its marked nests.
class LiftAction : public clang::ASTFrontendAction {
public:
  LiftAction(const LiftOptions &options, LiftOutput &output)
      : options(options), output(output) {}

protected:
  std::unique_ptr<clang::ASTConsumer>
  CreateASTConsumer(clang::CompilerInstance &ci, llvm::StringRef file) override;

private:
  const LiftOptions &options;
  LiftOutput &output;
};

} // namespace stencil_lift

#endif // STENCIL_LIFT_LIFTACTION_H
