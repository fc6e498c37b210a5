//===- NestLifter.cpp - Lifts one marked loop nest ------------------------===//
//
// The checks run from the outside in (time loop, spatial loops, buffer
// exchange, writes, then the expressions), and the first failure ends the
// nest: later messages would mostly restate it.
//
//===----------------------------------------------------------------------===//

#include "NestLifter.h"
#include "SourceText.h"

#include "clang/AST/ExprCXX.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <functional>
#include <map>

using namespace stencil_lift;
using namespace clang;

namespace {

/// The statements of a body: a compound's children without empty
/// statements, or the statement itself.
std::vector<const Stmt *> unwrap(const Stmt *body) {
  std::vector<const Stmt *> out;
  if (const auto *cs = dyn_cast<CompoundStmt>(body)) {
    for (const Stmt *s : cs->body())
      if (!isa<NullStmt>(s))
        out.push_back(s);
  } else if (!isa<NullStmt>(body)) {
    out.push_back(body);
  }
  return out;
}

const VarDecl *varOf(const Expr *e) {
  if (!e)
    return nullptr;
  if (const auto *ref = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts()))
    return dyn_cast<VarDecl>(ref->getDecl());
  return nullptr;
}

const Expr *asExpr(const Stmt *s) {
  const auto *e = dyn_cast<Expr>(s);
  return e ? e->IgnoreImplicit() : nullptr;
}

/// `std::swap(a, b)` or `a.swap(b)`.
bool isSwapCall(const Stmt *s, const VarDecl *&a, const VarDecl *&b) {
  const Expr *e = asExpr(s);
  if (const auto *mc = dyn_cast_or_null<CXXMemberCallExpr>(e)) {
    const CXXMethodDecl *m = mc->getMethodDecl();
    if (!m || !m->getIdentifier() || m->getName() != "swap" ||
        mc->getNumArgs() != 1)
      return false;
    a = varOf(mc->getImplicitObjectArgument());
    b = varOf(mc->getArg(0));
    return a && b && a != b;
  }
  if (const auto *call = dyn_cast_or_null<CallExpr>(e)) {
    const FunctionDecl *fd = call->getDirectCallee();
    if (!fd || !fd->getIdentifier() || fd->getName() != "swap" ||
        call->getNumArgs() != 2)
      return false;
    a = varOf(call->getArg(0));
    b = varOf(call->getArg(1));
    return a && b && a != b;
  }
  return false;
}

/// `x = y;` between two variables.
bool isVarAssign(const Stmt *s, const VarDecl *&x, const VarDecl *&y) {
  const auto *bin = dyn_cast_or_null<BinaryOperator>(asExpr(s));
  if (!bin || bin->getOpcode() != BO_Assign)
    return false;
  x = varOf(bin->getLHS());
  y = varOf(bin->getRHS());
  return x && y;
}

/// `tmp = a; a = b; b = tmp;`, the first possibly a declaration.
bool isSwapTriple(const Stmt *s0, const Stmt *s1, const Stmt *s2,
                  const VarDecl *&a, const VarDecl *&b) {
  const VarDecl *tmp = nullptr, *first = nullptr;
  if (const auto *ds = dyn_cast<DeclStmt>(s0)) {
    if (!ds->isSingleDecl())
      return false;
    tmp = dyn_cast<VarDecl>(ds->getSingleDecl());
    first = tmp ? varOf(tmp->getInit()) : nullptr;
  } else if (!isVarAssign(s0, tmp, first)) {
    return false;
  }
  const VarDecl *x1, *y1, *x2, *y2;
  if (!tmp || !first || !isVarAssign(s1, x1, y1) || !isVarAssign(s2, x2, y2))
    return false;
  a = first;
  b = y1;
  return x1 == first && x2 == y1 && y2 == tmp && a != b;
}

/// The variable an access `a[i][j]`, `v[c]` reads; null for anything else.
const VarDecl *accessedArray(const Expr *e) {
  e = e->IgnoreParenImpCasts();
  while (true) {
    if (const auto *ase = dyn_cast<ArraySubscriptExpr>(e))
      e = ase->getBase()->IgnoreParenImpCasts();
    else if (const auto *op = dyn_cast<CXXOperatorCallExpr>(e);
             op && op->getOperator() == OO_Subscript && op->getNumArgs() == 2)
      e = op->getArg(0)->IgnoreParenImpCasts();
    else
      return varOf(e);
  }
}

bool isSubscript(const Expr *e) {
  e = e->IgnoreParenImpCasts();
  if (isa<ArraySubscriptExpr>(e))
    return true;
  const auto *op = dyn_cast<CXXOperatorCallExpr>(e);
  return op && op->getOperator() == OO_Subscript;
}

/// The innermost body of a nest of single loops.
std::vector<const Stmt *> innermostBody(const ForStmt *loop) {
  std::vector<const Stmt *> inner = unwrap(loop->getBody());
  while (inner.size() == 1 && isa<ForStmt>(inner[0]))
    inner = unwrap(cast<ForStmt>(inner[0])->getBody());
  return inner;
}

/// Whether the nest only copies arrays (`u[i][j] = unew[i][j];`): a
/// copy-back, not a second sweep.
bool isCopyNest(const ForStmt *loop) {
  std::vector<const Stmt *> body = innermostBody(loop);
  if (body.empty())
    return false;
  for (const Stmt *s : body) {
    const auto *bin = dyn_cast_or_null<BinaryOperator>(asExpr(s));
    if (!bin || bin->getOpcode() != BO_Assign || !isSubscript(bin->getRHS()))
      return false;
  }
  return true;
}

bool mentions(const Stmt *s, const VarDecl *var) {
  if (const auto *ref = dyn_cast<DeclRefExpr>(s))
    return ref->getDecl() == var;
  for (const Stmt *c : s->children())
    if (c && mentions(c, var))
      return true;
  return false;
}

/// The first array access under `s` whose index moves with `counter`.
const Expr *accessIndexedBy(const Stmt *s, const VarDecl *counter) {
  if (const auto *ase = dyn_cast<ArraySubscriptExpr>(s)) {
    if (mentions(ase->getIdx(), counter))
      return ase;
  } else if (const auto *op = dyn_cast<CXXOperatorCallExpr>(s)) {
    if (op->getOperator() == OO_Subscript && op->getNumArgs() == 2 &&
        mentions(op->getArg(1), counter))
      return op;
  }
  for (const Stmt *c : s->children())
    if (c)
      if (const Expr *e = accessIndexedBy(c, counter))
        return e;
  return nullptr;
}

/// Compares the second sweep `b` with the first `a`, reading each variable
/// of `a` as its image in `map` (the exchanged arrays, the loop counters,
/// the locals); returns the first pair of nodes that differ.
using DeclMap = std::map<const Decl *, const Decl *>;
std::pair<const Stmt *, const Stmt *>
firstDifference(const Stmt *a, const Stmt *b, const DeclMap &map) {
  std::pair<const Stmt *, const Stmt *> differ{a, b}, same{nullptr, nullptr};
  if (!a || !b)
    return a == b ? same : differ;
  if (a->getStmtClass() != b->getStmtClass())
    return differ;
  if (const auto *ra = dyn_cast<DeclRefExpr>(a)) {
    const Decl *da = ra->getDecl();
    auto it = map.find(da);
    return cast<DeclRefExpr>(b)->getDecl() ==
                   (it == map.end() ? da : it->second)
               ? same
               : differ;
  }
  if (const auto *ba = dyn_cast<BinaryOperator>(a)) {
    if (ba->getOpcode() != cast<BinaryOperator>(b)->getOpcode())
      return differ;
  } else if (const auto *ua = dyn_cast<UnaryOperator>(a)) {
    if (ua->getOpcode() != cast<UnaryOperator>(b)->getOpcode())
      return differ;
  } else if (const auto *ia = dyn_cast<IntegerLiteral>(a)) {
    if (ia->getValue() != cast<IntegerLiteral>(b)->getValue())
      return differ;
  } else if (const auto *fa = dyn_cast<FloatingLiteral>(a)) {
    if (!fa->getValue().bitwiseIsEqual(cast<FloatingLiteral>(b)->getValue()))
      return differ;
  } else if (const auto *ma = dyn_cast<MemberExpr>(a)) {
    if (ma->getMemberDecl() != cast<MemberExpr>(b)->getMemberDecl())
      return differ;
  } else if (const auto *da = dyn_cast<DeclStmt>(a)) {
    const auto *db = cast<DeclStmt>(b);
    const auto *va =
        da->isSingleDecl() ? dyn_cast<VarDecl>(da->getSingleDecl()) : nullptr;
    const auto *vb =
        db->isSingleDecl() ? dyn_cast<VarDecl>(db->getSingleDecl()) : nullptr;
    if (!va || !vb || va->getType() != vb->getType())
      return differ;
    return firstDifference(va->getInit(), vb->getInit(), map);
  } else if (!isa<Expr>(a)) {
    return differ;
  }
  if (const auto *ea = dyn_cast<Expr>(a))
    if (ea->getType().getCanonicalType() !=
        cast<Expr>(b)->getType().getCanonicalType())
      return differ;
  if (const auto *ca = dyn_cast<CastExpr>(a))
    if (ca->getCastKind() != cast<CastExpr>(b)->getCastKind())
      return differ;
  auto ia = a->child_begin(), ib = b->child_begin();
  for (; ia != a->child_end() && ib != b->child_end(); ++ia, ++ib) {
    auto d = firstDifference(*ia, *ib, map);
    if (d.first || d.second)
      return d;
  }
  return ia == a->child_end() && ib == b->child_end() ? same : differ;
}

std::string stmtText(const Stmt *s, const ASTContext &ctx) {
  std::string text = sourceText(s, ctx);
  return isa<Expr>(s) ? text + ";" : text;
}

} // namespace

NestLifter::LoopForm NestLifter::countedLoop(const ForStmt *loop,
                                             CountedLoop &out,
                                             const Expr *&sideEffect) {
  out.loop = loop;
  const Stmt *init = loop->getInit();
  if (!init || !loop->getCond() || !loop->getInc())
    return LoopForm::NotCounted;
  if (const auto *ds = dyn_cast<DeclStmt>(init)) {
    if (!ds->isSingleDecl())
      return LoopForm::NotCounted;
    out.counter = dyn_cast<VarDecl>(ds->getSingleDecl());
    out.loExpr = out.counter ? out.counter->getInit() : nullptr;
  } else {
    const auto *bin = dyn_cast_or_null<BinaryOperator>(asExpr(init));
    if (!bin || bin->getOpcode() != BO_Assign)
      return LoopForm::NotCounted;
    out.counter = varOf(bin->getLHS());
    out.loExpr = bin->getRHS();
  }
  if (!out.counter || !out.loExpr || !out.counter->getType()->isIntegerType())
    return LoopForm::NotCounted;

  const auto *cond =
      dyn_cast<BinaryOperator>(loop->getCond()->IgnoreImplicit());
  if (!cond)
    return LoopForm::NotCounted;
  bool inclusive = false;
  BinaryOperatorKind op = cond->getOpcode();
  if ((op == BO_LT || op == BO_LE) && varOf(cond->getLHS()) == out.counter) {
    out.hiExpr = cond->getRHS();
    inclusive = op == BO_LE;
  } else if ((op == BO_GT || op == BO_GE) &&
             varOf(cond->getRHS()) == out.counter) {
    out.hiExpr = cond->getLHS();
    inclusive = op == BO_GE;
  } else {
    return LoopForm::NotCounted;
  }

  const Expr *inc = loop->getInc()->IgnoreImplicit();
  bool byOne = false;
  if (const auto *un = dyn_cast<UnaryOperator>(inc))
    byOne = un->isIncrementOp() && varOf(un->getSubExpr()) == out.counter;
  else if (const auto *cas = dyn_cast<CompoundAssignOperator>(inc)) {
    Expr::EvalResult r;
    byOne = cas->getOpcode() == BO_AddAssign &&
            varOf(cas->getLHS()) == out.counter &&
            cas->getRHS()->EvaluateAsInt(r, ctx) && r.Val.getInt() == 1;
  } else if (const auto *bin = dyn_cast<BinaryOperator>(inc)) {
    const auto *sum =
        dyn_cast<BinaryOperator>(bin->getRHS()->IgnoreParenImpCasts());
    Expr::EvalResult r;
    byOne = bin->getOpcode() == BO_Assign &&
            varOf(bin->getLHS()) == out.counter && sum &&
            sum->getOpcode() == BO_Add && varOf(sum->getLHS()) == out.counter &&
            sum->getRHS()->EvaluateAsInt(r, ctx) && r.Val.getInt() == 1;
  }
  if (!byOne)
    return LoopForm::NotCounted;

  // The body must leave the counter alone.
  NestScope assigned;
  collectChanging(loop->getBody(), assigned);
  if (assigned.changing.count(out.counter))
    return LoopForm::NotCounted;

  for (const Expr *bound : {out.loExpr, out.hiExpr})
    if (mayHaveSideEffects(bound, ctx)) {
      sideEffect = bound;
      return LoopForm::SideEffects;
    }
  out.lo = SymbolicSum::fromExpr(out.loExpr, ctx);
  out.hi = SymbolicSum::fromExpr(out.hiExpr, ctx) + (inclusive ? 1 : 0);
  return LoopForm::Counted;
}

void NestLifter::collectChanging(const Stmt *stmt, NestScope &scope) {
  if (!stmt)
    return;
  if (const auto *bin = dyn_cast<BinaryOperator>(stmt)) {
    if (bin->isAssignmentOp())
      if (const VarDecl *v = varOf(bin->getLHS()))
        scope.changing.insert(v);
  } else if (const auto *un = dyn_cast<UnaryOperator>(stmt)) {
    if (un->isIncrementDecrementOp())
      if (const VarDecl *v = varOf(un->getSubExpr()))
        scope.changing.insert(v);
  } else {
    const VarDecl *a, *b;
    if (isSwapCall(stmt, a, b)) {
      scope.changing.insert(a);
      scope.changing.insert(b);
    }
  }
  for (const Stmt *child : stmt->children())
    collectChanging(child, scope);
}

bool NestLifter::spatialNest(const ForStmt *outer,
                             std::vector<CountedLoop> &loops,
                             std::vector<const Stmt *> &body) {
  // Count the depth first, so that a deep nest is reported as a whole.
  unsigned depth = 0;
  for (const Stmt *s = outer; s;) {
    ++depth;
    std::vector<const Stmt *> inner = unwrap(cast<ForStmt>(s)->getBody());
    s = inner.size() == 1 && isa<ForStmt>(inner[0]) ? inner[0] : nullptr;
  }
  if (depth > 3) {
    diags.error(outer->getForLoc(),
                "the nest has " + std::to_string(depth) +
                    " loops; a stencil has 1 to 3 dimensions");
    return false;
  }
  const ForStmt *cur = outer;
  while (cur) {
    CountedLoop loop;
    const Expr *sideEffect = nullptr;
    LoopForm form = countedLoop(cur, loop, sideEffect);
    if (form == LoopForm::SideEffects) {
      diags.error(sideEffect->getExprLoc(),
                  "the loop bound '" + sourceText(sideEffect, ctx) +
                      "' may have side effects; the lifted code evaluates "
                      "it once",
                  sideEffect->getSourceRange());
      return false;
    }
    if (form != LoopForm::Counted) {
      diags.error(cur->getForLoc(),
                  "this loop does not count up by 1 to a bound; a stencil "
                  "loop reads 'for (int i = a; i < b; ++i)'");
      return false;
    }
    // Rectangular and the same in every step: the bounds may not move with
    // an outer counter, the time loop's counter, or a scalar the time loop
    // assigns.
    for (const Expr *bound : {loop.loExpr, loop.hiExpr}) {
      std::function<const VarDecl *(const Stmt *)> moving =
          [&](const Stmt *s) -> const VarDecl * {
        // The swapped buffers change too, but `u.size()` of two vectors
        // of one size does not: only scalars count.
        if (const VarDecl *v = varOf(dyn_cast<Expr>(s)))
          if (v != loop.counter && changing.count(v) &&
              v->getType()->isArithmeticType())
            return v;
        for (const Stmt *c : s->children())
          if (c)
            if (const VarDecl *v = moving(c))
              return v;
        return nullptr;
      };
      if (const VarDecl *v = moving(bound)) {
        diags.error(bound->getExprLoc(),
                    "the bounds of the loop over '" + loop.counter->getName() +
                        "' depend on '" + v->getName() +
                        "'; a stencil runs over a rectangular box",
                    bound->getSourceRange());
        return false;
      }
    }
    loops.push_back(loop);
    std::vector<const Stmt *> inner = unwrap(cur->getBody());
    if (inner.size() == 1 && isa<ForStmt>(inner[0])) {
      cur = cast<ForStmt>(inner[0]);
      continue;
    }
    for (const Stmt *s : inner)
      if (isa<ForStmt>(s) && inner.size() > 1) {
        const Stmt *other = inner[0] == s ? inner[1] : inner[0];
        diags.error(other->getBeginLoc(),
                    "unsupported statement in the loop nest; the innermost "
                    "loop may hold only array assignments and local "
                    "constants");
        return false;
      }
    body = inner;
    cur = nullptr;
  }
  return true;
}

bool NestLifter::copyBack(const ForStmt *loop,
                          const std::vector<CountedLoop> &nest,
                          std::vector<BufferPair> &pairs) {
  auto fail = [&](SourceLocation at) {
    diags.error(at, "the copy-back loop must copy each computed point back, "
                    "as in 'u[i] = unew[i]', over the loop nest's own range");
    return false;
  };
  std::vector<CountedLoop> loops;
  std::vector<const Stmt *> body;
  if (!spatialNest(loop, loops, body))
    return false;
  if (loops.size() != nest.size())
    return fail(loop->getForLoc());
  for (size_t a = 0; a < loops.size(); ++a)
    if (loops[a].lo != nest[a].lo || loops[a].hi != nest[a].hi)
      return fail(loops[a].loop->getForLoc());
  NestScope scope;
  scope.dims = static_cast<unsigned>(loops.size());
  for (size_t a = 0; a < loops.size(); ++a) {
    scope.counters[loops[a].counter] = static_cast<int>(a);
    scope.counterNames.push_back(loops[a].counter->getName().str());
  }
  UpdateTranslator translator(ctx, diags, scope);
  for (const Stmt *s : body) {
    const auto *bin = dyn_cast_or_null<BinaryOperator>(asExpr(s));
    if (!bin || bin->getOpcode() != BO_Assign)
      return fail(s->getBeginLoc());
    std::optional<ArrayAccess> dst = translator.analyzeAccess(bin->getLHS());
    if (!dst)
      return false;
    std::optional<ArrayAccess> src = translator.analyzeAccess(bin->getRHS());
    if (!src)
      return false;
    for (unsigned a = 0; a < scope.dims; ++a)
      if (dst->offset[a] != 0 || src->offset[a] != 0)
        return fail(s->getBeginLoc());
    if (dst->array == src->array)
      return fail(s->getBeginLoc());
    pairs.push_back({dst->array, src->array, s});
  }
  return true;
}

bool NestLifter::exchange(llvm::ArrayRef<const Stmt *> stmts,
                          const std::vector<CountedLoop> &nest,
                          LiftedStencil &out, std::vector<BufferPair> &pairs) {
  auto unexpected = [&](const Stmt *s) {
    diags.error(s->getBeginLoc(),
                "unexpected statement in the time loop; it may hold only the "
                "loop nest and the buffer swap");
    return false;
  };
  std::vector<std::string> texts;
  for (size_t k = 0; k < stmts.size();) {
    const Stmt *s = stmts[k];
    const VarDecl *a, *b;
    if (const auto *f = dyn_cast<ForStmt>(s)) {
      if (!pairs.empty() || k + 1 != stmts.size())
        return unexpected(s);
      out.exchange = Exchange::CopyBack;
      return copyBack(f, nest, pairs);
    }
    if (isSwapCall(s, a, b)) {
      pairs.push_back({a, b, s});
      texts.push_back(stmtText(s, ctx));
      ++k;
      continue;
    }
    if (k + 2 < stmts.size() &&
        isSwapTriple(s, stmts[k + 1], stmts[k + 2], a, b)) {
      pairs.push_back({a, b, s});
      for (size_t i = k; i < k + 3; ++i)
        texts.push_back(stmtText(stmts[i], ctx));
      k += 3;
      continue;
    }
    return unexpected(s);
  }
  out.exchange = Exchange::Swap;
  out.swapText = llvm::join(texts, "\n");
  return true;
}

bool NestLifter::secondSweep(const ForStmt *loop,
                             const std::vector<CountedLoop> &nest,
                             const std::vector<const Stmt *> &body,
                             std::vector<BufferPair> &pairs) {
  auto differs = [&](SourceLocation at, const std::string &what,
                     SourceRange range = {}) {
    diags.error(at,
                "the second sweep differs from the first: " + what +
                    "; a time loop of two sweeps lifts only when the second "
                    "is the first with its two arrays exchanged",
                range);
    return false;
  };
  std::vector<CountedLoop> loops;
  std::vector<const Stmt *> body2;
  if (!spatialNest(loop, loops, body2))
    return false;
  if (loops.size() != nest.size())
    return differs(loop->getForLoc(), "it has " + std::to_string(loops.size()) +
                                          " loop(s), the first " +
                                          std::to_string(nest.size()));
  for (size_t a = 0; a < loops.size(); ++a)
    if (loops[a].lo != nest[a].lo || loops[a].hi != nest[a].hi)
      return differs(loops[a].loop->getForLoc(),
                     "its loop over '" + loops[a].counter->getName().str() +
                         "' runs over [" + loops[a].lo.str() + ", " +
                         loops[a].hi.str() + "), the first sweep's over [" +
                         nest[a].lo.str() + ", " + nest[a].hi.str() + ")");
  if (body2.size() != body.size())
    return differs(loop->getForLoc(), "its innermost loop holds " +
                                          std::to_string(body2.size()) +
                                          " statement(s), the first sweep's " +
                                          std::to_string(body.size()));
  DeclMap map;
  for (size_t a = 0; a < loops.size(); ++a)
    map[nest[a].counter] = loops[a].counter;
  for (size_t k = 0; k < body.size(); ++k) {
    const auto *da = dyn_cast<DeclStmt>(body[k]);
    const auto *db = dyn_cast<DeclStmt>(body2[k]);
    if (da && db && da->isSingleDecl() && db->isSingleDecl()) {
      map[da->getSingleDecl()] = db->getSingleDecl();
      continue;
    }
    const auto *wa = dyn_cast_or_null<BinaryOperator>(asExpr(body[k]));
    const auto *wb = dyn_cast_or_null<BinaryOperator>(asExpr(body2[k]));
    if (!wa || !wb || wa->getOpcode() != BO_Assign ||
        wb->getOpcode() != BO_Assign)
      continue; // the comparison below reports it
    const VarDecl *x = accessedArray(wa->getLHS());
    const VarDecl *y = accessedArray(wb->getLHS());
    if (!x || !y || x == y)
      continue;
    if (map.count(x) || map.count(y))
      continue;
    map[x] = y;
    map[y] = x;
    pairs.push_back({x, y, body2[k]});
  }
  for (size_t k = 0; k < body.size(); ++k) {
    auto [a, b] = firstDifference(body[k], body2[k], map);
    if (!a && !b)
      continue;
    const Stmt *at = b ? b : body2[k];
    std::string first = a ? sourceText(a, ctx) : std::string("nothing");
    return differs(at->getBeginLoc(),
                   "'" + sourceText(at, ctx) + "' where the first sweep has '" +
                       first + "'",
                   at->getSourceRange());
  }
  return true;
}

std::optional<LiftedStencil> NestLifter::lift(const ForStmt *loop,
                                              const StencilPragma &pragma,
                                              const std::string &name,
                                              const std::string &function) {
  LiftedStencil out;
  out.name = name;
  out.function = function;
  if (pragma.target)
    out.target = *pragma.target;

  // The time loop and its step count.
  CountedLoop time;
  const Expr *sideEffect = nullptr;
  LoopForm timeForm = countedLoop(loop, time, sideEffect);
  if (pragma.steps) {
    out.steps = *pragma.steps;
    int64_t n;
    if (!llvm::StringRef(out.steps).getAsInteger(10, n))
      out.constantSteps = n;
  } else if (timeForm == LoopForm::Counted) {
    SymbolicSum count = time.hi - time.lo;
    out.steps = count.str();
    out.constantSteps = count.asConstant();
  } else if (timeForm == LoopForm::SideEffects) {
    diags.error(sideEffect->getExprLoc(),
                "the loop bound '" + sourceText(sideEffect, ctx) +
                    "' may have side effects; the lifted code evaluates it "
                    "once",
                sideEffect->getSourceRange());
    return std::nullopt;
  } else {
    diags.error(loop->getForLoc(),
                "cannot count the steps of this time loop; give them with "
                "'#pragma stencil steps(N)'");
    return std::nullopt;
  }

  // What the time loop changes: its counter, the loop counters, the
  // swapped buffers, whatever else it assigns.
  NestScope changes;
  collectChanging(loop, changes);
  if (time.counter)
    changes.changing.insert(time.counter);
  changing = changes.changing;

  std::vector<const Stmt *> stmts = unwrap(loop->getBody());
  if (stmts.size() < 2) {
    diags.error(loop->getForLoc(),
                "the marked loop is not a time loop: its body must end by "
                "swapping the buffers (std::swap(u, unew)) or copying them "
                "back");
    return std::nullopt;
  }
  // A read that moves with the time step (fdtd-2d's source term
  // `_fict_[t]`) is not one update applied in every step.
  if (time.counter)
    if (const Expr *read = accessIndexedBy(loop->getBody(), time.counter)) {
      diags.error(read->getExprLoc(),
                  "'" + sourceText(read, ctx) + "' depends on the time step '" +
                      time.counter->getName() +
                      "'; a stencil applies the same update in every step, "
                      "so a step-dependent source cannot be lifted",
                  read->getSourceRange());
      return std::nullopt;
    }
  // A call in place of the nest (Rodinia's hotspot calls
  // single_iteration()): the lifter reads the loops of the time loop only.
  if (!stmts.empty())
    if (const auto *call = dyn_cast_or_null<CallExpr>(asExpr(stmts[0]))) {
      const VarDecl *a, *b;
      const FunctionDecl *fd = call->getDirectCallee();
      if (!isSwapCall(stmts[0], a, b)) {
        diags.error(call->getExprLoc(),
                    "the time loop calls '" +
                        (fd ? fd->getNameAsString()
                            : sourceText(call->getCallee(), ctx)) +
                        "' where the loop nest should be; stencil-lift does "
                        "not look into called functions: write the spatial "
                        "loops in the time loop",
                    call->getSourceRange());
        return std::nullopt;
      }
    }
  size_t nests = 0;
  while (nests < stmts.size() && isa<ForStmt>(stmts[nests]))
    ++nests;
  if (nests > 2 || (nests == 2 && stmts.size() > 2)) {
    const Stmt *extra = stmts[nests > 2 ? 2 : 1];
    diags.error(extra->getBeginLoc(),
                "the time loop holds " + std::to_string(nests) + " loop nests" +
                    (nests == 2 ? " and a buffer exchange" : "") +
                    "; stencil-lift lifts one nest followed by its buffer "
                    "exchange, or two sweeps of one stencil (A to B, then "
                    "B to A)");
    return std::nullopt;
  }
  bool twoSweep = nests == 2 && !isCopyNest(cast<ForStmt>(stmts[1]));
  if (twoSweep) {
    // Each trip of the time loop runs the stencil twice.
    if (out.constantSteps)
      *out.constantSteps *= 2;
    out.steps = "2 * " + asOperand(out.steps);
  }
  const auto *outer = dyn_cast<ForStmt>(stmts[0]);
  if (!outer) {
    diags.error(stmts[0]->getBeginLoc(),
                "unexpected statement in the time loop; it may hold only the "
                "loop nest and the buffer swap");
    return std::nullopt;
  }
  std::vector<CountedLoop> nest;
  std::vector<const Stmt *> body;
  if (!spatialNest(outer, nest, body))
    return std::nullopt;
  std::vector<BufferPair> pairs;
  if (twoSweep) {
    if (!secondSweep(cast<ForStmt>(stmts[1]), nest, body, pairs))
      return std::nullopt;
    out.exchange = Exchange::TwoSweep;
  } else if (!exchange(llvm::makeArrayRef(stmts).drop_front(), nest, out,
                       pairs)) {
    return std::nullopt;
  }

  NestScope scope;
  scope.dims = static_cast<unsigned>(nest.size());
  out.dims = scope.dims;
  for (size_t a = 0; a < nest.size(); ++a) {
    scope.counters[nest[a].counter] = static_cast<int>(a);
    scope.counterNames.push_back(nest[a].counter->getName().str());
  }
  scope.changing = changing;

  // Statements of the innermost body: lets, index helpers, writes.
  struct Write {
    const Expr *lhs, *rhs;
    ArrayAccess access;
  };
  std::vector<Write> writes;
  UpdateTranslator translator(ctx, diags, scope);
  for (const Stmt *s : body) {
    if (const auto *ds = dyn_cast<DeclStmt>(s)) {
      const auto *var =
          ds->isSingleDecl() ? dyn_cast<VarDecl>(ds->getSingleDecl()) : nullptr;
      if (var && var->getInit() && var->getType()->isIntegerType()) {
        scope.indexLets[var] = var->getInit();
        continue;
      }
      if (var && var->getInit() && var->getType()->isRealFloatingType())
        continue;
    }
    const auto *bin = dyn_cast_or_null<BinaryOperator>(asExpr(s));
    bool arrayWrite =
        bin && bin->getOpcode() == BO_Assign && !varOf(bin->getLHS()) &&
        (isa<ArraySubscriptExpr>(bin->getLHS()->IgnoreParenImpCasts()) ||
         isa<CXXOperatorCallExpr>(bin->getLHS()->IgnoreParenImpCasts()));
    if (!arrayWrite) {
      diags.error(s->getBeginLoc(),
                  "unsupported statement in the loop nest; the innermost "
                  "loop may hold only array assignments and local constants");
      return std::nullopt;
    }
  }
  for (const Stmt *s : body) {
    const auto *bin = dyn_cast_or_null<BinaryOperator>(asExpr(s));
    if (!bin)
      continue;
    std::optional<ArrayAccess> access = translator.analyzeAccess(bin->getLHS());
    if (!access)
      return std::nullopt;
    const VarDecl *array = access->array;
    for (unsigned a = 0; a < scope.dims; ++a)
      if (access->offset[a] != 0) {
        diags.error(bin->getLHS()->getExprLoc(),
                    "'" + array->getName() +
                        "' is written at an offset from the loop point; a "
                        "stencil writes exactly the point it computes",
                    bin->getLHS()->getSourceRange());
        return std::nullopt;
      }
    if (scope.written.count(array)) {
      diags.error(bin->getLHS()->getExprLoc(),
                  "'" + array->getName() + "' is written twice in the nest",
                  bin->getLHS()->getSourceRange());
      diags.note(scope.written[array]->getExprLoc(), "the first write is here");
      return std::nullopt;
    }
    scope.written[array] = bin->getLHS();
    writes.push_back({bin->getLHS(), bin->getRHS(), *access});
  }
  if (writes.empty()) {
    diags.error(outer->getForLoc(),
                "unsupported statement in the loop nest; the innermost loop "
                "may hold only array assignments and local constants");
    return std::nullopt;
  }
  scope.computeFloat = writes[0].access.cType == "float";
  out.cType = writes[0].access.cType;
  out.elemType = scope.computeFloat ? "f32" : "f64";

  // Which buffer each written array is computed from.
  std::map<const VarDecl *, const VarDecl *> sourceOf; // written -> read
  for (const BufferPair &p : pairs) {
    const VarDecl *written = nullptr, *other = nullptr;
    if (out.exchange == Exchange::CopyBack) {
      if (scope.written.count(p.b) && !scope.written.count(p.a)) {
        written = p.b;
        other = p.a;
      }
      if (!written) {
        diags.error(p.stmt->getBeginLoc(),
                    "the copy-back loop must copy each computed point back, "
                    "as in 'u[i] = unew[i]', over the loop nest's own range");
        return std::nullopt;
      }
    } else {
      bool wa = scope.written.count(p.a), wb = scope.written.count(p.b);
      if (wa != wb) {
        written = wa ? p.a : p.b;
        other = wa ? p.b : p.a;
      }
      if (!written) {
        diags.error(p.stmt->getBeginLoc(),
                    "unexpected statement in the time loop; it may hold only "
                    "the loop nest and the buffer swap");
        return std::nullopt;
      }
    }
    if (sourceOf.count(written)) {
      diags.error(p.stmt->getBeginLoc(),
                  "unexpected statement in the time loop; it may hold only "
                  "the loop nest and the buffer swap");
      return std::nullopt;
    }
    sourceOf[written] = other;
  }
  for (const Write &w : writes)
    if (!sourceOf.count(w.access.array)) {
      diags.error(w.lhs->getExprLoc(),
                  "'" + w.access.array->getName() +
                      "' is written but no swap or copy pairs it with the "
                      "array it is computed from",
                  w.lhs->getSourceRange());
      return std::nullopt;
    }

  // Translate in source order, so grids are declared as they are met.
  std::vector<std::vector<ArrayAccess>> updateReads;
  std::vector<ArrayAccess> allReads;
  for (const Stmt *s : body) {
    if (const auto *ds = dyn_cast<DeclStmt>(s)) {
      const auto *var = cast<VarDecl>(ds->getSingleDecl());
      if (scope.indexLets.count(var))
        continue;
      std::optional<std::string> text = translator.translate(var->getInit());
      if (!text)
        return std::nullopt;
      std::vector<ArrayAccess> reads = translator.takeReads();
      allReads.insert(allReads.end(), reads.begin(), reads.end());
      out.lets.push_back({translator.defineLet(var, reads), *text});
      continue;
    }
    const auto *bin = cast<BinaryOperator>(asExpr(s));
    const Write &w = *llvm::find_if(
        writes, [&](const Write &x) { return x.lhs == bin->getLHS(); });
    const VarDecl *grid = sourceOf[w.access.array];
    translator.registerGrid(grid);
    if (!translator.checkLayout(grid, w.access))
      return std::nullopt;
    std::optional<std::string> text = translator.translate(w.rhs);
    if (!text)
      return std::nullopt;
    std::vector<ArrayAccess> reads = translator.takeReads();
    allReads.insert(allReads.end(), reads.begin(), reads.end());
    updateReads.push_back(reads);
    out.updates.push_back({0, *text});
    out.updates.back().array = static_cast<unsigned>(
        llvm::find(translator.grids(), grid) - translator.grids().begin());
  }

  // The boundary clause: one condition for all axes, or one per axis.
  std::vector<BoundarySpec> bounds(out.dims);
  if (pragma.boundary.size() == 1) {
    bounds.assign(out.dims, pragma.boundary[0]);
  } else if (pragma.boundary.size() == out.dims) {
    bounds = pragma.boundary;
  } else if (!pragma.boundary.empty()) {
    diags.error(pragma.boundaryLoc,
                "boundary lists " + std::to_string(pragma.boundary.size()) +
                    " conditions for a " + std::to_string(out.dims) +
                    "-D nest; give one, or one per axis");
    return std::nullopt;
  }

  // The reach: how far the nest reads below and above the loop point.
  auto reachOf = [&](const std::vector<ArrayAccess> &reads, unsigned a,
                     int64_t &lo, int64_t &hi) {
    lo = hi = 0;
    for (const ArrayAccess &r : reads) {
      lo = std::max(lo, -r.offset[a]);
      hi = std::max(hi, r.offset[a]);
    }
  };
  for (unsigned a = 0; a < out.dims; ++a) {
    const CountedLoop &l = nest[a];
    int64_t lo, hi;
    reachOf(allReads, a, lo, hi);
    // The value of this build, even where the bound is a macro.
    std::optional<int64_t> start = l.lo.asConstant();
    Expr::EvalResult startValue;
    if (!start && !l.loExpr->isValueDependent() &&
        l.loExpr->EvaluateAsInt(startValue, ctx))
      start = startValue.Val.getInt().getExtValue();
    if (start && *start < lo) {
      diags.error(l.loExpr->getExprLoc(),
                  "the loop over '" + l.counter->getName() + "' starts at " +
                      std::to_string(*start) + " but the update reads " +
                      std::to_string(lo) +
                      " point(s) below it, outside the array",
                  l.loExpr->getSourceRange());
      return std::nullopt;
    }
    LiftedAxis axis;
    axis.counter = l.counter->getName().str();
    axis.lo = l.lo;
    axis.hi = l.hi;
    if (bounds[a].kind == BoundaryKind::Fixed) {
      // The loop never writes the band around its range: the grid is the
      // range widened by the reach, and the band is the fixed boundary.
      for (size_t u = 0; u < out.updates.size(); ++u) {
        int64_t ulo, uhi;
        reachOf(updateReads[u], a, ulo, uhi);
        if (ulo != lo || uhi != hi) {
          const Write &w = writes[u];
          diags.error(w.lhs->getExprLoc(),
                      "with the fixed boundary every update must read as far "
                      "as the nest does: '" +
                          w.access.array->getName() + "' reaches -" +
                          std::to_string(ulo) + ":+" + std::to_string(uhi) +
                          " along '" + axis.counter + "', the nest -" +
                          std::to_string(lo) + ":+" + std::to_string(hi),
                      w.lhs->getSourceRange());
          return std::nullopt;
        }
      }
      axis.origin = l.lo - lo;
      axis.extent = l.hi - l.lo + (lo + hi);
      axis.computedOffset = lo;
    } else {
      axis.origin = l.lo;
      axis.extent = l.hi - l.lo;
      axis.computedOffset = 0;
    }
    out.axes.push_back(axis);
  }
  for (const BoundarySpec &b : bounds)
    if (b.kind == BoundaryKind::Periodic || b.kind == BoundaryKind::Clamp) {
      diags.warning(
          pragma.boundaryLoc,
          "boundary '" + b.str() + "' changes the edges: the lifted stencil " +
              (b.kind == BoundaryKind::Periodic ? "wraps" : "clamps") +
              " its reads at the ends of the loop's range, where "
              "the loop reads the array beyond them");
      break;
    }

  for (const VarDecl *var : translator.grids()) {
    LiftedArray arr;
    arr.name = translator.gridName(var);
    arr.cName = var->getName().str();
    for (const auto &[written, source] : sourceOf)
      if (source == var)
        arr.partner = written->getName().str();
    const ArrayLayout *l = translator.layout(var);
    arr.subscripts = l->subscripts;
    arr.rowPitch = l->rowPitch;
    arr.slicePitch = l->slicePitch;
    for (unsigned a = 0; a < out.dims; ++a) {
      BoundarySpec b = bounds[a];
      // A grid the nest only reads is never frozen: `fixed` is for updated
      // grids. The loop's reads stay inside its grid, so clamping never
      // changes a value.
      if (!arr.updated() && b.kind == BoundaryKind::Fixed)
        b.kind = BoundaryKind::Clamp;
      arr.boundary.push_back(b);
    }
    out.arrays.push_back(arr);
  }
  out.params = translator.params();

  // A swap or a second sweep reads, in alternate steps, the fixed band of
  // one buffer and of the other; the stencil has one band. The rewrite
  // compares the two before it runs, and runs the loop as it was when they
  // differ (PolyBench initializes A and B differently).
  if (out.exchange != Exchange::CopyBack)
    for (const LiftedArray &arr : out.arrays)
      if (arr.updated())
        for (const BoundarySpec &b : arr.boundary)
          if (b.kind == BoundaryKind::Fixed)
            out.checkBands = true;
  if (out.checkBands) {
    std::vector<std::string> names;
    for (const LiftedArray &arr : out.arrays)
      if (arr.updated())
        names.push_back("'" + arr.cName + "' and '" + arr.partner + "'");
    diags.remark(loop->getForLoc(),
                 "the loop reads the edges it never writes from " +
                     llvm::join(names, ", ") +
                     " in alternate steps; the rewritten code runs the "
                     "stencil when the two buffers' edges are equal, and this "
                     "loop as it is otherwise");
  }
  out.loopText = sourceText(loop, ctx);

  const SourceManager &sm = ctx.getSourceManager();
  SourceLocation hash = sm.getExpansionLoc(pragma.loc);
  out.replaceBegin =
      hash.getLocWithOffset(-int(sm.getSpellingColumnNumber(hash) - 1));
  out.replaceEnd = Lexer::getLocForEndOfToken(
      sm.getExpansionLoc(loop->getEndLoc()), 0, sm, ctx.getLangOpts());
  out.firstLine = sm.getSpellingLineNumber(hash);
  out.lastLine =
      sm.getSpellingLineNumber(sm.getExpansionLoc(loop->getEndLoc()));
  out.indent =
      sm.getSpellingColumnNumber(sm.getExpansionLoc(loop->getForLoc())) - 1;
  return out;
}
