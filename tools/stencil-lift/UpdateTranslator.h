//===- UpdateTranslator.h - C++ update expressions to .st -------*- C++ -*-===//
//
// Translates the right-hand sides and local constants of the innermost loop
// body into .st expressions, and reads every array access as a grid read at
// a constant offset from the loop point. It is where the "why not"
// questions are answered at the exact subexpression: an index that loads
// from memory (data-dependent), one that moves with something other than a
// loop counter (non-constant offset), a call that may have side effects, a
// read of the buffer being written (aliasing write).
//
// The translation keeps the C++ expression tree as it is: the same operands
// in the same order and the same parentheses. The CPU interpreter evaluates
// a .st update in the order of its expression, so a double loop and its
// lifted stencil agree bit for bit, and a float loop does as long as its
// constants are float too (0.5f; 0.5 makes C++ compute in double).
//
//===----------------------------------------------------------------------===//

#ifndef STENCIL_LIFT_UPDATETRANSLATOR_H
#define STENCIL_LIFT_UPDATETRANSLATOR_H

#include "AffineIndex.h"
#include "LiftDiagnostics.h"
#include "LiftedStencil.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"

#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace stencil_lift {

/// What the translator knows about the loop nest around an expression.
struct NestScope {
  unsigned dims = 0;
  /// Spatial loop counters and their axis, slowest first.
  std::map<const clang::VarDecl *, int> counters;
  std::vector<std::string> counterNames;
  /// Variables whose value changes while the time loop runs: its counter,
  /// the loop counters, whatever the loop assigns.
  std::set<const clang::VarDecl *> changing;
  /// Integer locals of the innermost body (`int c = i * nx + j;`): indices
  /// see through them.
  std::map<const clang::VarDecl *, const clang::Expr *> indexLets;
  /// The arrays the nest writes, and where.
  std::map<const clang::VarDecl *, const clang::Expr *> written;
  /// Whether the stencil computes in float (f32 grids): decides how
  /// literals print.
  bool computeFloat = false;
};

/// One array access: which array, at which offset from the loop point.
struct ArrayAccess {
  const clang::VarDecl *array = nullptr;
  const clang::Expr *expr = nullptr;
  std::array<int64_t, 3> offset{0, 0, 0};
  unsigned subscripts = 1;
  std::string rowPitch, slicePitch;
  /// For C arrays, the pitches' values in this build: two arrays of one
  /// shape have one layout though their pitches are spelled by their names.
  int64_t rowCount = 0, sliceCount = 0;
  std::string cType; ///< float or double
};

/// The layout of a grid's host array, the same for all its accesses.
struct ArrayLayout {
  unsigned subscripts = 1;
  std::string rowPitch, slicePitch;
  int64_t rowCount = 0, sliceCount = 0;
  const clang::Expr *firstAccess = nullptr;
};

/// Translates expressions of one nest; stops at the first error.
class UpdateTranslator {
public:
  UpdateTranslator(clang::ASTContext &ctx, LiftDiagnostics &diags,
                   const NestScope &scope)
      : ctx(ctx), diags(diags), scope(scope) {}

  /// Reads `expr` (an array subscript) as an access; reports and returns
  /// nothing when it is not one the lifter can map onto the grid.
  std::optional<ArrayAccess> analyzeAccess(const clang::Expr *expr);

  /// Translates a floating-point expression into .st text. Grid reads are
  /// recorded (see takeReads); on error, reports and returns nothing.
  std::optional<std::string> translate(const clang::Expr *expr);

  /// The reads recorded since the last call, lets' reads included.
  std::vector<ArrayAccess> takeReads();

  /// Declares a floating local as a let, with the reads of its value.
  std::string defineLet(const clang::VarDecl *var,
                        std::vector<ArrayAccess> reads);

  /// Makes `array` a grid (if it is not one yet) and returns its name;
  /// grids are declared in the order they are first met.
  std::string registerGrid(const clang::VarDecl *array);

  const std::vector<const clang::VarDecl *> &grids() const { return gridOrder; }
  const std::vector<LiftedParam> &params() const { return paramList; }
  std::string gridName(const clang::VarDecl *array) const;
  /// The host layout recorded for `array` (its first access), if any.
  const ArrayLayout *layout(const clang::VarDecl *array) const;
  /// Checks that `access` has the layout recorded for `owner` (the grid it
  /// belongs to); reports the difference at the access.
  bool checkLayout(const clang::VarDecl *owner, const ArrayAccess &access);

private:
  std::optional<std::string> translateScalar(const clang::DeclRefExpr *ref,
                                             const clang::VarDecl *var);
  std::optional<std::string> translateCall(const clang::CallExpr *call);
  std::optional<std::string> translateRead(const clang::Expr *expr);
  std::optional<std::string>
  paramRef(const std::string &key, const std::string &cName,
           const std::string &value, clang::QualType type,
           const clang::Expr *init, const clang::Expr *at);
  std::optional<AffineIndex> buildIndex(const clang::Expr *expr,
                                        const std::string &array);
  bool mapSubscripts(const std::vector<AffineIndex> &indices,
                     const std::vector<const clang::Expr *> &exprs,
                     ArrayAccess &access, const std::string &array);
  bool mapLinear(const AffineIndex &index, const clang::Expr *expr,
                 ArrayAccess &access, const std::string &array);
  /// A name for the .st file: the C++ name, or a variant where that one is
  /// reserved or taken.
  std::string uniqueName(const std::string &key, const std::string &cName);
  bool unsupported(const clang::Expr *expr);

  clang::ASTContext &ctx;
  LiftDiagnostics &diags;
  const NestScope &scope;

  std::vector<ArrayAccess> reads;
  std::map<const clang::VarDecl *, std::string> lets;
  std::map<const clang::VarDecl *, std::vector<ArrayAccess>> letReads;
  std::vector<const clang::VarDecl *> gridOrder;
  std::map<const clang::VarDecl *, ArrayLayout> layouts;
  std::string firstType;
  const clang::Expr *firstTypeAccess = nullptr;
  std::vector<LiftedParam> paramList;
  std::map<std::string, std::string> names; ///< key -> .st name
  std::set<std::string> taken;
};

} // namespace stencil_lift

#endif // STENCIL_LIFT_UPDATETRANSLATOR_H
