//===- Interpreter.cpp - CPU reference execution of the Stencil IR --------===//

#include "stencilc/IR/Interpreter.h"
#include "stencilc/IR/Evaluate.h"
#include "stencilc/IR/LinearForm.h"

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
  for (const StepItem &item : stencil.order) {
    int root = item.stage ? stencil.stages[item.index].root
                          : stencil.updates[item.index].written;
    std::vector<bool> live = stencil.graph.reachable({root});
    std::vector<int> program;
    for (size_t i = 0; i < live.size(); ++i)
      if (live[i])
        program.push_back(static_cast<int>(i));
    programs.push_back(std::move(program));
  }
  for (const Grid &g : stencil.grids)
    gridDirichlet.push_back(dirichletValues(g));
  for (const Stage &st : stencil.stages)
    stageDirichlet.push_back(dirichletValues(st));
}

std::vector<double> Interpreter::dirichletValues(const Field &f) const {
  // A value built from parameters is evaluated in double from their values
  // (rounded to their declared types), as the host of the generated code
  // does; both then use it in the compute type.
  std::vector<double> v;
  for (const AxisBoundary &b : f.boundary)
    for (const BoundarySide &side : b.side)
      v.push_back(side.node >= 0
                      ? evaluateGridFree(stencil.graph, side.node, params)
                      : side.value);
  return v;
}

void Interpreter::setGrid(int i, const std::vector<double> &values) {
  data[i] = values;
  data[i].resize(total, 0.0);
  if (precision == RefPrecision::GridType)
    for (double &v : data[i])
      v = roundTo(stencil.grids[i].type, v);
}

double Interpreter::readField(const std::vector<AxisBoundary> &boundary,
                              const std::vector<double> &dirichlet,
                              const std::vector<double> &values,
                              const std::array<int64_t, kMaxDims> &q) const {
  // A Dirichlet side that is left decides the value, the lowest axis first.
  for (int a = 0; a < stencil.dims; ++a) {
    int side = q[a] < 0 ? 0 : q[a] >= n[a] ? 1 : -1;
    if (side >= 0 && boundary[a].side[side].kind == BoundaryKind::Dirichlet)
      return dirichlet[2 * a + side];
  }
  int64_t index = 0;
  for (int a = 0; a < stencil.dims; ++a) {
    int64_t x = q[a];
    if (boundary[a].periodic())
      x = ((x % n[a]) + n[a]) % n[a];
    else
      x = std::clamp<int64_t>(x, 0, n[a] - 1);
    index = index * n[a] + x;
  }
  return values[index];
}

double Interpreter::read(int g, const std::array<int64_t, kMaxDims> &q) const {
  return readField(stencil.grids[g].boundary, gridDirichlet[g], data[g], q);
}

template <typename C> void Interpreter::step() {
  const ExprGraph &g = stencil.graph;
  std::vector<std::vector<double>> out(data.size());
  std::vector<std::vector<double>> stageData(stencil.stages.size());
  std::vector<C> v(g.size());
  std::vector<C> paramValues(params.begin(), params.end());
  std::array<int64_t, kMaxDims> p{0, 0, 0};
  const C t = static_cast<C>(stepIndex);
  for (size_t item = 0; item < stencil.order.size(); ++item) {
    const StepItem &it = stencil.order[item];
    const Update *u = it.stage ? nullptr : &stencil.updates[it.index];
    std::vector<double> &result = it.stage ? stageData[it.index] : out[u->grid];
    result.resize(total);
    int root = it.stage ? stencil.stages[it.index].root : u->written;
    for (int64_t idx = 0; idx < total; ++idx) {
      int64_t rest = idx;
      for (int a = stencil.dims - 1; a >= 0; --a) {
        p[a] = rest % n[a];
        rest /= n[a];
      }
      for (int i : programs[item]) {
        const Node &node = g[i];
        C a = node.lhs >= 0 ? v[node.lhs] : C(0);
        C b = node.rhs >= 0 ? v[node.rhs] : C(0);
        C c = node.third >= 0 ? v[node.third] : C(0);
        std::array<int64_t, kMaxDims> q = p;
        for (int ax = 0; ax < stencil.dims; ++ax)
          q[ax] += node.offset[ax];
        switch (node.op) {
        case Op::Const:
          v[i] = static_cast<C>(node.value);
          break;
        case Op::Param:
          v[i] = paramValues[node.index];
          break;
        case Op::Read:
          v[i] = static_cast<C>(read(node.index, q));
          break;
        case Op::StageRead:
          v[i] = static_cast<C>(readField(stencil.stages[node.index].boundary,
                                          stageDirichlet[node.index],
                                          stageData[node.index], q));
          break;
        case Op::NewRead:
          v[i] = static_cast<C>(readField(stencil.grids[node.index].boundary,
                                          gridDirichlet[node.index],
                                          out[node.index], q));
          break;
        case Op::Step:
          v[i] = t;
          break;
        case Op::Coord:
          v[i] = static_cast<C>(q[node.index]);
          break;
        default:
          v[i] = applyOp(node, a, b, c);
          break;
        }
      }
      if (it.stage) {
        result[idx] = static_cast<double>(v[root]);
        continue;
      }
      const Grid &grid = stencil.grids[u->grid];
      bool frozen = false;
      for (int a = 0; a < stencil.dims; ++a) {
        const AxisBoundary &b = grid.boundary[a];
        if ((b.side[0].kind == BoundaryKind::Fixed && p[a] < u->reachLo[a]) ||
            (b.side[1].kind == BoundaryKind::Fixed &&
             p[a] >= n[a] - u->reachHi[a]))
          frozen = true;
      }
      double value = frozen ? data[u->grid][idx] : static_cast<double>(v[root]);
      if (precision == RefPrecision::GridType)
        value = roundTo(grid.type, value);
      result[idx] = value;
    }
  }
  for (const Update &u : stencil.updates)
    data[u.grid] = std::move(out[u.grid]);
  ++stepIndex;
}

void Interpreter::run(int64_t steps) {
  bool useDouble =
      precision == RefPrecision::Float64 || stencil.compType == ElemType::F64;
  stepIndex = 0;
  for (int64_t s = 0; s < steps; ++s) {
    if (useDouble)
      step<double>();
    else
      step<float>();
  }
}
