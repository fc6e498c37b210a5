//===- DistributedEmitter.cpp - run_distributed and its addressing --------===//
//
// The text of a kernel's global memory accesses, for run()'s whole grid or
// a rank's view (GridAddress), and run_distributed, which hands one pass at
// a time of the CUDA-core kernel to stencilc::dist::runDistributed
// (runtime/include/stencilc/distributed.cuh): that template owns the
// buffers, the halo exchange and the overlap; the code printed here only
// fills the kernel's arguments and launches it.
//
//===----------------------------------------------------------------------===//

#include "stencilc/CodeGen/DistributedEmitter.h"
#include "stencilc/CodeGen/EmbeddedRuntime.h"

#include <algorithm>
#include <array>
#include <cstdlib>

using namespace stencilc;

static std::string axisText(int a) { return std::to_string(a); }

std::string GridAddress::extent(int a) const {
  return dist ? "a.v.m[" + axisText(a) + "]" : "a.n" + axisText(a);
}

std::string GridAddress::shifted(int a, const std::string &g) const {
  return dist ? g + " - a.v.b[" + axisText(a) + "]" : g;
}

std::string GridAddress::coord(int a, bool periodic,
                               const std::string &pos) const {
  std::string i = axisText(a);
  if (!dist)
    return periodic ? "stencilc::rt::wrap(" + pos + ", a.n" + i + ")" : pos;
  std::string p = pos + " - a.v.b[" + i + "]";
  return periodic ? "stencilc::rt::wrap(" + p + ", a.v.period[" + i + "])" : p;
}

std::string GridAddress::holds(int a, bool periodic, const std::string &q,
                               const std::string &width) const {
  std::string end = width.empty() ? q + " < " : q + " + " + width + " <= ";
  if (!dist)
    return q + " >= 0 && " + end + "a.n" + axisText(a);
  std::string i = axisText(a);
  if (periodic)
    return q + " >= 0 && " + end + "a.v.m[" + i + "]";
  return q + " >= a.v.qlo[" + i + "] && " + end + "a.v.qhi[" + i + "]";
}

std::string GridAddress::stores(int a, const std::string &g) const {
  std::string i = axisText(a);
  return dist ? g + " >= a.v.lo[" + i + "] && " + g + " < a.v.hi[" + i + "]"
              : g + " < a.n" + i;
}

std::string GridAddress::rowLo(bool periodic) const {
  if (!dist)
    return "0";
  return periodic ? "a.v.b[0]" : "a.v.b[0] + a.v.qlo[0]";
}

std::string GridAddress::rowHi(bool periodic) const {
  if (!dist)
    return "a.n0";
  return periodic ? "a.v.b[0] + a.v.m[0]" : "a.v.b[0] + a.v.qhi[0]";
}

std::string GridAddress::row(const std::string &r) const {
  return dist ? "(" + r + " - a.v.b[0])" : "(" + r + ")";
}

std::string GridAddress::storeLo() const { return dist ? "a.v.lo[0]" : "0"; }

std::string GridAddress::storeHi() const { return dist ? "a.v.hi[0]" : "a.n0"; }

//===- run_distributed ----------------------------------------------------===//

std::string DistributedEmitter::signature(bool internalNames) const {
  std::string sig = "cudaError_t run_distributed(const "
                    "stencilc::dist::Decomposition &";
  sig += internalNames ? "sc_d" : "decomposition";
  for (size_t g = 0; g < s.grids.size(); ++g)
    sig += std::string(", ") + (s.grids[g].updated ? "" : "const ") + elem +
           " *" +
           (internalNames ? "sc_grid" + std::to_string(g) : s.grids[g].name);
  return sig + ", long long steps";
}

void DistributedEmitter::emitDeclaration() {
  out.line("/// Advances this rank's block of the updated grids by `steps` "
           "time steps, in\n/// place, with the other ranks of "
           "`decomposition` (collective over them). Grids\n/// are this "
           "rank's block, row-major device arrays of decomposition.extent(a)"
           "\n/// points along axis a. Results equal run() on the whole grid "
           "(docs/user-guide.md,\n/// \"Many GPUs\"). Returns "
           "cudaErrorInvalidValue on every rank when a rank has a null\n/// "
           "grid or negative steps, or a block is smaller than the halo "
           "(decomposition.lastError()\n/// says which).");
  out.line("{},", signature(false));
  out.line("                            const Params &params = Params(), "
           "cudaStream_t stream = 0,");
  out.line("                            const stencilc::dist::RunOptions "
           "&options = stencilc::dist::RunOptions());");
}

void DistributedEmitter::emitDefinition(const DistributedHooks &hooks) {
  const int D = s.dims;
  const int G = static_cast<int>(s.grids.size());
  out.line("{},", signature(true));
  out.line("                            const Params &params, cudaStream_t "
           "stream,");
  out.line("                            const stencilc::dist::RunOptions "
           "&sc_options) {{");
  out.indent();
  out.line("if (!sc_d.ok() || sc_d.dims() != {})\n  return "
           "cudaErrorInvalidValue;",
           D);
  hooks.args([](int a) { return "sc_d.global(" + std::to_string(a) + ")"; });
  hooks.attributes();
  // Reads beyond a block's box: 16-byte chunks start up to kVec - 1
  // before it and end as far after; the streaming kernel loads rows up to
  // (kFuse + 2) * kV ahead of its window.
  auto list = [&](const std::function<std::string(int)> &f) {
    std::string r;
    for (int a = 0; a < 3; ++a)
      r += std::string(a ? ", " : "") + (a < D ? f(a) : "0");
    return "{" + r + "}";
  };
  std::string margin = list([&](int a) -> std::string {
    if (plan.stream)
      return a == 0 ? "(kFuse + 2) * kV" : "0";
    return a == D - 1 && plan.vec > 1 ? "kVec" : "0";
  });
  std::string tiles = list([](int a) { return "kT" + std::to_string(a); });
  // How far the update reads each read-only grid.
  std::array<int, kMaxDims> roReach{0, 0, 0};
  for (size_t i = 0; i < s.graph.size(); ++i) {
    const Node &n = s.graph[static_cast<int>(i)];
    if (n.op == Op::Read && !s.grids[n.index].updated)
      for (int a = 0; a < D; ++a)
        roReach[a] = std::max(roReach[a], std::abs(n.offset[a]));
  }
  std::string reach = list([&](int a) { return std::to_string(roReach[a]); });
  std::string updated, periodic;
  for (int g = 0; g < G; ++g) {
    updated +=
        std::string(g ? ", " : "") + (s.grids[g].updated ? "true" : "false");
    std::string p;
    for (int a = 0; a < 3; ++a)
      p += std::string(a ? ", " : "") +
           (a < D && s.grids[g].boundary[a].periodic() ? "true" : "false");
    periodic += std::string(g ? ", " : "") + "{" + p + "}";
  }
  out.line("// The shape of the exchange: fused steps, a step's radius, the "
           "read-only grids'\n// reach, run()'s tiles, reads beyond a "
           "tile's box, and each grid's periodic axes.");
  out.line("constexpr stencilc::dist::Shape<{}> kShape{{{}, kFuse, {}, {}, "
           "{}, {}, {{{}}}, {{{}}}}};",
           G, D, list([](int a) { return "kR" + std::to_string(a); }), reach,
           tiles, margin, updated, periodic);
  std::string grids;
  for (int g = 0; g < G; ++g)
    grids += std::string(g ? ", " : "") +
             (s.grids[g].updated
                  ? "sc_grid" + std::to_string(g)
                  : "const_cast<Elem *>(sc_grid" + std::to_string(g) + ")");
  out.line("Elem *const sc_grids[{}] = {{{}}};", G, grids);
  out.line("return stencilc::dist::runDistributed<Elem, {}>(", G);
  out.line("    sc_d, kShape, sc_grids, steps, stream, sc_options,");
  out.line("    [&](const stencilc::dist::View &sc_view, Elem *const *sc_in, "
           "Elem *const *sc_out,");
  out.line("        int sc_nt, long long sc_blocks, cudaStream_t sc_stream) "
           "-> cudaError_t {{");
  out.indent();
  out.indent();
  out.line("sc_args.v = sc_view;");
  out.line("sc_args.nt = sc_nt;");
  for (int g = 0; g < G; ++g) {
    const std::string &n = s.grids[g].name;
    if (s.grids[g].updated)
      out.line("sc_args.in_{0} = sc_in[{1}];\nsc_args.out_{0} = sc_out[{1}];",
               n, g);
    else
      out.line("sc_args.ro_{} = sc_in[{}];", n, g);
  }
  hooks.launch("sc_blocks", "sc_stream");
  out.line("return cudaGetLastError();");
  out.dedent();
  out.dedent();
  out.line("}});");
  out.dedent();
  out.line("}}");
}

void DistributedEmitter::emitTileOrigins() {
  const int D = s.dims;
  out.line("long long sc_t[{}];", D);
  out.line("stencilc::dist::viewTile(a.v, blockIdx.x, {}, sc_t);", D);
  for (int a = 1; a < D; ++a)
    out.line("const long long o{0} = sc_t[{0}] * kT{0} - kH{0};", a);
  out.line("long long sc_rest = sc_t[0];");
}

void DistributedEmitter::emitDriverEntry() {
  out.line("/// One run of stencilc::dist::driverMain: this rank's blocks, "
           "default Params.");
  auto fn = out.scope(
      "static cudaError_t runDistributed(const stencilc::dist::Decomposition "
      "&d, Elem *const *grids, long long steps, cudaStream_t stream, const "
      "stencilc::dist::RunOptions &options)");
  std::string args;
  for (size_t g = 0; g < s.grids.size(); ++g)
    args += ", grids[" + std::to_string(g) + "]";
  out.line("return {}::run_distributed(d{}, steps, Params(), stream, "
           "options);",
           s.name, args);
}

void DistributedEmitter::emitViewRead(const Grid &grid,
                                      const std::function<void()> &dirichlet) {
  const int D = s.dims;
  const GridAddress addr(D, true);
  auto axes = [&](const std::function<std::string(int)> &f,
                  const std::string &sep) {
    std::string r;
    for (int a = 0; a < D; ++a)
      r += (a ? sep : "") + f(a);
    return r;
  };
  out.line("template <class R>");
  auto fn = out.scope(
      "__device__ __forceinline__ R vread_" + grid.name + "(const Elem *g, " +
      axes([](int a) { return "long long q" + axisText(a); }, ", ") +
      ", const Args &a)");
  out.line(
      "const long long {};",
      axes([](int a) { return "n" + axisText(a) + " = a.n" + axisText(a); },
           ", "));
  dirichlet();
  std::string in, index;
  for (int a = 0; a < D; ++a) {
    const AxisBoundary &b = grid.boundary[a];
    const bool periodic = b.periodic();
    std::string q = "q" + axisText(a);
    // Dirichlet sides returned before: what is left outside moves to the
    // edge (clamp and fixed sides); periodic axes wrap by the view's
    // period, not the extent.
    const bool clamps =
        !periodic && (b.side[0].kind != BoundaryKind::Dirichlet ||
                      b.side[1].kind != BoundaryKind::Dirichlet);
    std::string at =
        clamps ? "stencilc::rt::clampIndex(" + q + ", n" + axisText(a) + ")"
               : q;
    out.line("{} = {};", q, addr.coord(a, periodic, at));
    in += std::string(a ? " && " : "") + addr.holds(a, periodic, q);
    index = a == 0 ? q
                   : (a > 1 ? "(" + index + ")" : index) + " * " +
                         addr.extent(a) + " + " + q;
  }
  out.line("if (!({}))\n  return R(0);", in);
  out.line("return stencilc::rt::Convert<R>::from(g[{}]);", index);
}

void stencilc::embedDistributedHeader(Emitter &out) {
  out.line("// ---- embedded runtime/include/stencilc/distributed.h ----");
  out.write(embeddedDistributedHeader());
  out.line("// ---- end of the embedded runtime ----");
  out.blank();
}

void stencilc::embedDistributedRuntime(Emitter &out, bool driver) {
  out.line("// ---- embedded runtime/include/stencilc/{} ----",
           driver ? "distributed_driver.cuh" : "distributed.cuh");
  out.write(driver ? embeddedDistributedDriver()
                   : embeddedDistributedRuntime());
}
