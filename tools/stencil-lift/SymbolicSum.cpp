//===- SymbolicSum.cpp - Integer sums of source expressions ---------------===//

#include "SymbolicSum.h"
#include "SourceText.h"

#include "clang/AST/Expr.h"
#include "clang/Lex/Lexer.h"

using namespace stencil_lift;

namespace {
/// Whether any part of `expr` comes from a macro expansion.
bool containsMacro(const clang::Stmt *stmt, const clang::SourceManager &sm) {
  if (stmt->getBeginLoc().isMacroID() || stmt->getEndLoc().isMacroID())
    return true;
  for (const clang::Stmt *child : stmt->children())
    if (child && containsMacro(child, sm))
      return true;
  return false;
}
} // namespace

SymbolicSum SymbolicSum::constant(int64_t value) {
  SymbolicSum s;
  s.value = value;
  return s;
}

SymbolicSum SymbolicSum::atom(const std::string &text) {
  SymbolicSum s;
  s.addAtom(text, 1);
  return s;
}

SymbolicSum SymbolicSum::fromExpr(const clang::Expr *expr,
                                  const clang::ASTContext &ctx) {
  expr = expr->IgnoreParenImpCasts();
  // A whole macro use (`N`, `TSTEPS`, PolyBench's `_PB_N`) stays the macro:
  // the rewritten source must follow the sizes it is built with, not the
  // values of the build that was lifted.
  const clang::SourceManager &sm = ctx.getSourceManager();
  clang::SourceLocation begin = expr->getBeginLoc(), end = expr->getEndLoc();
  if (begin.isMacroID() &&
      sm.getExpansionLoc(begin) == sm.getExpansionLoc(end) &&
      clang::Lexer::makeFileCharRange(
          clang::CharSourceRange::getTokenRange(expr->getSourceRange()), sm,
          ctx.getLangOpts())
          .isValid())
    return atom(sourceText(expr, ctx));
  clang::Expr::EvalResult result;
  if (!expr->isValueDependent() && expr->getType()->isIntegerType() &&
      !containsMacro(expr, sm) && expr->EvaluateAsInt(result, ctx))
    return constant(result.Val.getInt().getExtValue());
  if (const auto *bin = llvm::dyn_cast<clang::BinaryOperator>(expr)) {
    if (bin->getOpcode() == clang::BO_Add)
      return fromExpr(bin->getLHS(), ctx) + fromExpr(bin->getRHS(), ctx);
    if (bin->getOpcode() == clang::BO_Sub)
      return fromExpr(bin->getLHS(), ctx) - fromExpr(bin->getRHS(), ctx);
  }
  if (const auto *un = llvm::dyn_cast<clang::UnaryOperator>(expr)) {
    if (un->getOpcode() == clang::UO_Minus)
      return constant(0) - fromExpr(un->getSubExpr(), ctx);
    if (un->getOpcode() == clang::UO_Plus)
      return fromExpr(un->getSubExpr(), ctx);
  }
  return atom(sourceText(expr, ctx));
}

void SymbolicSum::addAtom(const std::string &text, int64_t coeff) {
  for (auto it = atoms.begin(); it != atoms.end(); ++it)
    if (it->first == text) {
      it->second += coeff;
      if (it->second == 0)
        atoms.erase(it);
      return;
    }
  if (coeff != 0)
    atoms.push_back({text, coeff});
}

SymbolicSum SymbolicSum::operator+(const SymbolicSum &other) const {
  SymbolicSum s = *this;
  for (const auto &[text, coeff] : other.atoms)
    s.addAtom(text, coeff);
  s.value += other.value;
  return s;
}

SymbolicSum SymbolicSum::operator-(const SymbolicSum &other) const {
  SymbolicSum s = *this;
  for (const auto &[text, coeff] : other.atoms)
    s.addAtom(text, -coeff);
  s.value -= other.value;
  return s;
}

SymbolicSum SymbolicSum::operator+(int64_t v) const {
  SymbolicSum s = *this;
  s.value += v;
  return s;
}

SymbolicSum SymbolicSum::operator-(int64_t v) const { return *this + (-v); }

bool SymbolicSum::operator==(const SymbolicSum &other) const {
  if (value != other.value || atoms.size() != other.atoms.size())
    return false;
  SymbolicSum diff = *this - other;
  return diff.atoms.empty() && diff.value == 0;
}

std::optional<int64_t> SymbolicSum::asConstant() const {
  if (!atoms.empty())
    return std::nullopt;
  return value;
}

std::string SymbolicSum::str() const {
  std::string out;
  unsigned terms = 0;
  for (const auto &[text, coeff] : atoms) {
    std::string t = isIdentifier(text) ? text : "(" + text + ")";
    int64_t mag = coeff < 0 ? -coeff : coeff;
    if (mag != 1)
      t = std::to_string(mag) + " * " + t;
    if (out.empty())
      out = coeff < 0 ? "-" + t : t;
    else
      out += (coeff < 0 ? " - " : " + ") + t;
    ++terms;
  }
  if (out.empty())
    return value < 0 ? "(" + std::to_string(value) + ")"
                     : std::to_string(value);
  if (value != 0) {
    out += (value < 0 ? " - " : " + ") +
           std::to_string(value < 0 ? -value : value);
    ++terms;
  }
  return terms == 1 && out[0] != '-' ? out : "(" + out + ")";
}
