//===- Interpreter.cpp - CPU reference execution of the Stencil IR --------===//

#include "stencilc/IR/Interpreter.h"
#include "stencilc/IR/Evaluate.h"

#include <algorithm>
#include <cmath>

using namespace stencilc;

Interpreter::Interpreter(const Stencil &stencil, const Sizes &sizes,
                         std::vector<double> paramValues,
                         RefPrecision precision)
    : stencil(stencil), params(std::move(paramValues)), precision(precision) {
  for (int a = 0; a < stencil.dims; ++a) {
    n[a] = sizes[a];
    total *= sizes[a];
  }
  data.assign(stencil.grids.size(), std::vector<double>(total, 0.0));
  // A parameter holds a value of its declared type in both modes: that is
  // the value the generated code receives.
  for (size_t p = 0; p < params.size(); ++p)
    params[p] = roundTo(stencil.params[p].type, params[p]);
  std::vector<bool> live = stencil.graph.reachable(stencil.roots());
  for (size_t i = 0; i < live.size(); ++i)
    if (live[i])
      program.push_back(static_cast<int>(i));
}

void Interpreter::setGrid(int i, const std::vector<double> &values) {
  data[i] = values;
  data[i].resize(total, 0.0);
  if (precision == RefPrecision::GridType)
    for (double &v : data[i])
      v = roundTo(stencil.grids[i].type, v);
}

double Interpreter::read(int g, const std::array<int64_t, kMaxDims> &q) const {
  const Grid &grid = stencil.grids[g];
  // A Dirichlet axis that is left decides the value, the lowest axis first.
  for (int a = 0; a < stencil.dims; ++a)
    if (grid.boundary[a].kind == BoundaryKind::Dirichlet &&
        (q[a] < 0 || q[a] >= n[a]))
      return grid.boundary[a].value;
  int64_t index = 0;
  for (int a = 0; a < stencil.dims; ++a) {
    int64_t x = q[a];
    if (grid.boundary[a].kind == BoundaryKind::Periodic)
      x = ((x % n[a]) + n[a]) % n[a];
    else
      x = std::clamp<int64_t>(x, 0, n[a] - 1);
    index = index * n[a] + x;
  }
  return data[g][index];
}

template <typename C> void Interpreter::step() {
  const ExprGraph &g = stencil.graph;
  std::vector<std::vector<double>> out(data.size());
  for (const Update &u : stencil.updates)
    out[u.grid].resize(total);
  std::vector<C> v(g.size());
  std::vector<C> paramValues(params.begin(), params.end());
  std::array<int64_t, kMaxDims> p{0, 0, 0};
  for (int64_t idx = 0; idx < total; ++idx) {
    int64_t rest = idx;
    for (int a = stencil.dims - 1; a >= 0; --a) {
      p[a] = rest % n[a];
      rest /= n[a];
    }
    for (int i : program) {
      const Node &node = g[i];
      C a = node.lhs >= 0 ? v[node.lhs] : C(0);
      C b = node.rhs >= 0 ? v[node.rhs] : C(0);
      if (node.op == Op::Const) {
        v[i] = static_cast<C>(node.value);
      } else if (node.op == Op::Param) {
        v[i] = paramValues[node.index];
      } else if (node.op == Op::Read) {
        std::array<int64_t, kMaxDims> q = p;
        for (int ax = 0; ax < stencil.dims; ++ax)
          q[ax] += node.offset[ax];
        v[i] = static_cast<C>(read(node.index, q));
      } else {
        v[i] = applyOp(node.op, a, b, node.exponent);
      }
    }
    for (const Update &u : stencil.updates) {
      const Grid &grid = stencil.grids[u.grid];
      bool frozen = false;
      for (int a = 0; a < stencil.dims; ++a)
        if (grid.boundary[a].kind == BoundaryKind::Fixed &&
            (p[a] < u.reachLo[a] || p[a] >= n[a] - u.reachHi[a]))
          frozen = true;
      double value = frozen ? data[u.grid][idx] : static_cast<double>(v[u.root]);
      if (precision == RefPrecision::GridType)
        value = roundTo(grid.type, value);
      out[u.grid][idx] = value;
    }
  }
  for (const Update &u : stencil.updates)
    data[u.grid] = std::move(out[u.grid]);
}

void Interpreter::run(int64_t steps) {
  bool useDouble = precision == RefPrecision::Float64 ||
                   computeType(stencil.elemType) == ElemType::F64;
  for (int64_t s = 0; s < steps; ++s) {
    if (useDouble)
      step<double>();
    else
      step<float>();
  }
}
