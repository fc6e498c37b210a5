//===- IRPrinter.cpp - Stable text of the Stencil IR ----------------------===//

#include "stencilc/IR/IRPrinter.h"
#include "stencilc/IR/LinearForm.h"
#include "stencilc/IR/MatrixEmulator.h"
#include "stencilc/IR/Weights.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Format.h"

#include <algorithm>
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
  case Op::StageRead:
  case Op::NewRead:
  case Op::Step:
  case Op::Coord:
  case Op::Round:
    break;
  default: {
    // The functions and conditions of parameters, as calls.
    std::string text = opName(n.op).str() + "(";
    int k = 0;
    for (int operand : {n.lhs, n.rhs, n.third})
      if (operand >= 0)
        text += (k++ ? ", " : "") + coefficientText(s, operand, 0);
    return text + ")";
  }
  }
  return "?";
}

std::string stencilc::formatCoefficient(const Stencil &stencil, int node) {
  return coefficientText(stencil, node, 0);
}

static void printSide(const Stencil &s, const BoundarySide &b,
                      llvm::raw_ostream &os) {
  os << boundaryKindName(b.kind);
  if (b.kind == BoundaryKind::Dirichlet)
    os << "("
       << (b.node >= 0 ? formatCoefficient(s, b.node) : formatNumber(b.value))
       << ")";
}

static void printBoundary(const Stencil &s, const Field &f,
                          llvm::raw_ostream &os) {
  for (size_t a = 0; a < f.boundary.size(); ++a) {
    os << (a ? ", " : "");
    const AxisBoundary &b = f.boundary[a];
    if (b.uniform()) {
      printSide(s, b.side[0], os);
      continue;
    }
    os << "(";
    printSide(s, b.side[0], os);
    os << ", ";
    printSide(s, b.side[1], os);
    os << ")";
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

/// `v`, a value of `t` (f32 or f64), in the fewest digits that read back
/// to it in `t`.
static std::string formatIn(ElemType t, double v) {
  if (t != ElemType::F32)
    return formatNumber(v);
  char buf[64];
  for (int prec = 1; prec <= 9; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtof(buf, nullptr) == static_cast<float>(v))
      break;
  }
  return buf;
}

/// The tap table of a linear update: each tap's coefficient and, where the
/// coefficients are constant, the weight the CUDA cores multiply by
/// (rounded to the compute type keeping each grid's sum, IR/Weights.h),
/// then each grid's sum before and after rounding.
static void printWeights(const Stencil &s, const Update &u,
                         llvm::raw_ostream &os) {
  const std::vector<Tap> &taps = u.linear->taps;
  const ElemType comp = s.compType;
  const std::string compName = elemTypeName(comp).str();
  std::vector<int> roots;
  for (const Tap &t : taps)
    roots.push_back(t.coeff);
  bool constant = true;
  std::vector<bool> live = s.graph.reachable(roots);
  for (size_t i = 0; i < live.size(); ++i)
    constant &= !live[i] || s.graph[i].op != Op::Param;
  std::vector<double> values, rounded;
  if (constant) {
    values = evaluateGridFreeAll(s.graph, {});
    rounded = roundedTapWeights(taps, values, roundingTo(s.compType));
  }
  for (size_t k = 0; k < taps.size(); ++k) {
    const Tap &t = taps[k];
    os << "    " << s.grids[t.grid].name;
    formatOffset(s, t.offset, os);
    os << " * " << formatCoefficient(s, t.coeff);
    if (constant)
      os << "  [" << compName << " " << formatIn(comp, rounded[k]) << "]";
    os << "\n";
  }
  if (taps.empty())
    return;
  if (!constant) {
    os << "    weights: from parameters, rounded to " << compName
       << " at run time keeping each grid's sum\n";
    return;
  }
  for (const std::vector<int> &group : weightGroups(taps)) {
    // Few enough terms of few enough binades that long double holds the
    // sums of doubles closely and those of the rounded weights exactly.
    long double exact = 0, kept = 0;
    for (int k : group) {
      exact += values[taps[k].coeff];
      kept += rounded[k];
    }
    os << "    sum " << s.grids[taps[group.front()].grid].name << ": "
       << formatNumber(static_cast<double>(exact)) << ", in " << compName
       << " " << formatIn(comp, static_cast<double>(kept))
       << (static_cast<double>(kept) == roundTo(comp, static_cast<double>(exact))
               ? " (kept)"
               : " (nearest the weights allow)")
       << "\n";
  }
}

void stencilc::printIR(const Stencil &s, llvm::raw_ostream &os) {
  os << "stencil " << s.name << " dims=" << s.dims << " type="
     << (s.mixedTypes() ? "mixed compute=" + elemTypeName(s.compType).str()
                        : elemTypeName(s.elemType).str())
     << " form=" << (s.isLinear() ? "linear" : "nonlinear")
     << " radius=" << s.radius() << "\n";
  for (const Grid &g : s.grids) {
    os << "  grid " << g.name << " : " << elemTypeName(g.type) << "["
       << s.dims << "] " << (g.updated ? "updated" : "readonly")
       << " boundary(";
    if (g.hasBoundary)
      printBoundary(s, g, os);
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
  if (s.hints.precision)
    os << "  hint precision = " << precisionHintName(*s.hints.precision)
       << "\n";

  // Live nodes, renumbered densely so the text does not depend on nodes
  // that sema or linear-form extraction created and dropped.
  std::vector<int> all = s.roots();
  for (int r : s.writtenRoots())
    all.push_back(r);
  std::vector<bool> live = s.graph.reachable(all);
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
      if (n.logical)
        os << (n.value != 0 ? " true" : " false");
      else
        os << " " << formatNumber(n.value);
      break;
    case Op::Param:
      os << " " << s.params[n.index].name;
      break;
    case Op::Read:
    case Op::NewRead:
      os << " " << s.grids[n.index].name;
      formatOffset(s, n.offset, os);
      break;
    case Op::StageRead:
      os << " " << s.stages[n.index].name;
      formatOffset(s, n.offset, os);
      break;
    case Op::Step:
      os << " t";
      break;
    case Op::Coord:
      os << " i" << n.index;
      if (n.offset[n.index])
        os << (n.offset[n.index] > 0 ? "+" : "") << n.offset[n.index];
      break;
    case Op::Round:
      os << " %" << number[n.lhs] << " to "
         << elemTypeName(s.grids[n.index].type);
      break;
    case Op::Pow:
      os << " %" << number[n.lhs] << ", " << n.exponent;
      break;
    default:
      os << " %" << number[n.lhs];
      if (n.rhs >= 0)
        os << ", %" << number[n.rhs];
      if (n.third >= 0)
        os << ", %" << number[n.third];
      break;
    }
    os << "\n";
  }
  for (const Stage &st : s.stages) {
    os << "  stage " << st.name << " = %" << number[st.root] << " boundary(";
    if (st.hasBoundary)
      printBoundary(s, st, os);
    else
      os << "none";
    os << ")\n";
  }
  for (const Update &u : s.updates) {
    os << "  update " << s.grids[u.grid].name << " = %" << number[u.written]
       << " reach=";
    for (int a = 0; a < s.dims; ++a)
      os << (a ? "," : "") << "-" << u.reachLo[a] << ":+" << u.reachHi[a];
    if (u.written != u.root) {
      // The stages and new values inlined: the form the interior uses.
      os << " inlined=%" << number[u.root] << " span=";
      for (int a = 0; a < s.dims; ++a)
        os << (a ? "," : "") << "-" << u.spanLo[a] << ":+" << u.spanHi[a];
    }
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
    printWeights(s, u, os);
  }
  if (s.fused)
    printFused(s, *s.fused, os);
  printMatrixProgram(s, os);
}

void stencilc::printIR(const Module &module, llvm::raw_ostream &os) {
  for (const Stencil &s : module.stencils)
    printIR(s, os);
}

/// Distinct coefficient nodes of A get one letter each (a-z, A-Z) when
/// there are few enough, so small matrices print as readable pictures.
static std::string matrixPicture(const MatrixProgram &p,
                                 std::vector<int> &legend) {
  llvm::DenseMap<int, int> letter;
  for (int v : p.a)
    if (v >= 0 && !letter.count(v)) {
      letter[v] = static_cast<int>(legend.size());
      legend.push_back(v);
    }
  const char *alphabet =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  bool letters = legend.size() <= 52;
  if (!letters)
    legend.clear();
  std::string out;
  for (int i = 0; i < p.rows(); ++i) {
    out += "    ";
    for (int j = 0; j < p.cols(); ++j) {
      int v = p.at(i, j);
      out += v < 0 ? (p.columns[j].zero ? '0' : '.')
                   : (letters ? alphabet[letter[v]] : '#');
    }
    out += "\n";
  }
  return out;
}

/// The best candidates of layout search, one line each.
static void printCandidates(const Stencil &s, llvm::raw_ostream &os) {
  const size_t shown = std::min<size_t>(s.layoutCandidates.size(), 12);
  os << "  layout-search: " << s.layoutCandidates.size()
     << " candidates, best " << shown << ":\n";
  for (size_t i = 0; i < shown; ++i) {
    const LayoutCandidate &c = s.layoutCandidates[i];
    std::string layout = matrixLayoutName(c.layout).str();
    if (c.layout == MatrixLayout::Morph)
      layout += "(" + std::to_string(c.r1) + "," + std::to_string(c.r2) + ")";
    else if (c.layout == MatrixLayout::Decompose)
      layout += "(" + std::to_string(c.r1) + ")";
    if (c.stridedSwap)
      layout += "+swap";
    char line[256];
    std::snprintf(line, sizeof line,
                  "    %s t=%d %-18s %-20s m'=%d k'=%d n'=%lld N_MMA=%lld "
                  "S=%.3g pad=%d bytes=%.3g/%.3g T=%.3g/%.3g "
                  "GStencils/s=%.4g\n",
                  c.chosen ? "*" : " ", c.steps, layout.c_str(),
                  c.shape.name().c_str(), c.mPrime, c.kPrime,
                  static_cast<long long>(c.nPrime),
                  static_cast<long long>(c.nMma), c.S, c.padding,
                  c.globalBytes, c.sharedBytes, c.tCompute, c.tMemory,
                  c.gstencils);
    os << line;
  }
}

void stencilc::printMatrixProgram(const Stencil &s, llvm::raw_ostream &os) {
  if (!s.layoutCandidates.empty())
    printCandidates(s, os);
  if (!s.matrix)
    return;
  const MatrixProgram &p = *s.matrix;
  const MatrixStats &st = p.stats;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", p.alpha);
  os << "  matrix " << s.grids[p.grid].name
     << ": layout=" << matrixLayoutName(p.layout);
  if (p.layout == MatrixLayout::Morph)
    os << " r1=" << p.r1 << " r2=" << p.r2;
  if (p.layout == MatrixLayout::Decompose)
    os << " rows=" << p.r1;
  os << " patch=";
  formatOffset(s, p.patch, os);
  os << " steps=" << p.steps << " alpha=" << buf << "\n";
  os << "    shape=" << p.shape.name()
     << " pattern=" << sparsityPatternName(p.pattern) << " arch=sm_" << p.arch
     << "\n";
  if (p.split) {
    // The third MMA, A_lo B_hi, is needed only where A is not exact in
    // tf32; the compile time knows when A is constant.
    std::optional<bool> low = p.packed ? splitNeedsLowA(s) : std::nullopt;
    os << "    split-tf32: hi + lo operands, "
       << (!low ? "4 MMAs per tile (2 where every coefficient is exact in "
                  "tf32, decided at run time)"
           : *low ? "4 MMAs per tile (A is not exact in tf32)"
                  : "2 MMAs per tile (A is exact in tf32)")
       << "\n";
  }
  std::snprintf(buf, sizeof buf, "%.4g", st.S);
  os << "    A: " << st.rows << " x " << st.columns
     << " real_columns=" << st.realColumns << " nonzeros=" << st.nonzeros
     << " padded=" << st.paddedRows << "x" << st.paddedColumns << " S=" << buf
     << "\n";
  os << "    padding: match=" << st.matchPadding
     << " group=" << st.groupPadding << " fragment=" << st.fragmentPadding
     << "\n";
  std::snprintf(buf, sizeof buf, "%.4g", st.mmaPerPoint);
  os << "    mma: " << st.mmaPerPatchBlock << " per " << p.shape.n
     << " patches, " << buf << " per point\n";
  char shared[32], global[32];
  std::snprintf(shared, sizeof shared, "%.4g", st.sharedBytesPerPoint);
  std::snprintf(global, sizeof global, "%.4g", st.globalBytesPerPoint);
  os << "    bytes per point: shared=" << shared << " global=" << global
     << "\n";
  os << "    outputs:";
  for (const Offset &o : p.outputs) {
    os << " ";
    formatOffset(s, o, os);
  }
  os << "\n    gather:";
  for (size_t j = 0; j < p.columns.size(); ++j) {
    os << " " << j << ":";
    if (p.columns[j].zero)
      os << "zero";
    else
      formatOffset(s, p.columns[j].offset, os);
  }
  os << "\n";
  std::vector<int> legend;
  std::string picture = matrixPicture(p, legend);
  os << "    A ('.' structural zero, '0' padding column):\n" << picture;
  for (size_t i = 0; i < legend.size(); ++i)
    os << "      " << "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[i]
       << " = " << formatCoefficient(s, legend[i]) << "\n";
  if (p.compressed) {
    const CompressedMatrix &c = *p.compressed;
    os << "    metadata (one nibble per group, row by row):\n";
    for (int i = 0; i < c.rows; ++i) {
      os << "      ";
      for (int g = 0; g < c.groups; ++g)
        os << llvm::format_hex_no_prefix(c.nibbles[i * c.groups + g], 1);
      os << "\n";
    }
  }
  if (p.packed) {
    const PackedFragments &f = *p.packed;
    os << "    packed: tiles=" << f.tilesM << "x" << f.tilesK
       << " a_regs_per_lane=" << f.regsPerLane
       << " elems_per_reg=" << f.elemsPerReg;
    if (f.shape.sparse) {
      os << " metadata_regs=" << f.metaRegs << "\n      selectors:";
      for (size_t t = 0; t < f.tileSelector.size(); ++t)
        os << " " << t << ":r" << f.tileMetaReg[t] << "/f" << f.tileSelector[t];
      for (int r = 0; r < f.metaRegs; ++r) {
        os << "\n      e" << r << ":";
        for (int lane = 0; lane < 32; ++lane)
          os << " " << llvm::format_hex(f.metadata[r * 32 + lane], 10);
      }
    }
    os << "\n";
  }
}
