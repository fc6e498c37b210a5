//===- StarKernelEmitter.cpp - The register-queue 3-D star kernel ---------===//
//
// The CUDA-core kernel of linear 3-D stars (issue 24; CudaCorePlan::star),
// the classic finite-difference kernel. A block owns kT1 x kT2 outputs of
// axes 1 and 2 and a segment of kT0 planes of axis 0, and walks the output
// planes of the segment one at a time. Each thread owns one vector of kVX
// consecutive outputs along axis 2 of one row and keeps, for each, a
// register queue of its column's 2 kR0 + 1 values along axis 0: the axis-0
// taps come from registers. The plane whose outputs are computed also lies
// in shared memory, with kR1 rows above and below the tile (the axis-1
// taps) and kSide whole vectors either side of its rows (the axis-2 taps);
// its interior comes from the queues' centres, so global memory is read
// once per point (plus the in-plane halo, an L2 hit, and the segment's
// 2 kR0 halo planes). Loads, shared-memory stores and output stores move
// whole vectors (16 bytes in f32), addressed by 32-bit offsets from the
// tile's first output in a plane. While a plane is summed, the next
// plane's halo and the column value kR0 + 1 planes ahead are in flight
// (two shared-memory buffers, one barrier a plane).
//
// With CudaCorePlan::starPipeline = D > 0 (16-bit grids), the planes
// instead go from global memory straight to a ring of kR0 + D + 1 shared
// planes of the grid's type by cp.async, a commit group a plane: plane
// p's turn waits until plane p + kR0 has landed, takes the one barrier,
// issues plane p + kR0 + D into plane p - 1's slot, and takes the queues'
// newest value from the ring. No thread holds loads in flight in its
// registers, and the shared planes of 16-bit grids are half as large.
// With CudaCorePlan::starTma (the hidden --star-tma, sm_90 and later),
// thread 0 issues each plane's box as one TMA copy onto the slot's
// mbarrier instead (stencilc/tma_ring.cuh), every thread waits for plane
// p + kR0 (and, before the loop, the first kR0 planes) before the barrier,
// and blocks where TMA cannot run keep cp.async.
//
// The loop over planes is unrolled by the queue's length, 2 kR0 + 1, and
// each copy names the queue's slots rotated by one, so the queue shifts by
// renaming, without moves.
//
// Boundaries: where the rows are a multiple of kVX long and the arrays
// aligned to a vector (sc_vec), loads whose plane box lies inside the
// domain go as vectors without tests; any other goes point by point
// through gread_<grid>, the grid's boundary rules, as in the plane kernel.
// Outputs in a fixed band keep their old value; a vector with one in a band
// or outside the domain stores point by point.
//
//===----------------------------------------------------------------------===//

#include "StencilEmitter.h"

#include <array>
#include <cstdlib>
#include <map>
#include <set>
#include <vector>

using namespace stencilc;

void StencilEmitter::emitStarConstants() {
  out.line("constexpr int kVX = {}; // outputs a thread owns along axis 2, "
           "one vector",
           plan.planeCols);
  out.line("constexpr int kTX = kT2 / kVX; // threads along axis 2");
  out.line("constexpr int kQ = 2 * kR0 + 1; // a column's register queue");
  if (plan.starTma)
    out.line("constexpr int kSide = {}; // vectors either side of a row, "
             "whole 16 bytes (TMA)",
             plan.starSide);
  else
    out.line("constexpr int kSide = (kR2 + kVX - 1) / kVX; // vectors "
             "either side of a row");
  out.line("constexpr int kB1 = kT1 + 2 * kR1, kW = kT2 + 2 * kSide * kVX; "
           "// a plane's box");
  out.line("constexpr int kPlane = kB1 * kW;");
  out.line("static_assert(kT2 % kVX == 0 && kThreads == kT1 * kTX, \"one "
           "thread per kVX outputs\");");
  out.line("// The box's halo in vectors: kR1 rows above and below the tile, "
           "of its kT2\n// columns (the axis-1 taps), and kSide vectors "
           "either side of its kT1 rows\n// (the axis-2 taps); halo vectors "
           "each thread loads.");
  out.line("constexpr int kRimV = 2 * kR1 * kTX;");
  out.line("constexpr int kHaloV = kRimV + 2 * kSide * kT1;");
  out.line("constexpr int kHaloLoads = (kHaloV + kThreads - 1) / kThreads;");
  if (plan.starPipeline) {
    out.line("constexpr int kD = {}; // planes in flight by cp.async while "
             "one is summed",
             plan.starPipeline);
    out.line("constexpr int kNB = kR0 + kD + 1; // the ring's planes: the "
             "one summed to the newest");
    if (plan.starTma) {
      out.line("// A ring slot: the plane padded to 128 bytes, where a TMA "
               "box may land; the\n// ring's barriers follow the slots "
               "(stencilc/tma_ring.cuh).");
      out.line("constexpr int kSlot = (kPlane * int(sizeof(Elem)) + "
               "stencilc::rt::tma::kAlign - 1) /\n"
               "                      stencilc::rt::tma::kAlign * "
               "stencilc::rt::tma::kAlign / int(sizeof(Elem));");
      out.line("using Ring = stencilc::rt::tma::PlaneRing<kNB>;");
      out.line("constexpr size_t kSmemBytes = size_t(kNB) * kSlot * "
               "sizeof(Elem) + sizeof(Ring);");
    } else {
      out.line("constexpr size_t kSmemBytes = size_t(kNB) * kPlane * "
               "sizeof(Elem);");
    }
  } else {
    out.line("constexpr size_t kSmemBytes = 2 * size_t(kPlane) * "
             "sizeof(Comp);");
  }
  out.line("static_assert(kSmemBytes == {}, \"plan and kernel disagree\");",
           plan.sharedBytes);
  out.line("// A thread's vector in global (EVec) and shared memory (CVec).");
  out.line("struct alignas(kVX * sizeof({0})) EVec {{ {0} v[kVX]; }};",
           elemOf(updated.front()));
  out.line("struct alignas(kVX * sizeof(Comp)) CVec {{ Comp v[kVX]; }};");
  out.blank();
}

void StencilEmitter::emitStarKernel() {
  const int g = updated.front();
  const Grid &grid = s.grids[g];
  const Update &u = *s.updateOf(g);
  const size_t ui = static_cast<size_t>(&u - s.updates.data());
  const int r0 = plan.radius[0];
  const int Q = 2 * r0 + 1, VX = plan.planeCols;
  const std::string n = grid.name;

  const int D = plan.starPipeline;
  emitPlaneKernelEntry(
      D ? elemOf(g) : "Comp",
      plan.starTma ? ", const __grid_constant__ CUtensorMap sc_map" : "");
  out.line("// The tile's first output (y0, x0); the thread's row sc_ty and "
           "first column sc_tx\n// in it.");
  out.line("const long long y0 = o1 + kH1, x0 = o2 + kH2;");
  out.line("const int sc_tx = threadIdx.x % kTX * kVX, sc_ty = threadIdx.x / "
           "kTX;");
  out.line("// Whole vectors where rows are a multiple of kVX long and the "
           "arrays aligned to\n// a vector.");
  out.line("const bool sc_vec = a.n2 % kVX == 0 && "
           "reinterpret_cast<uintptr_t>(a.in_{0}) % sizeof(EVec) == 0 &&\n"
           "                    reinterpret_cast<uintptr_t>(a.out_{0}) % "
           "sizeof(EVec) == 0;",
           n);
  out.line("// Planes whose box lies inside the domain load vectors without "
           "tests, through\n// 32-bit offsets from the tile's first output "
           "(a box spans kB1 rows).");
  out.line("const bool sc_inner = sc_vec && y0 >= kR1 && y0 + kT1 + kR1 <= "
           "a.n1 && x0 >= kSide * kVX &&\n"
           "                      x0 + kT2 + kSide * kVX <= a.n2 && a.n2 <= "
           "(1 << 24);");
  out.line("const long long sc_stride = a.n1 * a.n2;");
  out.line("const int sc_n2 = static_cast<int>(sc_inner ? a.n2 : 0);");
  out.line("const {0} *const sc_tile = a.in_{1} + (sc_inner ? y0 * a.n2 + x0 "
           ": 0);",
           elemOf(g), n);
  out.line("const int sc_co = sc_ty * sc_n2 + sc_tx; // the column's offset");
  out.line("// The thread's halo vectors: their box positions (row * kW + "
           "column) and their\n// offsets from the tile's first output.");
  out.line("int sc_hb[kHaloLoads], sc_ho[kHaloLoads];");
  out.line("#pragma unroll");
  {
    auto loop = out.scope("for (int k = 0; k < kHaloLoads; ++k)");
    out.line("const int e = threadIdx.x + k * kThreads;");
    out.line("int y, x;");
    out.line("if (e < kRimV) {{");
    out.line("  y = e / kTX, x = kSide * kVX + e % kTX * kVX;");
    out.line("  y += y < kR1 ? 0 : kT1;");
    out.line("}} else {{");
    out.line("  const int f = e - kRimV, v = f % (2 * kSide);");
    out.line("  y = kR1 + f / (2 * kSide), x = v < kSide ? v * kVX : kT2 + v "
             "* kVX;");
    out.line("}}");
    out.line("sc_hb[k] = e < kHaloV ? y * kW + x : 0;");
    out.line("sc_ho[k] = e < kHaloV ? (y - kR1) * sc_n2 + x - kSide * kVX : "
             "0;");
  }
  auto read = [&](const std::string &q0, const std::string &y,
                  const std::string &x) {
    return fmt::format("gread_{0}<Comp>(a.in_{0}, {1}, {2}, {3}, a.n0, a.n1, "
                       "a.n2)",
                       n, q0, y, x);
  };
  {
    auto fn =
        out.scope("auto sc_column = [&](long long q0, Comp (&v)[kVX])", "};");
    out.line("if (sc_inner && q0 >= 0 && q0 < a.n0) {{");
    out.line("  const EVec c = *reinterpret_cast<const EVec *>(sc_tile + q0 * "
             "sc_stride + sc_co);");
    out.line("#pragma unroll");
    out.line("  for (int j = 0; j < kVX; ++j)");
    out.line("    v[j] = stencilc::rt::Convert<Comp>::from(c.v[j]);");
    out.line("}} else {{");
    out.line("#pragma unroll");
    out.line("  for (int j = 0; j < kVX; ++j)");
    out.line("    v[j] = {};", read("q0", "y0 + sc_ty", "x0 + sc_tx + j"));
    out.line("}}");
  }
  if (plan.starTma) {
    out.line("// On Hopper, a block whose boxes lie inside the domain fills "
             "the ring by TMA:\n// one copy a plane, issued by thread 0, "
             "landing on the slot's barrier.");
    out.line("Ring *const sc_ring = reinterpret_cast<Ring *>(sc_buf + kNB * "
             "kSlot);");
    out.line("const bool sc_tma = stencilc::rt::tma::kAvailable && a.tma && "
             "sc_inner &&\n"
             "                    stencilc::rt::tma::aligned(sc_buf);");
    out.line("if (sc_tma) {{\n  if (threadIdx.x == 0)\n    "
             "sc_ring->init();\n  __syncthreads();\n}}");
  }
  if (D)
    emitStarRingLoad();
  else {
    auto fn = out.scope(
        "auto sc_halo = [&](long long q0, Comp (&h)[kHaloLoads][kVX])", "};");
    out.line("if (sc_inner && q0 >= 0 && q0 < a.n0) {{");
    out.line("  const {} *const sc_p = sc_tile + q0 * sc_stride;", elemOf(g));
    out.line("#pragma unroll");
    out.line("  for (int k = 0; k < kHaloLoads; ++k)");
    out.line("    if (kHaloV % kThreads == 0 || threadIdx.x + k * kThreads < "
             "kHaloV) {{");
    out.line("      const EVec c = *reinterpret_cast<const EVec *>(sc_p + "
             "sc_ho[k]);");
    out.line("#pragma unroll");
    out.line("      for (int j = 0; j < kVX; ++j)");
    out.line("        h[k][j] = stencilc::rt::Convert<Comp>::from(c.v[j]);");
    out.line("    }}");
    out.line("}} else {{");
    out.line("#pragma unroll");
    out.line("  for (int k = 0; k < kHaloLoads; ++k)");
    out.line("    if (kHaloV % kThreads == 0 || threadIdx.x + k * kThreads < "
             "kHaloV) {{");
    out.line("#pragma unroll");
    out.line("      for (int j = 0; j < kVX; ++j)");
    out.line("        h[k][j] = {};",
             read("q0", "y0 - kR1 + sc_hb[k] / kW",
                  "x0 - kSide * kVX + sc_hb[k] % kW + j"));
    out.line("    }}");
    out.line("}}");
  }
  if (!D) {
    auto fn = out.scope("auto sc_put = [&](Comp *dst, const Comp (&c)[kVX], "
                        "const Comp (&h)[kHaloLoads][kVX])",
                        "};");
    out.line("CVec v;");
    out.line("#pragma unroll");
    out.line("for (int j = 0; j < kVX; ++j)");
    out.line("  v.v[j] = c[j];");
    out.line("*reinterpret_cast<CVec *>(dst + (kR1 + sc_ty) * kW + kSide * "
             "kVX + sc_tx) = v;");
    out.line("#pragma unroll");
    out.line("for (int k = 0; k < kHaloLoads; ++k)");
    out.line("  if (kHaloV % kThreads == 0 || threadIdx.x + k * kThreads < "
             "kHaloV) {{");
    out.line("#pragma unroll");
    out.line("    for (int j = 0; j < kVX; ++j)");
    out.line("      v.v[j] = h[k][j];");
    out.line("    *reinterpret_cast<CVec *>(dst + sc_hb[k]) = v;");
    out.line("  }}");
  }
  std::map<std::array<int, 3>, std::string> w;
  const std::string start = emitPlaneWeights(u, ui, w);
  // sc_q<slot>_<j>: output j's queue; at copy c of the unrolled loop, the
  // value of plane g0 + d sits in slot (d + kR0 + c) % kQ.
  auto q = [&](int d, int cc, int j) {
    return "sc_q" + std::to_string(((d + r0 + cc) % Q + Q) % Q) + "_" +
           std::to_string(j);
  };
  out.line("// sc_q<i>_<j>: the queue of column sc_tx + j, planes "
           "sc_s0 - kH0 + i at the start.");
  for (int i = 0; i < Q; ++i) {
    std::string decl = "Comp ";
    for (int j = 0; j < VX; ++j)
      decl += std::string(j ? ", " : "") + "sc_q" + std::to_string(i) + "_" +
              std::to_string(j);
    out.line("{};", decl);
  }
  out.line("const int sc_planes = static_cast<int>(min(static_cast<long long>"
           "(kT0), a.n0 - sc_s0));");
  if (D) {
    // The ring's first planes go first, then the queues' first 2 kR0
    // values straight from global memory (the loop reads plane kR0 on).
    out.line("// Planes 0 .. kR0 + kD - 1 of the segment into the ring, a "
             "cp.async group each\n// (empty past the segment's last "
             "kR0 planes on).");
    out.line("#pragma unroll");
    out.line("for (int k = 0; k < kR0 + kD; ++k) {{\n"
             "  if (k < sc_planes + kR0)\n"
             "    sc_load(sc_s0 + k, {}, k < sc_planes);\n"
             "  stencilc::rt::copyAsyncCommit();\n}}",
             plan.starTma ? "k" : "sc_buf + k * kPlane");
    out.line("Comp sc_c[kVX];");
    for (int i = 0; i < Q - 1; ++i) {
      out.line("sc_column(sc_s0 - kH0 + {}, sc_c);", i);
      for (int j = 0; j < VX; ++j)
        out.line("sc_q{0}_{1} = sc_c[{1}];", i, j);
    }
    // The loop waits for plane sc_p + kR0 only: the first kR0 planes,
    // which its first turns sum, are waited for here (cp.async's group
    // wait covers them).
    if (plan.starTma)
      out.line("// The first kR0 planes, summed before the loop's waits "
               "reach them.\n"
               "if (sc_tma) {{\n#pragma unroll\n"
               "  for (int k = 0; k < kR0; ++k)\n"
               "    sc_ring->wait(k);\n}}");
  } else {
    out.line("Comp sc_c[kVX], sc_h[kHaloLoads][kVX];");
    for (int i = 0; i < Q; ++i) {
      out.line("sc_column(sc_s0 - kH0 + {}, sc_c);", i);
      for (int j = 0; j < VX; ++j)
        out.line("sc_q{0}_{1} = sc_c[{1}];", i, j);
    }
    out.line("sc_halo(sc_s0, sc_h);");
    std::string c = "sc_put(sc_buf, {";
    for (int j = 0; j < VX; ++j)
      c += std::string(j ? ", " : "") + q(0, 0, j);
    out.line("{}}}, sc_h);", c);
    out.line("__syncthreads();");
  }
  // The stores' setup: the fixed bands of axes 1 and 2 are at the edges,
  // so a vector is clear of axis 2's when its first and last outputs are.
  std::string clear = "sc_vec && g1 < a.n1 && sc_x + kVX <= a.n2";
  for (const std::string &c :
       {frozenAxisCondition(g, 1, "g1", "a.n"),
        frozenAxisCondition(g, 2, "sc_x", "a.n"),
        frozenAxisCondition(g, 2, "(sc_x + kVX - 1)", "a.n")})
    if (!c.empty())
      clear += " && !(" + c + ")";
  out.line("// The thread's outputs, once: sc_clear where its kVX outputs lie "
           "in the domain\n// and outside the fixed bands of axes 1 and 2 "
           "(axis 0's is a plane's), which is\n// every thread but those at "
           "an edge: they store as one vector.");
  out.line("const long long g1 = y0 + sc_ty, sc_x = x0 + sc_tx;");
  out.line("const bool sc_clear = {};", clear);
  out.line("{} *const sc_out = a.out_{} + g1 * a.n2 + sc_x;", elemOf(g), n);
  {
    auto loop =
        out.scope("for (int sc_p0 = 0; sc_p0 < sc_planes; sc_p0 += kQ)");
    for (int c = 0; c < Q; ++c)
      emitStarPlane(c, w, start);
  }
  out.dedent();
  out.line("}}");
  out.blank();
}

/// The cp.async ring's load of one plane (starPipeline > 0): sc_load(q0,
/// dst, halo) puts plane q0's box, or with !halo only the tile's interior,
/// into the ring's slot dst. Where the box lies inside the domain, each
/// vector goes as one cp.async (landing by the copyAsyncWait of a later
/// plane); elsewhere the values go point by point through the boundary
/// rules, as plain shared-memory stores, before the same barrier.
void StencilEmitter::emitStarRingLoad() {
  const int g = updated.front();
  const std::string n = s.grids[g].name;
  auto read = [&](const std::string &y, const std::string &x) {
    return fmt::format("gread_{0}<Elem>(a.in_{0}, q0, {1}, {2}, a.n0, a.n1, "
                       "a.n2)",
                       n, y, x);
  };
  const bool tma = plan.starTma;
  auto fn =
      out.scope(tma ? "auto sc_load = [&](long long q0, int plane, bool halo)"
                    : "auto sc_load = [&](long long q0, Elem *dst, "
                      "bool halo)",
                "};");
  if (tma) {
    out.line("Elem *const dst = sc_buf + plane % kNB * kSlot;");
    out.line("if (sc_tma && q0 >= 0 && q0 < a.n0) {{\n"
             "  if (threadIdx.x == 0)\n"
             "    sc_ring->load(plane, dst, &sc_map, static_cast<int>(x0) - "
             "kSide * kVX, static_cast<int>(y0) - kR1,\n"
             "                  static_cast<int>(q0), kPlane * sizeof(Elem));\n"
             "  return;\n}}");
  }
  out.line("Elem *const sc_mine = dst + (kR1 + sc_ty) * kW + kSide * kVX + "
           "sc_tx;");
  out.line("if (sc_inner && q0 >= 0 && q0 < a.n0) {{");
  out.line("  const Elem *const sc_p = sc_tile + q0 * sc_stride;");
  out.line("  stencilc::rt::copyAsync<sizeof(EVec)>(sc_mine, sc_p + sc_co);");
  out.line("#pragma unroll");
  out.line("  for (int k = 0; k < kHaloLoads; ++k)");
  out.line("    if (halo && (kHaloV % kThreads == 0 || threadIdx.x + k * "
           "kThreads < kHaloV))");
  out.line("      stencilc::rt::copyAsync<sizeof(EVec)>(dst + sc_hb[k], sc_p "
           "+ sc_ho[k]);");
  out.line("}} else {{");
  out.line("#pragma unroll");
  out.line("  for (int j = 0; j < kVX; ++j)");
  out.line("    sc_mine[j] = {};", read("y0 + sc_ty", "x0 + sc_tx + j"));
  out.line("#pragma unroll");
  out.line("  for (int k = 0; k < kHaloLoads; ++k)");
  out.line("    if (halo && (kHaloV % kThreads == 0 || threadIdx.x + k * "
           "kThreads < kHaloV)) {{");
  out.line("#pragma unroll");
  out.line("      for (int j = 0; j < kVX; ++j)");
  out.line(
      "        dst[sc_hb[k] + j] = {};",
      read("y0 - kR1 + sc_hb[k] / kW", "x0 - kSide * kVX + sc_hb[k] % kW + j"));
  out.line("    }}");
  out.line("}}");
  // A plane this block writes itself completes its slot's phase too.
  if (tma)
    out.line("if (sc_tma)\n  sc_ring->skip(plane, threadIdx.x == 0);");
}

/// Copy `c` of the plane loop, unrolled kQ times: the queue's slots are
/// named rotated by c.
void StencilEmitter::emitStarPlane(
    int c, const std::map<std::array<int, 3>, std::string> &w,
    const std::string &start) {
  const int g = updated.front();
  const std::string n = s.grids[g].name;
  const int r0 = plan.radius[0], r1 = plan.radius[1], r2 = plan.radius[2];
  const int Q = 2 * r0 + 1, VX = plan.planeCols;
  auto q = [&](int d, int cc, int j) {
    return "sc_q" + std::to_string(((d + r0 + cc) % Q + Q) % Q) + "_" +
           std::to_string(j);
  };
  auto copy = out.scope("");
  out.line("const int sc_p = sc_p0 + {};", c);
  if (c)
    out.line("if (sc_p >= sc_planes)\n  break;");
  const int D = plan.starPipeline;
  // The value type of the shared planes: the computation's with the
  // register prefetch, the grid's in the cp.async ring.
  const std::string vecType = D ? "EVec" : "CVec";
  auto conv = [&](const std::string &v) {
    return D ? fmt::format("stencilc::rt::Convert<Comp>::from({})", v) : v;
  };
  if (D) {
    // Plane sc_p + kR0's loads have landed (each later plane's are one
    // group) and every thread is done with plane sc_p - 1, whose slot
    // then takes plane sc_p + kR0 + kD.
    const std::string slot = plan.starTma ? "kSlot" : "kPlane";
    out.line("stencilc::rt::copyAsyncWait<kD - 1>();");
    if (plan.starTma)
      out.line("if (sc_tma)\n  sc_ring->wait(sc_p + kR0);");
    out.line("__syncthreads();");
    out.line("{{\n  const int k = sc_p + kR0 + kD;\n"
             "  if (k < sc_planes + kR0)\n"
             "    sc_load(sc_s0 + k, {}, k < "
             "sc_planes);\n"
             "  stencilc::rt::copyAsyncCommit();\n}}",
             plan.starTma ? "k" : "sc_buf + k % kNB * kPlane");
    out.line("// The queues' newest value, plane sc_p + kR0, from the ring.");
    out.line("const EVec sc_new = *reinterpret_cast<const EVec *>(sc_buf + "
             "(sc_p + kR0) % kNB * {} + (kR1 + sc_ty) * kW + kSide * kVX "
             "+ sc_tx);",
             slot);
    for (int j = 0; j < VX; ++j)
      out.line("{} = {};", q(r0, c, j), conv(fmt::format("sc_new.v[{}]", j)));
    out.line("const Elem *const sc_src = sc_buf + sc_p % kNB * {} + (kR1 "
             "+ sc_ty) * kW + kSide * kVX + sc_tx;",
             slot);
  } else {
    out.line("const bool sc_more = sc_p + 1 < sc_planes;");
    out.line("// In flight while this plane is summed: the column kR0 + 1 "
             "planes on, and the\n// next plane's halo.");
    out.line("if (sc_more) {{\n  sc_column(sc_s0 + sc_p + 1 + kR0, sc_c);\n"
             "  sc_halo(sc_s0 + sc_p + 1, sc_h);\n}}");
    out.line("const Comp *const sc_src = sc_buf + (sc_p & 1) * kPlane + (kR1 "
             "+ sc_ty) * kW + kSide * kVX + sc_tx;");
  }
  // The shared vectors the in-plane taps read: rows d of axis 1 above and
  // below, and vectors s either side along axis 2.
  auto vec = [](const char *name, int d) {
    return fmt::format("sc_{}{}{}", name, d < 0 ? "m" : "p", std::abs(d));
  };
  for (int d = -r1; d <= r1; ++d)
    if (d && w.count({0, d, 0}))
      out.line("const {0} {1} = *reinterpret_cast<const {0} *>(sc_src + {2} "
               "* kW);",
               vecType, vec("y", d), d);
  std::set<int> sides;
  for (int j = 0; j < VX; ++j)
    for (int d = -r2; d <= r2; ++d) {
      const int at = j + d;
      if (d && w.count({0, 0, d}) && (at < 0 || at >= VX))
        sides.insert(at < 0 ? -((-at + VX - 1) / VX) : at / VX);
    }
  for (int v : sides)
    out.line("const {0} {1} = *reinterpret_cast<const {0} *>(sc_src + {2} "
             "* kVX);",
             vecType, vec("x", v), v);
  // Queues hold Comp, and so do the shared planes of the register
  // prefetch; the ring's values convert as the sums read them.
  // Each output's sum, tap by tap in the same order: with the ring, tap
  // by tap across the outputs (each shared vector is then dead after its
  // tap, which keeps radius 4 from spilling), else output by output.
  std::vector<std::vector<std::string>> sums(VX);
  for (int j = 0; j < VX; ++j) {
    std::vector<std::string> &terms = sums[j];
    const std::string sum = "sc_sum" + std::to_string(j);
    for (int d = -r0; d <= r0; ++d) {
      auto it = w.find({d, 0, 0});
      if (it != w.end())
        terms.push_back(
            fmt::format("{} += {} * {};", sum, it->second, q(d, c, j)));
    }
    for (int d = -r1; d <= r1; ++d) {
      auto it = w.find({0, d, 0});
      if (d && it != w.end())
        terms.push_back(
            fmt::format("{} += {} * {};", sum, it->second,
                        conv(fmt::format("{}.v[{}]", vec("y", d), j))));
    }
    for (int d = -r2; d <= r2; ++d) {
      auto it = w.find({0, 0, d});
      if (!d || it == w.end())
        continue;
      // The thread's own columns come from its queues' centres.
      const int at = j + d;
      const int v = at < 0 ? -((-at + VX - 1) / VX) : at / VX;
      std::string val =
          v == 0 ? q(0, c, at)
                 : conv(fmt::format("{}.v[{}]", vec("x", v), at - v * VX));
      terms.push_back(fmt::format("{} += {} * {};", sum, it->second, val));
    }
  }
  if (D) {
    for (int j = 0; j < VX; ++j)
      out.line("Comp sc_sum{} = {};", j, start);
    for (size_t k = 0; k < sums.front().size(); ++k)
      for (int j = 0; j < VX; ++j)
        out.line("{}", sums[j][k]);
  } else {
    for (int j = 0; j < VX; ++j) {
      out.line("Comp sc_sum{} = {};", j, start);
      for (const std::string &term : sums[j])
        out.line("{}", term);
    }
  }
  out.line("const long long g0 = sc_s0 + sc_p;");
  out.line("{} *const sc_o = sc_out + g0 * sc_stride;", elemOf(g));
  const std::string frozen0 = frozenAxisCondition(g, 0, "g0", "a.n");
  const std::string frozen = frozenCondition(g, "a.n");
  out.line("if (sc_clear{}) {{",
           frozen0.empty() ? "" : " && !(" + frozen0 + ")");
  std::string vals;
  for (int j = 0; j < VX; ++j)
    vals += fmt::format("{}stencilc::rt::Convert<{}>::from(sc_sum{})",
                        j ? ", " : "", elemOf(g), j);
  out.line("  const {} v[kVX] = {{{}}};", elemOf(g), vals);
  out.line("  stencilc::rt::storeVector(sc_o, v);");
  // At an edge, output by output: in the domain, and in a fixed band its
  // old value. Indexed from the grid's start, not sc_o: stores through the
  // same pointer in both branches are merged into predicated scalar ones
  // (nvcc 13), which lost the vector store.
  out.line("}} else {{");
  out.indent();
  for (int j = 0; j < VX; ++j) {
    const std::string val = fmt::format(
        "stencilc::rt::Convert<{}>::from(sc_sum{})", elemOf(g), j);
    out.line("{{\n  const long long g2 = sc_x + {};", j);
    out.line("  const long long at = (g0 * a.n1 + g1) * a.n2 + g2;");
    if (frozen.empty())
      out.line("  if (g1 < a.n1 && g2 < a.n2)\n    a.out_{}[at] = {};", n,
               val);
    else
      out.line("  if (g1 < a.n1 && g2 < a.n2)\n    a.out_{0}[at] = ({1}) ? "
               "a.in_{0}[at] : {2};",
               n, frozen, val);
    out.line("}}");
  }
  out.dedent();
  out.line("}}");
  if (D)
    return;
  // The oldest slot (plane g0 - kR0) takes plane g0 + kR0 + 1; the next
  // plane's interior is the queues' next centre.
  {
    auto next = out.scope("if (sc_more)");
    std::string centre;
    for (int j = 0; j < VX; ++j) {
      out.line("{} = sc_c[{}];", q(-r0, c, j), j);
      centre += std::string(j ? ", " : "") + q(0, c + 1, j);
    }
    out.line("sc_put(sc_buf + ((sc_p + 1) & 1) * kPlane, {{{}}}, sc_h);",
             centre);
  }
  out.line("__syncthreads();");
}
