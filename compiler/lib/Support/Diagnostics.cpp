//===- Diagnostics.cpp - Located user diagnostics -------------------------===//

#include "stencilc/Support/Diagnostics.h"

using namespace stencilc;

void DiagnosticEngine::error(llvm::SMLoc loc, const llvm::Twine &msg,
                             llvm::ArrayRef<llvm::SMRange> ranges) {
  ++numErrors;
  if (numErrors > kMaxErrors) {
    suppressNotes = true;
    if (numErrors == kMaxErrors + 1)
      os << toolName << ": error: too many errors emitted, stopping now\n";
    return;
  }
  suppressNotes = false;
  sourceMgr.PrintMessage(os, loc, llvm::SourceMgr::DK_Error, msg, ranges);
}

void DiagnosticEngine::warning(llvm::SMLoc loc, const llvm::Twine &msg) {
  sourceMgr.PrintMessage(os, loc, llvm::SourceMgr::DK_Warning, msg);
}

void DiagnosticEngine::note(llvm::SMLoc loc, const llvm::Twine &msg) {
  if (!suppressNotes)
    sourceMgr.PrintMessage(os, loc, llvm::SourceMgr::DK_Note, msg);
}

void DiagnosticEngine::error(const llvm::Twine &msg) {
  ++numErrors;
  os << toolName << ": error: " << msg << "\n";
}

llvm::StringRef
stencilc::closestMatch(llvm::StringRef name,
                       llvm::ArrayRef<llvm::StringRef> candidates) {
  llvm::StringRef best;
  unsigned bestDist = ~0u;
  // A typo (a transposition counts two) changes at most about a third of a
  // name; very short names get one edit.
  unsigned limit =
      name.size() <= 3 ? 1 : std::max<unsigned>(2, name.size() / 3);
  for (llvm::StringRef c : candidates) {
    unsigned d = name.edit_distance(c, /*AllowReplacements=*/true, limit);
    if (d <= limit && d < bestDist) {
      best = c;
      bestDist = d;
    }
  }
  return best;
}
