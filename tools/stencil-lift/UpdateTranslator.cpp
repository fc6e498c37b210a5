//===- UpdateTranslator.cpp - C++ update expressions to .st ---------------===//
//
// Every rejection names the array and the subexpression at fault, at that
// subexpression's location, because the user has to rewrite exactly that
// piece of the loop.
//
//===----------------------------------------------------------------------===//

#include "UpdateTranslator.h"
#include "SourceText.h"
#include "StSyntax.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/TypeLoc.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>

using namespace stencil_lift;
using namespace clang;

namespace {

/// Whether `stmt` refers to any variable that `pred` accepts.
template <typename Pred> bool mentions(const Stmt *stmt, Pred pred) {
  if (!stmt)
    return false;
  if (const auto *ref = dyn_cast<DeclRefExpr>(stmt))
    if (const auto *var = dyn_cast<VarDecl>(ref->getDecl()))
      if (pred(var))
        return true;
  for (const Stmt *child : stmt->children())
    if (mentions(child, pred))
      return true;
  return false;
}

/// The text of an integer constant, parenthesized when negative.
std::string intText(int64_t v) {
  return v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
}

/// A number as .st text, parenthesized when negative.
std::string numberText(double v, bool asFloat) {
  std::string s = formatNumber(v, asFloat);
  return s[0] == '-' ? "(" + s + ")" : s;
}

bool isFloatType(QualType t) {
  return t->isSpecificBuiltinType(BuiltinType::Float);
}

/// The value of a constant floating or integer expression, if it is one.
std::optional<double> constantValue(const Expr *e, const ASTContext &ctx) {
  if (e->isValueDependent())
    return std::nullopt;
  if (e->getType()->isIntegerType()) {
    Expr::EvalResult r;
    if (e->EvaluateAsInt(r, ctx))
      return static_cast<double>(r.Val.getInt().getExtValue());
    return std::nullopt;
  }
  llvm::APFloat f(0.0);
  if (e->getType()->isRealFloatingType() && e->EvaluateAsFloat(f, ctx)) {
    bool lost = false;
    f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    double v = f.convertToDouble();
    if (std::isfinite(v))
      return v;
  }
  return std::nullopt;
}

} // namespace

std::string UpdateTranslator::uniqueName(const std::string &key,
                                         const std::string &cName) {
  auto it = names.find(key);
  if (it != names.end())
    return it->second;
  std::string base = validStName(cName);
  std::string name = base;
  for (int n = 2; taken.count(name); ++n)
    name = base + "_" + std::to_string(n);
  taken.insert(name);
  names[key] = name;
  return name;
}

static std::string keyOf(const VarDecl *var) {
  return "var:" + std::to_string(reinterpret_cast<uintptr_t>(var));
}

std::string UpdateTranslator::registerGrid(const VarDecl *array) {
  if (!llvm::is_contained(gridOrder, array))
    gridOrder.push_back(array);
  return uniqueName(keyOf(array), array->getName().str());
}

/// The extents of the first `k` levels of `var`'s declared array type as
/// the source spells them, outermost first (a pointer to rows or a decayed
/// parameter has no first extent: its entry is empty); nothing where a
/// level's extent is not written as a whole expression of the file.
static std::vector<std::string> writtenExtents(const VarDecl *var, unsigned k,
                                               const ASTContext &ctx) {
  std::vector<std::string> out;
  const TypeSourceInfo *tsi = var->getTypeSourceInfo();
  if (!tsi)
    return {};
  const SourceManager &sm = ctx.getSourceManager();
  TypeLoc tl = tsi->getTypeLoc();
  while (out.size() < k) {
    tl = tl.getUnqualifiedLoc();
    if (auto p = tl.getAs<ParenTypeLoc>()) {
      tl = p.getInnerLoc();
    } else if (auto d = tl.getAs<DecayedTypeLoc>()) {
      tl = d.getOriginalLoc();
    } else if (auto ptr = tl.getAs<PointerTypeLoc>()) {
      if (!out.empty())
        return {};
      out.push_back("");
      tl = ptr.getPointeeLoc();
    } else if (auto arr = tl.getAs<ArrayTypeLoc>()) {
      const Expr *size = arr.getSizeExpr();
      std::string text;
      if (size) {
        CharSourceRange range = Lexer::makeFileCharRange(
            CharSourceRange::getTokenRange(size->getSourceRange()), sm,
            ctx.getLangOpts());
        if (range.isValid())
          text = Lexer::getSourceText(range, sm, ctx.getLangOpts()).str();
      }
      // Only the outermost extent may be missing: it is not a pitch.
      if (text.empty() && !out.empty())
        return {};
      out.push_back(text);
      tl = arr.getElementLoc();
    } else {
      return {};
    }
  }
  return out;
}

std::string UpdateTranslator::gridName(const VarDecl *array) const {
  auto it = names.find(keyOf(array));
  return it == names.end() ? array->getName().str() : it->second;
}

const ArrayLayout *UpdateTranslator::layout(const VarDecl *array) const {
  auto it = layouts.find(array);
  return it == layouts.end() ? nullptr : &it->second;
}

std::string UpdateTranslator::defineLet(const VarDecl *var,
                                        std::vector<ArrayAccess> letReadList) {
  std::string name = uniqueName(keyOf(var), var->getName().str());
  lets[var] = name;
  letReads[var] = std::move(letReadList);
  return name;
}

std::vector<ArrayAccess> UpdateTranslator::takeReads() {
  std::vector<ArrayAccess> out;
  out.swap(reads);
  return out;
}

bool UpdateTranslator::unsupported(const Expr *expr) {
  diags.error(expr->getExprLoc(),
              "cannot lift this expression; a stencil update uses + - * /, "
              "sqrt, fabs, fmin, fmax, std::min, std::max, pow, constants "
              "and scalar variables",
              expr->getSourceRange());
  return false;
}

bool UpdateTranslator::checkLayout(const VarDecl *owner,
                                   const ArrayAccess &access) {
  auto [it, inserted] = layouts.try_emplace(owner);
  ArrayLayout &l = it->second;
  if (inserted) {
    l.subscripts = access.subscripts;
    l.rowPitch = access.rowPitch;
    l.slicePitch = access.slicePitch;
    l.rowCount = access.rowCount;
    l.sliceCount = access.sliceCount;
    l.firstAccess = access.expr;
    return true;
  }
  std::string what;
  if (l.subscripts != access.subscripts)
    what = std::to_string(access.subscripts) + " subscripts here, " +
           std::to_string(l.subscripts) + " before";
  else if (l.rowCount != 0 && access.rowCount != 0
               ? l.rowCount != access.rowCount
               : l.rowPitch != access.rowPitch)
    what =
        "row pitch '" + access.rowPitch + "' here, '" + l.rowPitch + "' before";
  else if (l.sliceCount != 0 && access.sliceCount != 0
               ? l.sliceCount != access.sliceCount
               : l.slicePitch != access.slicePitch)
    what = "slice pitch '" + access.slicePitch + "' here, '" + l.slicePitch +
           "' before";
  if (what.empty())
    return true;
  diags.error(access.expr->getExprLoc(),
              "the layout of '" + access.array->getName() +
                  "' differs between its accesses: " + what,
              access.expr->getSourceRange());
  diags.note(l.firstAccess->getExprLoc(), "the earlier access is here");
  return false;
}

//===----------------------------------------------------------------------===//
// Accesses
//===----------------------------------------------------------------------===//

std::optional<ArrayAccess> UpdateTranslator::analyzeAccess(const Expr *expr) {
  std::vector<const Expr *> indexExprs;
  std::vector<QualType> rowTypes; // the types of u[i], u[i][j], ...
  const Expr *e = expr->IgnoreParenImpCasts();
  auto subscriptOf = [](const Expr *x, const Expr *&base) -> const Expr * {
    if (const auto *ase = dyn_cast<ArraySubscriptExpr>(x)) {
      base = ase->getBase()->IgnoreParenImpCasts();
      return ase->getIdx();
    }
    if (const auto *op = dyn_cast<CXXOperatorCallExpr>(x))
      if (op->getOperator() == OO_Subscript && op->getNumArgs() == 2) {
        base = op->getArg(0)->IgnoreParenImpCasts();
        return op->getArg(1);
      }
    return nullptr;
  };
  const Expr *base = nullptr;
  while (const Expr *idx = subscriptOf(e, base)) {
    indexExprs.push_back(idx);
    const Expr *dummy = nullptr;
    if (subscriptOf(base, dummy))
      rowTypes.push_back(base->getType());
    e = base;
  }
  std::reverse(indexExprs.begin(), indexExprs.end());
  std::reverse(rowTypes.begin(), rowTypes.end());

  const auto *ref = dyn_cast<DeclRefExpr>(e);
  const auto *var = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
  if (!var) {
    diags.error(e->getExprLoc(),
                "arrays must be named variables; cannot lift the access "
                "through '" +
                    sourceText(e, ctx) + "'",
                e->getSourceRange());
    return std::nullopt;
  }
  std::string name = var->getName().str();
  for (QualType row : rowTypes)
    if (!isa<ConstantArrayType>(row.getCanonicalType())) {
      diags.error(expr->getExprLoc(),
                  "the rows of '" + name +
                      "' are not contiguous (a vector of vectors or a "
                      "pointer to pointers); use one flat array with "
                      "linearized indices",
                  expr->getSourceRange());
      return std::nullopt;
    }
  QualType elem = expr->getType().getCanonicalType().getUnqualifiedType();
  std::string cType;
  if (elem->isSpecificBuiltinType(BuiltinType::Float))
    cType = "float";
  else if (elem->isSpecificBuiltinType(BuiltinType::Double))
    cType = "double";
  if (cType.empty()) {
    diags.error(expr->getExprLoc(),
                "'" + name + "' holds '" +
                    expr->getType().getUnqualifiedType().getAsString() +
                    "'; a stencil's arrays hold float or double",
                expr->getSourceRange());
    return std::nullopt;
  }
  if (firstType.empty()) {
    firstType = cType;
    firstTypeAccess = expr;
  } else if (firstType != cType) {
    std::string other = sourceText(firstTypeAccess->IgnoreParenImpCasts(), ctx);
    std::string otherName = other.substr(0, other.find('['));
    diags.error(expr->getExprLoc(),
                "'" + name + "' holds '" + cType + "' but '" + otherName +
                    "' holds '" + firstType +
                    "'; all arrays of a stencil share one element type",
                expr->getSourceRange());
    return std::nullopt;
  }

  ArrayAccess access;
  access.array = var;
  access.expr = expr;
  access.cType = cType;
  access.subscripts = static_cast<unsigned>(indexExprs.size());
  unsigned k = access.subscripts;
  if (k != 1 && k != scope.dims) {
    diags.error(expr->getExprLoc(),
                "cannot map the index of '" + name + "' onto the " +
                    std::to_string(scope.dims) +
                    "-D nest: use one subscript per axis, or one linearized "
                    "index such as i * pitch + j",
                expr->getSourceRange());
    return std::nullopt;
  }
  std::vector<AffineIndex> indices;
  for (const Expr *idx : indexExprs) {
    std::optional<AffineIndex> a = buildIndex(idx, name);
    if (!a)
      return std::nullopt;
    indices.push_back(*a);
  }
  if (k == scope.dims) {
    if (!mapSubscripts(indices, indexExprs, access, name))
      return std::nullopt;
    // The pitches as the declaration spells them (`N`, `NY * NZ`), so that
    // the rewritten source follows the sizes it is built with; where a
    // macro writes the whole declarator (PolyBench's POLYBENCH_2D), as
    // sizeof A[0] / sizeof A[0][0], which the compiler evaluates just so.
    std::vector<std::string> extents = writtenExtents(var, k, ctx);
    std::string zeros = name;
    std::vector<std::string> sub; // name[0], name[0][0], ...
    for (unsigned i = 0; i < k; ++i)
      sub.push_back(zeros += "[0]");
    auto bySizeof = [&](unsigned level) {
      return "(sizeof " + sub[level] + " / sizeof " + sub[k - 1] + ")";
    };
    if (k >= 2) {
      access.rowCount = ctx.getConstantArrayElementCount(
          cast<ConstantArrayType>(rowTypes.back().getCanonicalType()));
      access.rowPitch = extents.empty() ? bySizeof(k - 2) : extents[k - 1];
    }
    if (k == 3) {
      access.sliceCount = ctx.getConstantArrayElementCount(
          cast<ConstantArrayType>(rowTypes.front().getCanonicalType()));
      access.slicePitch = extents.empty() ? bySizeof(0)
                                          : asOperand(extents[1]) + " * " +
                                                asOperand(extents[2]);
    }
  } else if (!mapLinear(indices[0], indexExprs[0], access, name)) {
    return std::nullopt;
  }
  for (unsigned a = 0; a < scope.dims; ++a)
    if (access.offset[a] < -8 || access.offset[a] > 8) {
      diags.error(expr->getExprLoc(),
                  "offset " + std::to_string(access.offset[a]) + " of '" +
                      name +
                      "' is out of range; a stencil reads at most 8 points "
                      "away",
                  expr->getSourceRange());
      return std::nullopt;
    }
  return access;
}

std::optional<AffineIndex>
UpdateTranslator::buildIndex(const Expr *expr, const std::string &array) {
  const Expr *e = expr->IgnoreParenImpCasts();
  while (const auto *cast = dyn_cast<ExplicitCastExpr>(e)) {
    if (!cast->getType()->isIntegerType())
      break;
    e = cast->getSubExpr()->IgnoreParenImpCasts();
  }
  auto nonConstant = [&](const Expr *at) -> std::optional<AffineIndex> {
    diags.error(at->getExprLoc(),
                "non-constant offset: the index of '" + array +
                    "' varies with '" + sourceText(at, ctx) +
                    "'; offsets from the loop point must be integer "
                    "constants",
                at->getSourceRange());
    return std::nullopt;
  };
  if (!e->isValueDependent() && e->getType()->isIntegerType()) {
    Expr::EvalResult r;
    if (e->EvaluateAsInt(r, ctx))
      return AffineIndex::constant(r.Val.getInt().getExtValue());
  }
  if (const auto *ref = dyn_cast<DeclRefExpr>(e))
    if (const auto *var = dyn_cast<VarDecl>(ref->getDecl())) {
      auto c = scope.counters.find(var);
      if (c != scope.counters.end())
        return AffineIndex::counter(c->second);
      auto l = scope.indexLets.find(var);
      if (l != scope.indexLets.end())
        return buildIndex(l->second, array);
      if (scope.changing.count(var) || !var->getType()->isIntegerType())
        return nonConstant(e);
      return AffineIndex::symbol(var->getName().str());
    }
  if (const auto *bin = dyn_cast<BinaryOperator>(e)) {
    BinaryOperatorKind op = bin->getOpcode();
    if (op == BO_Add || op == BO_Sub || op == BO_Mul) {
      std::optional<AffineIndex> l = buildIndex(bin->getLHS(), array);
      if (!l)
        return std::nullopt;
      std::optional<AffineIndex> r = buildIndex(bin->getRHS(), array);
      if (!r)
        return std::nullopt;
      if (op == BO_Add)
        return *l + *r;
      if (op == BO_Sub)
        return *l - *r;
      // A loop-invariant sum such as (ny + 2) is one pitch, not two.
      auto collapse = [&](AffineIndex &x, const Expr *side) {
        bool counterFree = llvm::all_of(
            x.terms(), [](const auto &t) { return t.first.counter < 0; });
        if (counterFree && x.terms().size() > 1)
          x = AffineIndex::symbol(sourceText(side->IgnoreParens(), ctx));
      };
      collapse(*l, bin->getLHS());
      collapse(*r, bin->getRHS());
      std::optional<AffineIndex> p = l->times(*r);
      if (!p)
        return nonConstant(e);
      return p;
    }
  }
  if (const auto *un = dyn_cast<UnaryOperator>(e)) {
    if (un->getOpcode() == UO_Minus) {
      std::optional<AffineIndex> s = buildIndex(un->getSubExpr(), array);
      if (!s)
        return std::nullopt;
      return AffineIndex::constant(0) - *s;
    }
    if (un->getOpcode() == UO_Plus)
      return buildIndex(un->getSubExpr(), array);
  }
  auto isCounter = [&](const VarDecl *v) {
    return scope.counters.count(v) || scope.indexLets.count(v) ||
           scope.changing.count(v);
  };
  bool moves = mentions(e, isCounter);
  bool load = isa<ArraySubscriptExpr>(e) ||
              (isa<UnaryOperator>(e) &&
               cast<UnaryOperator>(e)->getOpcode() == UO_Deref);
  if (const auto *op = dyn_cast<CXXOperatorCallExpr>(e))
    load = op->getOperator() == OO_Subscript;
  if (load && moves) {
    diags.error(e->getExprLoc(),
                "data-dependent index: the index of '" + array +
                    "' reads memory ('" + sourceText(e, ctx) +
                    "'); a stencil reads at constant offsets from the loop "
                    "point",
                e->getSourceRange());
    return std::nullopt;
  }
  if (const auto *call = dyn_cast<CallExpr>(e);
      call && !isa<CXXOperatorCallExpr>(e)) {
    const FunctionDecl *fd = call->getDirectCallee();
    std::string callee = fd && fd->getIdentifier()
                             ? fd->getName().str()
                             : sourceText(call->getCallee(), ctx);
    diags.error(call->getBeginLoc(),
                "call to '" + callee +
                    "' may have side effects; a stencil update may call "
                    "only sqrt, fabs, fmin, fmax, std::min, std::max and pow",
                call->getSourceRange());
    return std::nullopt;
  }
  // Anything else that stays put while the nest runs is a symbol: a member
  // (g.nx), an element of a size table (dims[1]).
  if (!moves && !mayHaveSideEffects(e, ctx) && e->getType()->isIntegerType())
    return AffineIndex::symbol(sourceText(e, ctx));
  return nonConstant(e);
}

bool UpdateTranslator::mapSubscripts(const std::vector<AffineIndex> &indices,
                                     const std::vector<const Expr *> &exprs,
                                     ArrayAccess &access,
                                     const std::string &array) {
  std::vector<int> counterOf(indices.size(), -1);
  for (size_t s = 0; s < indices.size(); ++s) {
    int counters = 0;
    for (const auto &[m, coeff] : indices[s].terms()) {
      if (m.counter >= 0) {
        ++counters;
        counterOf[s] = m.counter;
        if (!m.symbols.empty() || coeff != 1)
          counters = 2; // a stride: not one point per iteration
      } else if (!m.symbols.empty()) {
        diags.error(exprs[s]->getExprLoc(),
                    "non-constant offset: the index of '" + array +
                        "' varies with '" +
                        AffineIndex::symbolText(m.symbols, coeff) +
                        "'; offsets from the loop point must be integer "
                        "constants",
                    exprs[s]->getSourceRange());
        return false;
      } else {
        access.offset[s] = coeff;
      }
    }
    if (counters != 1) {
      diags.error(access.expr->getExprLoc(),
                  "cannot map the index of '" + array + "' onto the " +
                      std::to_string(scope.dims) +
                      "-D nest: use one subscript per axis, or one "
                      "linearized index such as i * pitch + j",
                  access.expr->getSourceRange());
      return false;
    }
  }
  std::vector<int> sorted = counterOf;
  std::sort(sorted.begin(), sorted.end());
  if (std::unique(sorted.begin(), sorted.end()) != sorted.end()) {
    diags.error(access.expr->getExprLoc(),
                "cannot map the index of '" + array + "' onto the " +
                    std::to_string(scope.dims) +
                    "-D nest: use one subscript per axis, or one linearized "
                    "index such as i * pitch + j",
                access.expr->getSourceRange());
    return false;
  }
  for (size_t s = 0; s < indices.size(); ++s)
    if (counterOf[s] != static_cast<int>(s)) {
      diags.error(access.expr->getExprLoc(),
                  "'" + array + "' is stored with '" +
                      scope.counterNames[counterOf.back()] +
                      "' varying fastest, but the innermost loop runs over '" +
                      scope.counterNames.back() +
                      "'; the loops must nest in the array's storage order, "
                      "slowest axis outermost",
                  access.expr->getSourceRange());
      return false;
    }
  return true;
}

bool UpdateTranslator::mapLinear(const AffineIndex &index, const Expr *expr,
                                 ArrayAccess &access,
                                 const std::string &array) {
  unsigned d = scope.dims;
  auto cannotMap = [&]() {
    diags.error(access.expr->getExprLoc(),
                "cannot map the index of '" + array + "' onto the " +
                    std::to_string(d) +
                    "-D nest: use one subscript per axis, or one linearized "
                    "index such as i * pitch + j",
                access.expr->getSourceRange());
    return false;
  };
  // The pitch of each axis: what multiplies its counter.
  std::vector<std::optional<std::pair<std::vector<std::string>, int64_t>>>
      pitch(d);
  for (const auto &[m, coeff] : index.terms()) {
    if (m.counter < 0)
      continue;
    if (pitch[m.counter])
      return cannotMap();
    pitch[m.counter] = {m.symbols, coeff};
  }
  int unit = -1;
  for (unsigned a = 0; a < d; ++a) {
    if (!pitch[a])
      return cannotMap();
    if (pitch[a]->first.empty() && pitch[a]->second == 1)
      unit = static_cast<int>(a);
  }
  if (unit < 0)
    return cannotMap();
  if (unit != static_cast<int>(d) - 1) {
    diags.error(access.expr->getExprLoc(),
                "'" + array + "' is stored with '" + scope.counterNames[unit] +
                    "' varying fastest, but the innermost loop runs over '" +
                    scope.counterNames.back() +
                    "'; the loops must nest in the array's storage order, "
                    "slowest axis outermost",
                access.expr->getSourceRange());
    return false;
  }
  int64_t rest = 0;
  for (const auto &[m, coeff] : index.terms()) {
    if (m.counter >= 0)
      continue;
    if (m.symbols.empty()) {
      rest += coeff;
      continue;
    }
    bool matched = false;
    for (unsigned a = 0; a + 1 < d && !matched; ++a)
      if (pitch[a]->first == m.symbols && coeff % pitch[a]->second == 0) {
        access.offset[a] += coeff / pitch[a]->second;
        matched = true;
      }
    if (!matched) {
      diags.error(expr->getExprLoc(),
                  "non-constant offset: the index of '" + array +
                      "' varies with '" +
                      AffineIndex::symbolText(m.symbols, coeff) +
                      "'; offsets from the loop point must be integer "
                      "constants",
                  expr->getSourceRange());
      return false;
    }
  }
  // A constant pitch (u[i * 64 + j]) takes its share of the constant: the
  // nearest multiple, the rest goes to the faster axes.
  for (unsigned a = 0; a + 1 < d; ++a)
    if (pitch[a]->first.empty()) {
      int64_t p = pitch[a]->second;
      int64_t q = (rest >= 0 ? rest + p / 2 : rest - p / 2) / p;
      access.offset[a] += q;
      rest -= q * p;
    }
  access.offset[d - 1] += rest;
  if (d >= 2)
    access.rowPitch =
        AffineIndex::symbolText(pitch[d - 2]->first, pitch[d - 2]->second);
  if (d == 3)
    access.slicePitch =
        AffineIndex::symbolText(pitch[0]->first, pitch[0]->second);
  return true;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

std::optional<std::string> UpdateTranslator::translate(const Expr *expr) {
  const Expr *e = expr->IgnoreImplicit();
  QualType type = e->getType();
  if (type->isIntegerType()) {
    Expr::EvalResult r;
    if (!e->isValueDependent() && e->EvaluateAsInt(r, ctx))
      return intText(r.Val.getInt().getExtValue());
    if (const auto *ref = dyn_cast<DeclRefExpr>(e->IgnoreParens()))
      if (const auto *var = dyn_cast<VarDecl>(ref->getDecl()))
        return translateScalar(ref, var);
    unsupported(e);
    return std::nullopt;
  }
  if (!type->isRealFloatingType()) {
    unsupported(e);
    return std::nullopt;
  }
  bool asFloat = scope.computeFloat && isFloatType(type);
  if (const auto *lit = dyn_cast<FloatingLiteral>(e)) {
    llvm::APFloat v = lit->getValue();
    bool lost = false;
    v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    if (!std::isfinite(v.convertToDouble())) {
      unsupported(e);
      return std::nullopt;
    }
    return numberText(v.convertToDouble(), asFloat);
  }
  // A float constant folds as C++ folds it, in float; .st would fold it in
  // double. Double constants keep their form: there the two agree.
  if (isFloatType(type) && !isa<DeclRefExpr>(e))
    if (std::optional<double> v = constantValue(e, ctx))
      return numberText(*v, asFloat);
  if (const auto *paren = dyn_cast<ParenExpr>(e)) {
    std::optional<std::string> s = translate(paren->getSubExpr());
    if (!s)
      return std::nullopt;
    return "(" + *s + ")";
  }
  if (const auto *un = dyn_cast<UnaryOperator>(e)) {
    if (un->getOpcode() == UO_Minus || un->getOpcode() == UO_Plus) {
      std::optional<std::string> s = translate(un->getSubExpr());
      if (!s)
        return std::nullopt;
      std::string sign = un->getOpcode() == UO_Minus ? "-" : "+";
      return sign + ((*s)[0] == '-' || (*s)[0] == '+' ? " " : "") + *s;
    }
    unsupported(e);
    return std::nullopt;
  }
  if (const auto *bin = dyn_cast<BinaryOperator>(e)) {
    const char *op = nullptr;
    switch (bin->getOpcode()) {
    case BO_Add:
      op = " + ";
      break;
    case BO_Sub:
      op = " - ";
      break;
    case BO_Mul:
      op = " * ";
      break;
    case BO_Div:
      op = " / ";
      break;
    default:
      unsupported(e);
      return std::nullopt;
    }
    std::optional<std::string> l = translate(bin->getLHS());
    if (!l)
      return std::nullopt;
    std::optional<std::string> r = translate(bin->getRHS());
    if (!r)
      return std::nullopt;
    return *l + op + *r;
  }
  if (isa<ArraySubscriptExpr>(e))
    return translateRead(e);
  if (const auto *op = dyn_cast<CXXOperatorCallExpr>(e)) {
    if (op->getOperator() == OO_Subscript)
      return translateRead(e);
    unsupported(e);
    return std::nullopt;
  }
  if (const auto *call = dyn_cast<CallExpr>(e))
    return translateCall(call);
  if (const auto *ref = dyn_cast<DeclRefExpr>(e)) {
    if (const auto *var = dyn_cast<VarDecl>(ref->getDecl()))
      return translateScalar(ref, var);
    unsupported(e);
    return std::nullopt;
  }
  if (const auto *member = dyn_cast<MemberExpr>(e)) {
    if (!mayHaveSideEffects(member, ctx) &&
        !mentions(member, [&](const VarDecl *v) {
          return scope.counters.count(v) || scope.changing.count(v);
        })) {
      std::string text = sourceText(member, ctx);
      // A member of a constant (constexpr) object has its value as the
      // default; any other member defaults to 0.
      return paramRef("member:" + text,
                      member->getMemberDecl()->getName().str(), text, type,
                      member, member);
    }
    unsupported(e);
    return std::nullopt;
  }
  if (const auto *cast = dyn_cast<ExplicitCastExpr>(e)) {
    if (std::optional<double> v = constantValue(cast, ctx))
      return numberText(*v, asFloat);
    return translate(cast->getSubExpr());
  }
  unsupported(e);
  return std::nullopt;
}

std::optional<std::string>
UpdateTranslator::translateScalar(const DeclRefExpr *ref, const VarDecl *var) {
  if (scope.counters.count(var) || scope.changing.count(var) ||
      scope.indexLets.count(var)) {
    diags.error(ref->getLocation(),
                "'" + var->getName() +
                    "' changes while the nest runs; coefficients must be "
                    "constants or variables the loop nest does not change",
                ref->getSourceRange());
    return std::nullopt;
  }
  auto let = lets.find(var);
  if (let != lets.end()) {
    const std::vector<ArrayAccess> &r = letReads[var];
    reads.insert(reads.end(), r.begin(), r.end());
    return let->second;
  }
  QualType type = var->getType();
  if (!type->isIntegerType() && !type->isRealFloatingType()) {
    unsupported(ref);
    return std::nullopt;
  }
  const Expr *init = var->getAnyInitializer();
  // A constant stays a constant; anything else may change between runs of
  // the nest and becomes a parameter.
  if ((type.isConstQualified() || var->isConstexpr()) && init)
    if (std::optional<double> v = constantValue(init, ctx)) {
      if (type->isIntegerType())
        return intText(static_cast<int64_t>(*v));
      return numberText(*v, scope.computeFloat && isFloatType(type));
    }
  if (const auto *parm = dyn_cast<ParmVarDecl>(var))
    init = parm->hasDefaultArg() && !parm->hasUnparsedDefaultArg() &&
                   !parm->hasUninstantiatedDefaultArg()
               ? parm->getDefaultArg()
               : nullptr;
  return paramRef(keyOf(var), var->getName().str(), var->getName().str(), type,
                  init, ref);
}

std::optional<std::string>
UpdateTranslator::paramRef(const std::string &key, const std::string &cName,
                           const std::string &value, QualType type,
                           const Expr *init, const Expr *at) {
  if (type->isSpecificBuiltinType(BuiltinType::LongDouble)) {
    unsupported(at);
    return std::nullopt;
  }
  bool known = names.count(key);
  std::string name = uniqueName(key, cName);
  if (!known) {
    LiftedParam p;
    p.name = name;
    p.value = value;
    p.type = isFloatType(type) ? "f32" : "f64";
    std::optional<double> v = init ? constantValue(init, ctx) : std::nullopt;
    p.defaultValue = formatNumber(v.value_or(0.0), p.type == "f32");
    paramList.push_back(p);
  }
  return name;
}

std::optional<std::string>
UpdateTranslator::translateCall(const CallExpr *call) {
  const FunctionDecl *fd = call->getDirectCallee();
  std::string callee = fd && fd->getIdentifier()
                           ? fd->getName().str()
                           : sourceText(call->getCallee(), ctx);
  bool library =
      fd && (fd->isInStdNamespace() ||
             fd->getDeclContext()->getRedeclContext()->isTranslationUnit());
  struct Known {
    const char *st;
    unsigned arity;
  };
  std::optional<Known> known =
      llvm::StringSwitch<std::optional<Known>>(callee)
          .Cases("sqrt", "sqrtf", Known{"sqrt", 1})
          .Cases("fabs", "fabsf", "abs", Known{"abs", 1})
          .Cases("fmin", "fminf", "min", Known{"min", 2})
          .Cases("fmax", "fmaxf", "max", Known{"max", 2})
          .Cases("pow", "powf", Known{"pow", 2})
          .Default(std::nullopt);
  if (!library || !known || call->getNumArgs() != known->arity) {
    diags.error(call->getBeginLoc(),
                "call to '" + callee +
                    "' may have side effects; a stencil update may call "
                    "only sqrt, fabs, fmin, fmax, std::min, std::max and pow",
                call->getSourceRange());
    return std::nullopt;
  }
  std::string text = std::string(known->st) + "(";
  for (unsigned i = 0; i < call->getNumArgs(); ++i) {
    const Expr *arg = call->getArg(i);
    if (i > 0)
      text += ", ";
    if (std::string(known->st) == "pow" && i == 1) {
      std::optional<double> n = constantValue(arg->IgnoreImplicit(), ctx);
      if (!n || *n != static_cast<int64_t>(*n) || *n < -64 || *n > 64) {
        diags.error(arg->getExprLoc(),
                    "pow needs an integer exponent from -64 to 64",
                    arg->getSourceRange());
        return std::nullopt;
      }
      text += std::to_string(static_cast<int64_t>(*n));
      continue;
    }
    std::optional<std::string> a = translate(arg);
    if (!a)
      return std::nullopt;
    text += *a;
  }
  return text + ")";
}

std::optional<std::string> UpdateTranslator::translateRead(const Expr *expr) {
  std::optional<ArrayAccess> access = analyzeAccess(expr);
  if (!access)
    return std::nullopt;
  auto w = scope.written.find(access->array);
  if (w != scope.written.end()) {
    std::string name = access->array->getName().str();
    diags.error(w->second->getExprLoc(),
                "aliasing write: the nest writes '" + name +
                    "' and also reads it; compute into a second buffer and "
                    "swap the two after the nest",
                w->second->getSourceRange());
    diags.note(expr->getExprLoc(), "'" + name + "' is read here",
               expr->getSourceRange());
    return std::nullopt;
  }
  std::string name = registerGrid(access->array);
  if (!checkLayout(access->array, *access))
    return std::nullopt;
  reads.push_back(*access);
  bool centre = true;
  for (unsigned a = 0; a < scope.dims; ++a)
    centre = centre && access->offset[a] == 0;
  if (centre)
    return name;
  std::string text = name + "[";
  for (unsigned a = 0; a < scope.dims; ++a)
    text += (a ? "," : "") + std::to_string(access->offset[a]);
  return text + "]";
}
