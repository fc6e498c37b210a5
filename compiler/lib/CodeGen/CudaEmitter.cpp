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
// This file holds what the kernels share (constants, the update's nodes,
// weights) and the output file; the reads through the boundary conditions
// are ReadEmitter.cpp's, the box kernel BoxKernelEmitter.cpp's, the
// streaming kernel StreamKernelEmitter.cpp's, the plane kernel
// PlaneKernelEmitter.cpp's, the launches and run() LaunchEmitter.cpp's.
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
  // (none along the streaming kernel's ghost and band axes).
  out.line("{}constexpr int {};",
           plan.plane || (plan.stream &&
                          (!ghostAxes().empty() || !bandAxes().empty()))
               ? "[[maybe_unused]] "
               : "",
           axes([&](int a) {
             return "kE" + std::to_string(a) + " = " +
                    std::to_string(edgeWidth(a));
           }));
  out.line("constexpr int {};", axes([](int a) {
             std::string i = std::to_string(a);
             return "kH" + i + " = kFuse * kR" + i;
           }));
  if (plan.stream || plan.plane) {
    plan.tensorPlane ? emitTensorPlaneConstants()
    : plan.star      ? emitStarConstants()
    : plan.plane     ? emitPlaneConstants()
                     : emitStreamConstants();
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
  if (plan.starTma)
    out.line("int tma; // the star kernel's ring by TMA: the GPU and the "
             "arrays allow it");
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
  if (plan.tensorPlane)
    out.line("unsigned short tw[kTaps]; // Elem bits of every tap's weight "
             "(sc_tp_weights)");
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
    std::vector<TapWeight> w(taps.size());
    if (weightsAtRunTime(s, taps)) {
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

void StencilEmitter::emitSource() {
  std::string fusion = std::to_string(plan.fuse) +
                       (plan.fuse == 1 ? " step" : " steps") +
                       (plan.fuseFromModel ? " (automatic)" : " (requested)");
  auto notes = opts.notes.find(s.name);
  if (notes != opts.notes.end())
    for (const std::string &line : notes->second)
      out.line("// {}", line);
  out.line("// Stencil {}: {}-D {}, {}{}, {} fused per pass, tile "
           "{}, {} bytes of shared memory per block.",
           s.name, D, elemTypeName(s.elemType).str(),
           plan.tensorPlane == 2   ? "sparse tensor cores (mma.sp m16n8k32)"
           : plan.tensorPlane == 1 ? "tensor cores (mma.sync m16n8k16)"
                                   : "CUDA cores",
           plan.star     ? " register queues along axis 0"
           : plan.plane  ? " plane by plane along axis 0"
           : plan.stream ? " streaming along axis 0"
                         : "",
           fusion,
           axes([&](int a) { return std::to_string(plan.tile[a]); }, "x"),
           plan.sharedBytes);
  auto ns = out.scope("namespace " + s.name, "} // namespace " + s.name);
  {
    auto anon = out.scope("namespace", "} // namespace");
    emitConstants();
    emitArgs();
    out.blank();
    emitGlobalReads();
    if (plan.tensorPlane) {
      emitTensorPlaneKernel();
    } else if (plan.star) {
      emitStarKernel();
    } else if (plan.plane) {
      emitPlaneKernel();
    } else if (plan.stream) {
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
  if (plan.tensorPlane) {
    emitTensorPlaneBound();
    return emitBaseTaps();
  }
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
  emitRowTaps();
  emitBaseTaps();
}

void StencilEmitter::emitRowTaps() {
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
}

void StencilEmitter::emitBaseTaps() {
  const LinearForm &lf =
      *s.updateOf(tcPlan ? s.matrix->grid : updated.front())->linear;
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
        planCudaCore(s, fuse, opts.arch, diags, /*frame=*/s.matrix.has_value(),
                     opts.distributed);
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
  if (std::any_of(plans.begin(), plans.end(),
                  [](const CudaCorePlan &p) { return p.starTma; })) {
    // Not in the CPU emulation, which has no TMA: tma_ring.cuh stands in.
    c.line("// ---- embedded runtime/include/stencilc/hopper.cuh ----");
    c.line("#if !defined(STENCILC_EMULATE)\n#ifndef "
           "STENCILC_HOPPER_TRAP_BELOW_SM90\n#define "
           "STENCILC_HOPPER_TRAP_BELOW_SM90\n#endif");
    c.write(embeddedHopperHeader());
    c.line("#endif // !STENCILC_EMULATE");
    c.line("// ---- embedded runtime/include/stencilc/tma_ring.cuh ----");
    c.write(embeddedTmaRingHeader());
  }
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
