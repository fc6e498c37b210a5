//===- SourceText.h - Source spelling of AST nodes --------------*- C++ -*-===//
//
// The lifter copies user expressions (loop bounds, the step count, scalar
// coefficients) into the rewritten code and into messages as they were
// written, so these helpers return the text of a node's range as the user
// spelled it, macro names included. The copied expressions are evaluated
// once instead of once per iteration, which is only the same when they have
// no side effects; mayHaveSideEffects says whether that is in doubt.
//
//===----------------------------------------------------------------------===//

#ifndef STENCIL_LIFT_SOURCETEXT_H
#define STENCIL_LIFT_SOURCETEXT_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"

#include <string>

namespace stencil_lift {

/// The text of `range` (token range) in the file, with macro uses spelled
/// as written.
std::string sourceText(clang::SourceRange range, const clang::ASTContext &ctx);
/// The text of a statement or expression.
std::string sourceText(const clang::Stmt *stmt, const clang::ASTContext &ctx);
/// Whether `text` is a plain identifier (needs no parentheses around it).
bool isIdentifier(const std::string &text);
/// `text` as one operand of a product: as it is where it is a number, an
/// identifier or one parenthesized expression, else in parentheses.
std::string asOperand(const std::string &text);
/// Whether evaluating `expr` may have side effects. Unlike
/// Expr::HasSideEffects, a call of a const member function (`u.size()`)
/// counts as free of them: the loop bounds of containers use those.
bool mayHaveSideEffects(const clang::Expr *expr, const clang::ASTContext &ctx);

} // namespace stencil_lift

#endif // STENCIL_LIFT_SOURCETEXT_H
