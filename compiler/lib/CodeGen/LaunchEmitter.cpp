//===- LaunchEmitter.cpp - The launches and run() of the CUDA-core path ---===//
//
// The host side of the CUDA-core strategy: each pass's launch, the Args
// it passes, the kernels' attributes, and the generated run() that walks
// the passes (CudaEmitter.cpp holds the kernels' shared pieces).
//
//===----------------------------------------------------------------------===//

#include "StencilEmitter.h"
#include "stencilc/CodeGen/DistributedEmitter.h"
#include "stencilc/CodeGen/TensorCoreEmitter.h"

#include <algorithm>
#include <string>

using namespace stencilc;

void StencilEmitter::emitBoxLaunch(const std::string &blocks,
                                   const std::string &stream) {
  // The star kernel's TMA ring reads the tensor map of the pass's input.
  const std::string g = std::to_string(updated.front());
  const std::string map =
      plan.starTma ? ", sc_map[sc_cur" + g + " == sc_grid" + g + " ? 0 : 1]"
                   : "";
  auto launch = [&](const char *full) {
    return "STENCILC_LAUNCH(" + s.name + "_kernel<" + full +
           ">, static_cast<unsigned>(" + blocks + "), kThreads, kSmemBytes, " +
           stream + ", sc_args" + map + ");";
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
  if (plan.tensorPlane)
    out.line("sc_tp_weights(sc_args, sc_args.tw, nullptr);");
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
  if (plan.starTma) {
    const int g = updated.front();
    out.line("// The star kernel's ring by TMA where the GPU and the arrays "
             "allow it: a\n// tensor map of each buffer (stencilc/"
             "tma_ring.cuh).");
    out.line("CUtensorMap sc_map[2] = {{}};");
    out.line("sc_args.tma = stencilc::rt::tma::encodePlaneMap(&sc_map[0], "
             "sc_cur{0}, n0, n1, n2, kW, kB1) &&\n"
             "              stencilc::rt::tma::encodePlaneMap(&sc_map[1], "
             "sc_nxt{0}, n0, n1, n2, kW, kB1);",
             g);
  }
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
