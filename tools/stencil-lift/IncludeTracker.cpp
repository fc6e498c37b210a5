//===- IncludeTracker.cpp - Where the rewrite may add an #include ---------===//

#include "IncludeTracker.h"

using namespace stencil_lift;

void IncludeTracker::InclusionDirective(
    clang::SourceLocation hashLoc, const clang::Token &, llvm::StringRef, bool,
    clang::CharSourceRange, const clang::FileEntry *, llvm::StringRef,
    llvm::StringRef, const clang::Module *, clang::SrcMgr::CharacteristicKind) {
  if (depth == 0 && sm.isInMainFile(hashLoc))
    includes.push_back(hashLoc);
}

void IncludeTracker::If(clang::SourceLocation loc, clang::SourceRange,
                        ConditionValueKind) {
  if (sm.isInMainFile(loc))
    ++depth;
}

void IncludeTracker::Ifdef(clang::SourceLocation loc, const clang::Token &,
                           const clang::MacroDefinition &) {
  if (sm.isInMainFile(loc))
    ++depth;
}

void IncludeTracker::Ifndef(clang::SourceLocation loc, const clang::Token &,
                            const clang::MacroDefinition &) {
  if (sm.isInMainFile(loc))
    ++depth;
}

void IncludeTracker::Endif(clang::SourceLocation loc, clang::SourceLocation) {
  if (sm.isInMainFile(loc))
    --depth;
}
