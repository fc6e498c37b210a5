//===- SplitTF32Emitter.cpp - Split-TF32 parts of the mma kernel ----------===//

#include "stencilc/CodeGen/SplitTF32Emitter.h"
#include "stencilc/IR/MatrixEmulator.h"

using namespace stencilc;

SplitTF32Emitter::SplitTF32Emitter(const Stencil &s, Emitter &out)
    : s(s), out(out), low(splitNeedsLowA(s)) {}

std::string SplitTF32Emitter::summary() const {
  if (!low)
    return "split-TF32: 4 MMAs per product, A_lo*B_hi + A_lo2*B_hi + "
           "A_hi*B_lo + A_hi*B_hi; 2 where the host finds A exact in tf32 "
           "(kTcALo)";
  if (*low)
    return "split-TF32: 4 MMAs per product, A_lo*B_hi + A_lo2*B_hi + "
           "A_hi*B_lo + A_hi*B_hi";
  return "split-TF32: 2 MMAs per product, A_hi*B_lo + A_hi*B_hi (every "
         "coefficient of A is exact in tf32)";
}

void SplitTF32Emitter::loadB(const std::string &hi, const std::string &lo,
                             int r, const std::string &value) {
  out.line("stencilc::rt::tc::splitTF32({}, {}[{}], {}[{}]);", value, hi, r,
           lo, r);
}

void SplitTF32Emitter::mmas(
    const std::function<std::string(const std::string &, const std::string &,
                                    const std::string &)> &call,
    int tm, const std::string &aHi, const std::string &aLo,
    const std::string &aLo2, bool aLoWords, const std::string &b,
    const std::string &bLo, int accumulatorsPerTile,
    const std::string &accSuffix) {
  std::string acc = fmt::format("acc{}[{}]", accSuffix, tm);
  std::string accLo = fmt::format("accLo{}[{}]", accSuffix, tm);
  // The small products first, into their own accumulator.
  if (low.value_or(true)) {
    auto lo = out.scope("if constexpr (kTcALo)");
    std::string a = aLo, a2 = aLo2;
    if (aLoWords) {
      out.line("unsigned avl[kTcARegs], avl2[kTcARegs];\n"
               "stencilc::rt::tc::loadWords({}, avl);\n"
               "stencilc::rt::tc::loadWords({}, avl2);",
               aLo, aLo2);
      a = "avl";
      a2 = "avl2";
    }
    out.line("{}", call(accLo, a, b));
    out.line("{}", call(accLo, a2, b));
  }
  out.line("{}", call(accLo, aHi, bLo));
  auto blk = out.scope("");
  out.line("float sc_t[{}] = {{}};", accumulatorsPerTile);
  out.line("{}", call("sc_t", aHi, b));
  out.line("#pragma unroll\nfor (int i = 0; i < {}; ++i)\n  {}[i] += "
           "sc_t[i];",
           accumulatorsPerTile, acc);
}

void SplitTF32Emitter::foldAccumulators(int accumulatorsPerTile,
                                        const std::string &accSuffix) {
  out.line("// Split-TF32: the small products join the large ones once.");
  out.line("#pragma unroll");
  auto tm = out.scope("for (int tm = 0; tm < kTcTilesM; ++tm)");
  out.line("#pragma unroll");
  out.line("for (int i = 0; i < {0}; ++i)\n  acc{1}[tm][i] += "
           "accLo{1}[tm][i];",
           accumulatorsPerTile, accSuffix);
}

void SplitTF32Emitter::packHostWord() {
  out.line("const float sc_f = static_cast<float>(sc_c(0));");
  out.line("const float sc_h = stencilc::rt::roundTF32(sc_f), sc_l = "
           "stencilc::rt::roundTF32(sc_f - sc_h);");
  out.line("// Exact: the last two bits, so that hi + lo + lo2 is sc_f.");
  out.line("const float sc_l2 = stencilc::rt::roundTF32(sc_f - sc_h - sc_l);");
  out.line("std::memcpy(&sc_w, &sc_h, 4);\nstd::memcpy(&sc_wl, &sc_l, 4);\n"
           "std::memcpy(&sc_wl2, &sc_l2, 4);");
  if (!low)
    out.line("sc_tc_lo = sc_tc_lo || sc_l != 0.0f;");
}

std::string SplitTF32Emitter::kernel(const std::string &stores,
                                     const std::string &lo) const {
  return s.name + "_tc_kernel<" + stores + ", " + lo + ">";
}

std::vector<std::string>
SplitTF32Emitter::kernels(const std::string &stores) const {
  if (low)
    return {kernel(stores, *low ? "true" : "false")};
  return {kernel(stores, "true"), kernel(stores, "false")};
}

void SplitTF32Emitter::launch(const std::string &aligned) {
  // A pointer to the instantiation: template arguments hold commas, which
  // STENCILC_LAUNCH would split.
  auto pick = [&](const std::string &stores) {
    if (low)
      return "&" + kernel(stores, *low ? "true" : "false");
    return "(sc_tc_lo ? &" + kernel(stores, "true") + " : &" +
           kernel(stores, "false") + ")";
  };
  out.line("void (*const sc_tc_kernel)(const TcArgs) = {} ? {} : {};",
           aligned, pick("true"), pick("false"));
  out.line("STENCILC_LAUNCH(sc_tc_kernel, static_cast<unsigned>(sc_tc_grid), "
           "kTcThreads, kTcSmemBytes, stream, sc_tc_args);");
}
