//===- TemporalFusion.cpp - t steps of a linear stencil as one ------------===//

#include "stencilc/Transforms/TemporalFusion.h"

#include <cmath>
#include <map>

using namespace stencilc;

static bool isZero(const ExprGraph &g, int node) {
  return g[node].op == Op::Const && g[node].value == 0.0;
}

bool stencilc::fuseTemporally(Stencil &s, int steps,
                              DiagnosticEngine &diags) {
  if (steps < 1) {
    diags.error(s.loc, "temporal fusion of stencil '" + s.name +
                           "' needs at least 1 step, not " +
                           llvm::Twine(steps));
    return false;
  }
  if (s.updates.size() != 1 || !s.updates[0].linear ||
      s.updates[0].linear->constant >= 0) {
    diags.error(s.loc, "temporal fusion needs a linear stencil of one grid "
                       "without a constant term; stencil '" +
                           s.name + "' is not");
    return false;
  }
  const Update &u = s.updates[0];
  for (const Tap &t : u.linear->taps)
    if (t.grid != u.grid) {
      diags.error(s.loc, "temporal fusion of stencil '" + s.name +
                             "' would fuse reads of grid '" +
                             s.grids[t.grid].name +
                             "', which the update does not advance");
      return false;
    }

  // K^(k+1)(o) = sum over p + q = o of K(p) * K^(k)(q).
  std::map<Offset, int> current;
  for (const Tap &t : u.linear->taps)
    current[t.offset] = t.coeff;
  const std::map<Offset, int> base = current;
  for (int k = 1; k < steps; ++k) {
    std::map<Offset, std::vector<int>> terms;
    for (const auto &[p, cp] : base)
      for (const auto &[q, cq] : current) {
        Offset o{p[0] + q[0], p[1] + q[1], p[2] + q[2]};
        terms[o].push_back(s.graph.binary(Op::Mul, cp, cq));
      }
    current.clear();
    for (auto &[o, list] : terms) {
      int sum = s.graph.balancedSum(list);
      if (!isZero(s.graph, sum))
        current[o] = sum;
    }
  }

  // The fused coefficients are folded in double where they are constant,
  // and the kernel computes with them in the compute type: products of
  // `steps` coefficients may overflow it although each one fits
  // (docs/language.md §4.7). Automatic fusion then tries fewer steps. The
  // operand type of the tensor cores, narrower for f16, is planTensorCore's
  // to check: --emit=matrix shows such programs too.
  ElemType comp = s.compType;
  std::vector<int> coeffs;
  for (const auto &[o, c] : current)
    coeffs.push_back(c);
  std::vector<bool> live = s.graph.reachable(coeffs);
  for (size_t i = 0; i < live.size(); ++i) {
    double v = s.graph[i].value;
    if (live[i] && s.graph[i].op == Op::Const && !isFiniteIn(comp, v)) {
      diags.error(s.loc, "temporal fusion of stencil '" + s.name + "' over " +
                             llvm::Twine(steps) +
                             " steps makes a coefficient that is not finite "
                             "in " +
                             elemTypeName(comp) +
                             ", its compute type; fuse fewer steps");
      return false;
    }
  }

  FusedKernel f;
  f.steps = steps;
  f.grid = u.grid;
  f.baseTaps = static_cast<int>(base.size());
  for (const auto &[o, c] : current)
    f.taps.push_back(Tap{u.grid, o, c});
  f.alpha = static_cast<double>(f.taps.size()) /
            (static_cast<double>(steps) * f.baseTaps);
  // The fused kernel is exact where every step's inlined form is: `span`
  // from each non-periodic edge (the reach, where the update reads no
  // stage or new value).
  const Grid &g = s.grids[u.grid];
  for (int a = 0; a < s.dims; ++a) {
    if (g.boundary[a].periodic())
      continue;
    f.bandLo[a] = steps * u.spanLo[a];
    f.bandHi[a] = steps * u.spanHi[a];
  }
  s.fused = std::move(f);
  return true;
}
