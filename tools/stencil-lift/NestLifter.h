//===- NestLifter.h - Lifts one marked loop nest ----------------*- C++ -*-===//
//
// A liftable nest has the shape
//
//   #pragma stencil [clauses]
//   for (t = ...; t < T; ++t) {                 // the time loop
//     for (int i = lo0; i < hi0; ++i)           // 1 to 3 spatial loops,
//       for (int j = lo1; j < hi1; ++j) {       //   slowest axis outermost
//         double lap = u[i][j-1] + u[i][j+1];   // local constants (lets)
//         unew[i][j] = u[i][j] + c * lap;       // one write per grid
//       }
//     std::swap(u, unew);                       // or a.swap(b), or the
//   }                                           // tmp = a; a = b; b = tmp;
//                                               // triple, or a copy-back nest
//
// NestLifter checks that shape, hands the expressions to UpdateTranslator,
// and works out what the issue calls the semantics of a naive loop: the
// points outside the loop's range are never written, so without a boundary
// clause they are the language's `fixed` band, as wide as the stencil's
// reach; with a clause the range is the grid itself and the clause says
// what lies around it.
//
//===----------------------------------------------------------------------===//

#ifndef STENCIL_LIFT_NESTLIFTER_H
#define STENCIL_LIFT_NESTLIFTER_H

#include "LiftDiagnostics.h"
#include "LiftedStencil.h"
#include "StencilPragmaHandler.h"
#include "UpdateTranslator.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Stmt.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace stencil_lift {

/// Turns one `#pragma stencil` loop nest into a LiftedStencil.
class NestLifter {
public:
  NestLifter(clang::ASTContext &ctx, LiftDiagnostics &diags)
      : ctx(ctx), diags(diags) {}

  /// Lifts the time loop `loop` that `pragma` marks into stencil `name`;
  /// reports why it cannot and returns nothing otherwise.
  std::optional<LiftedStencil> lift(const clang::ForStmt *loop,
                                    const StencilPragma &pragma,
                                    const std::string &name,
                                    const std::string &function);

private:
  /// for (int i = lo; i < hi; ++i), read as [lo, hi).
  struct CountedLoop {
    const clang::ForStmt *loop = nullptr;
    const clang::VarDecl *counter = nullptr;
    const clang::Expr *loExpr = nullptr, *hiExpr = nullptr;
    SymbolicSum lo, hi;
  };
  enum class LoopForm { Counted, NotCounted, SideEffects };
  /// A swap or copy-back of two buffers; `a`, `b` unordered for a swap, and
  /// (destination, source) for a copy-back.
  struct BufferPair {
    const clang::VarDecl *a = nullptr, *b = nullptr;
    const clang::Stmt *stmt = nullptr;
  };

  LoopForm countedLoop(const clang::ForStmt *loop, CountedLoop &out,
                       const clang::Expr *&sideEffect);
  bool spatialNest(const clang::ForStmt *outer, std::vector<CountedLoop> &loops,
                   std::vector<const clang::Stmt *> &body);
  bool exchange(llvm::ArrayRef<const clang::Stmt *> stmts,
                const std::vector<CountedLoop> &nest, LiftedStencil &out,
                std::vector<BufferPair> &pairs);
  /// Checks that the second nest of a two-sweep time loop is the first
  /// (`nest`, `body`) with its arrays exchanged; pairs the arrays.
  bool secondSweep(const clang::ForStmt *loop,
                   const std::vector<CountedLoop> &nest,
                   const std::vector<const clang::Stmt *> &body,
                   std::vector<BufferPair> &pairs);
  bool copyBack(const clang::ForStmt *loop,
                const std::vector<CountedLoop> &nest,
                std::vector<BufferPair> &pairs);
  void collectChanging(const clang::Stmt *stmt, NestScope &scope);

  clang::ASTContext &ctx;
  LiftDiagnostics &diags;
  /// The variables the current time loop changes.
  std::set<const clang::VarDecl *> changing;
};

} // namespace stencil_lift

#endif // STENCIL_LIFT_NESTLIFTER_H
