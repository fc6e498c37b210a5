//===- PlaneKernelEmitter.cpp - The plane-by-plane 3-D box kernel ---------===//
//
// The CUDA-core kernel of 3-D wide boxes (issue 24; CudaCorePlan::plane). A
// block owns kT1 x kT2 outputs of axes 1 and 2 and a segment of kT0 planes
// of axis 0. It walks the input planes of the segment and its halo along
// axis 0 one at a time: each plane, with a halo of kR1 and kR2, is loaded
// once into one of two shared-memory buffers, in the computation's type (the
// next plane's loads are in flight in registers while the current one is
// summed; an f16 or bf16 value converts as it is stored, after the sums,
// unless a dirichlet value would round in its type), and each thread adds
// the plane's contribution to the 2 kR0 + 1 output planes it touches for
// its kRY outputs along axis 1:
//
//   acc[q][i] += w[kR0 - q][dy][dx] * plane[y_i + dy][x + dx]
//
// where acc[q] is the partial sum of the output plane q planes after the
// one the current plane completes. The sums move down one slot per plane
// (register moves: a loop unrolled over a turn of 2 kR0 + 1 planes would
// rename them instead, but holds 2 kR0 + 1 copies of a body of up to 3,000
// FMAs, too many for the instruction caches). A value read from shared
// memory serves up to kRY (2 kR0 + 1) FMAs, so the FMAs, not the loads,
// take the issue slots.
//
// Boundaries: a plane whose box lies inside the domain loads without tests;
// any other goes point by point through gread_<grid>, the grid's boundary
// rules (periodic wrap, clamp and fixed move, dirichlet value), so every
// output sums the same weights from the values a read there returns.
// Outputs in a fixed band keep their old value.
//
//===----------------------------------------------------------------------===//

#include "StencilEmitter.h"

#include <array>
#include <map>

using namespace stencilc;

void StencilEmitter::emitPlaneConstants() {
  out.line("constexpr int kRY = {}; // outputs a thread owns along axis 1",
           plan.planeRows);
  out.line("constexpr int kB1 = kT1 + 2 * kR1, kB2 = kT2 + 2 * kR2; // a "
           "plane's box");
  out.line("constexpr int kPlane = kB1 * kB2;");
  out.line("static_assert(kT1 % kRY == 0 && kThreads == kT1 / kRY * kT2, "
           "\"one thread per kRY outputs\");");
  out.line("// Plane elements each thread loads.");
  out.line("constexpr int kLoads = (kPlane + kThreads - 1) / kThreads;");
  out.line("constexpr size_t kSmemBytes = 2 * size_t(kPlane) * sizeof(Comp);");
  out.line("static_assert(kSmemBytes == {}, \"plan and kernel disagree\");",
           plan.sharedBytes);
  out.blank();
}

void StencilEmitter::emitPlaneKernel() {
  const int g = updated.front();
  const Grid &grid = s.grids[g];
  const Update &u = *s.updateOf(g);
  const size_t ui = static_cast<size_t>(&u - s.updates.data());
  const int r0 = plan.radius[0], r1 = plan.radius[1], r2 = plan.radius[2];
  const int Q = 2 * r0 + 1, RY = plan.planeRows;
  const std::string n = grid.name;

  emitPlaneKernelHead(n, "Comp");
  // The next plane's values wait in registers of type `reg` (CudaCorePlan::
  // planeGridRegisters): the grid's, converted as they are stored after the
  // sums, or the computation's.
  const char *reg = plan.planeGridRegisters ? "Elem" : "Comp";
  if (plan.planeGridRegisters)
    out.line("// The next plane waits in registers in the grid's type and "
             "converts as it is\n// stored, after the sums: nothing before "
             "them waits on its loads.");
  {
    auto fn = out.scope(
        fmt::format("auto sc_fetch = [&](long long q0, {} (&v)[kLoads])", reg),
        "};");
    const std::string load = "sc_p[e / kB2 * a.n2 + e % kB2]";
    out.line("if (sc_inner && q0 >= 0 && q0 < a.n0) {{");
    out.line("  const Elem *const sc_p = sc_box + q0 * sc_stride;");
    out.line("#pragma unroll");
    out.line("  for (int k = 0; k < kLoads; ++k) {{");
    out.line("    const int e = threadIdx.x + k * kThreads;");
    out.line("    if (kPlane % kThreads == 0 || e < kPlane)");
    out.line("      v[k] = {};",
             plan.planeGridRegisters
                 ? load
                 : "stencilc::rt::Convert<Comp>::from(" + load + ")");
    out.line("  }}");
    out.line("}} else {{");
    out.line("#pragma unroll");
    out.line("  for (int k = 0; k < kLoads; ++k) {{");
    out.line("    const int e = threadIdx.x + k * kThreads;");
    out.line("    if (kPlane % kThreads == 0 || e < kPlane)");
    out.line("      v[k] = gread_{}<{}>(a.in_{}, q0, o1 + e / kB2, o2 + e % "
             "kB2, a.n0, a.n1, a.n2);",
             n, reg, n);
    out.line("  }}");
    out.line("}}");
  }
  {
    auto fn = out.scope(
        fmt::format("auto sc_put = [&](Comp *dst, const {} (&v)[kLoads])", reg),
        "};");
    out.line("#pragma unroll");
    out.line("for (int k = 0; k < kLoads; ++k) {{");
    out.line("  const int e = threadIdx.x + k * kThreads;");
    out.line("  if (kPlane % kThreads == 0 || e < kPlane)");
    out.line("    dst[e] = {};", plan.planeGridRegisters
                                     ? "stencilc::rt::Convert<Comp>::from(v[k])"
                                     : "v[k]");
    out.line("}}");
  }
  std::map<std::array<int, 3>, std::string> w;
  const std::string start = emitPlaneWeights(u, ui, w);
  auto acc = [](int q, int i) {
    return "sc_a" + std::to_string(q) + "_" + std::to_string(i);
  };
  out.line("// sc_a<q>_<i>: the partial sum of output row sc_ty + i of the "
           "plane q planes\n// after the one the current plane completes.");
  for (int q = 0; q < Q; ++q) {
    std::string decl = "Comp ";
    for (int i = 0; i < RY; ++i)
      decl += std::string(i ? ", " : "") + acc(q, i) + " = " + start;
    out.line("{};", decl);
  }
  out.line("{} sc_v[kLoads];", reg);
  out.line("sc_fetch(sc_s0 - kH0, sc_v);");
  out.line("sc_put(sc_buf, sc_v);");
  out.line("__syncthreads();");
  out.line("// The segment's planes and kR0 on either side.");
  out.line("const int sc_planes = static_cast<int>(min(static_cast<long long>"
           "(kT0), a.n0 - sc_s0)) + 2 * kR0;");
  emitPlaneStoreSetup(g);
  {
    auto loop = out.scope("for (int sc_p = 0; sc_p < sc_planes; ++sc_p)");
    out.line("const bool sc_more = sc_p + 1 < sc_planes;");
    out.line("if (sc_more)\n  sc_fetch(sc_s0 - kH0 + sc_p + 1, sc_v);");
    out.line("const Comp *const sc_src = sc_buf + (sc_p & 1) * kPlane + "
             "sc_ty * kB2 + sc_tx;");
    // Row by row of the plane's box: its 2 r2 + 1 values serve every
    // output row and output plane that reads them.
    for (int yy = 0; yy < RY + 2 * r1; ++yy) {
      auto row = out.scope("");
      std::string vals = "const Comp ";
      for (int dx = 0; dx <= 2 * r2; ++dx)
        vals += fmt::format("{}sc_x{} = sc_src[{}]", dx ? ", " : "", dx,
                            yy * plan.box(2) + dx);
      out.line("{};", vals);
      for (int i = 0; i < RY; ++i) {
        int dy = yy - r1 - i;
        if (dy < -r1 || dy > r1)
          continue;
        for (int q = 0; q < Q; ++q)
          for (int dx = 0; dx <= 2 * r2; ++dx) {
            auto it = w.find({r0 - q, dy, dx - r2});
            if (it != w.end())
              out.line("{} += {} * sc_x{};", acc(q, i), it->second, dx);
          }
      }
    }
    out.line("// This plane completed output plane sc_s0 + sc_p - 2 kR0.");
    {
      auto store = out.scope("if (sc_p >= 2 * kR0)");
      emitPlaneStore(g, "sc_s0 + sc_p - 2 * kR0",
                     [&](int i) { return acc(0, i); });
    }
    for (int q = 0; q < Q; ++q)
      for (int i = 0; i < RY; ++i)
        out.line("{} = {};", acc(q, i), q + 1 < Q ? acc(q + 1, i) : start);
    out.line("if (sc_more)\n  sc_put(sc_buf + ((sc_p + 1) & 1) * kPlane, "
             "sc_v);");
    out.line("__syncthreads();");
  }
  out.dedent();
  out.line("}}");
  out.blank();
}

std::string StencilEmitter::emitPlaneWeights(
    const Update &u, size_t ui, std::map<std::array<int, 3>, std::string> &w) {
  // The weights: literals, or the host's rounding in Args::w.
  out.line("// The weights (planWeights: rounded keeping the sum, "
           "docs/language.md §6.4).");
  const std::vector<Tap> &taps = u.linear->taps;
  for (size_t k = 0; k < taps.size(); ++k) {
    w[{taps[k].offset[0], taps[k].offset[1], taps[k].offset[2]}] =
        weightText(weights[ui][k], compFloat);
  }
  // The linear form's constant starts every sum.
  if (u.linear->constant < 0)
    return compFloat ? "0.0f" : "0.0";
  auto cName = [](int i) { return "c" + std::to_string(i); };
  emitNodes(liveNodes({u.linear->constant}), /*forDevice=*/true, cName,
            [](const Node &) { return std::string("0"); });
  return cName(u.linear->constant);
}

void StencilEmitter::emitPlaneKernelEntry(const std::string &bufType,
                                          const std::string &moreParams) {
  out.line("// Unused: one step per pass, so the full kernel is the only one.");
  out.line("template <bool Full>");
  out.line("__global__ void __launch_bounds__(kThreads, {}) {}_kernel(const "
           "Args a{}) {{",
           plan.minBlocks, s.name, moreParams);
  out.indent();
  out.line("STENCILC_DYNAMIC_SHARED(sc_smem);");
  out.line("{0} *const sc_buf = reinterpret_cast<{0} *>(sc_smem);", bufType);
  out.line("// blockIdx.x numbers the tiles, the last axis fastest; o1, o2 "
           "are the origins of");
  out.line("// the planes' boxes, a segment of kT0 planes of axis 0 "
           "starts at sc_s0.");
  emitTileOrigins();
  out.line("const long long sc_s0 = sc_rest * kT0;");
}

void StencilEmitter::emitPlaneKernelHead(const std::string &grid,
                                         const std::string &bufType) {
  emitPlaneKernelEntry(bufType);
  out.line("const int sc_tx = threadIdx.x % kT2, sc_ty = threadIdx.x / kT2 * "
           "kRY;");
  out.line("// Planes whose box lies inside the domain load without tests.");
  out.line("const bool sc_inner = o1 >= 0 && o1 + kB1 <= a.n1 && o2 >= 0 && "
           "o2 + kB2 <= a.n2;");
  out.line("const long long sc_stride = a.n1 * a.n2;");
  out.line("const Elem *const sc_box = a.in_{} + (sc_inner ? o1 * a.n2 + o2 "
           ": 0);",
           grid);
}

void StencilEmitter::emitPlaneStoreSetup(int g) {
  const std::string n = s.grids[g].name;
  std::string frozen = frozenAxisCondition(g, 1, "g1", "a.n");
  const std::string frozen2 = frozenAxisCondition(g, 2, "g2", "a.n");
  if (!frozen2.empty())
    frozen += (frozen.empty() ? "" : " || ") + frozen2;
  out.line("// The thread's outputs, once: sc_clear where all kRY lie in the "
           "domain and\n// outside the fixed bands of axes 1 and 2 (axis "
           "0's is a plane's), which is\n// every thread but those at an "
           "edge. Stores go through one pointer a plane.");
  out.line("const long long g2 = o2 + kR2 + sc_tx;");
  out.line("bool sc_clear = g2 < a.n2;");
  out.line("#pragma unroll");
  {
    auto rows = out.scope("for (int i = 0; i < kRY; ++i)");
    out.line("const long long g1 = o1 + kR1 + sc_ty + i;");
    out.line("sc_clear = sc_clear && g1 < a.n1{};",
             frozen.empty() ? "" : " && !(" + frozen + ")");
  }
  out.line("{} *const sc_out = a.out_{} + (o1 + kR1 + sc_ty) * a.n2 + g2;",
           elemOf(g), n);
}

void StencilEmitter::emitPlaneStore(
    int g, const std::string &plane,
    const std::function<std::string(int)> &value) {
  const std::string n = s.grids[g].name;
  const std::string frozen0 = frozenAxisCondition(g, 0, "g0", "a.n");
  const std::string frozen = frozenCondition(g, "a.n");
  out.line("const long long g0 = {};", plane);
  out.line("{} *const sc_o = sc_out + g0 * sc_stride;", elemOf(g));
  auto rowAt = [](int i) {
    return i ? fmt::format("{} * a.n2", i) : std::string("0");
  };
  auto val = [&](int i) {
    return "stencilc::rt::Convert<Elem>::from(" + value(i) + ")";
  };
  out.line("if (sc_clear{}) {{",
           frozen0.empty() ? "" : " && !(" + frozen0 + ")");
  out.indent();
  for (int i = 0; i < plan.planeRows; ++i)
    out.line("sc_o[{}] = {};", rowAt(i), val(i));
  out.dedent();
  // At an edge, output by output: in the domain, and in a fixed band its
  // old value.
  out.line("}} else {{");
  out.indent();
  for (int i = 0; i < plan.planeRows; ++i) {
    out.line("{{\n  const long long g1 = o1 + kR1 + sc_ty + {};", i);
    if (frozen.empty())
      out.line("  if (g1 < a.n1 && g2 < a.n2)\n    sc_o[{}] = {};", rowAt(i),
               val(i));
    else
      out.line("  if (g1 < a.n1 && g2 < a.n2)\n    sc_o[{0}] = ({1}) ? "
               "a.in_{2}[(sc_o - a.out_{2}) + {0}] : {3};",
               rowAt(i), frozen, n, val(i));
    out.line("}}");
  }
  out.dedent();
  out.line("}}");
}
