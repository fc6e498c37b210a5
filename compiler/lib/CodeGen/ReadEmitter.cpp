//===- ReadEmitter.cpp - Reads through the boundary conditions ------------===//
//
// How the CUDA-core kernels read a grid (docs/language.md §6.3): global reads
// through each axis's boundary condition (gread_NAME: dirichlet values,
// periodic wrap, clamp and fixed bands), the same rules on shared-memory
// reads of a tile near the domain's edge (sread_NAME), the conditions of
// fixed bands that freeze a point, and the text of one read of a node in
// the kernels. The kernels that use them are BoxKernelEmitter.cpp's,
// StreamKernelEmitter.cpp's and PlaneKernelEmitter.cpp's; what they share
// otherwise is CudaEmitter.cpp's.
//
//===----------------------------------------------------------------------===//

#include "StencilEmitter.h"
#include "stencilc/CodeGen/DistributedEmitter.h"

#include <string>
#include <vector>

using namespace stencilc;

void StencilEmitter::emitGlobalReads() {
  out.line("// Global reads through each grid's boundary conditions: the "
           "lowest dirichlet");
  out.line("// axis left decides the value; periodic axes wrap; clamp and "
           "fixed axes clamp.");
  for (size_t g = 0; g < s.grids.size(); ++g) {
    const Grid &grid = s.grids[g];
    out.line("template <class R, class T>");
    auto fn = out.scope(
        "STENCILC_HD R gread_" + grid.name + "(const T *g, " +
        axes([](int a) { return "long long q" + std::to_string(a); }) + ", " +
        axes([](int a) { return "long long n" + std::to_string(a); }) +
        (gridNeedsBv(static_cast<int>(g)) ? ", const R *bv" : "") + ")");
    emitDirichletReturns(grid, "n", "R", "bv");
    emitIndexMapping(grid);
    out.line("return stencilc::rt::Convert<R>::from(g[{}]);",
             linear([](int a) { return "q" + std::to_string(a); },
                    [](int a) { return "n" + std::to_string(a); }));
  }
  // A distributed launch reads its read-only grids through its view.
  for (int g : addr.distributed() ? readOnly : std::vector<int>())
    DistributedEmitter(s, plan, elem, out).emitViewRead(s.grids[g], [&] {
      emitDirichletReturns(s.grids[g], "n", "R", gridNeedsBv(g) ? "a.bv" : "");
    });
  out.blank();
}

/// A read at q outside a dirichlet axis's extent `n<axis>` returns that
/// axis's value as `type`; the lowest such axis decides.
void StencilEmitter::emitDirichletReturns(const Field &field,
                                          const std::string &n,
                                          const std::string &type,
                                          const std::string &bv,
                                          const std::string &extra) {
  for (int a = 0; a < D; ++a) {
    const AxisBoundary &b = field.boundary[a];
    bool lo = b.side[0].kind == BoundaryKind::Dirichlet;
    bool hi = b.side[1].kind == BoundaryKind::Dirichlet;
    if (lo && hi && b.uniform())
      out.line("if (q{0} < 0 || q{0} >= {1}{0})\n  return {2}({3}{4});", a, n,
               type, dirichletText(field, a, 0, false, bv), extra);
    else {
      if (lo)
        out.line("if (q{0} < 0)\n  return {1}({2}{3});", a, type,
                 dirichletText(field, a, 0, false, bv), extra);
      if (hi)
        out.line("if (q{0} >= {1}{0})\n  return {2}({3}{4});", a, n, type,
                 dirichletText(field, a, 1, false, bv), extra);
    }
  }
}

void StencilEmitter::emitReadBoundaries(const Field &field) {
  emitDirichletReturns(field, "a.n", "Comp", "a.bv");
  for (int a = 0; a < D; ++a) {
    const AxisBoundary &b = field.boundary[a];
    auto clamps = [&](int side) {
      return b.side[side].kind == BoundaryKind::Clamp ||
             b.side[side].kind == BoundaryKind::Fixed;
    };
    if (clamps(0) && clamps(1))
      out.line("if (q{0} < 0)\n  l{0} -= static_cast<int>(q{0});\n"
               "else if (q{0} >= a.n{0})\n"
               "  l{0} -= static_cast<int>(q{0} - (a.n{0} - 1));",
               a);
    else if (clamps(0))
      out.line("if (q{0} < 0)\n  l{0} -= static_cast<int>(q{0});", a);
    else if (clamps(1))
      out.line("if (q{0} >= a.n{0})\n"
               "  l{0} -= static_cast<int>(q{0} - (a.n{0} - 1));",
               a);
  }
}

void StencilEmitter::emitSharedReads() {
  out.line("// Shared-memory reads of an updated grid at tile coordinates l "
           "and global q;");
  out.line("// only tiles at the domain's edge apply boundary conditions.");
  for (int g : updated) {
    const Grid &grid = s.grids[g];
    out.line("template <bool Edge>");
    auto fn = out.scope(
        "__device__ __forceinline__ Comp sread_" + grid.name + "(const " +
        elemOf(g) + " *s, " +
        axes([](int a) { return "int l" + std::to_string(a); }) + ", " +
        axes([](int a) { return "long long q" + std::to_string(a); }) +
        ", const Args &a)");
    {
      auto edge = out.scope("if constexpr (Edge)");
      emitReadBoundaries(grid);
      bool any = false;
      for (int a = 0; a < D; ++a)
        any |= !grid.boundary[a].periodic();
      if (!any)
        out.line("// Periodic on every axis: the load already wrapped.");
    }
    out.line("return stencilc::rt::Convert<Comp>::from(s[{}]);",
             linear([](int a) { return "l" + std::to_string(a); },
                    [](int a) { return "kB" + std::to_string(a); }));
  }
  out.blank();
}

int StencilEmitter::edgeWidth(int a) const {
  // The span covers the points where an update's inlined form and its form
  // as written may differ (stages, new values).
  int e = plan.radius[a];
  for (const Update &u : s.updates)
    e = std::max({e, u.reachLo[a], u.reachHi[a], u.spanLo[a], u.spanHi[a]});
  return e;
}

std::string StencilEmitter::frozenCondition(int g,
                                            const std::string &nPrefix) const {
  std::string cond;
  for (int a = 0; a < D; ++a) {
    std::string c = frozenAxisCondition(g, a, "g" + std::to_string(a), nPrefix);
    if (!c.empty())
      cond += (cond.empty() ? "" : " || ") + c;
  }
  return cond;
}

std::string StencilEmitter::frozenAxisCondition(
    int g, int a, const std::string &var, const std::string &nPrefix) const {
  const Grid &grid = s.grids[g];
  const Update *u = s.updateOf(g);
  std::string n = nPrefix + std::to_string(a);
  if (nPrefix == "n[")
    n += "]";
  std::string cond;
  if (grid.boundary[a].side[0].kind == BoundaryKind::Fixed)
    cond = var + " < " + std::to_string(u->reachLo[a]);
  if (grid.boundary[a].side[1].kind == BoundaryKind::Fixed)
    cond += std::string(cond.empty() ? "" : " || ") + var + " >= " + n +
            " - " + std::to_string(u->reachHi[a]);
  return cond;
}

void StencilEmitter::emitIndexMapping(const Field &field) {
  // Dirichlet sides returned before: what is left outside clamps.
  for (int a = 0; a < D; ++a) {
    const AxisBoundary &b = field.boundary[a];
    if (b.periodic())
      out.line("q{0} = stencilc::rt::wrap(q{0}, n{0});", a);
    else if (b.side[0].kind != BoundaryKind::Dirichlet ||
             b.side[1].kind != BoundaryKind::Dirichlet)
      out.line("q{0} = stencilc::rt::clampIndex(q{0}, n{0});", a);
  }
}

std::string StencilEmitter::deviceRead(const Node &n) {
  const Grid &grid = s.grids[n.index];
  auto at = [&](const char *c) {
    return axes(
        [&](int a) { return plus(c + std::to_string(a), n.offset[a]); });
  };
  if (grid.updated)
    return "sread_" + grid.name + "<Edge>(src_" + grid.name + ", " + at("l") +
           ", " + at("g") + ", a)";
  return roRead(grid, at("g"));
}

std::string StencilEmitter::roRead(const Grid &grid,
                                   const std::string &coords) {
  const int g = static_cast<int>(&grid - s.grids.data());
  if (addr.distributed())
    return "vread_" + grid.name + "<Comp>(a.ro_" + grid.name + ", " + coords +
           ", a)";
  return "gread_" + grid.name + "<Comp>(a.ro_" + grid.name + ", " + coords +
         ", " + axes([](int a) { return "a.n" + std::to_string(a); }) +
         (gridNeedsBv(g) ? ", a.bv" : "") + ")";
}
