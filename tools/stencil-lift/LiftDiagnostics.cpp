//===- LiftDiagnostics.cpp - stencil-lift's located messages --------------===//
//
// Custom diagnostic IDs take a single "%0" argument: the lifter composes its
// messages itself, and clang only locates and prints them.
//
//===----------------------------------------------------------------------===//

#include "LiftDiagnostics.h"

using namespace stencil_lift;

LiftDiagnostics::LiftDiagnostics(clang::DiagnosticsEngine &engine)
    : engine(engine),
      errorID(engine.getCustomDiagID(clang::DiagnosticsEngine::Error, "%0")),
      warningID(
          engine.getCustomDiagID(clang::DiagnosticsEngine::Warning, "%0")),
      noteID(engine.getCustomDiagID(clang::DiagnosticsEngine::Note, "%0")),
      remarkID(engine.getCustomDiagID(clang::DiagnosticsEngine::Remark, "%0")) {
}

void LiftDiagnostics::report(unsigned id, clang::SourceLocation loc,
                             const llvm::Twine &message,
                             clang::SourceRange range) {
  clang::DiagnosticBuilder builder = engine.Report(loc, id);
  builder << message.str();
  if (range.isValid())
    builder << range;
}

void LiftDiagnostics::error(clang::SourceLocation loc,
                            const llvm::Twine &message,
                            clang::SourceRange range) {
  report(errorID, loc, message, range);
}

void LiftDiagnostics::warning(clang::SourceLocation loc,
                              const llvm::Twine &message,
                              clang::SourceRange range) {
  report(warningID, loc, message, range);
}

void LiftDiagnostics::note(clang::SourceLocation loc,
                           const llvm::Twine &message,
                           clang::SourceRange range) {
  report(noteID, loc, message, range);
}

void LiftDiagnostics::remark(clang::SourceLocation loc,
                             const llvm::Twine &message,
                             clang::SourceRange range) {
  report(remarkID, loc, message, range);
}
