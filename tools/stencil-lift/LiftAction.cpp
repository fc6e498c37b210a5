//===- LiftAction.cpp - The clang action that lifts a source --------------===//

#include "LiftAction.h"
#include "IncludeTracker.h"
#include "LiftConsumer.h"

#include "clang/Lex/Preprocessor.h"

using namespace stencil_lift;

std::unique_ptr<clang::ASTConsumer>
LiftAction::CreateASTConsumer(clang::CompilerInstance &ci, llvm::StringRef) {
  auto consumer = std::make_unique<LiftConsumer>(ci, options, output);
  clang::Preprocessor &pp = ci.getPreprocessor();
  // The preprocessor owns the handler; the consumer outlives the parse.
  pp.AddPragmaHandler(
      new StencilPragmaHandler(consumer->pragmas(), consumer->diagnostics()));
  pp.addPPCallbacks(std::make_unique<IncludeTracker>(ci.getSourceManager(),
                                                     consumer->includes()));
  return consumer;
}
