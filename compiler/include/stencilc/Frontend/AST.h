//===- AST.h - Syntax tree of the stencil language --------------*- C++ -*-===//
//
// The parser's output: what the user wrote, with locations, before names are
// resolved. Sema lowers it to the Stencil IR. `--emit=ast` prints it.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_FRONTEND_AST_H
#define STENCILC_FRONTEND_AST_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stencilc::ast {

/// A name with the place it was written.
struct Name {
  std::string text;
  llvm::SMLoc loc;
};

enum class ExprKind {
  Number,      ///< 1, 0.25, 1e-3
  Ref,         ///< alpha, u (a grid name alone reads the centre point)
  Index,       ///< u[-1, 0]
  Unary,       ///< -x, !c
  Binary,      ///< x + y, x - y, x * y, x / y, x < y, c && d, ...
  Call,        ///< min(a, b), box(u, 1, [...])
  List,        ///< [a, b, c], only as a weight table
  Conditional, ///< c ? a : b
};

/// The source spelling of a Unary or Binary operator code: the one-character
/// operators are themselves; 'l' is <=, 'g' >=, 'e' ==, 'n' !=, '&' && and
/// '|' ||.
llvm::StringRef opSpelling(char op);

struct Offset {
  int64_t value = 0;
  std::string text; ///< As written, for messages.
  llvm::SMLoc loc;
};

struct Expr {
  ExprKind kind;
  llvm::SMLoc loc;
  // Number.
  double number = 0;
  bool isInteger = false;
  std::string spelling;
  // Ref, Index, Call.
  std::string name;
  std::vector<Offset> offsets;
  /// Ref, Index: `u'`, the new value of a grid updated earlier in the step.
  bool prime = false;
  // Unary and Binary operator code (opSpelling).
  char op = 0;
  // Unary (1), Binary (2), Conditional (3), Call arguments, List elements.
  std::vector<std::unique_ptr<Expr>> args;

  Expr(ExprKind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
};

using ExprPtr = std::unique_ptr<Expr>;

struct TypeRef {
  Name name;
  int64_t dims = 0; ///< Only for grids: the number in `f32[2]`.
  std::string dimsText;
  llvm::SMLoc dimsLoc;
};

/// One axis of a boundary declaration: `dirichlet(0.0)`, `periodic`, ...,
/// or a pair `(low, high)` of two such conditions, one per side.
struct BoundarySpec {
  Name kind; ///< For a pair, its '(' (text empty).
  std::vector<ExprPtr> args;
  bool hasParens = false;
  std::vector<BoundarySpec> pair; ///< Two entries for a pair, else none.
};

enum class DeclKind { Grid, Param, Boundary, Hint, Let, Stage, Update };

struct Decl {
  DeclKind kind;
  llvm::SMLoc loc;
  /// Grid names, the boundary's grids, or the single declared name.
  std::vector<Name> names;
  TypeRef type;                    ///< Grid, Param.
  std::vector<BoundarySpec> specs; ///< Boundary.
  ExprPtr value; ///< Param default, hint value, let, stage, update.

  Decl(DeclKind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
};

struct StencilDecl {
  Name name;
  llvm::SMLoc loc;
  std::vector<Decl> decls;
};

struct Module {
  std::vector<StencilDecl> stencils;
  llvm::SMLoc endLoc;
};

/// Prints the tree as indented S-expressions (the `--emit=ast` format).
void print(const Module &module, llvm::raw_ostream &os);

} // namespace stencilc::ast

#endif // STENCILC_FRONTEND_AST_H
