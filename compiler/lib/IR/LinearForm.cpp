//===- LinearForm.cpp - Extracting taps from an update --------------------===//

#include "stencilc/IR/LinearForm.h"
#include "stencilc/IR/Evaluate.h"

#include <cmath>
#include <map>
#include <tuple>

using namespace stencilc;

namespace {
using TapKey = std::tuple<int, int, int, int>;
/// Affine form under construction: taps and constant are grid-free nodes.
struct Affine {
  std::map<TapKey, int> taps;
  int constant = -1;
};
} // namespace

// The helpers below take the location of the operation they extract, so a
// coefficient that folds to a value the compute type cannot hold is reported
// there (Frontend/Values.h).
static int addOpt(ExprGraph &g, int a, int b, llvm::SMLoc loc) {
  if (a < 0)
    return b;
  if (b < 0)
    return a;
  return g.binary(Op::Add, a, b, loc);
}

static bool isConst(const ExprGraph &g, int node, double v) {
  return g[node].op == Op::Const && g[node].value == v;
}

/// coeff op c, without the multiplications by one that tap extraction would
/// otherwise leave in every coefficient (x * 1 and x / 1 are exact).
static int combine(ExprGraph &g, int coeff, int c, Op op, llvm::SMLoc loc) {
  if (isConst(g, c, 1.0))
    return coeff;
  if (op == Op::Mul && isConst(g, coeff, 1.0))
    return c;
  if (op == Op::Mul && isConst(g, c, -1.0))
    return g.unary(Op::Neg, coeff, loc);
  return g.binary(op, coeff, c, loc);
}

static Affine scale(ExprGraph &g, const Affine &f, int c, Op op,
                    llvm::SMLoc loc) {
  Affine out;
  for (const auto &[k, coeff] : f.taps)
    out.taps[k] = combine(g, coeff, c, op, loc);
  if (f.constant >= 0)
    out.constant = combine(g, f.constant, c, op, loc);
  return out;
}

/// The taps of `f`, those whose coefficient folded to exactly zero left
/// out (no tap).
static std::vector<Tap> tapsOf(const ExprGraph &graph, const Affine &f) {
  std::vector<Tap> taps;
  for (const auto &[k, coeff] : f.taps) {
    if (graph[coeff].op == Op::Const && graph[coeff].value == 0.0)
      continue;
    Tap t;
    t.grid = std::get<0>(k);
    t.offset = {std::get<1>(k), std::get<2>(k), std::get<3>(k)};
    t.coeff = coeff;
    taps.push_back(t);
  }
  return taps;
}

/// The affine form of `root`, by one forward sweep (node indices are
/// topological; nodes added for coefficients lie past the root and are never
/// visited). A coefficient is a grid-free node: the same at every point and
/// step. Without `dropSource`, every other node must be affine in the
/// grids' reads, and grid-free nodes make up the constant. With it, a node
/// that reads no grid but depends on the point or the step (a source term)
/// counts as zero, and the constant is dropped with it: the linear part of
/// an affine step whose source varies.
static std::optional<Affine> affineForm(ExprGraph &graph, int root,
                                        bool dropSource) {
  std::vector<bool> live = graph.reachable({root});
  size_t n = static_cast<size_t>(root) + 1;
  // fieldFree[i]: node i reads no grid (it may depend on the point or step).
  std::vector<bool> fieldFree(n, false);
  std::vector<std::optional<Affine>> form(n);
  for (size_t i = 0; i < n; ++i) {
    if (!live[i])
      continue;
    const Node node = graph[i];
    bool ff = !isReadOp(node.op);
    for (int o : {node.lhs, node.rhs, node.third})
      ff = ff && (o < 0 || fieldFree[o]);
    fieldFree[i] = ff;
    Affine f;
    if (dropSource ? ff : graph.isGridFree(i)) {
      if (!dropSource)
        f.constant = static_cast<int>(i);
      form[i] = std::move(f);
      continue;
    }
    auto lhs = node.lhs >= 0 ? form[node.lhs] : std::nullopt;
    auto rhs = node.rhs >= 0 ? form[node.rhs] : std::nullopt;
    switch (node.op) {
    case Op::Read:
      f.taps[{node.index, node.offset[0], node.offset[1], node.offset[2]}] =
          graph.constant(1.0);
      break;
    case Op::Neg:
      if (!lhs)
        return std::nullopt;
      f = scale(graph, *lhs, graph.constant(-1.0), Op::Mul, node.loc);
      break;
    case Op::Add:
    case Op::Sub: {
      if (!lhs || !rhs)
        return std::nullopt;
      f = *lhs;
      Affine r = node.op == Op::Sub ? scale(graph, *rhs, graph.constant(-1.0),
                                            Op::Mul, node.loc)
                                    : *rhs;
      for (const auto &[k, coeff] : r.taps)
        f.taps[k] =
            addOpt(graph, f.taps.count(k) ? f.taps[k] : -1, coeff, node.loc);
      f.constant = addOpt(graph, f.constant, r.constant, node.loc);
      break;
    }
    case Op::Mul:
      // One factor must be a coefficient.
      if (lhs && graph.isGridFree(node.lhs) && rhs)
        f = scale(graph, *rhs, node.lhs, Op::Mul, node.loc);
      else if (rhs && graph.isGridFree(node.rhs) && lhs)
        f = scale(graph, *lhs, node.rhs, Op::Mul, node.loc);
      else
        return std::nullopt;
      break;
    case Op::Div:
      if (!lhs || !rhs || !graph.isGridFree(node.rhs))
        return std::nullopt;
      f = scale(graph, *lhs, node.rhs, Op::Div, node.loc);
      break;
    default:
      // min, max, sqrt, abs, pow, the other functions and selects of a grid
      // read are not affine, nor are selects whose branches read grids under
      // a condition of the point or the step (not one operator at every
      // point).
      return std::nullopt;
    }
    form[i] = std::move(f);
  }
  return form[root];
}

std::optional<LinearForm> stencilc::extractLinearForm(ExprGraph &graph,
                                                      int root) {
  std::optional<Affine> f = affineForm(graph, root, /*dropSource=*/false);
  if (!f)
    return std::nullopt;
  LinearForm out;
  out.taps = tapsOf(graph, *f);
  out.constant = f->constant;
  if (out.constant >= 0 && graph[out.constant].op == Op::Const &&
      graph[out.constant].value == 0.0)
    out.constant = -1;
  return out;
}

std::optional<LinearForm> stencilc::extractLinearPart(ExprGraph &graph,
                                                      int root) {
  std::optional<Affine> f = affineForm(graph, root, /*dropSource=*/true);
  if (!f)
    return std::nullopt;
  LinearForm out;
  out.taps = tapsOf(graph, *f);
  return out;
}

static double evaluateNode(const Node &n, const std::vector<double> &v,
                           const std::vector<double> &params) {
  double a = n.lhs >= 0 ? v[n.lhs] : 0, b = n.rhs >= 0 ? v[n.rhs] : 0;
  double c = n.third >= 0 ? v[n.third] : 0;
  if (n.op == Op::Const)
    return n.value;
  if (n.op == Op::Param)
    // Callers that know the coefficients they need are constant pass no
    // parameters; the nodes of parameters then have no value.
    return static_cast<size_t>(n.index) < params.size() ? params[n.index] : NAN;
  if (isReadOp(n.op) || n.op == Op::Step || n.op == Op::Coord)
    return NAN; // Not grid-free.
  return applyOp(n, a, b, c);
}

double stencilc::evaluateGridFree(const ExprGraph &graph, int node,
                                  const std::vector<double> &params) {
  std::vector<bool> live = graph.reachable({node});
  std::vector<double> v(node + 1, 0.0);
  for (int i = 0; i <= node; ++i)
    if (live[i])
      v[i] = evaluateNode(graph[i], v, params);
  return v[node];
}

std::vector<double>
stencilc::evaluateGridFreeAll(const ExprGraph &graph,
                              const std::vector<double> &params) {
  std::vector<double> v(graph.size(), 0.0);
  for (size_t i = 0; i < graph.size(); ++i)
    v[i] = evaluateNode(graph[i], v, params);
  return v;
}
