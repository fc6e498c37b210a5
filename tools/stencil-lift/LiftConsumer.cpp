//===- LiftConsumer.cpp - Lifts the marked nests of a source --------------===//
//
// A pragma marks the statement that follows it in the same block; pragmas
// in included files are ignored (they belong to other translation units'
// sources). Nothing is written unless every nest lifted: a half-lifted file
// would leave the source and the .st file out of step.
//
//===----------------------------------------------------------------------===//

#include "LiftConsumer.h"
#include "HostCallWriter.h"
#include "NestLifter.h"
#include "StSyntax.h"
#include "StencilWriter.h"

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include <map>
#include <set>

using namespace stencil_lift;
using namespace clang;

namespace {

/// Finds, for each pragma, the statement after it and its function.
class PragmaTargets : public RecursiveASTVisitor<PragmaTargets> {
public:
  PragmaTargets(const SourceManager &sm,
                const std::vector<const StencilPragma *> &pragmas)
      : sm(sm), pragmas(pragmas), targets(pragmas.size()),
        functions(pragmas.size()) {}

  bool TraverseDecl(Decl *d) {
    auto *fd = dyn_cast_or_null<FunctionDecl>(d);
    const FunctionDecl *saved = function;
    if (fd)
      function = fd;
    bool ok = RecursiveASTVisitor::TraverseDecl(d);
    function = saved;
    return ok;
  }

  bool VisitCompoundStmt(CompoundStmt *cs) {
    for (size_t p = 0; p < pragmas.size(); ++p) {
      SourceLocation loc = pragmas[p]->loc;
      if (!before(cs->getLBracLoc(), loc) || !before(loc, cs->getRBracLoc()))
        continue;
      // The first statement after the pragma, unless the one before it
      // spans the pragma: then a deeper block holds it.
      const Stmt *prev = nullptr;
      for (const Stmt *s : cs->body()) {
        if (!before(begin(s), loc)) {
          bool spans = prev && before(loc, end(prev));
          if (!spans) {
            targets[p] = s;
            functions[p] = function;
          }
          break;
        }
        prev = s;
      }
    }
    return true;
  }

  std::vector<const Stmt *> &result() { return targets; }
  const FunctionDecl *functionOf(size_t p) const { return functions[p]; }

private:
  bool before(SourceLocation a, SourceLocation b) const {
    return sm.isBeforeInTranslationUnit(sm.getExpansionLoc(a),
                                        sm.getExpansionLoc(b));
  }
  SourceLocation begin(const Stmt *s) const { return s->getBeginLoc(); }
  SourceLocation end(const Stmt *s) const { return s->getEndLoc(); }

  const SourceManager &sm;
  const std::vector<const StencilPragma *> &pragmas;
  std::vector<const Stmt *> targets;
  std::vector<const FunctionDecl *> functions;
  const FunctionDecl *function = nullptr;
};

} // namespace

void LiftConsumer::HandleTranslationUnit(ASTContext &ctx) {
  const SourceManager &sm = ctx.getSourceManager();
  std::vector<const StencilPragma *> pragmas;
  for (const StencilPragma &p : pragmaList)
    if (sm.isInMainFile(sm.getExpansionLoc(p.loc)))
      pragmas.push_back(&p);
  output.pragmas = static_cast<unsigned>(pragmas.size());
  // A source clang rejects, or a malformed pragma: its errors come first.
  if (pragmas.empty() || diags.hasErrors())
    return;

  PragmaTargets finder(sm, pragmas);
  finder.TraverseDecl(ctx.getTranslationUnitDecl());
  // A marked nest inside another would be replaced twice: report the
  // inner pragma, and lift neither.
  std::vector<bool> skip(pragmas.size(), false);
  for (size_t p = 0; p < pragmas.size(); ++p)
    for (size_t q = 0; q < pragmas.size(); ++q) {
      const auto *outer = dyn_cast_or_null<ForStmt>(finder.result()[q]);
      if (q == p || !outer ||
          !sm.isBeforeInTranslationUnit(outer->getBeginLoc(),
                                        pragmas[p]->loc) ||
          !sm.isBeforeInTranslationUnit(pragmas[p]->loc, outer->getEndLoc()))
        continue;
      diags.error(pragmas[p]->loc, "'#pragma stencil' inside a loop nest "
                                   "that another '#pragma stencil' marks");
      skip[p] = skip[q] = true;
    }
  NestLifter lifter(ctx, diags);
  std::vector<LiftedStencil> stencils;
  std::set<std::string> usedNames;
  for (size_t p = 0; p < pragmas.size(); ++p) {
    const auto *loop = dyn_cast_or_null<ForStmt>(finder.result()[p]);
    if (!loop) {
      diags.error(pragmas[p]->loc,
                  "'#pragma stencil' must be followed by a for loop");
      continue;
    }
    if (skip[p])
      continue;
    const FunctionDecl *fd = finder.functionOf(p);
    if (fd && fd->isDependentContext()) {
      diags.error(pragmas[p]->loc,
                  "cannot lift a loop nest inside a template; move it into "
                  "a function of concrete types");
      continue;
    }
    std::string function =
        fd && fd->getIdentifier() ? fd->getName().str() : "lifted";
    // The stencil becomes a namespace of the rewritten source, beside the
    // function: it needs a name nothing in the file declares.
    std::string base = validStName(function + "_stencil");
    auto declared = [&](const std::string &n) {
      return usedNames.count(n) ||
             !ctx.getTranslationUnitDecl()->lookup(&ctx.Idents.get(n)).empty();
    };
    std::string name = base;
    for (int n = 2; declared(name); ++n)
      name = base + "_" + std::to_string(n);
    usedNames.insert(name);
    if (std::optional<LiftedStencil> s =
            lifter.lift(loop, *pragmas[p], name, function))
      stencils.push_back(std::move(*s));
  }
  if (diags.hasErrors())
    return;

  output.stencilText = StencilWriter(options.sourceName).write(stencils);

  Rewriter rewriter(ci.getSourceManager(), ctx.getLangOpts());
  HostCallWriter writer(options.stName);
  for (const LiftedStencil &s : stencils)
    rewriter.ReplaceText(
        CharSourceRange::getCharRange(s.replaceBegin, s.replaceEnd),
        writer.replacement(s));
  // After the last unconditional #include before the first nest, or at the
  // top of the file.
  FileID main = sm.getMainFileID();
  llvm::StringRef buffer = sm.getBufferData(main);
  size_t insertAt = 0;
  std::string prefix;
  for (SourceLocation inc : includeList) {
    if (!sm.isBeforeInTranslationUnit(inc, stencils.front().replaceBegin))
      break;
    size_t eol = buffer.find('\n', sm.getFileOffset(inc));
    insertAt = eol == llvm::StringRef::npos ? buffer.size() : eol + 1;
    prefix = eol == llvm::StringRef::npos ? "\n" : "";
  }
  rewriter.InsertTextBefore(sm.getLocForStartOfFile(main).getLocWithOffset(
                                static_cast<int>(insertAt)),
                            prefix + HostCallWriter::includes(options.header));
  const RewriteBuffer *rb = rewriter.getRewriteBufferFor(main);
  output.rewritten = std::string(rb->begin(), rb->end());
  output.lifted = true;
}
