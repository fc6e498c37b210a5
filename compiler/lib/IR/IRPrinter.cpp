//===- IRPrinter.cpp - Stable text of the Stencil IR ----------------------===//

#include "stencilc/IR/IRPrinter.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace stencilc;

std::string stencilc::formatNumber(double v) {
  char buf[64];
  // Whole numbers of moderate size print as integers (10, not 1e+01).
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  return buf;
}

static void formatOffset(const Stencil &s, const Offset &off,
                         llvm::raw_ostream &os) {
  os << "[";
  for (int a = 0; a < s.dims; ++a)
    os << (a ? "," : "") << off[a];
  os << "]";
}

static std::string coefficientText(const Stencil &s, int i, int parentPrec) {
  const Node &n = s.graph[i];
  auto wrap = [&](std::string text, int prec) {
    return prec < parentPrec ? "(" + text + ")" : text;
  };
  switch (n.op) {
  case Op::Const:
    return n.value < 0 && parentPrec > 1 ? "(" + formatNumber(n.value) + ")"
                                         : formatNumber(n.value);
  case Op::Param:
    return s.params[n.index].name;
  case Op::Neg:
    return wrap("-" + coefficientText(s, n.lhs, 3), 3);
  case Op::Add:
    return wrap(coefficientText(s, n.lhs, 1) + " + " +
                    coefficientText(s, n.rhs, 2),
                1);
  case Op::Sub:
    return wrap(coefficientText(s, n.lhs, 1) + " - " +
                    coefficientText(s, n.rhs, 2),
                1);
  case Op::Mul:
    return wrap(coefficientText(s, n.lhs, 2) + " * " +
                    coefficientText(s, n.rhs, 3),
                2);
  case Op::Div:
    return wrap(coefficientText(s, n.lhs, 2) + " / " +
                    coefficientText(s, n.rhs, 3),
                2);
  case Op::Min:
  case Op::Max:
    return opName(n.op).str() + "(" + coefficientText(s, n.lhs, 0) + ", " +
           coefficientText(s, n.rhs, 0) + ")";
  case Op::Sqrt:
  case Op::Abs:
    return opName(n.op).str() + "(" + coefficientText(s, n.lhs, 0) + ")";
  case Op::Pow:
    return "pow(" + coefficientText(s, n.lhs, 0) + ", " +
           std::to_string(n.exponent) + ")";
  case Op::Read:
    break;
  }
  return "?";
}

std::string stencilc::formatCoefficient(const Stencil &stencil, int node) {
  return coefficientText(stencil, node, 0);
}

static void printBoundary(const Grid &g, llvm::raw_ostream &os) {
  for (size_t a = 0; a < g.boundary.size(); ++a) {
    os << (a ? ", " : "") << boundaryKindName(g.boundary[a].kind);
    if (g.boundary[a].kind == BoundaryKind::Dirichlet)
      os << "(" << formatNumber(g.boundary[a].value) << ")";
  }
}

static void printFused(const Stencil &s, const FusedKernel &f,
                       llvm::raw_ostream &os) {
  char alpha[32];
  std::snprintf(alpha, sizeof alpha, "%.4g", f.alpha);
  os << "  fused " << s.grids[f.grid].name << ": steps=" << f.steps
     << " taps=" << f.taps.size() << " base_taps=" << f.baseTaps
     << " alpha=" << alpha << " band=";
  for (int a = 0; a < s.dims; ++a)
    os << (a ? "," : "") << "-" << f.bandLo[a] << ":+" << f.bandHi[a];
  os << "\n";
  for (const Tap &t : f.taps) {
    os << "    " << s.grids[t.grid].name;
    formatOffset(s, t.offset, os);
    os << " * " << formatCoefficient(s, t.coeff) << "\n";
  }
}

void stencilc::printIR(const Stencil &s, llvm::raw_ostream &os) {
  os << "stencil " << s.name << " dims=" << s.dims
     << " type=" << elemTypeName(s.elemType)
     << " form=" << (s.isLinear() ? "linear" : "nonlinear")
     << " radius=" << s.radius() << "\n";
  for (const Grid &g : s.grids) {
    os << "  grid " << g.name << " : " << elemTypeName(g.type) << "["
       << s.dims << "] " << (g.updated ? "updated" : "readonly")
       << " boundary(";
    if (g.hasBoundary)
      printBoundary(g, os);
    else
      os << "none";
    os << ")\n";
  }
  for (const Param &p : s.params)
    os << "  param " << p.name << " : " << elemTypeName(p.type) << " = "
       << formatNumber(p.defaultValue) << "\n";
  if (s.hints.fuse)
    os << "  hint fuse = " << *s.hints.fuse << "\n";
  if (s.hints.steps)
    os << "  hint steps = " << *s.hints.steps << "\n";

  // Live nodes, renumbered densely so the text does not depend on nodes
  // that sema or linear-form extraction created and dropped.
  std::vector<bool> live = s.graph.reachable(s.roots());
  std::vector<int> number(s.graph.size(), -1);
  int next = 0;
  for (size_t i = 0; i < s.graph.size(); ++i) {
    if (!live[i])
      continue;
    number[i] = next++;
    const Node &n = s.graph[i];
    os << "  %" << number[i] << " = " << opName(n.op);
    switch (n.op) {
    case Op::Const:
      os << " " << formatNumber(n.value);
      break;
    case Op::Param:
      os << " " << s.params[n.index].name;
      break;
    case Op::Read:
      os << " " << s.grids[n.index].name;
      formatOffset(s, n.offset, os);
      break;
    case Op::Pow:
      os << " %" << number[n.lhs] << ", " << n.exponent;
      break;
    default:
      os << " %" << number[n.lhs];
      if (n.rhs >= 0)
        os << ", %" << number[n.rhs];
      break;
    }
    os << "\n";
  }
  for (const Update &u : s.updates) {
    os << "  update " << s.grids[u.grid].name << " = %" << number[u.root]
       << " reach=";
    for (int a = 0; a < s.dims; ++a)
      os << (a ? "," : "") << "-" << u.reachLo[a] << ":+" << u.reachHi[a];
    os << "\n";
    if (!u.linear) {
      os << "  linear " << s.grids[u.grid].name << ": none\n";
      continue;
    }
    os << "  linear " << s.grids[u.grid].name << ": " << u.linear->taps.size()
       << " taps";
    if (u.linear->constant >= 0)
      os << ", constant " << formatCoefficient(s, u.linear->constant);
    os << "\n";
    for (const Tap &t : u.linear->taps) {
      os << "    " << s.grids[t.grid].name;
      formatOffset(s, t.offset, os);
      os << " * " << formatCoefficient(s, t.coeff) << "\n";
    }
  }
  if (s.fused)
    printFused(s, *s.fused, os);
}

void stencilc::printIR(const Module &module, llvm::raw_ostream &os) {
  for (const Stencil &s : module.stencils)
    printIR(s, os);
}
