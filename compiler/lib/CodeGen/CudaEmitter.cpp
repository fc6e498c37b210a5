//===- CudaEmitter.cpp - CUDA C++ from the Stencil IR ---------------------===//
//
// The CUDA-core strategy. One thread block owns an output tile and loads it
// with a halo of fuse * radius points per side into shared memory; it then
// advances the tile `nt` steps, each step computing a region that shrinks by
// one radius, and writes the interior back. Boundary conditions are applied
// on reads, in global coordinates, only in tiles near the domain's edge:
//   - periodic axes wrap when the tile is loaded, so later steps need nothing;
//   - dirichlet axes return the constant for reads outside the domain;
//   - clamp axes move reads outside the domain to the nearest edge point,
//     which lies inside the same tile and was computed at the same step;
//   - fixed bands copy their previous value.
// This reproduces step-by-step application exactly (docs/language.md).
// A 3-D stencil of one grid streams along axis 0 instead (emitStreamKernel,
// docs/architecture.md), under the same boundary rules.
//
//===----------------------------------------------------------------------===//

#include "stencilc/CodeGen/CudaEmitter.h"
#include "StencilEmitter.h"
#include "stencilc/CodeGen/DistributedEmitter.h"
#include "stencilc/CodeGen/EmbeddedRuntime.h"
#include "stencilc/CodeGen/Emitter.h"
#include "stencilc/CodeGen/TensorCoreEmitter.h"
#include "stencilc/IR/IRPrinter.h"
#include "stencilc/IR/LinearForm.h"
#include "stencilc/IR/MatrixEmulator.h"
#include "stencilc/IR/Weights.h"
#include "stencilc/Support/Version.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <set>

using namespace stencilc;

std::string StencilEmitter::entrySignature(bool internalNames) const {
  std::string sig = "cudaError_t run(";
  for (size_t g = 0; g < s.grids.size(); ++g)
    sig += (s.grids[g].updated ? "" : "const ") + cppElemType(s.grids[g].type) +
           " *" +
           (internalNames ? "sc_grid" + std::to_string(g) : s.grids[g].name) +
           ", ";
  sig += axes([](int a) { return "long long n" + std::to_string(a); });
  return sig + ", long long steps";
}

void StencilEmitter::emitHeaderDecls() {
  auto ns = out.scope("namespace " + s.name, "} // namespace " + s.name);
  out.line("/// Run-time parameters, with the defaults of {}.", opts.sourceName);
  {
    auto st = out.scope("struct Params", "};");
    for (const Param &p : s.params)
      out.line("{} {} = {};", paramFieldType(p.type), p.name,
               literal(p.defaultValue, p.type != ElemType::F64));
  }
  out.blank();
  out.line("/// Optional scratch buffers, one per updated grid, as large as the "
           "grid.");
  out.line("/// A null entry is allocated and freed on the stream by run().");
  {
    auto st = out.scope("struct Scratch", "};");
    for (int g : updated)
      out.line("{} *{} = nullptr;", cppElemType(s.grids[g].type), name(g));
  }
  out.blank();
  out.line("/// Advances the updated grids of stencil {} by `steps` time steps "
           "in place.",
           s.name);
  out.line("/// Grids are row-major device arrays, the last index contiguous; "
           "n0 is the");
  out.line("/// slowest extent. Returns the first CUDA error, or "
           "cudaErrorInvalidValue for");
  out.line("/// null grids, non-positive sizes or negative steps. "
           "Asynchronous on `stream`.");
  out.line("{},", entrySignature(false));
  out.line("                const Params &params = Params(), cudaStream_t "
           "stream = 0,");
  out.line("                const Scratch &scratch = Scratch());");
  if (opts.distributed)
    DistributedEmitter(s, plan, elem, out).emitDeclaration();
}

void StencilEmitter::emitConstants() {
  out.line("using Elem = {};", elem);
  emitElemAliases();
  out.line("using Comp = {};", comp);
  out.line("constexpr int kFuse = {};", plan.fuse);
  out.line("constexpr int kThreads = {};{}", plan.threads,
           plan.stream ? " // one per point of the slab box" : "");
  if (plan.strip > 1)
    out.line("constexpr int kV = {}; // strip length along axis 0",
             plan.strip);
  if (plan.stripCols > 1)
    out.line("constexpr int kC = {}; // strip width along axis {}",
             plan.stripCols, D - 1);
  out.line("constexpr int {};", axes([&](int a) {
             return "kT" + std::to_string(a) + " = " +
                    std::to_string(plan.tile[a]);
           }));
  out.line("constexpr int {};", axes([&](int a) {
             return "kR" + std::to_string(a) + " = " +
                    std::to_string(plan.radius[a]);
           }));
  // Tiles closer than this to the domain's edge apply boundary conditions
  // (none along the streaming kernel's ghost axes).
  out.line("{}constexpr int {};",
           plan.stream && !ghostAxes().empty() ? "[[maybe_unused]] " : "",
           axes([&](int a) {
             // The span covers the points where an update's inlined form
             // and its form as written may differ (stages, new values).
             int e = plan.radius[a];
             for (const Update &u : s.updates)
               e = std::max(
                   {e, u.reachLo[a], u.reachHi[a], u.spanLo[a], u.spanHi[a]});
             return "kE" + std::to_string(a) + " = " + std::to_string(e);
           }));
  out.line("constexpr int {};", axes([](int a) {
             std::string i = std::to_string(a);
             return "kH" + i + " = kFuse * kR" + i;
           }));
  if (plan.stream) {
    emitStreamConstants();
    return;
  }
  out.line("constexpr int {};", axes([](int a) {
             std::string i = std::to_string(a);
             return "kB" + i + " = kT" + i + " + 2 * kH" + i;
           }));
  out.line("constexpr int kBoxElems = {}; // the tile and its halo",
           axes([](int a) { return "kB" + std::to_string(a); }, " * "));
  out.line("constexpr int kBufElems = kBoxElems;");
  if (plan.strip > 1)
    out.line("static_assert(kT0 >= kV, \"a strip must fit in the tile\");");
  if (plan.vec > 1)
    out.line("constexpr int kVec = {0}; // elements per 16-byte global "
             "access\nstatic_assert(kT{1} % kVec == 0, \"tile origins "
             "must be multiples of kVec\");",
             plan.vec, D - 1);
  if (plan.stripCols > 1) {
    std::string r = "kR" + std::to_string(D - 1);
    out.line("static_assert(kC == 2 && kT{} % 2 == 0, \"pairs of columns must "
             "tile every step's region\");",
             D - 1);
    out.line("// Buffers start kBufStride elements apart, and each launch "
             "shifts them all by sc_shift\n// (emitted in the kernel), so "
             "that a strip's pairs of columns are aligned: one\n// spare "
             "element each where the radius along axis {} is odd.",
             D - 1);
    out.line("constexpr int kBufStride = kBufElems + ({} & 1);", r);
    if (!mixedUpdated())
      out.line("constexpr size_t kSmemBytes = (2 * {} * kBufStride + ({} & "
               "1)) * sizeof(Elem);",
               updated.size(), r);
  } else {
    out.line("constexpr int kBufStride = kBufElems;");
    if (!mixedUpdated())
      out.line("constexpr size_t kSmemBytes = 2 * {} * kBufStride * "
               "sizeof(Elem);",
               updated.size());
  }
  if (mixedUpdated()) {
    // Grids of different types: each grid's two buffers (and the spare
    // element of the shift) in its own type, from a 16-byte boundary.
    std::string spare =
        plan.stripCols > 1 ? " + (kR" + std::to_string(D - 1) + " & 1)" : "";
    std::string offset = "0";
    for (int g : updated) {
      out.line("constexpr size_t kOff_{} = {};", name(g), offset);
      offset = "kOff_" + name(g) + " + (((2 * kBufStride" + spare +
               ") * sizeof(" + elemOf(g) + ") + 15) / 16 * 16)";
    }
    out.line("constexpr size_t kSmemBytes = {};", offset);
  }
  out.line("static_assert(kSmemBytes == {}, \"plan and kernel disagree\");",
           plan.sharedBytes);
  out.blank();
}

void StencilEmitter::emitArgs() {
  auto st = out.scope("struct Args", "};");
  for (int g : updated)
    out.line("const {1} *in_{0};\n{1} *out_{0};", name(g), elemOf(g));
  for (int g : readOnly)
    out.line("const {} *ro_{};", elemOf(g), name(g));
  out.line("long long {};",
           axes([](int a) { return "n" + std::to_string(a); }));
  out.line("int nt;");
  if (usesStep)
    out.line("long long t0; // the step index t of the pass's first step");
  for (const Param &p : s.params)
    out.line("Comp p_{};", p.name);
  if (numBv > 0)
    out.line("Comp bv[{}]; // dirichlet values of parameters", numBv);
  if (runtimeWeights > 0)
    out.line("Comp w[{}]; // weights the host rounds (docs/language.md "
             "§6.4)",
             runtimeWeights);
  if (opts.distributed)
    out.line("stencilc::dist::View v; // the buffers and the tiles of the "
             "launch (distributed.cuh)");
  if (tcPlan)
    out.line("long long {}; // tiles the tensor cores compute whole",
             axes([](int a) {
               return "holeLo" + std::to_string(a) + ", holeHi" +
                      std::to_string(a);
             }));
}

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

std::vector<int>
StencilEmitter::liveNodes(const std::vector<int> &roots) const {
  std::vector<bool> live = s.graph.reachable(roots);
  std::vector<int> ids;
  for (size_t i = 0; i < live.size(); ++i)
    if (live[i])
      ids.push_back(static_cast<int>(i));
  return ids;
}

void StencilEmitter::emitNodes(
    const std::vector<int> &ids, bool forDevice,
    const std::function<std::string(int)> &nameOf,
    const std::function<std::string(const Node &)> &read,
    const std::string &hostType,
    const std::function<std::string(const Node &)> &other) {
  bool asFloat = forDevice && compFloat;
  ExprContext ctx;
  ctx.forDevice = forDevice;
  ctx.type = forDevice ? "Comp" : hostType;
  ctx.literal = [&](double v) { return literal(v, asFloat); };
  ctx.name = nameOf;
  ctx.leaf = [&](const Node &n) {
    if (n.op == Op::Read)
      return read(n);
    if (other)
      return other(n);
    // The step and the point: sc_t, and sc_i<a> on the device (wrapped on
    // periodic axes) or the loop's g<a> on the host.
    return coordText(
        n,
        [&](int a) { return (forDevice ? "sc_i" : "g") + std::to_string(a); },
        forDevice ? "Comp" : "double");
  };
  for (int i : ids) {
    const Node &n = s.graph[i];
    // Conditions are bool, or the driver's tracked conditions.
    std::string type = !s.graph.isLogical(i) ? ctx.type
                       : ctx.type == "T"     ? std::string("auto")
                                             : std::string("bool");
    out.line("const {} {} = {};", type, nameOf(i), nodeExpression(s, n, ctx));
  }
}

std::string
StencilEmitter::coordText(const Node &n,
                          const std::function<std::string(int)> &coord,
                          const std::string &type) const {
  // t and the coordinates are integers: converted to the compute type, they
  // are exact up to 2^24 in f32 (a tracked bound charges the rounding).
  std::string value = n.op == Op::Step
                          ? std::string("sc_t")
                          : plus(coord(n.index), n.offset[n.index]);
  return "static_cast<" + type + ">(" + value + ")";
}

void StencilEmitter::planWeights() {
  if (!s.isLinear())
    return;
  const std::vector<double> values =
      evaluateGridFreeAll(s.graph, std::vector<double>(s.params.size(), 0));
  for (const Update &u : s.updates) {
    const std::vector<Tap> &taps = u.linear->taps;
    std::vector<int> roots;
    for (const Tap &t : taps)
      roots.push_back(t.coeff);
    bool runtime = false;
    for (int i : liveNodes(roots))
      runtime |= s.graph[i].op == Op::Param;
    std::vector<TapWeight> w(taps.size());
    if (runtime) {
      for (TapWeight &tw : w)
        tw.slot = runtimeWeights++;
    } else {
      std::vector<double> r =
          roundedTapWeights(taps, values, roundingTo(s.elemType));
      for (size_t k = 0; k < taps.size(); ++k)
        w[k].value = r[k];
    }
    weights.push_back(std::move(w));
  }
}

void StencilEmitter::emitRuntimeWeights() {
  if (runtimeWeights == 0)
    return;
  auto block = out.scope("");
  out.line("// The weights from the parameters, in double, rounded to Comp "
           "keeping each\n// grid's sum (docs/language.md §6.4).");
  for (const Param &p : s.params)
    out.line("const double p_{0} = stencilc::rt::param<{1}, "
             "double>(params.{0});",
             p.name, cppElemType(p.type));
  std::vector<int> roots;
  for (size_t ui = 0; ui < s.updates.size(); ++ui)
    for (size_t k = 0; k < weights[ui].size(); ++k)
      if (weights[ui][k].slot >= 0)
        roots.push_back(s.updates[ui].linear->taps[k].coeff);
  auto vName = [](int i) { return "v" + std::to_string(i); };
  emitNodes(liveNodes(roots), /*forDevice=*/false, vName,
            [](const Node &) { return std::string("0"); });
  for (size_t ui = 0; ui < s.updates.size(); ++ui) {
    const std::vector<Tap> &taps = s.updates[ui].linear->taps;
    if (taps.empty() || weights[ui][0].slot < 0)
      continue;
    for (const std::vector<int> &group : weightGroups(taps)) {
      auto g = out.scope("");
      std::string values;
      for (int k : group)
        values += (values.empty() ? "" : ", ") + vName(taps[k].coeff);
      out.line("double sc_w[{}] = {{{}}};", group.size(), values);
      out.line("stencilc::rt::roundWeights(sc_w, nullptr, {}, [](double x) "
               "{{ return static_cast<double>(static_cast<Comp>(x)); }});",
               group.size());
      for (size_t k = 0; k < group.size(); ++k)
        out.line("sc_args.w[{}] = static_cast<Comp>(sc_w[{}]);",
                 weights[ui][group[k]].slot, k);
    }
  }
}

std::string StencilEmitter::frozenCondition(int g,
                                            const std::string &nPrefix) const {
  const Grid &grid = s.grids[g];
  const Update *u = s.updateOf(g);
  std::string cond;
  for (int a = 0; a < D; ++a) {
    std::string n = nPrefix + std::to_string(a);
    if (nPrefix == "n[")
      n += "]";
    std::string g = "g" + std::to_string(a);
    if (grid.boundary[a].side[0].kind == BoundaryKind::Fixed)
      cond += std::string(cond.empty() ? "" : " || ") + g + " < " +
              std::to_string(u->reachLo[a]);
    if (grid.boundary[a].side[1].kind == BoundaryKind::Fixed)
      cond += std::string(cond.empty() ? "" : " || ") + g + " >= " + n + " - " +
              std::to_string(u->reachHi[a]);
  }
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

void StencilEmitter::emitPointValues(bool edgeTemplate) {
  if (usesStep)
    out.line("const Comp sc_t = static_cast<Comp>(sc_step);");
  if (usesCoords)
    for (int a = 0; a < D; ++a)
      // A point outside the domain that the kernel computes lies across a
      // periodic edge and stands for the point the wrap gives.
      out.line(
          "[[maybe_unused]] const long long sc_i{0} = {1};", a,
          edgeTemplate
              ? fmt::format("Edge ? stencilc::rt::wrap(g{0}, a.n{0}) : g{0}", a)
              : fmt::format("stencilc::rt::wrap(g{0}, a.n{0})", a));
}

void StencilEmitter::emitComputeStep() {
  out.line("// One point of one time step, for every updated grid.");
  out.line("template <bool Edge>");
  std::string params;
  for (int g : updated)
    params += "const " + elemOf(g) + " *src_" + name(g) + ", " + elemOf(g) +
              " *dst_" + name(g) + ", ";
  auto fn = out.scope(
      "__device__ __forceinline__ void computeStep(" + params +
      axes([](int a) { return "int l" + std::to_string(a); }) + ", " +
      axes([](int a) { return "long long g" + std::to_string(a); }) +
      ", const Args &a" + (usesStep ? ", long long sc_step" : "") + ")");
  out.line("const int sc_idx = {};",
           linear([](int a) { return "l" + std::to_string(a); },
                  [](int a) { return "kB" + std::to_string(a); }));
  // Points outside the domain along a non-periodic axis hold no value.
  for (int g : updated) {
    std::string cond;
    for (int a = 0; a < D; ++a)
      if (!s.grids[g].boundary[a].periodic())
        cond += std::string(cond.empty() ? "" : " && ") + "g" +
                std::to_string(a) + " >= 0 && g" + std::to_string(a) +
                " < a.n" + std::to_string(a);
    // Periodic on every axis: every point of the tile holds a value.
    out.line("const bool keep_{} = {};", name(g),
             cond.empty() ? "true" : "!Edge || (" + cond + ")");
  }
  {
    std::string any;
    for (int g : updated)
      any += std::string(any.empty() ? "" : " && ") + "!keep_" + name(g);
    out.line("if ({})\n  return;", any);
  }
  emitPointValues(/*edgeTemplate=*/true);
  auto vName = [](int i) { return "v" + std::to_string(i); };
  // Computes the updates from `roots` (one per update) and stores them.
  auto compute = [&](const std::vector<int> &roots,
                     const std::function<std::string(const Node &)> &other) {
    emitNodes(
        liveNodes(roots), /*forDevice=*/true, vName,
        [&](const Node &n) { return deviceRead(n); }, "double", other);
    for (size_t k = 0; k < s.updates.size(); ++k) {
      const Update &u = s.updates[k];
      std::string g = name(u.grid);
      std::string frozen = frozenCondition(u.grid, "a.n");
      auto keep = out.scope("if (keep_" + g + ")");
      if (frozen.empty())
        out.line("dst_{}[sc_idx] = stencilc::rt::Convert<{}>::from(v{});", g,
                 elemOf(u.grid), roots[k]);
      else
        out.line("dst_{0}[sc_idx] = Edge && ({1}) ? src_{0}[sc_idx] : "
                 "stencilc::rt::Convert<{3}>::from(v{2});",
                 g, frozen, roots[k], elemOf(u.grid));
    }
  };
  if (!s.hasStages()) {
    compute(s.roots(), nullptr);
    return;
  }
  // Near the edge each update as written, its stages and new values
  // through their boundary conditions; inside, the inlined form.
  {
    auto edge = out.scope("if constexpr (Edge)");
    std::vector<int> written;
    for (const Update &u : s.updates)
      written.push_back(u.written);
    compute(written, [&](const Node &n) { return writtenLeaf(n); });
  }
  auto inside = out.scope("else");
  compute(s.roots(), nullptr);
}

void StencilEmitter::emitComputeStrip() {
  const int V = plan.strip, C = plan.stripCols, L = D - 1;
  if (C > 1) {
    out.line("// kV rows of kC adjacent columns of an interior tile: each read "
             "column is loaded");
    out.line("// once into registers and shared by the points of the strip, "
             "and neighbouring");
    out.line("// columns load together as aligned pairs "
             "(stencilc::rt::loadPair), which the");
    out.line("// buffers' layout guarantees in every step.");
  } else {
    out.line("// kV consecutive points along axis 0 of an interior tile: each "
             "read column is");
    out.line("// loaded once into registers and shared by the points of the "
             "strip.");
  }
  std::string params;
  for (int g : updated)
    params += "const " + elemOf(g) + " *src_" + name(g) + ", " + elemOf(g) +
              " *dst_" + name(g) + ", ";
  auto fn = out.scope(
      "__device__ __forceinline__ void computeStrip(" + params +
      axes([](int a) { return "int l" + std::to_string(a); }) + ", " +
      axes([](int a) { return "long long g" + std::to_string(a); }) +
      ", const Args &a" + (usesStep ? ", long long sc_step" : "") + ")");
  if (usesStep)
    out.line("const Comp sc_t = static_cast<Comp>(sc_step);");
  // Point (v, j) of the strip is row v, column j along the last axis; a
  // row's store index is that of its first point.
  auto storeIndex = [&](int v) {
    return linear(
        [&](int a) {
          if (a > 0)
            return "l" + std::to_string(a);
          return v == 0 ? std::string("l0") : "(" + plus("l0", v) + ")";
        },
        [](int a) { return "kB" + std::to_string(a); });
  };
  auto roRead = [&](const Node &n, int v, int j) {
    return this->roRead(s.grids[n.index], axes([&](int a) {
                          return plus("g" + std::to_string(a),
                                      n.offset[a] + (a == 0 ? v : 0) +
                                          (a == L ? j : 0));
                        }));
  };
  // Columns: for each updated grid and offset along axes 1.. (the last
  // counted from the strip's first column), the rows read, relative to the
  // strip's first row.
  using Key = std::pair<int, Offset>;
  std::map<Key, std::set<int>> columns;
  // The column of a read at `off` by point (v, j); `row` gets its row.
  auto columnOf = [&](int g, Offset off, int v, int j, int &row) {
    row = v + off[0];
    off[0] = 0;
    off[L] += j;
    return Key{g, off};
  };
  auto addRead = [&](int g, const Offset &off) {
    for (int v = 0; v < V; ++v)
      for (int j = 0; j < C; ++j) {
        int row;
        Key k = columnOf(g, off, v, j, row);
        columns[k].insert(row);
      }
  };
  // Columns load in groups: alone, or with strips of two columns in pairs
  // (d, d + 1) with d + kR<L> even, the pairs the buffers keep aligned
  // (emitKernel). Every pair lies within the strip's reads, columns -kR<L>
  // .. kC - 1 + kR<L>, so the column a read does not need is still in the
  // box.
  auto groupOf = [&](Key k) {
    if (C > 1) {
      int d = k.second[L];
      k.second[L] = d - ((d + plan.radius[L]) % 2 + 2) % 2;
    }
    return k;
  };
  // Each group's lowest row, which the names of its values count from.
  std::map<Key, int> groupLo;
  auto windowName = [&](const Key &k, const std::string &prefix = "w_") {
    std::string n = prefix + name(k.first);
    for (int a = 1; a < D; ++a)
      n += "_" + std::string(k.second[a] < 0 ? "m" : "") +
           std::to_string(std::abs(k.second[a]));
    return n + "_";
  };
  // The value of a read at `off` by point (v, j).
  auto value = [&](int g, const Offset &off, int v, int j) {
    int row;
    Key k = columnOf(g, off, v, j, row);
    return windowName(k) + std::to_string(row - groupLo.at(groupOf(k)));
  };
  // Loads a group's columns into registers. Strips are always full and
  // inside the region (the last one of a column overlaps its neighbour), so
  // loads need no clamp and the row offset folds into the load's address.
  auto emitGroup = [&](const Key &gk,
                       const std::function<void(int)> &afterRow = nullptr) {
    int lo = groupLo.at(gk), hi = lo;
    for (int j = 0; j < (C > 1 ? 2 : 1); ++j) {
      Key k = gk;
      k.second[L] += j;
      if (auto it = columns.find(k); it != columns.end())
        hi = std::max(hi, *it->second.rbegin());
    }
    for (int row = lo; row <= hi; ++row) {
      std::string index = linear(
          [&](int a) {
            return a == 0 ? plus("l0", row)
                          : plus("l" + std::to_string(a), gk.second[a]);
          },
          [](int a) { return "kB" + std::to_string(a); });
      if (C == 1) {
        if (columns.at(gk).count(row))
          out.line("const Comp {}{} = "
                   "stencilc::rt::Convert<Comp>::from(src_{}[{}]);",
                   windowName(gk), row - lo, name(gk.first), index);
      } else {
        std::string halves[2] = {"x", "y"}, pair;
        for (int j = 0; j < 2; ++j) {
          Key k = gk;
          k.second[L] += j;
          auto it = columns.find(k);
          if (it == columns.end() || !it->second.count(row))
            continue;
          if (pair.empty()) {
            pair = windowName(gk, "pair_") + std::to_string(row - lo);
            out.line("const stencilc::rt::Pair<{}> {} = "
                     "stencilc::rt::loadPair(&src_{}[{}]);",
                     elemOf(gk.first), pair, name(gk.first), index);
          }
          out.line("const Comp {}{} = "
                   "stencilc::rt::Convert<Comp>::from({}.{});",
                   windowName(k), row - lo, pair, halves[j]);
        }
      }
      if (afterRow)
        afterRow(row);
    }
  };
  std::vector<Key> groups;
  auto collectGroups = [&]() {
    for (const auto &[k, rows] : columns) {
      auto [it, inserted] = groupLo.try_emplace(groupOf(k), *rows.begin());
      it->second = std::min(it->second, *rows.begin());
    }
    for (const auto &[gk, lo] : groupLo)
      groups.push_back(gk);
  };
  auto accName = [&](int g, int v, int j) {
    return "acc_" + name(g) + "_" + std::to_string(v) +
           (C > 1 ? "_" + std::to_string(j) : "");
  };
  // Stores row v of the strip: its kC values, one access for a pair.
  auto emitStore = [&](int g, int v,
                       const std::function<std::string(int)> &valueOf) {
    auto conv = [&](int j) {
      return "stencilc::rt::Convert<" + elemOf(g) + ">::from(" + valueOf(j) +
             ")";
    };
    if (C == 1)
      out.line("dst_{}[{}] = {};", name(g), storeIndex(v), conv(0));
    else
      out.line("stencilc::rt::storePair(&dst_{}[{}], {}, {});", name(g),
               storeIndex(v), conv(0), conv(1));
  };

  if (s.isLinear()) {
    // Linear: accumulate group by group of columns, and in a group row by
    // row right after each row's load, so that few loaded values are live
    // at once (a group of two columns holds twice the rows).
    std::vector<int> constantRoots;
    for (const Update &u : s.updates) {
      for (const Tap &t : u.linear->taps)
        if (s.grids[t.grid].updated)
          addRead(t.grid, t.offset);
      if (u.linear->constant >= 0)
        constantRoots.push_back(u.linear->constant);
    }
    collectGroups();
    auto cName = [](int i) { return "c" + std::to_string(i); };
    emitNodes(liveNodes(constantRoots), /*forDevice=*/true, cName,
              [](const Node &) { return std::string("0"); });
    // One weight per tap, rounded keeping the sum (planWeights).
    std::map<const Tap *, std::string> wName;
    for (size_t ui = 0; ui < s.updates.size(); ++ui)
      for (size_t k = 0; k < s.updates[ui].linear->taps.size(); ++k) {
        const TapWeight &w = weights[ui][k];
        std::string n = "w" + std::to_string(ui) + "_" + std::to_string(k);
        wName[&s.updates[ui].linear->taps[k]] = n;
        if (w.slot >= 0)
          out.line("const Comp {} = a.w[{}];", n, w.slot);
        else
          out.line("const Comp {} = {};", n, literal(w.value, compFloat));
      }
    for (const Update &u : s.updates)
      for (int v = 0; v < V; ++v)
        for (int j = 0; j < C; ++j)
          out.line("Comp {} = {};", accName(u.grid, v, j),
                   u.linear->constant >= 0
                       ? cName(u.linear->constant)
                       : std::string(compFloat ? "0.0f" : "0.0"));
    for (const Key &gk : groups) {
      auto blk = out.scope("");
      emitGroup(gk, [&](int row) {
        for (int col = 0; col < (C > 1 ? 2 : 1); ++col)
          for (const Update &u : s.updates)
            for (int j = 0; j < C; ++j)
              for (const Tap &t : u.linear->taps) {
                Offset inner = t.offset;
                inner[0] = 0;
                inner[L] += j;
                Key k = gk;
                k.second[L] += col;
                int v = row - t.offset[0];
                if (t.grid != gk.first || inner != k.second || v < 0 || v >= V)
                  continue;
                out.line("{} += {} * {};", accName(u.grid, v, j),
                         wName[&t], value(t.grid, t.offset, v, j));
              }
      });
    }
    // Taps on read-only grids come from global memory.
    for (const Update &u : s.updates)
      for (const Tap &t : u.linear->taps) {
        if (s.grids[t.grid].updated)
          continue;
        Node n;
        n.op = Op::Read;
        n.index = t.grid;
        n.offset = t.offset;
        for (int v = 0; v < V; ++v)
          for (int j = 0; j < C; ++j)
            out.line("{} += {} * {};", accName(u.grid, v, j), wName[&t],
                     roRead(n, v, j));
      }
    for (const Update &u : s.updates)
      for (int v = 0; v < V; ++v)
        emitStore(u.grid, v, [&](int j) { return accName(u.grid, v, j); });
    return;
  }

  // General expressions: load every window, then evaluate point by point.
  std::vector<int> live = liveNodes(s.roots());
  for (int i : live)
    if (s.graph[i].op == Op::Read && s.grids[s.graph[i].index].updated)
      addRead(s.graph[i].index, s.graph[i].offset);
  collectGroups();
  for (const Key &gk : groups)
    emitGroup(gk);
  std::vector<int> gridFree, perPoint;
  for (int i : live)
    (s.graph.isGridFree(i) ? gridFree : perPoint).push_back(i);
  auto vName = [](int i) { return "v" + std::to_string(i); };
  emitNodes(gridFree, /*forDevice=*/true, vName,
            [](const Node &) { return std::string("0"); });
  // Node i at point (v, j).
  auto pointName = [&](int i, int v, int j) {
    if (s.graph.isGridFree(i))
      return vName(i);
    return "v" + std::to_string(i) + "_" + std::to_string(v) +
           (C > 1 ? "_" + std::to_string(j) : "");
  };
  for (int v = 0; v < V; ++v) {
    auto point = out.scope("");
    for (int j = 0; j < C; ++j)
      emitNodes(
          perPoint, /*forDevice=*/true,
          [&](int i) { return pointName(i, v, j); },
          [&](const Node &n) {
            if (!s.grids[n.index].updated)
              return roRead(n, v, j);
            return value(n.index, n.offset, v, j);
          },
          "double",
          [&](const Node &n) {
            // Strips lie inside the domain: coordinates need no wrap.
            return coordText(n, [&](int a) {
              return plus("g" + std::to_string(a),
                          (a == 0 ? v : 0) + (a == L ? j : 0));
            });
          });
    for (const Update &u : s.updates)
      emitStore(u.grid, v, [&](int j) { return pointName(u.root, v, j); });
  }
}

void StencilEmitter::emitTileOrigins() {
  if (addr.distributed())
    return DistributedEmitter(s, plan, elem, out).emitTileOrigins();
  out.line("long long sc_rest = blockIdx.x;");
  for (int a = D - 1; a >= 1; --a) {
    out.line("const long long sc_tiles{0} = (a.n{0} + kT{0} - 1) / kT{0};", a);
    out.line("const long long o{0} = sc_rest % sc_tiles{0} * kT{0} - kH{0};",
             a);
    out.line("sc_rest /= sc_tiles{};", a);
  }
}

void StencilEmitter::emitKernel() {
  // Every pass but the last fuses kFuse steps: with the count a constant,
  // each step's region, its strips and their division into rows and
  // columns are constants too (box-2d49p f32 t = 2: 300.6 -> 305.2
  // GStencils/s, H200, docs/benchmarks.md, session 9).
  out.line("// Full: a pass of kFuse steps, the count a constant; the last "
           "pass may fuse fewer.");
  out.line("template <bool Full>");
  out.line("__global__ void __launch_bounds__(kThreads) {}_kernel(const Args "
           "a) {{",
           s.name);
  out.indent();
  out.line("STENCILC_DYNAMIC_SHARED(sc_smem);");
  out.line("const int sc_nt = Full ? kFuse : a.nt;");
  std::string shift;
  if (plan.stripCols > 1) {
    // Step s computes from column lo = (kFuse - nt + s) * r on (r the
    // radius along the last axis) and reads from lo - r on, in buffers s & 1
    // and (s - 1) & 1. Starting buffer b at an element of parity
    // (kFuse - nt + b) * r makes both columns even in every step, so the
    // pairs of a strip's columns are aligned where the emitter pairs them.
    int last = D - 1;
    out.line("// Buffer b starts at an element of parity (kFuse - nt + b) * "
             "kR{0}: every step's\n// region then starts at an even column "
             "of its output buffer, and its reads\n// kR{0} columns before, "
             "at an even column of its input buffer.",
             last);
    out.line("const int sc_shift = (kFuse - sc_nt) * kR{} & 1;", last);
    shift = "sc_shift + ";
  }
  for (size_t k = 0; k < updated.size(); ++k) {
    int g = updated[k];
    if (mixedUpdated())
      out.line("{0} *const s_{1} = reinterpret_cast<{0} *>(sc_smem + "
               "kOff_{1}){2};",
               elemOf(g), name(g), shift.empty() ? "" : " + sc_shift");
    else
      out.line("Elem *const s_{} = reinterpret_cast<Elem *>(sc_smem) + {}{} "
               "* kBufStride;",
               name(g), shift, 2 * k);
  }
  if (tcPlan) {
    // Tiles the tensor-core kernel covers whole are its alone: the blocks
    // are the other tiles only, the frame around that hole.
    out.line("// blockIdx.x numbers the tiles outside the hole, the last "
             "axis fastest.");
    auto list = [&](const std::string &f) {
      return "{" + axes([&](int a) { return f + std::to_string(a); }) + "}";
    };
    out.line("const long long sc_tiles[{}] = {{{}}};", D, axes([](int a) {
               std::string i = std::to_string(a);
               return "(a.n" + i + " + kT" + i + " - 1) / kT" + i;
             }));
    out.line("const long long sc_lo[{0}] = {1}, sc_hi[{0}] = {2};", D,
             list("a.holeLo"), list("a.holeHi"));
    out.line("long long sc_t[{}];", D);
    out.line("stencilc::rt::frameTile(blockIdx.x, {}, sc_tiles, sc_lo, sc_hi, "
             "sc_t);",
             D);
    for (int a = 0; a < D; ++a)
      out.line("const long long o{0} = sc_t[{0}] * kT{0} - kH{0};", a);
  } else {
    out.line("// blockIdx.x numbers the tiles, the last axis fastest.");
    emitTileOrigins();
    out.line("const long long o0 = sc_rest * kT0 - kH0;");
  }
  out.blank();
  emitBoxLoad();
  out.line("__syncthreads();");
  out.line("const bool sc_edge = {};", axes([](int a) {
             std::string i = std::to_string(a);
             return "o" + i + " < kE" + i + " || o" + i + " + kB" + i +
                    " > a.n" + i + " - kE" + i;
           }, " || "));
  out.blank();
  out.line("// Step s is valid on a region that shrinks by one radius per "
           "step.");
  {
    auto steps = out.scope("for (int sc_s = 1; sc_s <= sc_nt; ++sc_s)");
    out.line("const int sc_src = (sc_s - 1) & 1;");
    for (int g : updated) {
      out.line("const {1} *const src_{0} = s_{0} + sc_src * kBufStride;",
               name(g), elemOf(g));
      out.line("{1} *const dst_{0} = s_{0} + (sc_src ^ 1) * kBufStride;",
               name(g), elemOf(g));
    }
    for (int a = 0; a < D; ++a)
      out.line("const int m{0} = (sc_nt - sc_s) * kR{0}, lo{0} = kH{0} - m{0}, "
               "w{0} = kT{0} + 2 * m{0};",
               a);
    std::string bufs;
    for (int g : updated)
      bufs += "src_" + name(g) + ", dst_" + name(g) + ", ";
    std::string coords =
        axes([](int a) { return "l" + std::to_string(a); }) + ", " +
        axes([](int a) { return "g" + std::to_string(a); });
    // The step index of step sc_s, for stencils that read t.
    const std::string args = usesStep ? ", a, a.t0 + sc_s - 1" : ", a";
    // Work items of the interior: strips times the points of the other
    // axes, the last one counted in strips of kC columns.
    const int L = D - 1, C = plan.stripCols;
    auto extent = [&](int a) {
      return a == L && C > 1 ? std::string("sc_cols") : "w" + std::to_string(a);
    };
    if (C > 1)
      out.line("const int sc_cols = w{} / kC; // strips across the region's "
               "width",
               L);
    std::string inner = "1";
    for (int a = 1; a < D; ++a)
      inner = (a == 1 ? "" : inner + " * ") + extent(a);
    // One thread per `count` work items over the region; the item's tile
    // coordinates, the slowest axis scaled by `rowsPerItem`.
    // Work item i's tile coordinates l and global ones g, the slowest axis
    // scaled by `rows`.
    auto decode = [&](const std::string &rows) {
      out.line("int r = i;");
      for (int a = D - 1; a >= 1; --a)
        if (a == L && C > 1 && !rows.empty())
          out.line("const int l{0} = lo{0} + r % {1} * kC;\nr /= {1};", a,
                   extent(a));
        else
          out.line("const int l{0} = lo{0} + r % w{0};\nr /= w{0};", a);
      if (rows.empty())
        out.line("const int l0 = lo0 + r;");
      else
        // The last strip of a column overlaps the one before it instead of
        // running past the region: every strip is full and in bounds, and
        // the overlapped points are written twice (at the domain's edge the
        // second round's write, after a barrier, is the last).
        out.line("const int l0 = min(lo0 + r{}, lo0 + w0 - kV);", rows);
      out.line("const long long {};", axes([](int a) {
                 std::string i = std::to_string(a);
                 return "g" + i + " = o" + i + " + l" + i;
               }));
    };
    auto workLoop = [&](const std::string &count, const std::string &rows,
                        const std::string &call) {
      out.line("const int sc_count = {};", count);
      auto loop =
          out.scope("for (int i = threadIdx.x; i < sc_count; i += kThreads)");
      decode(rows);
      out.line("{}", call);
    };
    std::string points =
        axes([](int a) { return "w" + std::to_string(a); }, " * ");
    {
      auto edge = out.scope("if (sc_edge)");
      if (plan.strip == 1) {
        out.line("// Near the domain's edge: point by point, through the "
                 "boundary conditions.");
        workLoop(points, "",
                 "computeStep<true>(" + bufs + coords + args + ");");
      } else {
        // A strip whose points and reads all lie kE or more inside the
        // domain computes as in the interior; only the others pay for the
        // boundary conditions, point by point.
        std::string inside = "g0 >= kE0 && g0 + kV <= a.n0 - kE0";
        for (int a = 1; a < D; ++a)
          inside +=
              a == L && C > 1
                  ? fmt::format(" && g{0} >= kE{0} && g{0} + kC <= a.n{0} - "
                                "kE{0}",
                                a)
                  : fmt::format(" && g{0} >= kE{0} && g{0} < a.n{0} - kE{0}",
                                a);
        // The coordinates of point (sc_v, sc_c) of the strip.
        auto point = [&](const std::string &c) {
          return axes([&](int a) {
            return c + std::to_string(a) + (a == 0 ? " + sc_v" : "") +
                   (a == L && C > 1 ? " + sc_c" : "");
          });
        };
        std::string shifted = point("l") + ", " + point("g");
        // Two rounds. The strips inside as in the interior; then the
        // columns of the other strips, one a thread, so that a warp holding
        // one of them no longer runs its kC columns alone while the rest of
        // the warp waits. One point a thread would pack them tighter, but
        // nvcc then holds every read of the point at once (100 registers
        // instead of 40 for box-2d49p). The barrier between the rounds
        // orders the two writes of points where the last strip of a column
        // overlaps the one before it.
        out.line("// Near the domain's edge: strips kE or more inside the "
                 "domain as in the interior;\n// then the columns of the "
                 "others, one a thread, through the boundary conditions.");
        workLoop("(w0 + kV - 1) / kV * " + inner, " * kV",
                 "if (" + inside + ")\n  computeStrip(" + bufs + coords + args +
                     ");");
        out.line("__syncthreads();");
        auto loop = out.scope(
            fmt::format("for (int sc_p = threadIdx.x; sc_p < sc_count{}; "
                        "sc_p += kThreads)",
                        C > 1 ? " * kC" : ""));
        out.write(C > 1 ? "const int i = sc_p / kC, sc_c = sc_p % kC;"
                        : "const int i = sc_p;");
        decode(" * kV");
        out.line("if ({})\n  continue;", inside);
        out.line("for (int sc_v = 0; sc_v < kV; ++sc_v)\n  "
                 "computeStep<true>({}{}{});",
                 bufs, shifted, args);
      }
    }
    {
      auto interior = out.scope("else");
      if (plan.strip == 1) {
        workLoop(points, "",
                 "computeStep<false>(" + bufs + coords + args + ");");
      } else {
        if (C > 1)
          out.line("// Inside: strips of kV x kC points, consecutive threads "
                   "on consecutive strips\n// along axis {}.",
                   L);
        else
          out.line("// Inside: strips of kV points along axis 0, consecutive "
                   "threads on consecutive columns.");
        workLoop("(w0 + kV - 1) / kV * " + inner, " * kV",
                 "computeStrip(" + bufs + coords + args + ");");
      }
    }
    out.line("__syncthreads();");
  }
  out.blank();
  emitTileStore();
  out.dedent();
  out.line("}}");
  out.blank();
}

void StencilEmitter::emitBoxLoad() {
  const int L = D - 1;
  const bool vec = plan.vec > 1;
  out.line("// Load the tile and its halo. Periodic axes wrap here; points "
           "outside the");
  out.line("// domain along other axes are never read as values.");
  if (vec) {
    out.line("// Where every grid's rows are 16-byte aligned, the box moves "
             "in chunks of kVec\n// elements along axis {0}: the chunks start "
             "at box column kLoad{0} <= 0, whose\n// global column is a "
             "multiple of kVec, as every tile origin o{0} + kH{0} is; their "
             "parts\n// outside the box are dropped, and chunks not wholly "
             "inside the domain go\n// element by element.",
             L);
    out.line("constexpr int kLoad{0} = -((kVec - kH{0} % kVec) % kVec);", L);
    out.line("constexpr int kChunks = (kB{0} - kLoad{0} + kVec - 1) / kVec; "
             "// per row of the box",
             L);
    std::string aligned = "a.n" + std::to_string(L) + " % kVec == 0";
    if (addr.distributed())
      aligned += " && a.v.grain % kVec == 0";
    for (int g : updated)
      aligned += fmt::format(" && stencilc::rt::chunkAligned(a.in_{0}) && "
                             "stencilc::rt::chunkAligned(a.out_{0})",
                             name(g));
    out.line("const bool sc_vec = {};", aligned);
  }
  // Declares `q`, the global coordinate along axis a of grid `grid` at
  // box coordinate `l`.
  auto periodic = [](const Grid &grid, int a) {
    return grid.boundary[a].periodic();
  };
  auto coord = [&](const Grid &grid, int a, const std::string &q,
                   const std::string &l) {
    out.line(
        "const long long {} = {};", q,
        addr.coord(a, periodic(grid, a), "o" + std::to_string(a) + " + " + l));
  };
  auto inDomain = [&](const Grid &grid, int from, int to) {
    std::string r;
    for (int a = from; a < to; ++a)
      r += (r.empty() ? "" : " && ") +
           addr.holds(a, periodic(grid, a), "q" + std::to_string(a));
    return r;
  };
  auto gidx = linear([](int a) { return "q" + std::to_string(a); },
                     [&](int a) { return addr.extent(a); });
  auto zero = [&](const Grid &grid) {
    return "stencilc::rt::Convert<" + elemOf(s.findGrid(grid.name)) +
           ">::from(0.0f)";
  };
  // The element loop of the box, one element per work item.
  auto elementLoop = [&]() {
    auto loop = out.scope(
        "for (int i = threadIdx.x; i < kBoxElems; i += kThreads)");
    out.line("int r = i;");
    for (int a = D - 1; a >= 1; --a)
      out.line("const int l{0} = r % kB{0};\nr /= kB{0};", a);
    out.line("const int l0 = r;");
    for (int g : updated) {
      const Grid &grid = s.grids[g];
      auto blk = out.scope("");
      for (int a = 0; a < D; ++a)
        coord(grid, a, "q" + std::to_string(a), "l" + std::to_string(a));
      out.line("const bool in = {};", inDomain(grid, 0, D));
      out.line("s_{}[i] = in ? a.in_{}[{}] : {};", grid.name, grid.name, gidx,
               zero(grid));
    }
  };
  if (!vec) {
    elementLoop();
    return;
  }
  {
    auto chunked = out.scope("if (sc_vec)");
    out.line("// kBatch chunks per thread are loaded before any is stored, "
             "so that their\n// loads are in flight together.");
    // One chunk at a time exposed the loads' latency: f64, at two blocks
    // per SM, lost 4-12% against element loads (H200, session 8). Two
    // keep the registers of the strips (40 for box-2d49p f32); four took
    // box-2d49p f32 to 71.
    out.line("constexpr int kBatch = 2;");
    out.line("constexpr int kBoxChunks = kBoxElems / kB{} * kChunks;", L);
    auto batches = out.scope("for (int i0 = threadIdx.x; i0 < kBoxChunks; "
                             "i0 += kBatch * kThreads)");
    for (int g : updated)
      out.line("stencilc::rt::Chunk<{}> v_{}[kBatch];", elemOf(g), name(g));
    std::string l = "l" + std::to_string(L);
    // Declares the box coordinates l<a> of chunk i.
    auto chunkCoords = [&]() {
      if (L == 0) {
        out.line("const int l0 = kLoad0 + i * kVec;");
        return;
      }
      out.line("int r = i;");
      out.line("const int l{0} = kLoad{0} + r % kChunks * kVec;\nr /= "
               "kChunks;",
               L);
      for (int a = L - 1; a >= 1; --a)
        out.line("const int l{0} = r % kB{0};\nr /= kB{0};", a);
      out.line("const int l0 = r;");
    };
    // Whether chunk i lies wholly in grid g's rows and columns.
    auto whole = [&](const Grid &grid) {
      std::string rows = inDomain(grid, 0, L);
      return (rows.empty() ? "" : rows + " && ") +
             addr.holds(L, periodic(grid, L), "q" + std::to_string(L), "kVec");
    };
    // Declares grid g's global coordinates q<a> of chunk i.
    auto gridCoords = [&](const Grid &grid) {
      for (int a = 0; a < L; ++a)
        coord(grid, a, "q" + std::to_string(a), "l" + std::to_string(a));
      out.line("const long long q{} = {};", L,
               addr.shifted(L, "o" + std::to_string(L) + " + " + l));
    };
    // Opens the loop over the batch's chunks k, each chunk i's box
    // coordinates declared; `last` ends it at the box's last chunk.
    auto batchLoop = [&](bool last) {
      out.line("#pragma unroll");
      Emitter::Scope loop = out.scope("for (int k = 0; k < kBatch; ++k)");
      out.line("const int i = i0 + k * kThreads;");
      if (last)
        out.line("if (i >= kBoxChunks)\n  break;");
      chunkCoords();
      return loop;
    };
    {
      auto loads = batchLoop(false);
      for (int g : updated) {
        const Grid &grid = s.grids[g];
        auto blk = out.scope("");
        gridCoords(grid);
        out.line("if (i < kBoxChunks && {})\n  v_{}[k] = "
                 "stencilc::rt::loadChunk(&a.in_{}[{}]);",
                 whole(grid), grid.name, grid.name, gidx);
      }
    }
    std::string inBox = fmt::format("{0} + e >= 0 && {0} + e < kB{1}", l, L);
    std::string sidx = linear(
        [&](int a) { return a == L ? l + " + e" : "l" + std::to_string(a); },
        [](int a) { return "kB" + std::to_string(a); });
    auto stores = batchLoop(true);
    for (int g : updated) {
      const Grid &grid = s.grids[g];
      auto blk = out.scope("");
      gridCoords(grid);
      {
        auto fast = out.scope("if (" + whole(grid) + ")");
        out.line("#pragma unroll");
        out.line("for (int e = 0; e < kVec; ++e)");
        out.line("  if ({})\n    s_{}[{}] = v_{}[k].v[e];", inBox, grid.name,
                 sidx, grid.name);
      }
      // Chunks not wholly inside the domain, element by element.
      auto slow = out.scope("else");
      out.line("#pragma unroll");
      auto each = out.scope("for (int e = 0; e < kVec; ++e)");
      auto inside = out.scope("if (" + inBox + ")");
      coord(grid, L, "qe", l + " + e");
      std::string rows = inDomain(grid, 0, L);
      std::string ein = (rows.empty() ? "" : rows + " && ") +
                        addr.holds(L, periodic(grid, L), "qe");
      std::string eidx = linear(
          [&](int a) {
            return a == L ? std::string("qe") : "q" + std::to_string(a);
          },
          [&](int a) { return addr.extent(a); });
      out.line("s_{0}[{1}] = {2} ? a.in_{0}[{3}] : {4};", grid.name, sidx, ein,
               eidx, zero(grid));
    }
  }
  auto fallback = out.scope("else");
  elementLoop();
}

void StencilEmitter::emitTileStore() {
  const int L = D - 1;
  out.line("// Write the tile's interior.");
  out.line("const int sc_res = sc_nt & 1;");
  // One loop over the tile in units of `w` elements along the last axis.
  auto storeLoop = [&](int w) {
    std::string ext = w > 1 ? "(kT" + std::to_string(L) + " / kVec)"
                            : "kT" + std::to_string(L);
    auto loop = out.scope(
        "for (int i = threadIdx.x; i < " + axes([&](int a) {
          return a == L ? ext : "kT" + std::to_string(a);
        }, " * ") + "; i += kThreads)");
    out.line("int r = i;");
    for (int a = D - 1; a >= 1; --a)
      out.line("const int l{0} = kH{0} + r % {1}{2};\nr /= {1};", a,
               a == L ? ext : "kT" + std::to_string(a),
               a == L && w > 1 ? " * kVec" : "");
    out.line("const int l0 = kH0 + r{};", L == 0 && w > 1 ? " * kVec" : "");
    out.line("const long long {};", axes([](int a) {
               std::string i = std::to_string(a);
               return "g" + i + " = o" + i + " + l" + i;
             }));
    auto inside = out.scope(
        "if (" +
        axes([&](int a) { return addr.stores(a, "g" + std::to_string(a)); },
             " && ") +
        ")");
    out.line("const int sc_idx = {};",
             linear([](int a) { return "l" + std::to_string(a); },
                    [](int a) { return "kB" + std::to_string(a); }));
    out.line(
        "const long long sc_gidx = {};",
        linear([&](int a) { return addr.shifted(a, "g" + std::to_string(a)); },
               [&](int a) { return addr.extent(a); }));
    for (int g : updated) {
      if (w == 1) {
        out.line("a.out_{0}[sc_gidx] = s_{0}[sc_res * kBufStride + sc_idx];",
                 name(g));
        continue;
      }
      auto blk = out.scope("");
      out.line("stencilc::rt::Chunk<{}> v;", elemOf(g));
      out.line("#pragma unroll");
      out.line("for (int e = 0; e < kVec; ++e)");
      out.line("  v.v[e] = s_{}[sc_res * kBufStride + sc_idx + e];", name(g));
      out.line("stencilc::rt::storeChunk(&a.out_{}[sc_gidx], v);", name(g));
    }
  };
  if (plan.vec == 1) {
    storeLoop(1);
    return;
  }
  {
    out.line("// In chunks where the rows are aligned: n{0} and the chunks' "
             "columns are\n// multiples of kVec, so a chunk lies wholly "
             "inside the domain or wholly outside.",
             L);
    auto chunked = out.scope("if (sc_vec)");
    storeLoop(plan.vec);
  }
  auto fallback = out.scope("else");
  storeLoop(1);
}

//===- The streaming kernel ----------------------------------------------===//
//
// One thread per point of the slab box (axes 1..); the block walks its
// segment of axis 0 kV rows (planes in 3-D) at a time. Iteration j loads
// rows j * kV .. j * kV + kV - 1 of the segment's window into level 0, and
// level k computes the kV rows from j * kV - k * kD out of the rows level
// k - 1 made in earlier iterations (kD = kV + kR0), so one barrier per
// iteration separates every write from every read. A level's
// rows live twice: in the thread's registers (q<k>_<m>, the reads of its
// own column) and in a ring of kRing slabs in shared memory (the reads of
// other columns). Rows of a level before its first valid one hold garbage
// that no valid row reads.

/// The ring slot of window row `row`: `row & (kRing - 1)`, parenthesised.
static std::string ringSlot(const std::string &row) {
  bool bare = row.find(' ') == std::string::npos;
  return "(" + (bare ? row : "(" + row + ")") + " & (kRing - 1))";
}

std::vector<int> StencilEmitter::ghostAxes() const {
  std::vector<int> axesOut;
  if (elem != comp)
    return axesOut;
  const Grid &grid = s.grids[updated.front()];
  // Axes with one constant dirichlet value on both sides.
  for (int a = 1; a < D; ++a) {
    const AxisBoundary &b = grid.boundary[a];
    if (b.uniform() && b.side[0].kind == BoundaryKind::Dirichlet &&
        b.side[0].node < 0)
      axesOut.push_back(a);
  }
  return axesOut;
}

/// The streaming kernel's constants after those it shares with the box
/// kernel (emitConstants).
void StencilEmitter::emitStreamConstants() {
  std::string slab;
  for (int a = 1; a < D; ++a) {
    std::string i = std::to_string(a);
    out.line("constexpr int kB{0} = kT{0} + 2 * kH{0};", a);
    slab += (a > 1 ? " * kB" : "kB") + i;
  }
  out.line("constexpr int kSlab = {};", slab);
  out.line("static_assert(kSlab == kThreads, \"one thread per slab point\");");
  out.line("constexpr int kV = {}; // rows per iteration", plan.rows);
  out.line("constexpr int kD = kV + kR0; // rows between consecutive levels");
  out.line("constexpr int kRing = {}; // slabs per level, >= 2 * (kV + kR0)",
           plan.ring);
  out.line("static_assert((kRing & (kRing - 1)) == 0 && kRing >= 2 * (kV + "
           "kR0), \"ring too small\");");
  out.line("constexpr size_t kSmemBytes = size_t(kFuse) * kRing * kSlab * "
           "sizeof(Elem);");
  out.line("static_assert(kSmemBytes == {}, \"plan and kernel disagree\");",
           plan.sharedBytes);
  out.blank();
}

void StencilEmitter::emitStreamReads() {
  const Grid &grid = s.grids[updated.front()];
  out.line("// A read of level ring `s` at window row l0 and slab point l, "
           "global q, through");
  out.line("// the boundary conditions (points near the domain's edge "
           "only).");
  std::string slabArgs;
  for (int a = 1; a < D; ++a)
    slabArgs += ", int l" + std::to_string(a);
  auto fn = out.scope(
      "__device__ __forceinline__ Comp sring_" + grid.name +
      "(const Elem *s, int l0" + slabArgs + ", " +
      axes([](int a) { return "long long q" + std::to_string(a); }) +
      ", const Args &a)");
  emitReadBoundaries(grid);
  std::string index = "(l0 & (kRing - 1)) * kSlab + ";
  index += D == 2 ? "l1" : "l1 * kB2 + l2";
  out.line("return stencilc::rt::Convert<Comp>::from(s[{}]);", index);
  out.blank();
}

void StencilEmitter::emitStreamLevel(int k) {
  const int g = updated.front();
  const Grid &grid = s.grids[g];
  const int r0 = plan.radius[0];
  const int V = plan.rows;
  auto blk = out.scope("if constexpr (" + std::to_string(k) + " <= NT)");
  out.line("// Level {0} makes window rows sc_rel .. sc_rel + kV - 1 from "
           "level {1}'s rows",
           k, k - 1);
  out.line("// sc_rel - kR0 .. sc_rel + kV - 1 + kR0, q{}_0 .. q{}_{}.", k - 1,
           k - 1, V + 2 * r0 - 1);
  out.line("const int sc_rel = j * kV - {} * kD;", k);
  out.line("const Elem *const sc_src = sc_ring + {} * kRing * kSlab;", k - 1);
  std::string zero = "stencilc::rt::Convert<Elem>::from(" +
                     std::string(compFloat ? "0.0f" : "0.0") + ")";
  std::string decl = "Elem ";
  for (int m = 0; m < V; ++m)
    decl += std::string(m ? ", " : "") + "sc_e" + std::to_string(m) + " = " +
            zero;
  out.line("{};", decl);
  std::vector<int> live = liveNodes(s.roots());
  const Update &u = *s.updateOf(g);
  auto vName = [](int i) { return "v" + std::to_string(i); };
  std::string keep;
  for (int a = 0; a < D; ++a)
    if (!grid.boundary[a].periodic())
      keep += std::string(keep.empty() ? "" : " && ") + "g" +
              std::to_string(a) + " >= 0 && g" + std::to_string(a) +
              " < a.n" + std::to_string(a);
  std::string frozen = frozenCondition(g, "a.n");
  {
    auto in = out.scope("if (" + std::to_string(k) + " <= sc_depth)");
    {
      // sc_fast holds only where no row of any level is near the edge.
      auto edge = out.scope("if (!sc_fast && (sc_slabEdge || sc_rel < "
                            "sc_edgeLo || sc_rel + kV > sc_edgeHi))");
      out.line("// Near the domain's edge: through the boundary conditions.");
      for (int m = 0; m < V; ++m) {
        auto row = out.scope("");
        std::string rel = plus("sc_rel", m);
        out.line("const long long g0 = sc_first + {};", rel);
        auto kept = out.scope("if (" + (keep.empty() ? "true" : keep) + ")");
        emitNodes(live, /*forDevice=*/true, vName, [&](const Node &n) {
          std::string slabArgs;
          for (int a = 1; a < D; ++a)
            slabArgs += ", " + plus("l" + std::to_string(a), n.offset[a]);
          return "sring_" + grid.name + "(sc_src, " +
                 plus("sc_rel", m + n.offset[0]) + slabArgs + ", " +
                 axes([&](int a) {
                   return plus("g" + std::to_string(a), n.offset[a]);
                 }) +
                 ", a)";
        });
        if (frozen.empty())
          out.line("sc_e{} = stencilc::rt::Convert<Elem>::from(v{});", m,
                   u.root);
        else
          out.line("sc_e{0} = ({1}) ? sc_src[{2} * kSlab + threadIdx.x] : "
                   "stencilc::rt::Convert<Elem>::from(v{3});",
                   m, frozen, ringSlot(rel), u.root);
      }
    }
    {
      auto inside = out.scope("else");
      for (int m = 0; m < V; ++m) {
        auto row = out.scope("");
        // The thread's own column from registers, the others from the ring.
        emitNodes(live, /*forDevice=*/true, vName, [&](const Node &n) {
          bool ownColumn = true;
          for (int a = 1; a < D; ++a)
            ownColumn &= n.offset[a] == 0;
          if (ownColumn)
            return "q" + std::to_string(k - 1) + "_" +
                   std::to_string(m + r0 + n.offset[0]);
          int d = D == 2 ? n.offset[1]
                         : n.offset[1] * plan.box(2) + n.offset[2];
          return "stencilc::rt::Convert<Comp>::from(sc_src[" +
                 ringSlot(plus("sc_rel", m + n.offset[0])) + " * kSlab + " +
                 plus("threadIdx.x", d) + "])";
        });
        out.line("sc_e{} = stencilc::rt::Convert<Elem>::from(v{});", m,
                 u.root);
      }
    }
    // The last level's rows go to the output only, never to a ghost.
    if (!ghostAxes().empty() && k < plan.fuse) {
      std::string set;
      for (int m = 0; m < V; ++m)
        set += fmt::format("{}sc_e{} = sc_ghostValue;", m ? "\n  " : "", m);
      out.line("if (sc_ghost) {{\n  {}\n}}", set);
    }
  }
  {
    auto last = out.scope("if constexpr (" + std::to_string(k) + " == NT)");
    auto mine = out.scope("if (sc_mine)");
    out.line("Elem *sc_o = sc_outCol + sc_st;");
    for (int m = 0; m < V; ++m) {
      if (m)
        out.line("sc_o += sc_stride;");
      out.line("if ({0} >= {2} && {0} < sc_outHi)\n  *sc_o = sc_e{1};",
               plus("sc_rel", m), m, addr.distributed() ? "sc_outLo" : "kH0");
    }
  }
  if (k < plan.fuse) {
    auto more = out.scope("else");
    for (int m = 0; m < V; ++m)
      out.line("sc_ring[({} * kRing + {}) * kSlab + threadIdx.x] = sc_e{};",
               k, ringSlot(plus("sc_rel", m)), m);
    for (int m = 0; m < 2 * r0; ++m)
      out.line("q{0}_{1} = q{0}_{2};", k, m, m + V);
    for (int m = 0; m < V; ++m)
      out.line("q{}_{} = stencilc::rt::Convert<Comp>::from(sc_e{});", k,
               2 * r0 + m, m);
  }
}

void StencilEmitter::emitStreamKernel() {
  const Grid &grid = s.grids[updated.front()];
  const int r0 = plan.radius[0];
  const int V = plan.rows;
  out.line("// NT, the levels of this pass, is kFuse but in the last pass.");
  out.line("template <int NT>");
  // A slab of fewer than 1024 threads asks for registers that let
  // 1024 / kThreads blocks reside, as many threads as the plan's slab.
  out.line("__global__ void __launch_bounds__(kThreads{}) {}_kernel(const "
           "Args a) {{",
           plan.minBlocks > 1 ? ", " + std::to_string(plan.minBlocks) : "",
           s.name);
  out.indent();
  out.line("STENCILC_DYNAMIC_SHARED(sc_smem);");
  out.line("Elem *const sc_ring = reinterpret_cast<Elem *>(sc_smem);");
  out.line("// blockIdx.x numbers the tiles, the last axis fastest; a tile "
           "is a slab of the");
  out.line("// other axes times a segment of kT0 rows of axis 0.");
  emitTileOrigins();
  out.line("const long long sc_s0 = sc_rest * kT0;");
  out.line("const long long sc_first = sc_s0 - kH0; // window row 0");
  if (D == 2) {
    out.line("const int l1 = threadIdx.x;");
  } else {
    out.line("const int l2 = threadIdx.x % kB2, l1 = threadIdx.x / kB2;");
  }
  const std::vector<int> ghosts = ghostAxes();
  auto ghosted = [&](int a) {
    return std::find(ghosts.begin(), ghosts.end(), a) != ghosts.end();
  };
  std::string slabIn, slabEdge, mine, depth;
  for (int a = 1; a < D; ++a) {
    std::string i = std::to_string(a);
    const bool periodic = grid.boundary[a].periodic();
    out.line("const long long g{0} = o{0} + l{0};", a);
    out.line("const long long q{} = {};", a, addr.coord(a, periodic, "g" + i));
    slabIn +=
        std::string(a > 1 ? " && " : "") + addr.holds(a, periodic, "q" + i);
    if (!ghosted(a))
      slabEdge += std::string(slabEdge.empty() ? "" : " || ") + "g" + i +
                  " < kE" + i + " || g" + i + " >= a.n" + i + " - kE" + i;
    mine += std::string(a > 1 ? " && " : "") + "l" + i + " >= kH" + i +
            " && l" + i + " < kH" + i + " + kT" + i + " && " +
            addr.stores(a, "g" + i);
    if (plan.radius[a] > 0) {
      std::string term = "min(l" + i + ", kB" + i + " - 1 - l" + i +
                         ") / kR" + i;
      depth = depth.empty() ? term : "min(" + depth + ", " + term + ")";
    }
  }
  if (!ghosts.empty()) {
    // Columns outside the domain along a ghost axis hold the boundary value
    // (the lowest such axis's) in every row of every level; the columns
    // beside them read it from the ring as any other.
    std::string ghost, value = literal(0.0, compFloat);
    for (auto it = ghosts.rbegin(); it != ghosts.rend(); ++it) {
      std::string outside =
          fmt::format("g{0} < 0 || g{0} >= a.n{0}", *it);
      ghost = ghost.empty() ? outside : outside + " || " + ghost;
      value = "(" + outside + ") ? " +
              literal(grid.boundary[*it].side[0].value, compFloat) + " : " +
              value;
    }
    out.line("// Columns outside the domain along a dirichlet axis (ghosts) "
             "hold its value in\n// every level: the columns beside them "
             "need no boundary conditions.");
    out.line("const bool sc_ghost = {};", ghost);
    out.line("const Elem sc_ghostValue = {};", value);
  }
  out.line("const bool sc_slabEdge = {};",
           slabEdge.empty() ? "false" : slabEdge);
  out.line("// The output point of this thread's column, if it has one.");
  out.line("const bool sc_mine = {};", mine);
  out.line("// Level k is valid on slab points at least k radii inside the "
           "box.");
  out.line("const int sc_depth = {};", depth.empty() ? "kFuse" : depth);
  out.line("const long long sc_stride = {};",
           D == 2 ? addr.extent(1) : addr.extent(1) + " * " + addr.extent(2));
  std::string colIdx = D == 2 ? "q1" : "q1 * " + addr.extent(2) + " + q2";
  std::string g1 = addr.shifted(1, "g1");
  std::string outIdx = D == 2 ? g1
                              : (addr.distributed() ? "(" + g1 + ")" : g1) +
                                    " * " + addr.extent(2) + " + " +
                                    addr.shifted(2, "g2");
  out.line("const bool sc_slabIn = {};", slabIn);
  out.line("const Elem *const sc_inCol = a.in_{} + (sc_slabIn ? {} : 0);",
           grid.name, colIdx);
  out.line("Elem *const sc_outCol = a.out_{} + (sc_mine ? {} : 0);",
           grid.name, outIdx);
  out.line("// Window rows as ints: the domain's rows, the rows near its "
           "edge, the outputs.");
  out.line("constexpr long long kWindow = kT0 + 2 * kH0 + (kFuse + 2) * kD + "
           "2 * kV;");
  out.line("auto sc_window = [](long long v) {{\n"
           "  return static_cast<int>(v < -1 ? -1 : v > kWindow ? kWindow : "
           "v);\n}};");
  const bool periodic0 = grid.boundary[0].periodic();
  // Window row of global row r.
  auto fromFirst = [](const std::string &r) {
    return r == "0" ? std::string("-sc_first") : r + " - sc_first";
  };
  out.line("const int sc_inLo = sc_window({}), sc_inHi = sc_window({});",
           fromFirst(addr.rowLo(periodic0)), fromFirst(addr.rowHi(periodic0)));
  out.line("const int sc_edgeLo = sc_window(kE0 - sc_first), sc_edgeHi = "
           "sc_window(a.n0 - kE0 - sc_first);");
  out.line("const int sc_outHi = sc_window(min(sc_s0 + kT0, {}) - "
           "sc_first);",
           addr.storeHi());
  // A distributed block starts its outputs at its own first row.
  if (addr.distributed())
    out.line("const int sc_outLo = sc_window(max(sc_s0, {}) - sc_first);",
             addr.storeLo());
  out.line("// Loads window row `rel`: periodic axes wrap, points outside the "
           "domain along");
  out.line("// other axes read 0 and are never used as values.");
  {
    auto fn = out.scope("auto sc_load = [&](int rel) -> Elem", "};");
    if (!ghosts.empty())
      out.line("if (sc_ghost)\n  return sc_ghostValue;");
    if (periodic0 && addr.distributed())
      out.line("const long long q0 = {};\nreturn sc_slabIn && q0 < a.v.m[0] "
               "? sc_inCol[q0 * sc_stride] : "
               "stencilc::rt::Convert<Elem>::from(0.0f);",
               addr.coord(0, true, "sc_first + rel"));
    else if (periodic0)
      out.line("return sc_slabIn ? sc_inCol[stencilc::rt::wrap(sc_first + "
               "rel, a.n0) * sc_stride] : "
               "stencilc::rt::Convert<Elem>::from(0.0f);");
    else
      out.line("return sc_slabIn && rel >= sc_inLo && rel < sc_inHi ? "
               "sc_inCol[{} * sc_stride] : "
               "stencilc::rt::Convert<Elem>::from(0.0f);",
               addr.row("sc_first + rel"));
  }
  out.line("// Level k's last kV + 2 * kR0 rows of this thread's column, "
           "oldest first.");
  for (int k = 0; k < plan.fuse; ++k) {
    std::string decl = "Comp ";
    for (int m = 0; m < V + 2 * r0; ++m)
      decl += std::string(m ? ", " : "") + "q" + std::to_string(k) + "_" +
              std::to_string(m) + " = 0";
    out.line("{};", decl);
  }
  out.line("// The last iteration: level NT writes the segment's last row.");
  out.line("const int sc_last = (sc_outHi - 1 + NT * kD) / kV;");
  std::string inner;
  for (int a = 1; a < D; ++a) {
    if (ghosted(a))
      continue;
    std::string i = std::to_string(a);
    inner += std::string(inner.empty() ? "" : " && ") + "o" + i + " >= kE" +
             i + " && o" + i + " + kB" + i + " <= a.n" + i + " - kE" + i;
  }
  out.line("// Iterations sc_loadLo <= j < sc_loadHi load rows of the domain "
           "only: they skip");
  out.line("// the load tests (a column outside the domain reads column 0, "
           "never used as a");
  out.line("// value). The fast iterations, sc_fastLo <= j < sc_fastHi in a "
           "block whose slab");
  out.line("// is inside the domain and away from its edge, also make every "
           "level's rows at");
  out.line("// least kE0 rows from the edge: they skip the boundary "
           "conditions.");
  if (!ghosts.empty())
    out.line("// Ghost axes do not count: their edge needs no boundary "
             "conditions.");
  out.line("const bool sc_inner = {};", inner.empty() ? "true" : inner);
  out.line("auto sc_ceil = [](long long p) {{ return p >= 0 ? (p + kV - 1) / "
           "kV : -(-p / kV); }};");
  out.line("const int sc_loadLo = sc_window(sc_ceil({}) - 1);",
           fromFirst(addr.rowLo(periodic0)));
  out.line("const int sc_loadHi = sc_window(sc_ceil({} - sc_first + 1) - "
           "2);",
           addr.rowHi(periodic0));
  out.line("const int sc_fastLo = sc_inner ? max(sc_loadLo, "
           "sc_window(sc_ceil(kE0 - sc_first + NT * kD))) : 0;");
  out.line("const int sc_fastHi = sc_inner ? min(sc_loadHi, "
           "sc_window(sc_ceil(a.n0 - kE0 - sc_first + kD + 1) - 1)) : 0;");
  out.line("// Element offsets along axis 0 of the next load's first row and "
           "of this");
  out.line("// iteration's first output row, stepped by kV rows an "
           "iteration.");
  out.line("long long sc_ld = {} * sc_stride;", addr.row("sc_first + kV"));
  out.line("long long sc_st = {} * sc_stride;", addr.row("sc_first - NT * kD"));
  out.line("const long long sc_step = kV * sc_stride;");
  out.line("// The next iteration's rows are in flight during this one.");
  out.line("Elem sc_next[kV];");
  out.line("#pragma unroll\nfor (int m = 0; m < kV; ++m)\n"
           "  sc_next[m] = sc_load(m);");
  // One turn of the rings an unrolled trip: the level registers' shifts
  // become renames instead of moves (docs/benchmarks.md has the
  // measurement), unless the plan expects the trip to spill.
  if (plan.unroll > 1)
    out.line("// One turn of the rings, kRing / kV iterations, an unrolled "
             "trip.");
  else
    out.line("// Not unrolled: an unrolled trip would hold more reads than "
             "the registers.");
  out.line("#pragma unroll {}", plan.unroll);
  {
    auto loop = out.scope("for (int j = 0; j <= sc_last; ++j)");
    out.line("const bool sc_fast = j >= sc_fastLo && j < sc_fastHi;");
    out.line("const bool sc_loadFast = j >= sc_loadLo && j < sc_loadHi;");
    out.line("Elem sc_in[kV];");
    out.line("#pragma unroll\nfor (int m = 0; m < kV; ++m) {{\n"
             "  sc_in[m] = sc_next[m];\n"
             "  sc_next[m] = sc_loadFast ? {}sc_inCol[sc_ld + m * sc_stride]{} : "
             "sc_load((j + 1) * kV + m);\n}}",
             ghosts.empty() ? "" : "(sc_ghost ? sc_ghostValue : ",
             ghosts.empty() ? "" : ")");
    out.line("// The deepest level first: each reads the registers of the "
             "level below before");
    out.line("// that level pushes this iteration's rows.");
    for (int k = plan.fuse; k >= 1; --k)
      emitStreamLevel(k);
    out.line("#pragma unroll\nfor (int m = 0; m < kV; ++m)\n"
             "  sc_ring[((j * kV + m) & (kRing - 1)) * kSlab + threadIdx.x] = "
             "sc_in[m];");
    for (int m = 0; m < 2 * r0; ++m)
      out.line("q0_{} = q0_{};", m, m + V);
    for (int m = 0; m < V; ++m)
      out.line("q0_{} = stencilc::rt::Convert<Comp>::from(sc_in[{}]);",
               2 * r0 + m, m);
    out.line("sc_ld += sc_step;");
    out.line("sc_st += sc_step;");
    out.line("__syncthreads();");
  }
  out.dedent();
  out.line("}}");
  out.blank();
}

void StencilEmitter::emitBoxLaunch(const std::string &blocks,
                                   const std::string &stream) {
  auto launch = [&](const char *full) {
    return "STENCILC_LAUNCH(" + s.name + "_kernel<" + full +
           ">, static_cast<unsigned>(" + blocks + "), kThreads, kSmemBytes, " +
           stream + ", sc_args);";
  };
  if (plan.fuse == 1)
    out.write(launch("true"));
  else
    out.write("if (sc_args.nt == kFuse)\n  " + launch("true") + "\nelse\n  " +
              launch("false"));
}

void StencilEmitter::emitPassLaunch(const std::string &blocks,
                                    const std::string &stream) {
  if (!plan.stream)
    return emitBoxLaunch(blocks, stream);
  auto sw = out.scope("switch (sc_args.nt)");
  for (int nt = 1; nt <= plan.fuse; ++nt)
    out.line("case {0}:\n  STENCILC_LAUNCH({1}_kernel<{0}>, "
             "static_cast<unsigned>({2}), kThreads, kSmemBytes, "
             "{3}, sc_args);\n  break;",
             nt, s.name, blocks, stream);
}

void StencilEmitter::emitArgsSetup(
    const std::function<std::string(int)> &extent, bool readOnlyGrids) {
  out.line("Args sc_args{{}};");
  for (int g : readOnlyGrids ? readOnly : std::vector<int>())
    out.line("sc_args.ro_{} = sc_grid{};", name(g), g);
  for (int a = 0; a < D; ++a)
    out.line("sc_args.n{} = {};", a, extent(a));
  for (const Param &p : s.params)
    out.line("sc_args.p_{0} = stencilc::rt::param<{1}, Comp>(params.{0});",
             p.name, cppElemType(p.type));
  emitRuntimeWeights();
  if (numBv > 0) {
    auto block = out.scope("");
    out.line("// Dirichlet values of parameters, in double, then in Comp.");
    emitHostBoundaryValues("sc_bv");
    for (int k = 0; k < numBv; ++k)
      out.line("sc_args.bv[{0}] = static_cast<Comp>(sc_bv[{0}]);", k);
  }
}

void StencilEmitter::emitKernelAttributes() {
  std::vector<std::string> kernels;
  if (plan.stream) {
    for (int nt = 1; nt <= plan.fuse; ++nt)
      kernels.push_back(s.name + "_kernel<" + std::to_string(nt) + ">");
  } else {
    // One step per pass launches the full kernel only.
    kernels.push_back(s.name + "_kernel<true>");
    if (plan.fuse > 1)
      kernels.push_back(s.name + "_kernel<false>");
  }
  for (const std::string &k : kernels)
    out.line("STENCILC_TRY(cudaFuncSetAttribute({}, "
             "cudaFuncAttributeMaxDynamicSharedMemorySize, "
             "static_cast<int>(kSmemBytes)));",
             k);
}

void StencilEmitter::emitRun() {
  out.line("{},", entrySignature(true));
  out.line("                const Params &params, cudaStream_t stream,");
  out.line("                const Scratch &scratch) {{");
  out.indent();
  auto grid = [](int g) { return "sc_grid" + std::to_string(g); };
  std::string nullCheck;
  for (size_t g = 0; g < s.grids.size(); ++g)
    nullCheck += std::string(g ? " || " : "") + "!" + grid(g);
  out.line("if ({} || {} || steps < 0)\n  return cudaErrorInvalidValue;",
           nullCheck, axes([](int a) {
             return "n" + std::to_string(a) + " <= 0";
           }, " || "));
  out.line("if (steps == 0)\n  return cudaSuccess;");
  out.line("const long long sc_points = {};",
           axes([](int a) { return "n" + std::to_string(a); }, " * "));
  out.line("const long long sc_tiles = {};", axes([](int a) {
             std::string i = std::to_string(a);
             return "((n" + i + " + kT" + i + " - 1) / kT" + i + ")";
           }, " * "));
  out.line("if (sc_tiles > 0x7fffffffLL)\n  return "
           "cudaErrorInvalidConfiguration;");
  emitKernelAttributes();
  for (int g : updated) {
    out.line("stencilc::rt::ScratchBuffer<{}> sc_next{}(scratch.{}, "
             "sc_points, stream);",
             elemOf(g), g, name(g));
    out.line("STENCILC_TRY(sc_next{}.error());", g);
  }
  emitArgsSetup([](int a) { return "n" + std::to_string(a); }, true);
  if (addr.distributed())
    out.line("{{\n  const long long sc_n[] = {{{}}};\n  const int sc_tile[] "
             "= {{{}}};\n  sc_args.v = stencilc::dist::wholeView({}, sc_n, "
             "sc_tile);\n}}",
             axes([](int a) { return "n" + std::to_string(a); }),
             axes([](int a) { return "kT" + std::to_string(a); }), D);
  for (int g : updated)
    out.line("{2} *sc_cur{0} = {1}, *sc_nxt{0} = sc_next{0}.get();", g, grid(g),
             elemOf(g));
  std::optional<TensorCoreEmitter> tc;
  if (tcPlan) {
    tc.emplace(s, *tcPlan, out, elem);
    tc->emitHostSetup();
  }
  {
    auto loop = out.scope("for (long long sc_done = 0; sc_done < steps; "
                          "sc_done += sc_args.nt)");
    out.line("sc_args.nt = static_cast<int>(steps - sc_done < kFuse ? steps - "
             "sc_done : kFuse);");
    if (usesStep)
      out.line("sc_args.t0 = sc_done;");
    for (int g : updated)
      out.line("sc_args.in_{0} = sc_cur{1};\nsc_args.out_{0} = sc_nxt{1};",
               name(g), g);
    if (tc)
      tc->emitLaunch("sc_cur" + std::to_string(updated.front()),
                     "sc_nxt" + std::to_string(updated.front()));
    if (tc) {
      out.line("const long long sc_blocks = sc_tiles - {};",
               axes([](int a) {
                 std::string i = std::to_string(a);
                 return "(sc_args.holeHi" + i + " - sc_args.holeLo" + i + ")";
               }, " * "));
      auto some = out.scope("if (sc_blocks > 0)");
      emitBoxLaunch("sc_blocks", "stream");
    } else {
      emitPassLaunch("sc_tiles", "stream");
    }
    out.line("STENCILC_TRY(cudaGetLastError());");
    for (int g : updated)
      out.line("std::swap(sc_cur{0}, sc_nxt{0});", g);
  }
  for (int g : updated)
    out.line("if (sc_cur{0} != {1})\n  "
             "STENCILC_TRY(cudaMemcpyAsync({1}, sc_cur{0}, sc_points * "
             "sizeof({2}), cudaMemcpyDeviceToDevice, stream));",
             g, grid(g), elemOf(g));
  out.line("return cudaSuccess;");
  out.dedent();
  out.line("}}");
}

void StencilEmitter::emitSource() {
  std::string fusion = std::to_string(plan.fuse) +
                       (plan.fuse == 1 ? " step" : " steps") +
                       (plan.fuseFromModel ? " (automatic)" : " (requested)");
  auto notes = opts.notes.find(s.name);
  if (notes != opts.notes.end())
    for (const std::string &line : notes->second)
      out.line("// {}", line);
  out.line("// Stencil {}: {}-D {}, CUDA cores{}, {} fused per pass, tile "
           "{}, {} bytes of shared memory per block.",
           s.name, D, elemTypeName(s.elemType).str(),
           plan.stream ? " streaming along axis 0" : "", fusion,
           axes([&](int a) { return std::to_string(plan.tile[a]); }, "x"),
           plan.sharedBytes);
  auto ns = out.scope("namespace " + s.name, "} // namespace " + s.name);
  {
    auto anon = out.scope("namespace", "} // namespace");
    emitConstants();
    emitArgs();
    out.blank();
    emitGlobalReads();
    if (plan.stream) {
      emitStreamReads();
      emitStreamKernel();
    } else {
      emitSharedReads();
      emitFieldFunctions();
      emitComputeStep();
      out.blank();
      if (plan.strip > 1) {
        emitComputeStrip();
        out.blank();
      }
      emitKernel();
    }
    if (tcPlan) {
      out.blank();
      TensorCoreEmitter tc(s, *tcPlan, out, elem);
      tc.emitKernel();
      out.blank();
      tc.emitCoefficientFunction([&](const std::vector<int> &nodes) {
        for (const Param &p : s.params)
          out.line("const double p_{0} = stencilc::rt::param<{1}, "
                   "double>(params.{0});",
                   p.name, cppElemType(p.type));
        emitNodes(liveNodes(nodes), /*forDevice=*/false,
                  [](int i) { return "v" + std::to_string(i); },
                  [](const Node &) { return std::string("0"); });
      });
    }
  }
  out.blank();
  emitRun();
  if (!opts.distributed)
    return;
  out.blank();
  DistributedEmitter(s, plan, elem, out)
      .emitDefinition(
          {[&](const auto &extent) { emitArgsSetup(extent, false); },
           [&] { emitKernelAttributes(); },
           [&](const std::string &blocks, const std::string &st) {
             // t of the pass's first step, as run() counts it.
             if (usesStep)
               out.line("sc_args.t0 = sc_view.t0;");
             emitPassLaunch(blocks, st);
           }});
}

void StencilEmitter::emitBoundConstants() {
  // A tensor-core program multiplies the host's rounded coefficients
  // exactly (the driver reads them back through sc_tc_coefficients;
  // split-TF32's hi + lo hold them exactly), and tf32 rounds the grid's
  // values: relative roundoff and the absolute error of a subnormal.
  MmaType t = tcPlan ? s.matrix->shape.type : MmaType::F64;
  std::string gridU = "0.0", gridEta = "0.0";
  if (tcPlan && t == MmaType::TF32) {
    // Split-TF32 holds a value as hi + lo to 2^-22 of it and drops
    // A_lo B_lo, below 2^-22 of a product (docs/language.md §6.4).
    gridU = s.matrix->split ? "0x1.0p-21" : "0x1.0p-11";
    gridEta = "0x1.0p-137";
  }
  out.line("static constexpr bool kTensorCore = {};",
           tcPlan ? "true" : "false");
  out.line("/// The rounding of the grid's values as operands (relative, "
           "absolute)\n/// (docs/benchmarks.md, \"Error bounds\").");
  out.line("static constexpr double kOperandRoundoff = {}, kOperandUnderflow "
           "= {};",
           gridU, gridEta);
  // The most products the tensor cores sum into one output: A's structural
  // nonzeros per row.
  int products = 0;
  if (tcPlan) {
    const MatrixProgram &m = *s.matrix;
    size_t cols = m.columns.size();
    for (size_t r = 0; cols && r < m.a.size() / cols; ++r) {
      int count = 0;
      for (size_t c = 0; c < cols; ++c)
        count += m.a[r * cols + c] >= 0;
      products = std::max(products, count);
    }
  }
  out.line("static constexpr int kTensorTaps = {};", products);
  out.line("/// Plain tf32 operands are centred on a value of their tile "
           "(docs/language.md §6.4).");
  out.line("static constexpr bool kCentred = {};",
           tcPlan && centresOperands(*s.matrix) ? "true" : "false");
  if (!tcPlan)
    return;
  // One step's taps, which tensorCoreRounding fuses as TemporalFusion did.
  const LinearForm &lf = *s.updateOf(s.matrix->grid)->linear;
  out.line("static constexpr int kBaseTaps = {};", lf.taps.size());
  out.line("/// One row of A's taps: offsets and the coefficients run() "
           "multiplies with.");
  out.line("static constexpr int kTcRowTapCount = kTcRowTaps;");
  {
    auto fn = out.scope("static void tcRowTaps(long long (*off)[3], double "
                        "*c)");
    out.line("double sc_coeff[kTcCoeffs];\nsc_tc_coefficients(Params(), "
             "sc_coeff);");
    out.line("for (int k = 0; k < kTcRowTaps; ++k) {{\n  for (int a = 0; a < "
             "3; ++a)\n    off[k][a] = kTcRowOffset[k][a];\n  c[k] = "
             "sc_coeff[kTcRowCoeff[k]];\n}}");
  }
  auto fn = out.scope("static void baseTaps(long long (*off)[3], double *c, "
                      "double *cErr)");
  out.line("using T = stencilc::rt::Tracked<{}, 0>;", comp);
  if (!s.params.empty())
    out.line("const Params params;");
  emitTrackedParams();
  std::vector<int> coeffs;
  for (const Tap &tap : lf.taps)
    coeffs.push_back(tap.coeff);
  emitNodes(
      liveNodes(coeffs), /*forDevice=*/false,
      [](int i) { return "v" + std::to_string(i); },
      [](const Node &) { return std::string("0"); }, "T");
  for (size_t i = 0; i < lf.taps.size(); ++i) {
    const Tap &tap = lf.taps[i];
    out.line("off[{0}][0] = {1};\noff[{0}][1] = {2};\noff[{0}][2] = {3};\n"
             "c[{0}] = v{4}.v;\ncErr[{0}] = v{4}.ref;",
             i, tap.offset[0], tap.offset[1], tap.offset[2], tap.coeff);
  }
}

static std::string headerGuardName(const std::string &header) {
  std::string g = "STENCILC_GENERATED_";
  for (char c : header)
    g += std::isalnum(static_cast<unsigned char>(c))
             ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
             : '_';
  return g;
}

/// The most CUDA source one stencil's kernels may take. nvcc's time grows
/// faster than the size of unrolled code: on the GPU machine's host, alone,
/// 91 s for the 1.29 MB of an f32 3-D box of radius 4 and 294 s for the
/// 2.35 MB of radius 5 (docs/benchmarks.md, session 11). 2 MiB keeps every
/// shape of the AN5D suite (radius 1 to 4, 2-D and 3-D; box3d4r in f32
/// prints 1.24 MB) compiling as before, and refuses the multi-MB sources of
/// 3-D boxes of radius 5 and more (2.3 MB at radius 5, 8.7 MB at radius 8)
/// until their kernels loop over the taps instead of unrolling them.
constexpr size_t kMaxStencilSourceBytes = 2 * 1024 * 1024;

/// False, after an internal error, when the emitter met a value with no
/// literal: the checks of Frontend/Values.h missed it.
static bool checkLiterals(const StencilEmitter &e, const Stencil &s,
                          DiagnosticEngine &diags) {
  std::optional<double> v = e.nonFiniteValue();
  if (!v)
    return true;
  diags.error(s.loc, "internal error: stencil '" + s.name + "' holds " +
                         formatNumber(*v) +
                         ", which has no literal in its type; the generated "
                         "code would not compile");
  return false;
}

/// The guard that stops a build for a GPU the kernels were not planned
/// for. The plans fit the shared memory one block may hold on opts.arch;
/// the code runs unchanged on any newer architecture whose blocks may hold
/// what its kernels take (every one has the instructions of sm_80, and
/// sm_100 and sm_120 the f64 m16n8 MMAs of sm_90), while on one with less
/// the launch would fail, and an older one may lack instructions. A table
/// in a comment shows the reasoning; the #if lists the __CUDA_ARCH__ values
/// it allows (__CUDA_ARCH__ is the compute capability times 10, also for
/// the sm_90a-style variants).
static void
emitArchGuard(Emitter &c, const CudaOptions &opts,
              const std::vector<CudaCorePlan> &plans,
              const std::vector<std::optional<TensorCorePlan>> &tcPlans) {
  int64_t shared = 0;
  for (const CudaCorePlan &p : plans)
    shared = std::max(shared, p.sharedBytes);
  for (const std::optional<TensorCorePlan> &p : tcPlans)
    if (p)
      shared = std::max(shared, p->sharedBytes + p->staticBytes);
  std::vector<GpuArch> builds = archsRunning(opts.arch, shared);
  c.line("// Where this file builds: {}, which it was generated for, and "
         "each newer",
         archName(opts.arch).str());
  c.line("// architecture whose blocks may hold the {} bytes of shared "
         "memory its",
         shared);
  c.line("// kernels take (stencilc --arch plans them for another).");
  c.line("//   __CUDA_ARCH__  shared memory per block  builds");
  std::string allowed, names;
  for (const ArchInfo &a : allArchs()) {
    bool yes = llvm::is_contained(builds, a.arch);
    c.line("//   {:<14} {:<24} {}", a.number * 10, a.sharedPerBlock,
           a.arch == opts.arch                ? "yes (generated for it)"
           : yes                              ? "yes"
           : a.number < archNumber(opts.arch) ? "no (older)"
                                              : "no (less shared memory)");
    if (!yes)
      continue;
    allowed += fmt::format(" && __CUDA_ARCH__ != {}", a.number * 10);
    if (!names.empty())
      names += a.arch == builds.back() ? " or " : ", ";
    names += a.name.str();
  }
  c.line("#if defined(__CUDA_ARCH__){}", allowed);
  c.line("#error \"{} was generated for {} and its blocks take {} bytes of "
         "shared memory: compile it for {} (nvcc -gencode "
         "arch=compute_XY,code=sm_XY), or regenerate it with stencilc "
         "--arch for this GPU\"",
         opts.sourceName, archName(opts.arch).str(), shared, names);
  c.line("#endif");
}

std::optional<CudaOutput> stencilc::emitCuda(const Module &module,
                                             const CudaOptions &opts,
                                             DiagnosticEngine &diags) {
  std::vector<CudaCorePlan> plans;
  std::vector<std::optional<TensorCorePlan>> tcPlans;
  for (const Stencil &s : module.stencils) {
    std::optional<int> fuse = opts.fuse;
    tcPlans.emplace_back();
    if (s.matrix) {
      // The CUDA-core kernel runs the same passes around the tensor cores.
      tcPlans.back() = planTensorCore(s, diags);
      if (!tcPlans.back())
        return std::nullopt;
      fuse = s.matrix->steps;
    }
    std::optional<CudaCorePlan> p =
        planCudaCore(s, fuse, opts.arch, diags, /*frame=*/s.matrix.has_value());
    if (!p)
      return std::nullopt;
    plans.push_back(*p);
  }
  std::string banner = fmt::format(
      "// Generated by stencilc {} from {} for {}. Do not edit.", getVersion(),
      opts.sourceName, archName(opts.arch).str());

  Emitter h;
  h.line("{}", banner);
  std::string guard = headerGuardName(opts.headerName);
  h.line("#ifndef {0}\n#define {0}", guard);
  h.blank();
  h.line("#include <cuda_runtime.h>");
  bool f16 = false, bf16 = false;
  for (const Stencil &s : module.stencils) {
    for (const Grid &g : s.grids) {
      f16 |= g.type == ElemType::F16;
      bf16 |= g.type == ElemType::BF16;
    }
  }
  if (bf16)
    h.line("#include <cuda_bf16.h>");
  if (f16)
    h.line("#include <cuda_fp16.h>");
  h.blank();
  if (opts.distributed)
    embedDistributedHeader(h);
  for (size_t i = 0; i < module.stencils.size(); ++i) {
    StencilEmitter e(module.stencils[i], plans[i], tcPlans[i], opts, h);
    e.emitHeaderDecls();
    if (!checkLiterals(e, module.stencils[i], diags))
      return std::nullopt;
    h.blank();
  }
  h.line("#endif // {}", guard);

  Emitter c;
  c.line("{}", banner);
  c.line("#include \"{}\"", opts.headerName);
  c.blank();
  // The runtime travels inside the file, so it compiles with no include
  // path; its include guards let a build that also includes the installed
  // headers work too.
  c.line("// ---- embedded runtime/include/stencilc/weights.h ----");
  c.write(embeddedWeightsHeader());
  c.line("// ---- embedded runtime/include/stencilc/runtime.cuh ----");
  c.write(embeddedRuntimeHeader());
  if (opts.distributed)
    embedDistributedRuntime(c, /*driver=*/false);
  if (opts.emitMain) {
    c.line("// ---- embedded runtime/include/stencilc/amplification.h ----");
    c.write(embeddedAmplificationHeader());
    c.line("// ---- embedded runtime/include/stencilc/driver.cuh ----");
    c.write(embeddedDriverHeader());
  }
  if (opts.emitMain && opts.distributed)
    embedDistributedRuntime(c, /*driver=*/true);
  c.line("// ---- end of the embedded runtime ----");
  c.line("#include <algorithm>\n#include <utility>\n#include <vector>");
  c.blank();
  emitArchGuard(c, opts, plans, tcPlans);
  c.blank();
  for (size_t i = 0; i < module.stencils.size(); ++i) {
    const Stencil &s = module.stencils[i];
    size_t before = c.str().size();
    StencilEmitter e(s, plans[i], tcPlans[i], opts, c);
    e.emitSource();
    if (!checkLiterals(e, module.stencils[i], diags))
      return std::nullopt;
    c.blank();
    // The kernels unroll every tap of a step, once per code path: a 3-D
    // box of radius 8 (4913 taps) printed 8.7 MB that nvcc compiles for
    // many minutes. Such code is refused rather than written.
    size_t bytes = c.str().size() - before;
    if (bytes > kMaxStencilSourceBytes) {
      // Fewer fused steps help only where the pass fuses several; tensor
      // cores only in the 16-bit types (or under --precision=tf32).
      diags.error(s.loc,
                  fmt::format("the CUDA of stencil '{}' would be {} KiB, more "
                              "than the {} KiB that stencilc writes for one "
                              "stencil, as its kernels unroll every tap; use a "
                              "smaller radius{}",
                              s.name, (bytes + 1023) / 1024,
                              kMaxStencilSourceBytes / 1024,
                              plans[i].fuse > 1
                                  ? " or fewer fused steps (--fuse=1)"
                                  : ", or f16/bf16 on tensor cores "
                                    "(--target=sptc)"));
      return std::nullopt;
    }
  }
  if (opts.emitMain) {
    for (size_t i = 0; i < module.stencils.size(); ++i) {
      StencilEmitter e(module.stencils[i], plans[i], tcPlans[i], opts, c);
      e.emitDriverProblem();
      if (!checkLiterals(e, module.stencils[i], diags))
        return std::nullopt;
      c.blank();
    }
    auto fn = c.scope("int main(int argc, char **argv)");
    c.line("const char *which = stencilc::rt::stencilArg(argc, argv);");
    std::string names;
    for (const Stencil &s : module.stencils) {
      c.line("if (!which || std::strcmp(which, \"{0}\") == 0)\n  return "
             "stencilc::{1}::driverMain<{0}::driver::Problem>(argc, argv);",
             s.name, opts.distributed ? "dist" : "rt");
      names += (names.empty() ? "" : " ") + s.name;
    }
    c.line("std::fprintf(stderr, \"error: unknown --stencil '%s'; this "
           "program has: {}\\n\", which);",
           names);
    c.line("return 2;");
  }
  return CudaOutput{h.str(), c.str()};
}
