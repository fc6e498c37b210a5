//===- Diagnostics.h - Located user diagnostics -----------------*- C++ -*-===//
//
// Every user mistake is reported through a DiagnosticEngine owned by the
// compilation, printed by llvm::SourceMgr as `file:line:col: error: message`
// with the source line and a caret. No diagnostic state lives in globals, and
// the library never exits: passes return failure, the driver picks the exit
// code.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_SUPPORT_DIAGNOSTICS_H
#define STENCILC_SUPPORT_DIAGNOSTICS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace stencilc {

/// Collects and prints diagnostics against the buffers of one SourceMgr.
class DiagnosticEngine {
public:
  explicit DiagnosticEngine(llvm::SourceMgr &sourceMgr,
                            llvm::raw_ostream &os = llvm::errs())
      : sourceMgr(sourceMgr), os(os) {}

  /// Reports a user error at `loc`. After `kMaxErrors` errors, further ones
  /// are counted but not printed.
  void error(llvm::SMLoc loc, const llvm::Twine &msg,
             llvm::ArrayRef<llvm::SMRange> ranges = {});
  void warning(llvm::SMLoc loc, const llvm::Twine &msg);
  void note(llvm::SMLoc loc, const llvm::Twine &msg);
  /// Reports an error that has no source location (a file that cannot be
  /// read, a bad command-line value).
  void error(const llvm::Twine &msg);

  /// The program name that prefixes errors without a location.
  void setToolName(llvm::StringRef name) { toolName = name.str(); }

  bool hasErrors() const { return numErrors != 0; }
  unsigned errorCount() const { return numErrors; }
  llvm::SourceMgr &getSourceMgr() { return sourceMgr; }

  static constexpr unsigned kMaxErrors = 20;

private:
  llvm::SourceMgr &sourceMgr;
  llvm::raw_ostream &os;
  unsigned numErrors = 0;
  bool suppressNotes = false;
  std::string toolName = "stencilc";
};

/// Returns the candidate closest to `name` by edit distance, or an empty
/// string when none is close enough to be a plausible typo.
llvm::StringRef closestMatch(llvm::StringRef name,
                             llvm::ArrayRef<llvm::StringRef> candidates);

} // namespace stencilc

#endif // STENCILC_SUPPORT_DIAGNOSTICS_H
