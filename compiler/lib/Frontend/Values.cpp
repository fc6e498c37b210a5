//===- Values.cpp - Every value finite in the type that holds it ----------===//

#include "stencilc/Frontend/Values.h"
#include "stencilc/IR/IRPrinter.h"

#include <cmath>

using namespace stencilc;

/// The value as the messages print it; NaN without the sign that glibc
/// prints for the NaN of 0/0.
static std::string valueText(double v) {
  return std::isnan(v) ? "NaN" : formatNumber(v);
}

std::string stencilc::constantNotFinite(double v) {
  return "constant expression evaluates to " + valueText(v) +
         ", which is not a finite number";
}

namespace {

class ValueChecker {
public:
  ValueChecker(const Stencil &s, DiagnosticEngine &diags)
      : s(s), diags(diags), comp(s.compType) {}

  void checkParams();
  void checkDirichlet();
  void checkConstants();

private:
  std::string range(ElemType t) const {
    return " (largest finite value " + largestFiniteText(t) + ")";
  }
  std::string inCompute() const {
    return std::string(elemTypeName(comp)) + ", the compute type of stencil '" +
           s.name + "'";
  }

  const Stencil &s;
  DiagnosticEngine &diags;
  ElemType comp;
};

} // namespace

void ValueChecker::checkParams() {
  for (const Param &p : s.params) {
    // A default that is not even finite in double was reported by Sema.
    if (!std::isfinite(p.defaultValue))
      continue;
    std::string what = "the default value of parameter '" + p.name + "', " +
                       valueText(p.defaultValue) + ", is not finite in ";
    if (!isFiniteIn(p.type, p.defaultValue))
      diags.error(p.valueLoc, what + elemTypeName(p.type) + range(p.type));
    else if (!isFiniteIn(comp, roundTo(p.type, p.defaultValue)))
      diags.error(p.valueLoc, what + inCompute() + range(comp));
  }
}

void ValueChecker::checkDirichlet() {
  // A grid's dirichlet value stands for the grid outside the domain; a
  // stage's for the stage, a value of the compute type. A value built from
  // parameters is checked at their defaults.
  auto check = [&](const Field &f, ElemType type, const char *what) {
    // One condition applied to several axes or sides is reported once.
    llvm::SMLoc reported;
    for (const AxisBoundary &axis : f.boundary)
      for (const BoundarySide &b : axis.side) {
        if (b.kind != BoundaryKind::Dirichlet || !std::isfinite(b.value) ||
            isFiniteIn(type, b.value) || b.valueLoc == reported)
          continue;
        diags.error(b.valueLoc, "the value of the dirichlet boundary of " +
                                    std::string(what) + " '" + f.name + "', " +
                                    valueText(b.value) + ", is not finite in " +
                                    elemTypeName(type) + range(type));
        reported = b.valueLoc;
      }
  };
  for (const Grid &g : s.grids)
    check(g, g.type, "grid");
  for (const Stage &st : s.stages)
    check(st, comp, "stage");
}

void ValueChecker::checkConstants() {
  const ExprGraph &graph = s.graph;
  // What reaches the generated code is held in the compute type: the live
  // nodes of the updates, and the coefficients of their linear forms and of
  // a fused kernel. Sema has reported the constants of the source that fold
  // to infinity or NaN; the coefficients that tap extraction folds are
  // checked here.
  std::vector<int> roots = s.roots();
  for (int r : s.writtenRoots())
    roots.push_back(r);
  for (const Update &u : s.updates)
    if (u.linear) {
      for (const Tap &t : u.linear->taps)
        roots.push_back(t.coeff);
      roots.push_back(u.linear->constant);
    }
  if (s.fused)
    for (const Tap &t : s.fused->taps)
      roots.push_back(t.coeff);
  std::vector<bool> live = graph.reachable(roots);
  for (size_t i = 0; i < graph.size(); ++i) {
    const Node &n = graph[i];
    if (!live[i] || n.op != Op::Const || isFiniteIn(comp, n.value))
      continue;
    // Coefficients that tap extraction made carry the location of the
    // operation that made them; a node without one belongs to the stencil
    // as a whole.
    llvm::SMLoc loc = n.loc.isValid() ? n.loc : s.loc;
    if (!std::isfinite(n.value))
      diags.error(loc, constantNotFinite(n.value));
    else
      diags.error(loc, "constant " + valueText(n.value) + " is not finite in " +
                           inCompute() + range(comp));
  }
}

bool stencilc::checkValuesFit(const Stencil &s, DiagnosticEngine &diags,
                              llvm::StringRef typeOption) {
  unsigned before = diags.errorCount();
  ValueChecker checker(s, diags);
  checker.checkParams();
  checker.checkDirichlet();
  checker.checkConstants();
  if (diags.errorCount() == before)
    return true;
  if (!typeOption.empty())
    diags.note(s.loc, "stencil '" + s.name + "' has " +
                          elemTypeName(s.elemType) + " grids because of " +
                          typeOption);
  return false;
}

bool stencilc::checkValuesFit(const Module &m, DiagnosticEngine &diags,
                              llvm::StringRef typeOption) {
  bool ok = true;
  for (const Stencil &s : m.stencils)
    ok &= checkValuesFit(s, diags, typeOption);
  return ok;
}
