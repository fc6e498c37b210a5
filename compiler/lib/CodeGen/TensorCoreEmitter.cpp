//===- TensorCoreEmitter.cpp - mma / mma.sp kernels from a MatrixProgram --===//
//
// The device side of the tensor-core strategy: the kernel that loads a box,
// gathers B and issues mma or mma.sp, and its box load. Its plan is
// TensorCorePlan.cpp's; its host side, TensorCoreHostEmitter.cpp's.
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

namespace {

std::string mmaFunction(const FragmentShape &f) {
  return std::string("stencilc::rt::tc::mma_") + (f.sparse ? "sp_" : "") + "m" +
         std::to_string(f.m) + "n" + std::to_string(f.n) + "k" +
         std::to_string(f.k) + "_" + mmaTypeName(f.type).str();
}

} // namespace

TensorCoreEmitter::TensorCoreEmitter(const Stencil &s,
                                     const TensorCorePlan &plan, Emitter &out,
                                     std::string elem)
    : s(s), p(*s.matrix), plan(plan), out(out), elem(std::move(elem)),
      D(s.dims) {}

std::string TensorCoreEmitter::axes(const std::function<std::string(int)> &f,
                                    const std::string &sep) const {
  std::string r;
  for (int a = 0; a < D; ++a)
    r += (a ? sep : "") + f(a);
  return r;
}

std::string
TensorCoreEmitter::linear(const std::function<std::string(int)> &c,
                          const std::function<std::string(int)> &n) const {
  std::string r = "(" + c(0) + ")";
  for (int a = 1; a < D; ++a)
    r = "(" + r + " * " + n(a) + " + " + c(a) + ")";
  return r;
}

void TensorCoreEmitter::emitKernel() {
  const PackedFragments &pk = *p.packed;
  const FragmentShape &f = pk.shape;
  const int fast = D - 1;
  const int E = elementsPerRegister(f.type);
  const int bRegs = bRegisters(f), aRegs = aRegisters(f),
            accs = accumulators(f);
  const bool f64 = f.type == MmaType::F64;
  const std::string word = f64 ? "double" : "unsigned";
  const std::string acc = f64 ? "double" : "float";
  auto i = [](int a) { return std::to_string(a); };
  // Offset of element x of stage run `run` from the job's first output.
  auto runOffset = [&](const std::string &run, const std::string &x) {
    std::string stride = "1";
    std::vector<std::string> within(D);
    for (int a = fast - 1; a >= 0; --a) {
      within[a] = "((" + run + ") / (" + stride + ")) % kTcR" + i(a);
      stride = stride + " * kTcR" + i(a);
    }
    return linear([&](int a) { return a == fast ? x : within[a]; },
                  [&](int a) { return "static_cast<long long>(a.n" + i(a) +
                                      ")"; });
  };
  const int chunkBytes = plan.chunk * (16 / plan.vec);
  const std::string chunkType = chunkBytes == 16  ? "uint4"
                                : chunkBytes == 8 ? "uint2"
                                : chunkBytes == 4 ? "unsigned"
                                                  : "unsigned short";

  out.line("// Tensor cores: {} ({}), {} layout, patch {}, block tile {}, "
           "{} warp jobs of 8 patches.",
           f.name(), sparsityPatternName(p.pattern).str(),
           matrixLayoutName(p.layout).str(),
           axes([&](int a) { return i(plan.patch[a]); }, "x"),
           axes([&](int a) { return i(plan.tile[a]); }, "x"), plan.jobs);
  std::optional<SplitTF32Emitter> split;
  if (p.split) {
    split.emplace(s, out);
    out.line("// {}.", split->summary());
  }
  const bool centred = centresOperands(p);
  out.line("constexpr int kTcThreads = {}, kTcWarps = {}, kTcJobs = {};",
           plan.threads, plan.threads / 32, plan.jobs);
  for (int a = 0; a < D; ++a)
    out.line("constexpr int kTcR{0} = {1}, kTcP{0} = {2}, kTcT{0} = {3}, "
             "kTcLo{0} = {4}, kTcHi{0} = {5}, kTcBox{0} = {6};",
             a, plan.patch[a], plan.patches[a], plan.tile[a], plan.lo[a],
             plan.hi[a], plan.box[a]);
  for (int a = 0; a < D; ++a)
    out.line("constexpr int kTcBandLo{0} = {1}, kTcBandHi{0} = {2};", a,
             s.fused ? s.fused->bandLo[a] : 0,
             s.fused ? s.fused->bandHi[a] : 0);
  out.line("constexpr int kTcVec = {}, kTcRead{} = {}; // elements per 16 "
           "bytes; the box's fastest extent read",
           plan.vec, fast, plan.read);
  out.line("constexpr int kTcBoxElems = {}, kTcZero = kTcBoxElems;",
           axes([](int a) { return "kTcBox" + std::to_string(a); }, " * "));
  if (plan.swizzle) {
    // Whole groups of 8 chunks only: a row's last, partial group stays in
    // place unless its XOR is 0 anyway.
    const int64_t whole = plan.box[fast] / 32 * 32;
    out.line("// The box's rows are swizzled: element x of a row sits at "
             "tcSwizzle(x), its 16-byte\n// chunk XORed with bits 3-4 of "
             "the chunk's index, so that B's lanes, 16 elements\n// apart, "
             "meet at most two to a bank. An involution, within each row.");
    if (plan.box[fast] % 32 == 0 || whole / 32 % 4 == 0)
      out.line("__device__ __forceinline__ int tcSwizzle(int x) {{ return x "
               "^ (x >> 3 & 0xC); }}");
    else
      out.line("__device__ __forceinline__ int tcSwizzle(int x) {{ return x "
               "< {} ? x ^ (x >> 3 & 0xC) : x; }}",
               whole);
  }
  out.line("// Dynamic shared memory: two buffers of the box and a zero "
           "element, each a whole\n// number of 16-byte copies, then each "
           "warp's stage of one job's outputs (8 patches),\n// in runs of "
           "kTcRun along the fastest axis.");
  out.line("constexpr int kTcBufElems = {}, kTcStage = {}, kTcRun = 8 * "
           "kTcR{};",
           plan.bufElems, plan.stageElems, fast);
  out.line("constexpr int kTcSmemBytes = {};", plan.sharedBytes);
  out.line("static_assert(kTcBufElems > kTcBoxElems && kTcBufElems % kTcVec "
           "== 0 && kTcStage % kTcRun == 0 && kTcRun % kTcVec == 0 && "
           "kTcSmemBytes == (2 * kTcBufElems + kTcWarps * kTcStage) * "
           "sizeof(Elem), \"the plan's shared memory\");");
  out.line("// Tiles start where the box does, a whole number of 16-byte "
           "copies later; if that is\n// a whole number of copies, so are "
           "the runs a warp stores.");
  out.line("constexpr bool kTcOutVec = kTcLo{} % kTcVec == 0;", fast);
  out.line("constexpr int kTcRows = {}, kTcTilesM = {}, kTcARegs = {}, "
           "kTcBRegs = {}; // {} K tiles, unrolled below",
           p.rows(), pk.tilesM, aRegs, bRegs, pk.tilesK);
  out.line("static_assert(kTcBoxElems < 0xFFFF, \"gather offsets are 16 "
           "bits\");");
  out.line("static_assert(kTcStage == 8 * kTcRows, \"a stage holds a job's "
           "8 patches\");");

  // Box strides, for linear offsets into the shared box.
  std::vector<int64_t> stride(D, 1);
  for (int a = D - 2; a >= 0; --a)
    stride[a] = stride[a + 1] * plan.box[a + 1];
  auto lin = [&](const Offset &v) {
    int64_t r = 0;
    for (int a = 0; a < D; ++a)
      r += v[a] * stride[a];
    return r;
  };
  const int count = pk.tilesK * bRegs * E;
  if (!plan.uniformGather) {
    // The gather table: for B element (K tile, register, element) and the
    // lane's t = lane % 4, the box offset of the input point relative to the
    // patch's corner, or 0xFFFF for a zero column. PIT lives here.
    std::vector<std::string> lut;
    for (int tk = 0; tk < pk.tilesK; ++tk)
      for (int r = 0; r < bRegs; ++r)
        for (int e = 0; e < E; ++e)
          for (int t = 0; t < 4; ++t) {
            int row = tk * f.k + fragmentB(f, t, r, e).row;
            if (row >= p.cols() || p.columns[row].zero) {
              lut.push_back("0xFFFF");
              continue;
            }
            int64_t off = 0;
            for (int a = 0; a < D; ++a)
              off = off * plan.box[a] + (p.columns[row].offset[a] - plan.lo[a]);
            lut.push_back(std::to_string(off));
          }
    out.line("constexpr int kTcLutSize = {};", lut.size());
    {
      std::string text;
      for (size_t k = 0; k < lut.size(); ++k)
        text += (k ? (k % 16 ? ", " : ",\n") : "") + lut[k];
      out.line("__device__ const unsigned short kTcGather[kTcLutSize] = {{");
      out.indent();
      out.write(text);
      out.dedent();
      out.line("}};");
    }
  }
  if (f.sparse) {
    out.line("constexpr int kTcMetaRegs = {};", pk.metaRegs);
    std::string text;
    for (size_t k = 0; k < pk.metadata.size(); ++k)
      text += (k ? (k % 8 ? ", " : ",\n") : "") +
              fmt::format("0x{:08x}u", pk.metadata[k]);
    out.line("// Ordered metadata, [register][lane]; tiles share a register "
             "through the sparsity selector.");
    out.line("__device__ const unsigned kTcMeta[kTcMetaRegs * 32] = {{");
    out.indent();
    out.write(text);
    out.dedent();
    out.line("}};");
  }
  out.blank();
  {
    auto st = out.scope("struct TcArgs", "};");
    out.line("const Elem *in;\nElem *out;");
    out.line("long long {};", axes([&](int a) { return "n" + i(a); }));
    out.line("long long {};", axes([&](int a) { return "lo" + i(a); }));
    out.line("long long {};", axes([&](int a) { return "blocks" + i(a); }));
    out.line("long long {}; // the last block's origin, from lo",
             axes([&](int a) { return "last" + i(a); }));
    out.line("const {} *a; // [tile][lane][register]", word);
    if (split)
      out.line("const unsigned *alo, *alo2; // split-TF32: A's lo and lo2 "
               "parts, as a");
    if (centred)
      out.line("float rsum; // the sum of A's rounded coefficients per row "
               "(docs/language.md §6.4)");
  }
  out.blank();

  out.line("// kTcStores16: the host found the output's rows 16-byte "
           "aligned (and kTcOutVec holds),\n// so the staged runs go out in "
           "whole chunks.");
  if (split)
    out.line("// kTcALo: the product A_lo B_hi runs (some coefficient of A is "
             "not exact in tf32).");
  // Paired rows: ptxas would take 240 registers to run A's loads far
  // ahead, and two blocks per SM; three (168 registers) is what the
  // rolling tile is sized for where they fit (docs/benchmarks.md, session
  // 6).
  out.line("template <bool kTcStores16{}>\n__global__ void "
           "__launch_bounds__(kTcThreads{}) {}_tc_kernel(const TcArgs a) {{",
           split ? ", bool kTcALo" : "",
           plan.pairRows && plan.threeBlocks ? ", 3" : "", s.name);
  out.indent();
  // Two box buffers: each block runs tiles blockIdx.x, + gridDim.x, ...
  // and copies the next tile's box while it computes on this one.
  out.line("STENCILC_DYNAMIC_SHARED(sc_raw);");
  out.line("Elem *const sc_buf = reinterpret_cast<Elem *>(sc_raw);");
  if (!plan.uniformGather)
    out.line("__shared__ unsigned short s_lut[kTcLutSize];");
  out.line("if (threadIdx.x == 0)\n  sc_buf[kTcZero] = sc_buf[kTcBufElems + "
           "kTcZero] = stencilc::rt::Convert<Elem>::from(0.0f);");
  if (!plan.uniformGather)
    out.line("for (int i = threadIdx.x; i < kTcLutSize; i += kTcThreads)\n  "
             "s_lut[i] = kTcGather[i];");
  out.line("const long long sc_count = {};",
           axes([&](int a) { return "a.blocks" + i(a); }, " * "));
  out.line("// Tile k's origin. The last tile of an axis ends at the covered "
           "region's end; it may\n// overlap the one before it, whose "
           "outputs it writes again with the same values.");
  {
    auto origin = out.scope(
        "auto sc_origin = [&](long long k, long long (&o)[" + i(D) + "])",
        "};");
    for (int a = D - 1; a >= 1; --a)
      out.line("o[{0}] = a.lo{0} + min(k % a.blocks{0} * kTcT{0}, "
               "a.last{0});\nk /= a.blocks{0};",
               a);
    out.line("o[0] = a.lo0 + min(k * kTcT0, a.last0);");
  }
  if (centred) {
    out.line("// The value tile o's operands are centred on: its middle "
             "output's, inside the grid.");
    out.line("auto sc_centre = [&](const long long (&o)[{}]) {{ return "
             "static_cast<float>(a.in[{}]); }};",
             D,
             linear([&](int a) { return "o[" + i(a) + "] + kTcT" + i(a) +
                                        " / 2"; },
                    [&](int a) { return "a.n" + i(a); }));
  }
  emitBoxLoad();
  out.line("long long sc_tile = blockIdx.x, sc_o[{}];", D);
  out.line("sc_origin(sc_tile, sc_o);\nsc_load(sc_buf, sc_o);\n"
           "stencilc::rt::copyAsyncCommit();");
  out.line("const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;");
  out.line("Elem *const sc_stage = sc_buf + 2 * kTcBufElems + (threadIdx.x "
           ">> 5) * kTcStage;");
  out.line("// The lane's chunks of a job's stage: chunk k of kTcChunk "
           "elements at sc_from[k] goes\n// to sc_to[k] from the job's first "
           "output.");
  out.line("constexpr int kTcChunk = {}, kTcLaneChunks = (kTcStage / "
           "kTcChunk + 31) / 32;",
           plan.chunk);
  out.line("int sc_from[kTcLaneChunks];\nlong long sc_to[kTcLaneChunks];");
  {
    out.line("#pragma unroll");
    auto loop = out.scope("for (int k = 0; k < kTcLaneChunks; ++k)");
    out.line("const int c = lane + 32 * k, sc_run = c / (kTcRun / kTcChunk), "
             "sc_x = c % (kTcRun / kTcChunk) * kTcChunk;");
    out.line("sc_from[k] = sc_run * kTcRun + sc_x;");
    out.line("sc_to[k] = {};", runOffset("sc_run", "sc_x"));
  }
  // Swizzled: sc_lane is the rows' part of the lane's offset, sc_lx the
  // fastest axis's.
  auto laneRows = [&](int t) {
    Offset o = plan.lane[t];
    if (plan.swizzle)
      o[fast] = 0;
    return lin(o);
  };
  if (plan.uniformGather)
    out.line("// Lane quad t reads B's rows at this offset from the patch; "
             "the rest is constant.\nconst int sc_lane = t == 0 ? {} : t == "
             "1 ? {} : t == 2 ? {} : {};",
             laneRows(0), laneRows(1), laneRows(2), laneRows(3));
  if (plan.swizzle)
    out.line("const int sc_lx = t == 0 ? {} : t == 1 ? {} : t == 2 ? {} : {};",
             plan.lane[0][fast], plan.lane[1][fast], plan.lane[2][fast],
             plan.lane[3][fast]);
  if (f.sparse)
    out.line("unsigned meta[kTcMetaRegs];\n#pragma unroll\nfor (int r = 0; r "
             "< kTcMetaRegs; ++r)\n  meta[r] = kTcMeta[r * 32 + lane];");
  // A: in registers for the whole block when it is small, else read per
  // use (coalesced, and cached: every block reads the same words).
  const int tiles = pk.tilesM * pk.tilesK;
  const bool hoist = tensorCoreHoldsA(p);
  // The lane's words of A tile `tile`: [tile][lane][register], one
  // vector load (stencilc::rt::tc::loadWords).
  auto aWords = [&](int tile, const char *part = "a") {
    return fmt::format("a.{} + ({} * 32 + lane) * kTcARegs", part, tile);
  };
  if (hoist) {
    out.line("{} sc_a[{}][kTcARegs];", word, tiles);
    for (int tile = 0; tile < tiles; ++tile)
      out.line("stencilc::rt::tc::loadWords({}, sc_a[{}]);", aWords(tile),
               tile);
    if (split && split->lowA().value_or(true)) {
      out.line("unsigned sc_alo[{0}][kTcARegs], sc_alo2[{0}][kTcARegs];",
               tiles);
      auto lo = out.scope("if constexpr (kTcALo)");
      for (int tile = 0; tile < tiles; ++tile)
        out.line("stencilc::rt::tc::loadWords({}, sc_alo[{}]);\n"
                 "stencilc::rt::tc::loadWords({}, sc_alo2[{}]);",
                 aWords(tile, "alo"), tile, aWords(tile, "alo2"), tile);
    }
  }
  // Element k of the lane's B fragment, as an s_in index expression.
  // `bBase` names the patch's B pointer of a uniform gather.
  std::string bBase = "sc_b";
  auto bAt = [&](int k) {
    if (!plan.uniformGather)
      return fmt::format("s_in[sc_at({})]", k);
    if (!plan.swizzle)
      return fmt::format("{}[{}]", bBase, lin(plan.constant[k]) - lin(plan.lo));
    // The row's offset stays a constant; the lane's element of the row,
    // sc_x + the column, goes through the swizzle.
    Offset row = plan.constant[k], lo = plan.lo;
    row[fast] = lo[fast] = 0;
    return fmt::format("{}[{} + tcSwizzle(sc_x + {})]", bBase,
                       lin(row) - lin(lo),
                       plan.constant[k][fast] - plan.lo[fast]);
  };
  // A pair of halves at adjacent even offsets loads as one 32-bit word
  // when every lane's address is even: the patch corner and the lane
  // offsets are even whenever the box's fastest extent, the patch along
  // the fastest axis and the lane offsets are.
  bool evenBase =
      plan.patch[fast] % 2 == 0 && (D == 1 || plan.box[fast] % 2 == 0);
  for (int t = 0; t < 4 && plan.uniformGather; ++t)
    evenBase &= lin(plan.lane[t]) % 2 == 0;
  auto pairWord = [&](int k0) -> std::optional<std::string> {
    if (!plan.uniformGather || E != 2 || !evenBase)
      return std::nullopt;
    int64_t c0 = lin(plan.constant[k0]) - lin(plan.lo);
    int64_t c1 = lin(plan.constant[k0 + 1]) - lin(plan.lo);
    if (c1 != c0 + 1 || c0 % 2)
      return std::nullopt;
    return fmt::format("*reinterpret_cast<const unsigned *>({} + {})", bBase,
                       c0);
  };
  // B register r of K tile tk into `dst[r]` (split-TF32: its hi part,
  // and its lo part into `dstLo[r]`).
  auto loadB = [&](int tk, const std::string &dst, const std::string &dstLo) {
    for (int r = 0; r < bRegs; ++r) {
      int k0 = (tk * bRegs + r) * E;
      if (split)
        split->loadB(dst, dstLo, r, bAt(k0));
      else if (std::optional<std::string> w = pairWord(k0))
        out.line("{}[{}] = {};", dst, r, *w);
      else if (E == 2)
        out.line("{}[{}] = stencilc::rt::packPair({}, {});", dst, r, bAt(k0),
                 bAt(k0 + 1));
      else if (f.type == MmaType::TF32)
        out.line("{}[{}] = __float_as_uint({});", dst, r, bAt(k0));
      else
        out.line("{}[{}] = {};", dst, r, bAt(k0));
    }
  };
  // Every M tile's product with K tile tk, into each of `into`: the
  // accumulators acc<suffix> (split-TF32: and accLo<suffix>) with the B
  // fragment `b` (split-TF32: its hi part, and `bLo` its lo part). A read
  // per use is read once for all of them (split-TF32's lo parts excepted:
  // its windows are twice as large, and no split kernel pairs rows).
  struct Into {
    std::string suffix, b, bLo;
  };
  auto mmasInto = [&](int tk, const std::vector<Into> &into) {
    for (int tm = 0; tm < pk.tilesM; ++tm) {
      int tile = tm * pk.tilesK + tk;
      std::string av, avLo, avLo2;
      if (hoist) {
        av = fmt::format("sc_a[{}]", tile);
        avLo = fmt::format("sc_alo[{}]", tile);
        avLo2 = fmt::format("sc_alo2[{}]", tile);
      } else {
        av = fmt::format("av{}_{}", tm, tk);
        out.line("{} {}[kTcARegs];\nstencilc::rt::tc::loadWords({}, {});",
                 word, av, aWords(tile), av);
        avLo = aWords(tile, "alo");
        avLo2 = aWords(tile, "alo2");
      }
      auto call = [&](const std::string &accum, const std::string &a,
                      const std::string &bb) {
        if (f.sparse)
          return fmt::format("{}<{}>({}, {}, {}, meta[{}]);", mmaFunction(f),
                             pk.tileSelector[tile], accum, a, bb,
                             pk.tileMetaReg[tile]);
        return fmt::format("{}({}, {}, {});", mmaFunction(f), accum, a, bb);
      };
      for (const Into &to : into) {
        if (split)
          split->mmas(call, tm, av, avLo, avLo2, !hoist, to.b, to.bLo, accs,
                      to.suffix);
        else
          out.line("{}",
                   call(fmt::format("acc{}[{}]", to.suffix, tm), av, to.b));
      }
    }
  };
  auto mmas = [&](int tk, const std::string &b, const std::string &bLo) {
    mmasInto(tk, {Into{"", b, bLo}});
  };
  // D: accumulator i of the lane sits at (row, patch) per PTX.md; the row
  // is an output of the patch, row-major over it. The warp stages its 8
  // patches' outputs in shared memory as runs along the fastest axis (run
  // = the row's coordinates but the fastest, each 8 patches long), then
  // writes them out: whole chunks of kTcChunk elements per lane where the
  // runs and the grid's rows are 16-byte aligned, element by element
  // otherwise (consecutive lanes, consecutive outputs, either way).
  // `sc_dst` points at the lane's first chunk of the job's outputs, that
  // is sc_to[0] past the job's first output (run 0, element 0).
  //
  // 16-bit outputs of m16 tiles whose 8-row halves lie inside one run
  // are packed in pairs and transposed by movmatrix, 8x8 at a time: lane
  // (g, t) then holds rows 2t and 2t + 1 of patch g, adjacent outputs, and
  // stages them as one word.
  const bool pairs = E == 2 && f.m == 16 && plan.patch[fast] % 8 == 0 &&
                     plan.stageElems / 8 % 8 == 0;
  auto scatter = [&](const std::string &suffix = "") {
    const std::string accName = "acc" + suffix;
    if (split)
      split->foldAccumulators(accs, suffix);
    if (centred)
      out.line("// The centre comes back: r times the row's sum of A.\n"
               "#pragma unroll\nfor (int tm = 0; tm < kTcTilesM; ++tm)\n"
               "#pragma unroll\n  for (int i = 0; i < {1}; ++i)\n    "
               "{0}[tm][i] = fmaf(sc_r, a.rsum, {0}[tm][i]);",
               accName, accs);
    out.line("// This warp's copy-out of its previous job is done before "
             "the stage is written.\n__syncwarp();");
    const int rows = static_cast<int>(plan.stageElems / 8);
    if (pairs) {
      for (int tm = 0; tm < pk.tilesM; ++tm)
        for (int h = 0; h < 2; ++h) {
          int r0 = tm * 16 + 8 * h;
          if (r0 >= rows)
            continue;
          int run = r0 / plan.patch[fast], within = r0 % plan.patch[fast];
          out.line("*reinterpret_cast<unsigned *>(sc_stage + {} + g * kTcR{} "
                   "+ 2 * t) = stencilc::rt::tc::transpose8x8(stencilc::rt::"
                   "packPair(stencilc::rt::Convert<Elem>::from({}[{}][{}]), "
                   "stencilc::rt::Convert<Elem>::from({}[{}][{}])));",
                   run * 8 * plan.patch[fast] + within, fast, accName, tm,
                   2 * h, accName, tm, 2 * h + 1);
        }
    } else {
      out.line("#pragma unroll");
      auto tmLoop = out.scope("for (int tm = 0; tm < kTcTilesM; ++tm)");
      out.line("#pragma unroll");
      auto iLoop =
          out.scope(fmt::format("for (int i = 0; i < {}; ++i)", accs));
      if (f.m == 8)
        out.line("const int sc_row = tm * {} + g, sc_col = 2 * t + i;", f.m);
      else
        out.line("const int sc_row = tm * {} + g + 8 * (i >> 1), sc_col = 2 "
                 "* t + (i & 1);",
                 f.m);
      out.line("if (sc_row < kTcRows)\n  sc_stage[sc_row / kTcR{0} * kTcRun "
               "+ sc_col * kTcR{0} + sc_row % kTcR{0}] = "
               "stencilc::rt::Convert<Elem>::from({1}[tm][i]);",
               fast, accName);
    }
    out.line("__syncwarp();");
    {
      auto vec = out.scope("if constexpr (kTcStores16)");
      out.line("#pragma unroll");
      auto loop = out.scope("for (int k = 0; k < kTcLaneChunks; ++k)");
      std::string store = fmt::format(
          "*reinterpret_cast<{0} *>(sc_dst + (sc_to[k] - sc_to[0])) = "
          "*reinterpret_cast<const {0} *>(sc_stage + sc_from[k]);",
          chunkType);
      if (plan.stageElems / plan.chunk % 32 == 0)
        out.line("{}", store);
      else
        out.line("if (lane + 32 * k < kTcStage / kTcChunk)\n  {}", store);
    }
    auto scalar = out.scope("else");
    auto loop = out.scope("for (int e = lane; e < kTcStage; e += 32)");
    out.line("sc_dst[{} - sc_to[0]] = sc_stage[e];",
             runOffset("e / kTcRun", "e % kTcRun"));
  };

  // The tile loop: wait for this tile's box (after starting the next
  // one's), compute, and let every warp finish before the buffer is reused.
  out.line("for (int sc_c = 0; sc_tile < sc_count; ++sc_c, sc_tile += "
           "gridDim.x) {{");
  out.indent();
  out.line("Elem *const s_in = sc_buf + (sc_c & 1) * kTcBufElems;");
  out.line("const long long {};", axes([&](int a) {
             return "o" + i(a) + " = sc_o[" + i(a) + "]";
           }));
  if (centred)
    out.line("const long long sc_o_now[{}] = {{{}}};", D,
             axes([&](int a) { return "o" + i(a); }));
  {
    auto next = out.scope("if (sc_tile + gridDim.x < sc_count)");
    out.line("sc_origin(sc_tile + gridDim.x, sc_o);\nsc_load(sc_buf + "
             "((sc_c + 1) & 1) * kTcBufElems, sc_o);\n"
             "stencilc::rt::copyAsyncCommit();\n"
             "stencilc::rt::copyAsyncWait<1>();");
  }
  out.line("else\n  stencilc::rt::copyAsyncWait<0>();");
  if (centred) {
    out.line("// tf32 operands are centred on the tile's value sc_r: each "
             "thread subtracts it\n// from the copies it made and rounds "
             "them to tf32; the outputs get sc_r times\n// their row's sum "
             "of A back (docs/language.md §6.4).");
    out.line("const float sc_r = sc_centre(sc_o_now);");
    // 16 bytes a lane, the copy's own: scalar accesses 16 bytes apart
    // would meet four to a bank (docs/benchmarks.md, "tf32 sparse, A
    // reuse").
    out.line("static_assert(kTcVec == 4, \"centred operands are f32\");");
    out.line("if (sc_vec)\n  for (int i = threadIdx.x * kTcVec; i < "
             "kTcBoxElems; i += kTcThreads * kTcVec) {{\n    float4 v = "
             "*reinterpret_cast<const float4 *>(s_in + i);\n    v.x = "
             "stencilc::rt::roundTF32(v.x - sc_r);\n    v.y = "
             "stencilc::rt::roundTF32(v.y - sc_r);\n    v.z = "
             "stencilc::rt::roundTF32(v.z - sc_r);\n    v.w = "
             "stencilc::rt::roundTF32(v.w - sc_r);\n    "
             "*reinterpret_cast<float4 *>(s_in + i) = v;\n  }}");
  }
  out.line("__syncthreads();");
  if (plan.rolling) {
    // Each warp walks down its own run of patch rows of the block's one
    // column of 8 patches, holding kernel row tk's B fragment for the
    // current patch row in registers; moving one row down loads only the
    // last kernel row.
    // P K tiles per kernel row, R kernel rows: tile tk is part tk % P of
    // kernel row tk / P.
    const int T = pk.tilesK, P = plan.rollPeriod, R = T / P;
    out.line("constexpr int kTcRowsPerWarp = kTcP0 / kTcWarps;");
    out.line("static_assert(kTcRowsPerWarp * kTcWarps == kTcJobs, \"one "
             "run of patch rows per warp\");");
    out.line("const int sc_first = (threadIdx.x >> 5) * kTcRowsPerWarp;");
    if (plan.swizzle)
      out.line("const Elem *sc_b = s_in + sc_first * kTcR0 * kTcBox1 + "
               "sc_lane;\nconst int sc_x = g * kTcR1 + sc_lx;");
    else
      out.line("const Elem *sc_b = s_in + sc_first * kTcR0 * kTcBox1 + g * "
               "kTcR1 + sc_lane;");
    out.line("Elem *sc_dst = a.out + (o0 + sc_first * kTcR0) * a.n1 + o1 + "
             "sc_to[0];");
    // The window is a ring: in unrolled trip u, kernel row k sits in slot
    // (u + k) % R (its P tiles at slot * P + part), and the row loaded for
    // the next patch row takes the slot kernel row 0 frees. No register
    // moves.
    // pairRows: one slot more, S = R + 1; a pass computes patch rows i and
    // i + 1, whose kernel row k sit in slots (i + k) % S and (i + 1 + k) %
    // S, and then loads rows i + S and i + S + 1 into the slots of rows i
    // and i + 1, which no later pass reads.
    const int S = plan.pairRows ? R + 1 : R, step = plan.pairRows ? 2 : 1;
    // Unrolled passes until the slots repeat.
    const int U = plan.pairRows ? (S % 2 ? S : S / 2) : R;
    out.line("{} sc_w[{}][kTcBRegs];", word, S * P);
    if (split)
      out.line("unsigned sc_wl[{}][kTcBRegs]; // split-TF32: lo parts",
               S * P);
    for (int tk = 0; tk < T; ++tk)
      loadB(tk, fmt::format("sc_w[{}]", tk), fmt::format("sc_wl[{}]", tk));
    if (plan.pairRows) {
      // Row R, kernel row R - 1 of the second patch row.
      auto second = out.scope("");
      out.line("const Elem *const sc_b1 = sc_b + kTcR0 * kTcBox1;");
      bBase = "sc_b1";
      for (int q = 0; q < P; ++q)
        loadB((R - 1) * P + q, fmt::format("sc_w[{}]", R * P + q),
              fmt::format("sc_wl[{}]", R * P + q));
      bBase = "sc_b";
    }
    auto rows = out.scope(fmt::format(
        "for (int sc_i = 0; sc_i < kTcRowsPerWarp; sc_i += {})", step * U));
    out.line("#pragma unroll");
    auto trips = out.scope(
        fmt::format("for (int sc_u = 0; sc_u < {}; ++sc_u)", U));
    const std::string at = step == 1 ? "sc_u" : "2 * sc_u";
    out.line("if (sc_i + {} >= kTcRowsPerWarp)\n  break;", at);
    out.line("{} acc[kTcTilesM][{}] = {{}};", acc, accs);
    if (split)
      out.line("float accLo[kTcTilesM][{}] = {{}};", accs);
    // 16-bit 2:4: the kernel rows' MMAs go round `chains` accumulators,
    // summed before the scatter, so that consecutive MMAs of a job do not
    // wait on each other (H200, session 30: 1.04-1.06x at three, 1.03-1.04x
    // at two).
    const int chains =
        f.sparse && E == 2 && !split && !plan.pairRows ? std::min(3, T) : 1;
    for (int c = 1; c < chains; ++c)
      out.line("{} acc_c{}[kTcTilesM][{}] = {{}};", acc, c, accs);
    if (plan.pairRows) {
      out.line("{} acc1[kTcTilesM][{}] = {{}}; // patch row i + 1", acc,
               accs);
      if (split)
        out.line("float accLo1[kTcTilesM][{}] = {{}};", accs);
    }
    // Slot of kernel row tk / P, part tk % P, for the pass's patch row
    // `row` (0 or 1).
    auto slot = [&](int tk, int row) {
      std::string base =
          step == 1 ? "sc_u" : fmt::format("2 * sc_u + {}", row);
      if (!plan.pairRows)
        return P == 1 ? fmt::format("(sc_u + {}) % {}", tk, R)
                      : fmt::format("(sc_u + {}) % {} * {} + {}", tk / P, R,
                                    P, tk % P);
      return P == 1 ? fmt::format("({} + {}) % {}", base, tk, S)
                    : fmt::format("({} + {}) % {} * {} + {}", base, tk / P, S,
                                  P, tk % P);
    };
    for (int tk = 0; tk < T; ++tk) {
      std::string chain = tk % chains ? fmt::format("_c{}", tk % chains) : "";
      std::vector<Into> into{Into{chain, fmt::format("sc_w[{}]", slot(tk, 0)),
                                  fmt::format("sc_wl[{}]", slot(tk, 0))}};
      if (plan.pairRows)
        into.push_back(Into{"1", fmt::format("sc_w[{}]", slot(tk, 1)),
                            fmt::format("sc_wl[{}]", slot(tk, 1))});
      mmasInto(tk, into);
    }
    for (int c = 1; c < chains; ++c)
      out.line("#pragma unroll\nfor (int tm = 0; tm < kTcTilesM; ++tm)\n"
               "#pragma unroll\n  for (int i = 0; i < {0}; ++i)\n    "
               "acc[tm][i] += acc_c{1}[tm][i];",
               accs, c);
    scatter();
    out.line("sc_dst += kTcR0 * a.n1;");
    if (plan.pairRows) {
      scatter("1");
      out.line("sc_dst += kTcR0 * a.n1;");
    }
    auto more = out.scope(
        fmt::format("if (sc_i + {} + {} < kTcRowsPerWarp)", at, step));
    out.line("sc_b += {}kTcR0 * kTcBox1;", step == 1 ? "" : "2 * ");
    for (int row = 0; row < step; ++row) {
      std::optional<Emitter::Scope> second;
      if (row == 1) {
        second.emplace(out.scope(""));
        out.line("const Elem *const sc_b1 = sc_b + kTcR0 * kTcBox1;");
        bBase = "sc_b1";
      }
      for (int q = 0; q < P; ++q) {
        std::string to =
            !plan.pairRows
                ? (P == 1 ? "sc_u" : fmt::format("sc_u * {} + {}", P, q))
                : fmt::format("(2 * sc_u + {}) % {} * {} + {}", row, S, P, q);
        loadB((R - 1) * P + q, "sc_w[" + to + "]", "sc_wl[" + to + "]");
      }
      bBase = "sc_b";
    }
  } else {
    auto jobs = out.scope("for (int sc_job = threadIdx.x >> 5; sc_job < "
                          "kTcJobs; sc_job += kTcWarps)");
    out.line("int sc_j = sc_job;");
    out.line("const int jx = sc_j % (kTcP{0} / 8);\nsc_j /= (kTcP{0} / 8);",
             fast);
    for (int a = fast - 1; a >= 1; --a)
      out.line("const int p{0} = sc_j % kTcP{0};\nsc_j /= kTcP{0};", a);
    if (fast >= 1)
      out.line("const int p0 = sc_j;");
    out.line("Elem *const sc_dst = a.out + {} + sc_to[0];",
             linear(
                 [&](int a) {
                   return a == fast ? "o" + i(a) + " + jx * kTcRun"
                                    : "o" + i(a) + " + p" + i(a) + " * kTcR" +
                                          i(a);
                 },
                 [&](int a) { return "a.n" + i(a); }));
    // This lane's B column is patch g of the job.
    out.line("const int sc_base = {};",
             linear(
                 [&](int a) {
                   return a == fast ? "(jx * 8 + g) * kTcR" + i(a)
                                    : "p" + i(a) + " * kTcR" + i(a);
                 },
                 [&](int a) { return "kTcBox" + i(a); }));
    if (!plan.uniformGather)
      out.line("auto sc_at = [&](int k) {{ const unsigned o = s_lut[k * 4 + "
               "t]; return o == 0xFFFFu ? kTcZero : sc_base + "
               "static_cast<int>(o); }};");
    else if (plan.swizzle)
      out.line("const int sc_x = (jx * 8 + g) * kTcR{0} + sc_lx;\nconst "
               "Elem *const sc_b = s_in + sc_base - (jx * 8 + g) * kTcR{0} + "
               "sc_lane;",
               fast);
    else
      out.line("const Elem *const sc_b = s_in + sc_base + sc_lane;");
    out.line("{} acc[kTcTilesM][{}] = {{}};", acc, accs);
    if (split)
      out.line("float accLo[kTcTilesM][{}] = {{}};", accs);
    for (int tk = 0; tk < pk.tilesK; ++tk) {
      auto blk = out.scope("");
      out.line("{} b[kTcBRegs];", word);
      if (split)
        out.line("unsigned bl[kTcBRegs];");
      loadB(tk, "b", "bl");
      mmas(tk, "b", "bl");
    }
    scatter();
  }
  out.line("// Every warp is done with this buffer before the next copy "
           "into it.\n__syncthreads();");
  out.dedent();
  out.line("}}");
  out.dedent();
  out.line("}}");
}

void TensorCoreEmitter::emitBoxLoad() {
  const int fast = D - 1;
  // tf32 operands are centred on the tile's value and rounded; split-TF32
  // keeps them in f32 and splits them in registers.
  const bool centred = centresOperands(p);
  auto i = [](int a) { return std::to_string(a); };
  // Box coordinates l0.. of loop index `r`, whose fastest axis counts
  // `unit`s of elements.
  auto decode = [&](const std::string &unit) {
    out.line("int r = i;");
    for (int a = D - 1; a >= 0; --a) {
      std::string extent =
          a == fast && !unit.empty() ? "(kTcBox" + i(a) + " / " + unit + ")"
                                     : "kTcBox" + i(a);
      std::string scale = a == fast && !unit.empty() ? " * " + unit : "";
      if (a == 0)
        out.line("const int l0 = r{};", scale);
      else
        out.line("const int l{0} = r % {1}{2};\nr /= {1};", a, extent,
                 scale);
    }
  };
  // Swizzled, the loops run over the box's places, and read the element
  // that belongs there.
  auto at = [&](int a) {
    return plan.swizzle && a == fast ? "tcSwizzle(l" + i(a) + ")" : "l" + i(a);
  };
  std::string src = linear(
      [&](int a) { return "o[" + i(a) + "] + kTcLo" + i(a) + " + " + at(a); },
      [&](int a) { return "a.n" + i(a); });
  out.line("// Tile o's input box into `dst`: every read is inside the grid "
           "by construction of the\n// covered region. Rows of the grid "
           "that start 16-byte aligned (the box's do, by the\n// choice of "
           "lo{0}) copy 16 bytes at a time with cp.async, straight into "
           "shared memory,\n// without waiting; the last copy of a row may "
           "pass kTcRead{0} but not the grid's row,\n// whose extent is a "
           "multiple of kTcVec. Other grids load element by element.",
           fast);
  out.line("const bool sc_vec = (reinterpret_cast<unsigned long long>(a.in) "
           "& 15) == 0 && a.n{} % kTcVec == 0;",
           fast);
  auto load = out.scope("auto sc_load = [&](Elem *dst, const long long (&o)[" +
                            i(D) + "])",
                        "};");
  {
    auto vec = out.scope("if (sc_vec)");
    auto loop = out.scope("for (int i = threadIdx.x; i < kTcBoxElems / "
                          "kTcVec; i += kTcThreads)");
    decode("kTcVec");
    out.line("stencilc::rt::copyAsync16(dst + i * kTcVec, a.in + {});", src);
  }
  auto scalar = out.scope("else");
  if (centred)
    out.line("const float sc_r = sc_centre(o);");
  auto loop = out.scope(
      "for (int i = threadIdx.x; i < kTcBoxElems; i += kTcThreads)");
  decode("");
  out.line("if ({} < kTcRead{})", at(fast), fast);
  if (centred)
    out.line("  dst[i] = stencilc::rt::roundTF32(a.in[{}] - sc_r);", src);
  else
    out.line("  dst[i] = a.in[{}];", src);
}
