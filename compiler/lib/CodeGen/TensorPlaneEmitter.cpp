//===- TensorPlaneEmitter.cpp - The tensor-core plane kernel of 3-D boxes -===//
//
// The tensor-core kernel of 3-D boxes of f16 and bf16 grids (issue 24;
// CudaCorePlan::tensorPlane), on the plane kernel's structure
// (PlaneKernelEmitter.cpp): a block owns 64 columns (axis 2) by kT1 rows
// (axis 1) of outputs over a segment of kT0 planes (axis 0), and streams the
// input planes of the segment and kR0 on either side through a ring of
// kStages shared-memory buffers, kStages - 1 planes loading by cp.async
// while one is multiplied. The matrix products carry the sum:
//
//   out[z, y, x] = sum_{dz, dy} (W(dz, dy) applied along axis 2 to the row
//   in[z + dz, y + dy, .])[x]
//
// where W(dz, dy) is the banded Toeplitz matrix of the row (dz, dy) of
// weights. Each input plane serves the 2 kR0 + 1 output planes it
// contributes to, each with its own W(dz, dy), so a warp keeps the partial
// sums of 2 kR0 + 1 planes.
//
// Sparse (mma.sp m16n8k32, sptc): W is A, 16 x 32 with W[m][k] =
// w[dz][dy][k - 8 - m] for |k - 8 - m| <= kR2. Each m16n8 block of a warp
// holds 16 columns by 8 rows of one output plane; B (32 input columns by 8
// rows) comes from the plane buffer by one ldmatrix.x4 per (dy, block), and
// A(dz, dy) from a table in shared memory that the block builds from
// Args::tw. mma.sp needs 2:4 sparsity along K, which a band of 2 r + 1
// consecutive columns breaks. Lanes with odd t therefore rotate
// their four B registers by one (register j holds the natural chunk of
// columns 8 ((j + 1) % 4) ..): hardware group i = 2 r + s then holds the
// columns {8 r + 4 s, +1} and {8 ((r + 1) % 4) + 4 s + 2, +3}, pairs 10
// columns apart, so any window of at most 9 consecutive columns (r <= 4)
// meets each group at most twice. A is compressed along that order, and its
// metadata, which depends only on the band, is the same for every (dz, dy).
//
// Dense (mma.sync m16n8k16, tc): the grid is A and W is B, 16 x 8 with
// W[k][n] = w[dz][dy][k - 4 - n] for |k - 4 - n| <= kR2: block j of a warp
// holds 16 rows by the 8 columns x0 + 8 j .., and its A is the 16 rows of
// the window of columns x0 + 8 j - 4 .. x0 + 8 j + 11. Neighbouring blocks'
// windows share a half of 8 columns, so kJ blocks side by side read kJ + 1
// halves (two 4-byte words a lane each: the windows start 4 columns off the
// 16-byte chunks that ldmatrix would need) per (plane, dy) for kJ (2 kR0 +
// 1) MMAs. B does not depend on the grid: the 2 words a lane of every (dz,
// dy) come from a table in shared memory that the block builds from
// Args::tw, each read once for kJ MMAs.
//
// Memory: a chunk of 8 columns of a plane row whose points lie in the
// domain loads as one 16-byte cp.async, 8 lanes to 8 consecutive slots of
// the padded rows; any other goes point by point through gread_<grid>, so
// every boundary kind works, and there the columns outside the band of
// every output are zero (the buffers start as garbage, and a zero weight
// times a NaN would not be zero). A warp's outputs go through a staging
// tile in shared memory, so that each lane writes 8 consecutive outputs at
// once; those in a fixed band keep their old value.
//
//===----------------------------------------------------------------------===//

#include "StencilEmitter.h"

using namespace stencilc;

static int tapIndex(const CudaCorePlan &plan, int dz, int dy, int dx) {
  const int dys = 2 * plan.radius[1] + 1, dxs = 2 * plan.radius[2] + 1;
  return ((dz + plan.radius[0]) * dys + dy + plan.radius[1]) * dxs + dx +
         plan.radius[2];
}

void StencilEmitter::emitTensorPlaneConstants() {
  const bool sparse = plan.tensorPlane == 2;
  if (sparse) {
    out.line("constexpr int kNB = {}; // m16n8 blocks a warp owns along axis 1 "
             "(8 rows each)",
             plan.planeBlocks);
  } else {
    out.line("constexpr int kJ = {}; // m16n8 blocks a warp owns along axis 2 "
             "(16 rows by 8 columns)",
             plan.planeBlocks);
    out.line("constexpr int kWX = 8 / kJ, kWY = kJ; // warps along axes 2 and "
             "1");
  }
  out.line("constexpr int kQ = 2 * kR0 + 1, kDY = 2 * kR1 + 1, kDX = 2 * kR2 "
           "+ 1;");
  out.line("constexpr int kTaps = kQ * kDY * kDX;");
  if (sparse) {
    out.line("// A words per lane and (dz, dy): one mma.sp m16n8k32's "
             "compressed A.");
    out.line("constexpr int kAWords = 4;");
    out.line("constexpr int kAEntries = kQ * kDY;");
    out.line("constexpr size_t kTableBytes = size_t(kAEntries) * 32 * kAWords "
             "* 4;");
  } else {
    out.line("constexpr int kEntries = kQ * kDY;");
    out.line("// The B words (2 a lane) of every (dz, dy): 32 lanes of 8 bytes "
             "each.");
    out.line("constexpr size_t kTableBytes = size_t(kEntries) * 256;");
  }
  out.line("constexpr int kB1 = kT1 + 2 * kR1; // rows of a plane's box");
  out.line("constexpr int kCols = kT2 + 16; // its columns: 8 either side");
  out.line("// Row pitch: an odd number of 16-byte chunks, so the 8 rows of an "
           "ldmatrix\n// matrix, or of a warp's 4-byte reads, fall on distinct "
           "banks.");
  out.line("constexpr int kP = 88;");
  out.line("constexpr int kPlane = kB1 * kP;");
  out.line("constexpr int kStages = {}; // plane buffers: kStages - 1 planes "
           "load ahead",
           plan.planeStages);
  out.line("// 16-byte slots of a plane, the pitch's padding included: "
           "thread i loads slot i,\n// so 8 lanes write 8 consecutive slots "
           "(no bank conflict); padding slots idle.");
  out.line("constexpr int kSlots = kB1 * (kP / 8);");
  out.line("constexpr int kLoads = (kSlots + kThreads - 1) / kThreads;");
  if (sparse) {
    out.line("// A warp's staging tile of outputs: 8 kNB rows of 16 at a pitch "
             "of 24, which\n// neither the fragment's writes nor the rows' "
             "16-byte reads meet twice in a bank.");
    out.line("constexpr int kSP = 24, kStage = 8 * kNB * kSP, kOutChunks = 16 "
             "* kNB;");
  } else {
    out.line("// A warp's staging tile of outputs: 16 rows of 8 kJ at a pitch "
             "of 8 kJ + 8 (4 times\n// an odd number of words), which neither "
             "the fragments' writes nor the rows'\n// 16-byte reads meet twice "
             "in a bank.");
    out.line("constexpr int kSP = 8 * kJ + 8, kStage = 16 * kSP, kOutChunks = "
             "16 * kJ;");
  }
  out.line("constexpr size_t kSmemBytes = kTableBytes + (kStages * "
           "size_t(kPlane) + 8 * size_t(kStage)) * sizeof(Elem);");
  out.line("static_assert(kSmemBytes == {}, \"plan and kernel disagree\");",
           plan.sharedBytes);
  if (sparse)
    out.line("static_assert(kThreads == 256 && kT2 == 64 && kT1 == 16 * kNB, "
             "\"8 warps of 16 x 8 kNB outputs\");");
  else
    out.line("static_assert(kThreads == 256 && kT2 == 8 * kJ * kWX && kT1 == "
             "16 * kWY, \"8 warps of 16 x 8 kJ outputs\");");
  out.line("static_assert(kP >= kCols && kP / 8 % 2 == 1 && kR2 <= 4, \"the "
           "pitch and the band\");");
  out.blank();
}

void StencilEmitter::emitTensorPlaneWeights() {
  const int g = updated.front();
  const Update &u = *s.updateOf(g);
  const size_t ui = static_cast<size_t>(&u - s.updates.data());
  out.line("/// The weights of the (dz, dy, dx) taps, dx fastest, rounded to "
           "Elem keeping their\n/// sum (roundWeights): bits for the kernel "
           "(Args::tw), values for the bound.");
  auto fn = out.scope("[[maybe_unused]] void sc_tp_weights([[maybe_unused]] "
                      "const Args &a, unsigned short *bits, double *values)");
  out.line("double sc_w[kTaps] = {{}};");
  const std::vector<Tap> &taps = u.linear->taps;
  for (size_t k = 0; k < taps.size(); ++k) {
    const TapWeight &tw = weights[ui][k];
    out.line(
        "sc_w[{}] = {};",
        tapIndex(plan, taps[k].offset[0], taps[k].offset[1], taps[k].offset[2]),
        tw.slot >= 0
            ? "static_cast<double>(a.w[" + std::to_string(tw.slot) + "])"
            : literal(tw.value, false));
  }
  out.line("stencilc::rt::roundWeights(sc_w, nullptr, kTaps, [](double x) {{ "
           "return static_cast<double>(stencilc::rt::Convert<float>::from("
           "stencilc::rt::Convert<Elem>::from(x))); }});");
  out.line("for (int k = 0; k < kTaps; ++k) {{");
  out.line("  const Elem e = stencilc::rt::Convert<Elem>::from(sc_w[k]);");
  out.line("  if (bits)\n    __builtin_memcpy(&bits[k], &e, 2);");
  out.line("  if (values)\n    values[k] = sc_w[k];");
  out.line("}}");
}

void StencilEmitter::emitTensorPlaneBound() {
  const int entries = (2 * plan.radius[0] + 1) * (2 * plan.radius[1] + 1);
  out.line("static constexpr bool kTensorCore = true;");
  out.line("/// f16 and bf16 grid values are exact operands; the weights are "
           "rounded to them.");
  out.line("static constexpr double kOperandRoundoff = 0.0, kOperandUnderflow "
           "= 0.0;");
  out.line("/// Products the tensor cores add into one output, zeros of the "
           "band included:\n/// a window of 16 (dense) or 2:4 of 32 "
           "(sparse) per (dz, dy).");
  out.line("static constexpr int kTensorTaps = {};", entries * 16);
  out.line("static constexpr bool kCentred = false;");
  const LinearForm &lf = *s.updateOf(updated.front())->linear;
  out.line("static constexpr int kBaseTaps = {};", lf.taps.size());
  out.line("static constexpr int kTcRowTapCount = kTaps;");
  auto fn = out.scope("static void tcRowTaps(long long (*off)[3], double *c)");
  out.line("Args sc_args{{}};");
  if (runtimeWeights > 0) {
    if (!s.params.empty())
      out.line("const Params params;");
    emitRuntimeWeights();
  }
  out.line("sc_tp_weights(sc_args, nullptr, c);");
  out.line("for (int k = 0; k < kTaps; ++k) {{\n  off[k][0] = k / (kDY * kDX) "
           "- kR0;\n  off[k][1] = k / kDX % kDY - kR1;\n  off[k][2] = k % kDX "
           "- kR2;\n}}");
}

void StencilEmitter::emitTensorPlaneSparseHelpers() {
  out.line("/// Whether row m of W has a weight at window column c.");
  out.line("STENCILC_HD bool sc_tp_band(int m, int c) {{ return c - 8 - m >= "
           "-kR2 && c - 8 - m <= kR2; }}");
  out.line("/// The window column (0 .. 31, input column x0 - 8 + column) at "
           "position p of 2:4\n/// group i, in the order the rotated B "
           "registers hold them.");
  out.line("STENCILC_HD int sc_tp_col(int i, int p) {{ return 4 * (i % 2) + p "
           "+ 8 * (p < 2 ? i / 2 : (i / 2 + 1) % 4); }}");
  {
    out.line("/// The two positions (p0 < p1) group i stores for row m: its "
             "band columns,\n/// padded with zeros to a pair.");
    auto fn = out.scope(
        "STENCILC_HD void sc_tp_pair(int m, int i, int &p0, int &p1)");
    out.line("p0 = p1 = -1;");
    out.line("for (int p = 0; p < 4; ++p)\n  if (sc_tp_band(m, sc_tp_col(i, "
             "p))) {{\n    if (p0 < 0)\n      p0 = p;\n    else\n      p1 = "
             "p;\n  }}");
    out.line("if (p0 < 0) {{\n  p0 = 0;\n  p1 = 1;\n}} else if (p1 < 0) {{\n  "
             "p1 = p0 == 3 ? 3 : p0 + 1;\n  p0 = p0 == 3 ? 2 : p0;\n}}");
  }
  {
    out.line("/// Bits of row m of W(q, dy) at window column c (0 outside the "
             "band).");
    auto fn = out.scope("STENCILC_HD unsigned sc_tp_w(const unsigned short "
                        "*tw, int q, int dy, int m, int c)");
    out.line("return sc_tp_band(m, c) ? tw[((2 * kR0 - q) * kDY + dy) * kDX + "
             "c - 8 - m + kR2] : 0u;");
  }
  {
    out.line(
        "/// Word e of the A table: entry (q, dy) = e / (128 kAWords / 4), "
        "then per 4 words\n/// 32 lanes of 16 bytes, so a warp reads "
        "them as one conflict-free 512-byte row.");
    auto fn = out.scope(
        "STENCILC_HD unsigned sc_tp_aword(const unsigned short *tw, int e)");
    out.line("const int lane = e / 4 % 32, g = lane / 4, t = lane % 4;");
    out.line("const int j = e / 128 % (kAWords / 4) * 4 + e % 4, ent = e / "
             "(32 * kAWords);");
    out.line("const int q = ent / kDY, dy = ent % kDY;");
    out.line("// Compressed A of m16n8k32: register j holds row g + 8 (j & "
             "1), group t + 4 (j >> 1).");
    out.line("const int m = g + 8 * (j & 1), i = t + 4 * (j >> 1);");
    out.line("int p0, p1;\nsc_tp_pair(m, i, p0, p1);");
    out.line("return sc_tp_w(tw, q, dy, m, sc_tp_col(i, p0)) | "
             "sc_tp_w(tw, q, dy, m, sc_tp_col(i, p1)) << 16;");
  }
}

void StencilEmitter::emitTensorPlaneDenseHelpers() {
  {
    out.line("/// Bits of W(q, dy) at window row k of output column n: the "
             "weight of dx = k - 4 - n\n/// within the band, else 0.");
    auto fn = out.scope("STENCILC_HD unsigned sc_tp_w(const unsigned short "
                        "*tw, int q, int dy, int k, int n)");
    out.line("const int dx = k - 4 - n;");
    out.line("return dx >= -kR2 && dx <= kR2 ? tw[((2 * kR0 - q) * kDY + dy) "
             "* kDX + dx + kR2] : 0u;");
  }
  {
    out.line(
        "/// Word e of the B fragments: entry (q, dy) = e / 64, lane e / 2 "
        "% 32, register e % 2,\n/// which holds rows 2t + 8 (e % 2), + 1 "
        "of column g of m16n8k16's B.");
    auto fn = out.scope(
        "STENCILC_HD unsigned sc_tp_bword(const unsigned short *tw, int e)");
    out.line("const int lane = e / 2 % 32, g = lane / 4, t = lane % 4, ent = e "
             "/ 64;");
    out.line("const int q = ent / kDY, dy = ent % kDY, k = 2 * t + 8 * (e % "
             "2);");
    out.line(
        "return sc_tp_w(tw, q, dy, k, g) | sc_tp_w(tw, q, dy, k + 1, g) << "
        "16;");
  }
}

void StencilEmitter::emitTensorPlaneSparseProducts() {
  const std::string ty = s.elemType == ElemType::BF16 ? "bf16" : "f16";
  out.line("#pragma unroll 1");
  auto dyLoop = out.scope("for (int dy = 0; dy < kDY; ++dy)");
  out.line("unsigned b[kNB][4];");
  out.line("#pragma unroll");
  out.line("for (int nb = 0; nb < kNB; ++nb) {{");
  out.line("  unsigned l[4];");
  out.line("  stencilc::rt::tc::ldmatrix_x4(l, sc_src + (dy + 8 * nb) * kP);");
  out.line("  // Odd t: register j holds chunk (j + 1) % 4 (the 2:4 order of "
           "the band).");
  out.line("  const bool odd = sc_t & 1;");
  out.line("#pragma unroll");
  out.line("  for (int j = 0; j < 4; ++j)\n    b[nb][j] = odd ? l[(j + 1) & 3] "
           ": l[j];");
  out.line("}}");
  out.line("#pragma unroll");
  auto qLoop = out.scope("for (int q = 0; q < kQ; ++q)");
  out.line(
      "const unsigned *const sc_a = sc_tab + (q * kDY + dy) * 32 * kAWords "
      "+ 4 * sc_lane;");
  out.line("const uint4 sc_a0 = *reinterpret_cast<const uint4 *>(sc_a);");
  out.line("const unsigned a0[4] = {{sc_a0.x, sc_a0.y, sc_a0.z, sc_a0.w}};");
  out.line("#pragma unroll");
  out.line("for (int nb = 0; nb < kNB; ++nb)");
  out.line(
      "  stencilc::rt::tc::mma_sp_m16n8k32_{}<0>(sc_acc[q][nb], a0, b[nb], "
      "sc_meta);",
      ty);
}

/// The dense products of one input plane: per dy, the kJ + 1 halves of the
/// warp's windows (rows g and g + 8, columns 2t, 2t + 1 of each 8), then
/// per output plane q one B for the kJ blocks. The dy loop unrolls, so
/// that the next dy's reads overlap this one's MMAs (measured on an H200:
/// 3-10% faster than a loop, though ptxas spills 24-28 bytes at radius 3
/// and 4).
void StencilEmitter::emitTensorPlaneDenseProducts() {
  const std::string ty = s.elemType == ElemType::BF16 ? "bf16" : "f16";
  out.line("#pragma unroll");
  auto dyLoop = out.scope("for (int dy = 0; dy < kDY; ++dy)");
  out.line("// Half i: window columns 8 i + 2t, + 1 of the rows g and g + 8.");
  out.line("unsigned h[kJ + 1][2];");
  out.line("#pragma unroll");
  out.line("for (int i = 0; i <= kJ; ++i) {{");
  out.line("  h[i][0] = *reinterpret_cast<const unsigned *>(sc_src + dy * kP + "
           "8 * i);");
  out.line(
      "  h[i][1] = *reinterpret_cast<const unsigned *>(sc_src + (dy + 8) * "
      "kP + 8 * i);");
  out.line("}}");
  out.line("#pragma unroll");
  auto qLoop = out.scope("for (int q = 0; q < kQ; ++q)");
  out.line("const uint2 sc_b = *reinterpret_cast<const uint2 *>(sc_tab + "
           "((q * kDY + dy) * 32 + sc_lane) * 2);");
  out.line("const unsigned w[2] = {{sc_b.x, sc_b.y}};");
  out.line("#pragma unroll");
  out.line("for (int j = 0; j < kJ; ++j) {{");
  out.line("  const unsigned av[4] = {{h[j][0], h[j][1], h[j + 1][0], h[j + "
           "1][1]}};");
  out.line("  stencilc::rt::tc::mma_m16n8k16_{}(sc_acc[q][j], av, w);", ty);
  out.line("}}");
}

void StencilEmitter::emitTensorPlaneKernel() {
  const int g = updated.front();
  // The fixed band's test along axis a of coordinate `c` (frozenCondition's
  // terms of that axis), or false.
  auto axisFrozen = [&](int a, const std::string &c) {
    std::string cond = frozenAxisCondition(g, a, c, "a.n");
    return cond.empty() ? std::string("false") : "(" + cond + ")";
  };
  const Grid &grid = s.grids[g];
  const Update &u = *s.updateOf(g);
  const bool sparse = plan.tensorPlane == 2;
  const std::string n = grid.name;
  const std::string ty = s.elemType == ElemType::BF16 ? "bf16" : "f16";

  emitTensorPlaneWeights();
  out.blank();
  if (sparse)
    emitTensorPlaneSparseHelpers();
  else
    emitTensorPlaneDenseHelpers();
  out.blank();
  out.line("// Unused: one step per pass, so the full kernel is the only one. "
           "Args is a\n// __grid_constant__: {} indexes its weights "
           "without a local copy.",
           sparse ? "sc_tp_aword" : "sc_tp_bword");
  out.line("template <bool Full>");
  out.line("__global__ void __launch_bounds__(kThreads, {}) {}_kernel(const "
           "__grid_constant__ Args a) {{",
           plan.minBlocks, s.name);
  out.indent();
  out.line("STENCILC_DYNAMIC_SHARED(sc_smem);");
  const std::string nb = sparse ? "kNB" : "kJ";
  out.line("unsigned *const sc_tab = reinterpret_cast<unsigned *>(sc_smem);");
  out.line("Elem *const sc_buf = reinterpret_cast<Elem *>(sc_smem + "
           "kTableBytes);");
  emitTileOrigins();
  out.line("const long long sc_s0 = sc_rest * kT0;");
  out.line("// The tile's first column; its box starts 8 columns before.");
  out.line("const long long sc_x0 = o2 + kR2;");
  out.line("const int sc_lane = threadIdx.x % 32, sc_warp = threadIdx.x / 32;");
  out.line("const int sc_g = sc_lane / 4, sc_t = sc_lane % 4;");
  if (sparse) {
    out.line("const int sc_wx = sc_warp % 4, sc_wy = sc_warp / 4;");
    out.line("for (int e = threadIdx.x; e < kAEntries * 32 * kAWords; e += "
             "kThreads)\n  sc_tab[e] = sc_tp_aword(a.tw, e);");
  } else {
    out.line("const int sc_wx = sc_warp % kWX, sc_wy = sc_warp / kWX;");
    out.line("for (int e = threadIdx.x; e < kEntries * 64; e += kThreads)\n "
             " sc_tab[e] = sc_tp_bword(a.tw, e);");
  }
  if (sparse) {
    out.line("// Metadata (selector 0): lane 4g holds groups 0-3, lane 4g + 1 "
             "groups 4-7; nibble j\n// covers row g + 8 (j >> 2), group j & "
             "3. The same for every (dz, dy).");
    out.line("unsigned sc_meta = 0;");
    out.line("for (int j = 0; j < 8; ++j) {{\n  int p0, p1;\n  sc_tp_pair(sc_g "
             "+ 8 * (j >> 2), (j & 3) + 4 * (sc_t & 1), p0, p1);\n  sc_meta "
             "|= unsigned(p0 | p1 << 2) << (4 * j);\n}}");
  }
  // The linear form's constant starts every sum.
  std::string start = "0.0f";
  if (u.linear->constant >= 0) {
    auto cName = [](int i) { return "c" + std::to_string(i); };
    emitNodes(liveNodes({u.linear->constant}), /*forDevice=*/true, cName,
              [](const Node &) { return std::string("0"); });
    start = cName(u.linear->constant);
  }
  out.line("// sc_acc[q][b]: block b's partial sums of the output plane q "
           "planes after the one\n// the current plane completes.");
  out.line("float sc_acc[kQ][{}][4];", nb);
  out.line("#pragma unroll\nfor (int q = 0; q < kQ; ++q)\n#pragma unroll\n  "
           "for (int b = 0; b < {}; ++b)\n#pragma unroll\n    for (int c = 0; "
           "c < 4; ++c)\n      sc_acc[q][b][c] = {};",
           nb, start);
  const bool frozen = !frozenCondition(g, "a.n").empty();
  out.line("const bool sc_vec = a.n2 % 8 == 0 && reinterpret_cast<unsigned "
           "long long>(a.in_{0}) % 16 == 0;",
           n);
  out.line("const bool sc_ovec = a.n2 % 8 == 0 && reinterpret_cast<unsigned "
           "long long>(a.out_{0}) % 16 == 0;",
           n);
  {
    out.line("// Plane q0's box into buffer dst: every chunk of 8 columns in "
             "the domain by\n// cp.async, the band's edge chunks whole (the "
             "columns outside the band then\n// hold finite grid values, as "
             "the other windows' do), so no load waits; the\n// others point "
             "by point through the boundary rules, zero outside the band.");
    auto fn = out.scope("auto sc_load = [&](long long q0, Elem *dst)", "};");
    out.line("const bool inz = sc_vec && q0 >= 0 && q0 < a.n0;");
    out.line("#pragma unroll");
    auto loop = out.scope("for (int k = 0; k < kLoads; ++k)");
    out.line("const int sl = threadIdx.x + k * kThreads, c8 = sl % (kP / 8);");
    out.line("if ((kSlots % kThreads != 0 && sl >= kSlots) || c8 >= kCols / "
             "8)\n  continue;");
    out.line("const long long q1 = o1 + sl / (kP / 8), q2 = sc_x0 - 8 + 8 * "
             "c8;");
    out.line("Elem *const d = dst + 8 * sl;");
    out.line("if (inz && q1 >= 0 && q1 < a.n1 && q2 >= 0 && q2 + 8 <= a.n2) "
             "{{");
    out.line("  stencilc::rt::copyAsync16(d, a.in_{} + (q0 * a.n1 + q1) * a.n2 "
             "+ q2);",
             n);
    out.line("  continue;");
    out.line("}}");
    out.line("#pragma unroll");
    out.line("for (int h = 0; h < 8; ++h) {{");
    out.line("  const int col = 8 * c8 + h;");
    out.line("  d[h] = col >= 8 - kR2 && col < 8 + kT2 + kR2 ? gread_{0}<Elem>("
             "a.in_{0}, q0, q1, q2 + h, a.n0, a.n1, a.n2) : Elem(0.0f);",
             n);
    out.line("}}");
  }
  out.line("// The segment's planes and kR0 on either side.");
  out.line("const int sc_planes = static_cast<int>(min(static_cast<long long>"
           "(kT0), a.n0 - sc_s0)) + 2 * kR0;");
  out.line("// The first kStages - 1 planes, a cp.async group each (empty "
           "ones too, so that\n// group p is plane p's). Unrolled: as a loop, "
           "ptxas spilled 16 bytes at radius 4.");
  out.line("#pragma unroll");
  out.line("for (int p = 0; p < kStages - 1; ++p) {{");
  out.line("  if (p < sc_planes)\n    sc_load(sc_s0 - kH0 + p, sc_buf + p * "
           "kPlane);");
  out.line("  stencilc::rt::copyAsyncCommit();");
  out.line("}}");
  out.line(
      "// Output chunk k of this lane (16-byte chunk sc_lane + 32 k of the "
      "staging tile):\n// lanes 8j .. 8j + 7 read 8 consecutive rows of "
      "one chunk column, one bank group each.");
  if (sparse) {
    out.line("auto sc_orow = [&](int k) {{ const int ch = sc_lane + 32 * k; "
             "return ch % 8 + 8 * (ch / 16); }};");
    out.line("auto sc_ocol = [&](int k) {{ return 8 * ((sc_lane + 32 * k) / 8 "
             "% 2); }};");
  } else {
    out.line("auto sc_orow = [&](int k) {{ return (sc_lane + 32 * k) % 16; "
             "}};");
    out.line("auto sc_ocol = [&](int k) {{ return 8 * ((sc_lane + 32 * k) / "
             "16); }};");
  }
  // The warp's first output row and column in the tile.
  const std::string wrow = sparse ? "8 * kNB * sc_wy" : "16 * sc_wy";
  const std::string wcol = sparse ? "16 * sc_wx" : "8 * kJ * sc_wx";
  out.line("// Bit k: chunk k lies in the domain and outside the fixed band "
           "along axes 1 and 2,\n// so it stores as one 16-byte write.");
  out.line("unsigned sc_ofast = 0;");
  out.line("#pragma unroll");
  {
    auto k = out.scope("for (int k = 0; k < (kOutChunks + 31) / 32; ++k)");
    out.line("const long long g1 = o1 + kR1 + {} + sc_orow(k);", wrow);
    out.line("const long long g2 = sc_x0 + {} + sc_ocol(k);", wcol);
    out.line("bool fast = sc_ovec && g1 < a.n1 && g2 + 8 <= a.n2 && !{};",
             axisFrozen(1, "g1"));
    if (frozen)
      out.line("for (int h = 0; h < 8; ++h)\n  fast = fast && !{};",
               axisFrozen(2, "(g2 + h)"));
    out.line("sc_ofast |= unsigned(fast) << k;");
  }
  out.line("Elem *const sc_stg = sc_buf + kStages * kPlane + sc_warp * "
           "kStage;");
  if (sparse) {
    out.line(
        "// This lane's ldmatrix row: row lane % 8 of matrix lane / 8, the "
        "window's columns\n// 8 (lane / 8) ..; block b's window starts at "
        "box row 8 (kNB wy + b) + dy.");
    out.line("const int sc_lrow = 8 * kNB * sc_wy + sc_lane % 8, sc_lcol = 16 "
             "* sc_wx + 8 * (sc_lane / 8);");
  } else {
    out.line("// This lane's A words: box rows 16 wy + g (+ 8) + dy, from "
             "column 2t of the first\n// block's window, which starts 4 "
             "columns before its outputs (box column 8 kJ wx + 4).");
    out.line("const int sc_lrow = 16 * sc_wy + sc_g, sc_lcol = 8 * kJ * sc_wx "
             "+ 4 + 2 * sc_t;");
  }
  out.line("// The ring: plane p in buffer sc_rd, plane p + kStages - 1 into "
           "sc_wr.");
  out.line("int sc_rd = 0, sc_wr = kStages - 1;");
  {
    auto loop = out.scope("for (int sc_p = 0; sc_p < sc_planes; ++sc_p)");
    out.line("// Group p is done when at most kStages - 2 newer ones are "
             "pending; the barrier\n// shows plane p to the block and frees "
             "sc_wr, which plane p - 1 was read from.");
    out.line("stencilc::rt::copyAsyncWait<kStages - 2>();");
    out.line("__syncthreads();");
    out.line("if (sc_p + kStages - 1 < sc_planes)\n  sc_load(sc_s0 - kH0 + "
             "sc_p + kStages - 1, sc_buf + sc_wr * kPlane);");
    out.line("stencilc::rt::copyAsyncCommit();");
    out.line("const Elem *const sc_src = sc_buf + sc_rd * kPlane + "
             "sc_lrow * kP + sc_lcol;");
    out.line("sc_wr = sc_rd;");
    out.line("sc_rd = sc_rd + 1 == kStages ? 0 : sc_rd + 1;");
    if (sparse)
      emitTensorPlaneSparseProducts();
    else
      emitTensorPlaneDenseProducts();
    out.line("// This plane completed output plane sc_s0 + sc_p - 2 kR0: "
             "c_i of block b is column\n// x0 + g + 8 (i >> 1), row y0 + 8 b + "
             "2t + (i & 1). Through the warp's staging\n// tile, each row's 16 "
             "outputs store as two 16-byte writes, one 32-byte sector.");
    {
      auto store = out.scope("if (sc_p >= 2 * kR0)");
      out.line("#pragma unroll");
      out.line("for (int nb = 0; nb < {}; ++nb)", nb);
      out.line("#pragma unroll");
      out.line("  for (int c = 0; c < 4; ++c)");
      if (sparse)
        out.line("    sc_stg[(8 * nb + 2 * sc_t + (c & 1)) * kSP + sc_g + 8 * "
                 "(c >> 1)] = "
                 "stencilc::rt::Convert<Elem>::from(sc_acc[0][nb][c]);");
      else
        out.line("    sc_stg[(sc_g + 8 * (c >> 1)) * kSP + 8 * nb + 2 * sc_t + "
                 "(c & 1)] = "
                 "stencilc::rt::Convert<Elem>::from(sc_acc[0][nb][c]);");
      out.line("__syncwarp();");
      out.line("const long long sc_z = sc_s0 + sc_p - 2 * kR0;");
      out.line("const bool sc_fz0 = {};", axisFrozen(0, "sc_z"));
      out.line("#pragma unroll");
      {
        auto k = out.scope("for (int k = 0; k < (kOutChunks + 31) / 32; ++k)");
        out.line("if (kOutChunks % 32 != 0 && sc_lane + 32 * k >= "
                 "kOutChunks)\n  continue;");
        out.line("const Elem *const sc_s = sc_stg + sc_orow(k) * kSP + "
                 "sc_ocol(k);");
        out.line("// Coordinates in int: fewer registers beside the sums.");
        out.line("const int g1 = static_cast<int>(o1) + kR1 + {} + sc_orow(k);",
                 wrow);
        out.line("const int g2 = static_cast<int>(sc_x0) + {} + sc_ocol(k);",
                 wcol);
        out.line("const long long sc_o = (sc_z * a.n1 + g1) * a.n2 + g2;");
        out.line("if (!sc_fz0 && (sc_ofast >> k & 1u)) {{");
        out.line("  *reinterpret_cast<uint4 *>(a.out_{} + sc_o) = "
                 "*reinterpret_cast<const uint4 *>(sc_s);",
                 n);
        out.line("  continue;");
        out.line("}}");
        out.line("// Edges: point by point; outputs in the fixed band keep "
                 "their value.");
        out.line("#pragma unroll 1");
        out.line("for (int h = 0; h < 8; ++h)");
        out.line("  if (g1 < a.n1 && g2 + h < a.n2)");
        if (frozen)
          out.line("    a.out_{0}[sc_o + h] = sc_fz0 || {1} || {2} ? "
                   "a.in_{0}[sc_o + h] : sc_s[h];",
                   n, axisFrozen(1, "g1"), axisFrozen(2, "(g2 + h)"));
        else
          out.line("    a.out_{}[sc_o + h] = sc_s[h];", n);
      }
      out.line("// The next plane's writes wait for these reads.");
      out.line("__syncwarp();");
    }
    out.line("#pragma unroll\nfor (int q = 0; q < kQ; ++q)\n#pragma unroll\n  "
             "for (int b = 0; b < {}; ++b)\n#pragma unroll\n    for (int c = "
             "0; c < 4; ++c)\n      sc_acc[q][b][c] = q + 1 < kQ ? sc_acc[q + "
             "1][b][c] : {};",
             nb, start);
  }
  out.dedent();
  out.line("}}");
  out.blank();
}
