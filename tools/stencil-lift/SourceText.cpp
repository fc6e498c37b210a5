//===- SourceText.cpp - Source spelling of AST nodes ----------------------===//

#include "SourceText.h"

#include "clang/AST/ExprCXX.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace stencil_lift;

std::string stencil_lift::sourceText(clang::SourceRange range,
                                     const clang::ASTContext &ctx) {
  const clang::SourceManager &sm = ctx.getSourceManager();
  // A range inside a macro expansion is spelled by the macro use itself.
  clang::CharSourceRange chars = sm.getExpansionRange(range);
  return clang::Lexer::getSourceText(chars, sm, ctx.getLangOpts()).str();
}

std::string stencil_lift::sourceText(const clang::Stmt *stmt,
                                     const clang::ASTContext &ctx) {
  return sourceText(stmt->getSourceRange(), ctx);
}

bool stencil_lift::isIdentifier(const std::string &text) {
  if (text.empty() || llvm::isDigit(text[0]))
    return false;
  for (char c : text)
    if (!llvm::isAlnum(c) && c != '_')
      return false;
  return true;
}

/// Whether the whole of `text` is one parenthesized expression.
static bool isParenthesized(const std::string &text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    return false;
  int depth = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
    if (depth == 0)
      return false;
  }
  return true;
}

std::string stencil_lift::asOperand(const std::string &text) {
  bool number = !text.empty() && llvm::all_of(text, llvm::isDigit);
  return number || isIdentifier(text) || isParenthesized(text)
             ? text
             : "(" + text + ")";
}

bool stencil_lift::mayHaveSideEffects(const clang::Expr *expr,
                                      const clang::ASTContext &ctx) {
  if (const auto *call = llvm::dyn_cast<clang::CXXMemberCallExpr>(expr)) {
    const clang::CXXMethodDecl *method = call->getMethodDecl();
    if (!method || !method->isConst())
      return true;
    for (const clang::Stmt *child : call->children())
      if (const auto *e = llvm::dyn_cast_or_null<clang::Expr>(child))
        if (e != call->getCallee() && mayHaveSideEffects(e, ctx))
          return true;
    return mayHaveSideEffects(call->getImplicitObjectArgument(), ctx);
  }
  if (llvm::isa<clang::CallExpr>(expr))
    return expr->HasSideEffects(ctx);
  // Look at the children one by one, so that a const call deep inside is
  // judged by the rule above.
  if (expr->HasSideEffects(ctx, /*IncludePossibleEffects=*/false))
    return true;
  for (const clang::Stmt *child : expr->children())
    if (const auto *e = llvm::dyn_cast_or_null<clang::Expr>(child))
      if (mayHaveSideEffects(e, ctx))
        return true;
  return false;
}
