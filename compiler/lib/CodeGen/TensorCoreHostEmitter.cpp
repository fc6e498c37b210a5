//===- TensorCoreHostEmitter.cpp - Host side of the tensor-core kernel ---===//
//
// The coefficients of A as functions of the parameters, the host setup that
// packs A (and the metadata) per run, and the launch.
//
//===----------------------------------------------------------------------===//

#include "stencilc/CodeGen/TensorCoreEmitter.h"
#include "stencilc/CodeGen/SplitTF32Emitter.h"
#include "stencilc/IR/IRPrinter.h"
#include "stencilc/IR/MatrixEmulator.h"
#include "stencilc/IR/Weights.h"
#include "stencilc/Support/GpuArch.h"

#include <algorithm>
#include <map>

using namespace stencilc;

TensorCoreEmitter::CoefficientIndex
TensorCoreEmitter::coefficientIndex() const {
  CoefficientIndex ci;
  // Distinct coefficient nodes in first-use order; slots refer to them.
  for (int v : p.packed->slots)
    if (v >= 0 && ci.index.try_emplace(v, static_cast<int>(ci.nodes.size()))
                      .second)
      ci.nodes.push_back(v);
  // The kernel's weights: every one is evaluated, so that their sum is
  // the whole kernel's, and rounded keeping it (IR/Weights.h).
  ci.weights = weightNodes(kernelTaps(s));
  for (int v : ci.weights.nodes)
    if (ci.index.try_emplace(v, static_cast<int>(ci.nodes.size())).second)
      ci.nodes.push_back(v);
  return ci;
}

void TensorCoreEmitter::emitCoefficientFunction(
    const std::function<void(const std::vector<int> &)> &emitCoefficients) {
  const FragmentShape &f = p.packed->shape;
  const bool split = p.split;
  CoefficientIndex ci = coefficientIndex();
  std::map<int, int> &index = ci.index;
  const std::vector<int> &nodes = ci.nodes;
  const WeightNodes &weights = ci.weights;
  out.line("// Tensor cores: A's coefficients from the parameters, evaluated "
           "in double and rounded\n// to {} keeping the sum of the weights "
           "(docs/language.md §6.4); run() packs them\n// and the driver's "
           "error bound reads them.",
           split ? "f32 (then split into tf32 parts)"
                 : mmaTypeName(f.type).str());
  out.line("constexpr int kTcCoeffs = {};", std::max<size_t>(1, nodes.size()));
  auto fn = std::make_unique<Emitter::Scope>(
      out.scope("[[maybe_unused]] void sc_tc_coefficients([[maybe_"
                "unused]] const Params &params, double *sc_tc_coeff)"));
  emitCoefficients(nodes);
  for (size_t k = 0; k < nodes.size(); ++k)
    out.line("sc_tc_coeff[{}] = v{};", k, nodes[k]);
  if (!weights.nodes.empty()) {
    auto block = out.scope("");
    out.line("// Rounded to {} keeping the sum of the weights "
             "(docs/language.md §6.4).",
             split ? "f32" : mmaTypeName(f.type).str());
    std::string where, counts;
    for (size_t k = 0; k < weights.nodes.size(); ++k) {
      where += (k ? ", " : "") + std::to_string(index[weights.nodes[k]]);
      counts += (k ? ", " : "") + std::to_string(weights.counts[k]);
    }
    const size_t K = weights.nodes.size();
    out.line("static const int kTcWeight[{}] = {{{}}};", K, where);
    out.line("static const int kTcCount[{}] = {{{}}};", K, counts);
    out.line("double sc_w[{}];", K);
    out.line("for (int sc_k = 0; sc_k < {}; ++sc_k)\n  sc_w[sc_k] = "
             "sc_tc_coeff[kTcWeight[sc_k]];",
             K);
    std::string round;
    switch (f.type) {
    case MmaType::F16:
      round = "static_cast<double>(__half2float(__float2half_rn("
              "static_cast<float>(x))))";
      break;
    case MmaType::BF16:
      round = "static_cast<double>(__bfloat162float(__float2bfloat16_rn("
              "static_cast<float>(x))))";
      break;
    case MmaType::TF32:
      // Split-TF32 holds the f32 weight exactly as hi + lo + lo2.
      round = split ? "static_cast<double>(static_cast<float>(x))"
                    : "static_cast<double>(stencilc::rt::roundTF32("
                      "static_cast<float>(x)))";
      break;
    case MmaType::F64:
      round = "x";
      break;
    }
    out.line("stencilc::rt::roundWeights(sc_w, kTcCount, {}, [](double x) "
             "{{ return {}; }});",
             K, round);
    out.line("for (int sc_k = 0; sc_k < {}; ++sc_k)\n  "
             "sc_tc_coeff[kTcWeight[sc_k]] = sc_w[sc_k];",
             K);
  }
  fn.reset();
  // One row of A holds each fused tap once (planTensorCore checks that
  // every row holds the same coefficients): the driver's bound compares
  // their rounded values with the exact ones, and centred operands add
  // their sum back.
  std::string coeffList, offsetList;
  int rowTaps = 0;
  for (int col = 0; col < p.cols(); ++col) {
    if (!p.nonzero(0, col))
      continue;
    ++rowTaps;
    coeffList += (coeffList.empty() ? "" : ", ") +
                 std::to_string(index[p.at(0, col)]);
    const Offset &q = p.columns[col].offset;
    offsetList += fmt::format("{}{{{}, {}, {}}}", offsetList.empty() ? "" : ", ",
                              q[0] - p.outputs[0][0], q[1] - p.outputs[0][1],
                              q[2] - p.outputs[0][2]);
  }
  out.line("constexpr int kTcRowTaps = {};", std::max(1, rowTaps));
  out.line("[[maybe_unused]] constexpr int kTcRowCoeff[kTcRowTaps] = {{{}}};",
           coeffList.empty() ? "0" : coeffList);
  out.line("[[maybe_unused]] constexpr long long kTcRowOffset[kTcRowTaps][3] "
           "= {{{}}};",
           offsetList.empty() ? "{0, 0, 0}" : offsetList);
}

void TensorCoreEmitter::emitHostSetup() {
  const PackedFragments &pk = *p.packed;
  const FragmentShape &f = pk.shape;
  const bool f64 = f.type == MmaType::F64;
  const std::string word = f64 ? "double" : "unsigned";
  const int aRegs = aRegisters(f), E = pk.elemsPerReg;
  const int tiles = pk.tilesM * pk.tilesK;
  std::optional<SplitTF32Emitter> split;
  if (p.split)
    split.emplace(s, out);
  CoefficientIndex ci = coefficientIndex();
  std::map<int, int> &index = ci.index;
  out.line("// Tensor cores: A's coefficients ({}), packed as docs/PTX.md "
           "lays them out\n// ([tile][lane][register]).",
           split ? "split into tf32 parts hi, lo and lo2"
                 : "in " + mmaTypeName(f.type).str());
  {
    std::string text;
    for (int tile = 0; tile < tiles; ++tile)
      for (int lane = 0; lane < 32; ++lane)
        for (int r = 0; r < aRegs; ++r)
          for (int e = 0; e < E; ++e) {
            size_t k =
                ((static_cast<size_t>(tile) * 32 + lane) * aRegs + r) * E + e;
            int v = pk.slots[k];
            text += (k ? (k % 16 ? ", " : ",\n") : "") +
                    std::to_string(v < 0 ? -1 : index[v]);
          }
    out.line("static const short kTcSlots[{}] = {{", pk.slots.size());
    out.indent();
    out.write(text);
    out.dedent();
    out.line("}};");
  }
  out.line("double sc_tc_coeff[kTcCoeffs];\nsc_tc_coefficients(params, "
           "sc_tc_coeff);");
  if (split) {
    out.line("// Split-TF32: the lo parts follow the hi parts, in the same "
             "layout.");
    if (!split->lowA())
      out.line("bool sc_tc_lo = false; // some lo part is nonzero: the "
               "kernel runs A_lo B_hi");
  }
  out.line("std::vector<{}> sc_tc_host({}{} * 32 * {});", word,
           split ? "3 * " : "", tiles, aRegs);
  {
    auto loop = out.scope(fmt::format(
        "for (int sc_k = 0; sc_k < {} * 32 * {}; ++sc_k)", tiles, aRegs));
    out.line("const short *sc_s = &kTcSlots[sc_k * {}];", E);
    out.line("auto sc_c = [&](int e) {{ return sc_s[e] < 0 ? 0.0 : "
             "sc_tc_coeff[sc_s[e]]; }};");
    out.line("{} sc_w{};", word, split ? ", sc_wl, sc_wl2" : "");
    switch (f.type) {
    case MmaType::F16:
      out.line(
          "sc_w = stencilc::rt::packOperands(stencilc::rt::Convert<__half>"
          "::from(sc_c(0)), stencilc::rt::Convert<__half>::from(sc_c(1)));");
      break;
    case MmaType::BF16:
      out.line("sc_w = stencilc::rt::packOperands(stencilc::rt::Convert<__nv_"
               "bfloat16>::from(sc_c(0)), stencilc::rt::Convert<__nv_"
               "bfloat16>::from(sc_c(1)));");
      break;
    case MmaType::TF32:
      if (split)
        split->packHostWord();
      else
        out.line("const float sc_f = stencilc::rt::roundTF32(static_cast<"
                 "float>(sc_c(0)));\nstd::memcpy(&sc_w, &sc_f, 4);");
      break;
    case MmaType::F64:
      out.line("sc_w = sc_c(0);");
      break;
    }
    out.line("sc_tc_host[sc_k] = sc_w; // [tile][lane][register]");
    if (split)
      out.line("sc_tc_host[{0} * 32 * {1} + sc_k] = sc_wl;\nsc_tc_host[2 * "
               "{0} * 32 * {1} + sc_k] = sc_wl2;",
               tiles, aRegs);
  }
  out.line("stencilc::rt::ScratchBuffer<{}> sc_tc_a(nullptr, "
           "sc_tc_host.size(), stream);",
           word);
  out.line("STENCILC_TRY(sc_tc_a.error());");
  out.line("// From pageable memory: the call returns once the data is "
           "staged, so the vector may go.");
  out.line("STENCILC_TRY(cudaMemcpyAsync(sc_tc_a.get(), sc_tc_host.data(), "
           "sc_tc_host.size() * sizeof({}), cudaMemcpyHostToDevice, stream));",
           word);
  out.line("TcArgs sc_tc_args{{}};");
  out.line("sc_tc_args.a = sc_tc_a.get();");
  if (centresOperands(p)) {
    out.line("// Centred operands get their centre back times the sum of a "
             "row's coefficients.");
    out.line("double sc_tc_rsum = 0;\nfor (int sc_k = 0; sc_k < kTcRowTaps; "
             "++sc_k)\n  sc_tc_rsum += sc_tc_coeff[kTcRowCoeff[sc_k]];");
    out.line("sc_tc_args.rsum = static_cast<float>(sc_tc_rsum);");
  }
  if (split)
    out.line("sc_tc_args.alo = sc_tc_a.get() + {0} * 32 * {1};\n"
             "sc_tc_args.alo2 = sc_tc_a.get() + 2 * {0} * 32 * {1};",
             tiles, aRegs);
  out.line("long long sc_tc_blocks = 1;");
  for (int a = 0; a < D; ++a) {
    auto blk = out.scope("");
    // Blocks start where reads stay inside the grid and the fused kernel
    // is exact, and stop before either fails at the far side.
    out.line("{1}long long sc_start = std::max<long long>(-kTcLo{0}, "
             "kTcBandLo{0});",
             a, a == D - 1 ? "" : "const ");
    if (a == D - 1)
      out.line("// The box's rows start on a multiple of 16 bytes.\n"
               "sc_start += (kTcVec - (sc_start + kTcLo{0}) % kTcVec) % "
               "kTcVec;",
               a);
    out.line("const long long sc_lastRead = n{0} - 1 - kTcHi{0} - "
             "(kTcP{0} - 1) * kTcR{0} - sc_start;",
             a);
    out.line("const long long sc_lastOut = n{0} - kTcBandHi{0} - kTcT{0} - "
             "sc_start;",
             a);
    out.line("const long long sc_fit = std::min(sc_lastRead, sc_lastOut);");
    out.line("sc_tc_args.n{0} = n{0};\nsc_tc_args.lo{0} = sc_start;", a);
    if (a == D - 1)
      out.line("sc_tc_args.last{0} = sc_fit < 0 ? 0 : sc_fit / kTcVec * "
               "kTcVec;",
               a);
    else
      out.line("sc_tc_args.last{0} = sc_fit < 0 ? 0 : sc_fit;", a);
    out.line("sc_tc_args.blocks{0} = sc_fit < 0 ? 0 : (sc_tc_args.last{0} + "
             "kTcT{0} - 1) / kTcT{0} + 1;",
             a);
    out.line("sc_tc_blocks *= sc_tc_args.blocks{};", a);
  }
  out.line("if (sc_tc_blocks > 0x7fffffffLL)\n  return "
           "cudaErrorInvalidConfiguration;");
  out.line("// As many blocks as run at once, each over tiles blockIdx.x, + "
           "gridDim.x, ...");
  out.line("int sc_dev = 0, sc_sms = 0, sc_occ = 0;");
  out.line("STENCILC_TRY(cudaGetDevice(&sc_dev));");
  out.line("STENCILC_TRY(cudaDeviceGetAttribute(&sc_sms, "
           "cudaDevAttrMultiProcessorCount, sc_dev));");
  // Every instantiation the launch may pick.
  std::vector<std::string> kernels;
  for (const char *stores : {"true", "false"}) {
    if (!split) {
      kernels.push_back(s.name + "_tc_kernel<" + stores + ">");
      continue;
    }
    for (const std::string &k : split->kernels(stores))
      kernels.push_back(k);
  }
  for (const std::string &k : kernels)
    out.line("STENCILC_TRY(cudaFuncSetAttribute({}, "
             "cudaFuncAttributeMaxDynamicSharedMemorySize, "
             "static_cast<int>(kTcSmemBytes)));",
             k);
  out.line("STENCILC_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor("
           "&sc_occ, {}, kTcThreads, kTcSmemBytes));",
           kernels.front());
  out.line("const long long sc_tc_grid = std::min<long long>(sc_tc_blocks, "
           "static_cast<long long>(sc_sms) * std::max(sc_occ, 1));");
}

void TensorCoreEmitter::emitLaunch(const std::string &in,
                                   const std::string &outPtr) {
  {
    auto full = out.scope("if (sc_args.nt == kFuse && sc_tc_blocks > 0)");
    out.line("sc_tc_args.in = {};\nsc_tc_args.out = {};", in, outPtr);
    std::string aligned = fmt::format(
        "kTcOutVec && (reinterpret_cast<unsigned long long>({}) & 15) == 0 "
        "&& n{} % kTcVec == 0",
        outPtr, D - 1);
    if (p.split) {
      SplitTF32Emitter(s, out).launch("(" + aligned + ")");
    } else {
      out.line("if ({})", aligned);
      out.line("  STENCILC_LAUNCH({}_tc_kernel<true>, static_cast<unsigned>("
               "sc_tc_grid), kTcThreads, kTcSmemBytes, stream, sc_tc_args);",
               s.name);
      out.line("else\n  STENCILC_LAUNCH({}_tc_kernel<false>, "
               "static_cast<unsigned>(sc_tc_grid), kTcThreads, kTcSmemBytes, "
               "stream, sc_tc_args);",
               s.name);
    }
    out.line("STENCILC_TRY(cudaGetLastError());");
    // The CUDA-core tiles inside [lo, lo + last + kTcT) on every axis.
    for (int a = 0; a < D; ++a)
      out.line("sc_args.holeLo{0} = (sc_tc_args.lo{0} + kT{0} - 1) / "
               "kT{0};\nsc_args.holeHi{0} = std::max(sc_args.holeLo{0}, "
               "(sc_tc_args.lo{0} + sc_tc_args.last{0} + kTcT{0}) / kT{0});",
               a);
  }
  auto other = out.scope("else");
  for (int a = 0; a < D; ++a)
    out.line("sc_args.holeLo{0} = sc_args.holeHi{0} = 0;", a);
}
