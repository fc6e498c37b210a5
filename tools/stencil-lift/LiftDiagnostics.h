//===- LiftDiagnostics.h - stencil-lift's located messages ------*- C++ -*-===//
//
// stencil-lift reports through the clang::DiagnosticsEngine of the
// compilation that parses the input, with custom diagnostic IDs, so its
// messages print exactly like clang's own: `file:line:col: error: message`,
// the source line and a caret (and a range underline where one is given).
// Whether any error occurred, from clang or from the lifter, is then one
// question to that engine.
//
//===----------------------------------------------------------------------===//

#ifndef STENCIL_LIFT_LIFTDIAGNOSTICS_H
#define STENCIL_LIFT_LIFTDIAGNOSTICS_H

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/Twine.h"

namespace stencil_lift {

/// Errors, warnings and notes of the lifter, printed by clang's engine.
class LiftDiagnostics {
public:
  explicit LiftDiagnostics(clang::DiagnosticsEngine &engine);

  /// Reports that the nest at `loc` cannot be lifted; `range` is underlined.
  void error(clang::SourceLocation loc, const llvm::Twine &message,
             clang::SourceRange range = {});
  void warning(clang::SourceLocation loc, const llvm::Twine &message,
               clang::SourceRange range = {});
  /// Says what the lifted code does that the user should know.
  void remark(clang::SourceLocation loc, const llvm::Twine &message,
              clang::SourceRange range = {});
  /// Points at a second place that explains the last error.
  void note(clang::SourceLocation loc, const llvm::Twine &message,
            clang::SourceRange range = {});

  /// Whether any error was reported, by clang or by the lifter.
  bool hasErrors() const { return engine.hasErrorOccurred(); }

private:
  void report(unsigned id, clang::SourceLocation loc,
              const llvm::Twine &message, clang::SourceRange range);

  clang::DiagnosticsEngine &engine;
  unsigned errorID;
  unsigned warningID;
  unsigned noteID;
  unsigned remarkID;
};

} // namespace stencil_lift

#endif // STENCIL_LIFT_LIFTDIAGNOSTICS_H
