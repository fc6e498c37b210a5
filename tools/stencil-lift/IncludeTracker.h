//===- IncludeTracker.h - Where the rewrite may add an #include -*- C++ -*-===//
//
// The rewritten source must see the generated header before the first
// lifted nest. The tracker records the #include lines of the main file that
// are outside any #if, so the new include can go right after the last of
// them that comes before the first nest: never into a conditional block
// (such as a test harness at the end of the file) that may be compiled out.
//
//===----------------------------------------------------------------------===//

#ifndef STENCIL_LIFT_INCLUDETRACKER_H
#define STENCIL_LIFT_INCLUDETRACKER_H

#include "clang/Basic/SourceManager.h"
#include "clang/Lex/PPCallbacks.h"

#include <vector>

namespace stencil_lift {

/// Records the unconditional #include directives of the main file.
class IncludeTracker : public clang::PPCallbacks {
public:
  IncludeTracker(const clang::SourceManager &sm,
                 std::vector<clang::SourceLocation> &includes)
      : sm(sm), includes(includes) {}

  void InclusionDirective(clang::SourceLocation hashLoc,
                          const clang::Token &includeTok,
                          llvm::StringRef fileName, bool isAngled,
                          clang::CharSourceRange filenameRange,
                          const clang::FileEntry *file,
                          llvm::StringRef searchPath,
                          llvm::StringRef relativePath,
                          const clang::Module *imported,
                          clang::SrcMgr::CharacteristicKind fileType) override;
  void If(clang::SourceLocation loc, clang::SourceRange conditionRange,
          ConditionValueKind conditionValue) override;
  void Ifdef(clang::SourceLocation loc, const clang::Token &macroNameTok,
             const clang::MacroDefinition &md) override;
  void Ifndef(clang::SourceLocation loc, const clang::Token &macroNameTok,
              const clang::MacroDefinition &md) override;
  void Endif(clang::SourceLocation loc, clang::SourceLocation ifLoc) override;

private:
  const clang::SourceManager &sm;
  std::vector<clang::SourceLocation> &includes;
  int depth = 0; ///< #if nesting in the main file.
};

} // namespace stencil_lift

#endif // STENCIL_LIFT_INCLUDETRACKER_H
