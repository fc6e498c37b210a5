//===- StarKernelEmitter.cpp - The register-queue 3-D star kernel ---------===//
//
// The CUDA-core kernel of linear 3-D stars (issue 24; CudaCorePlan::star),
// the classic finite-difference kernel. A block owns kT1 x kT2 outputs of
// axes 1 and 2 and a segment of kT0 planes of axis 0, and walks the output
// planes of the segment one at a time. Each thread owns kRY outputs along
// axis 1 and keeps, for each, a register queue of its column's 2 kR0 + 1
// values along axis 0: the axis-0 taps come from registers. The plane whose
// outputs are computed also lies in shared memory with a halo of kR1 and
// kR2, for the in-plane taps; its interior comes from the queues' centres,
// so global memory is read once per point (plus the in-plane halo, an L2
// hit, and the segment's 2 kR0 halo planes). While a plane is summed, the
// next plane's halo and the column value kR0 + 1 planes ahead are in
// flight (two shared-memory buffers, one barrier a plane).
//
// The loop over planes is unrolled by the queue's length, 2 kR0 + 1, and
// each copy names the queue's slots rotated by one, so the queue shifts by
// renaming, without moves.
//
// Boundaries: loads whose plane box lies inside the domain go without
// tests; any other goes point by point through gread_<grid>, the grid's
// boundary rules, as in the plane kernel. Outputs in a fixed band keep
// their old value.
//
//===----------------------------------------------------------------------===//

#include "StencilEmitter.h"

#include <array>
#include <map>

using namespace stencilc;

void StencilEmitter::emitStarConstants() {
  out.line("constexpr int kRY = {}; // outputs a thread owns along axis 1",
           plan.planeRows);
  out.line("constexpr int kQ = 2 * kR0 + 1; // a column's register queue");
  out.line("constexpr int kB1 = kT1 + 2 * kR1, kB2 = kT2 + 2 * kR2; // a "
           "plane's box");
  out.line("constexpr int kPlane = kB1 * kB2;");
  out.line("static_assert(kT1 % kRY == 0 && kThreads == kT1 / kRY * kT2, "
           "\"one thread per kRY outputs\");");
  out.line("// The box's halo: kR1 whole rows above and below, kR2 columns "
           "either side\n// of the kT1 rows between; halo elements each "
           "thread loads.");
  out.line("constexpr int kRim = 2 * kR1 * kB2;");
  out.line("constexpr int kHalo = kPlane - kT1 * kT2;");
  out.line("constexpr int kHaloLoads = (kHalo + kThreads - 1) / kThreads;");
  out.line("constexpr size_t kSmemBytes = 2 * size_t(kPlane) * sizeof(Comp);");
  out.line("static_assert(kSmemBytes == {}, \"plan and kernel disagree\");",
           plan.sharedBytes);
  out.blank();
}

void StencilEmitter::emitStarKernel() {
  const int g = updated.front();
  const Grid &grid = s.grids[g];
  const Update &u = *s.updateOf(g);
  const size_t ui = static_cast<size_t>(&u - s.updates.data());
  const int r0 = plan.radius[0];
  const int Q = 2 * r0 + 1, RY = plan.planeRows;
  const std::string n = grid.name;

  emitPlaneKernelHead(n, "Comp");
  out.line("// The box positions (row * kB2 + column) of this thread's halo "
           "elements.");
  out.line("int sc_hs[kHaloLoads];");
  out.line("#pragma unroll");
  out.line("for (int k = 0; k < kHaloLoads; ++k) {{");
  out.line("  const int e = threadIdx.x + k * kThreads;");
  out.line("  int y, x;");
  out.line("  if (e < kRim) {{");
  out.line("    y = e / kB2, x = e % kB2;");
  out.line("    y += y < kR1 ? 0 : kT1;");
  out.line("  }} else {{");
  out.line("    const int f = e - kRim, w = kR2 > 0 ? 2 * kR2 : 1;");
  out.line("    y = kR1 + f / w, x = f % w;");
  out.line("    x += x < kR2 ? 0 : kT2;");
  out.line("  }}");
  out.line("  sc_hs[k] = e < kHalo ? y * kB2 + x : 0;");
  out.line("}}");
  out.line("// Their offsets in a plane of the grid, once: a plane's loads "
           "then add only its\n// base. (The column's offset is recomputed "
           "a plane: held, it spilled star3d2r\n// at 80 registers.)");
  out.line("long long sc_ho[kHaloLoads];");
  out.line("#pragma unroll");
  out.line("for (int k = 0; k < kHaloLoads; ++k)");
  out.line("  sc_ho[k] = sc_hs[k] / kB2 * a.n2 + sc_hs[k] % kB2;");
  auto read = [&](const std::string &q0, const std::string &y,
                  const std::string &x) {
    return fmt::format("gread_{0}<Comp>(a.in_{0}, {1}, o1 + {2}, o2 + {3}, "
                       "a.n0, a.n1, a.n2)",
                       n, q0, y, x);
  };
  {
    auto fn =
        out.scope("auto sc_column = [&](long long q0, Comp (&v)[kRY])", "};");
    out.line("if (sc_inner && q0 >= 0 && q0 < a.n0) {{");
    out.line("  const Elem *const sc_p = sc_box + q0 * sc_stride + "
             "(sc_ty + kR1) * a.n2 + sc_tx + kR2;");
    out.line("#pragma unroll");
    out.line("  for (int i = 0; i < kRY; ++i)");
    out.line("    v[i] = stencilc::rt::Convert<Comp>::from(sc_p[i * a.n2]);");
    out.line("}} else {{");
    out.line("#pragma unroll");
    out.line("  for (int i = 0; i < kRY; ++i)");
    out.line("    v[i] = {};", read("q0", "sc_ty + kR1 + i", "sc_tx + kR2"));
    out.line("}}");
  }
  {
    auto fn = out.scope(
        "auto sc_halo = [&](long long q0, Comp (&h)[kHaloLoads])", "};");
    out.line("if (sc_inner && q0 >= 0 && q0 < a.n0) {{");
    out.line("  const Elem *const sc_p = sc_box + q0 * sc_stride;");
    out.line("#pragma unroll");
    out.line("  for (int k = 0; k < kHaloLoads; ++k)");
    out.line("    if (kHalo % kThreads == 0 || threadIdx.x + k * kThreads < "
             "kHalo)");
    out.line("      h[k] = stencilc::rt::Convert<Comp>::from(sc_p[sc_ho[k]]);");
    out.line("}} else {{");
    out.line("#pragma unroll");
    out.line("  for (int k = 0; k < kHaloLoads; ++k)");
    out.line("    if (kHalo % kThreads == 0 || threadIdx.x + k * kThreads < "
             "kHalo)");
    out.line("      h[k] = {};",
             read("q0", "sc_hs[k] / kB2", "sc_hs[k] % kB2"));
    out.line("}}");
  }
  {
    auto fn = out.scope(
        "auto sc_put = [&](Comp *dst, const Comp (&c)[kRY], const Comp "
        "(&h)[kHaloLoads])",
        "};");
    out.line("#pragma unroll");
    out.line("for (int i = 0; i < kRY; ++i)");
    out.line("  dst[(sc_ty + kR1 + i) * kB2 + sc_tx + kR2] = c[i];");
    out.line("#pragma unroll");
    out.line("for (int k = 0; k < kHaloLoads; ++k)");
    out.line("  if (kHalo % kThreads == 0 || threadIdx.x + k * kThreads < "
             "kHalo)");
    out.line("    dst[sc_hs[k]] = h[k];");
  }
  std::map<std::array<int, 3>, std::string> w;
  const std::string start = emitPlaneWeights(u, ui, w);
  // sc_q<slot>_<i>: row i's queue; at copy c of the unrolled loop, the value
  // of plane g0 + d sits in slot (d + kR0 + c) % kQ.
  auto q = [&](int d, int cc, int i) {
    return "sc_q" + std::to_string(((d + r0 + cc) % Q + Q) % Q) + "_" +
           std::to_string(i);
  };
  out.line("// sc_q<j>_<i>: the queue of row sc_ty + i, planes "
           "sc_s0 - kH0 + j at the start.");
  for (int j = 0; j < Q; ++j) {
    std::string decl = "Comp ";
    for (int i = 0; i < RY; ++i)
      decl += std::string(i ? ", " : "") + "sc_q" + std::to_string(j) + "_" +
              std::to_string(i);
    out.line("{};", decl);
  }
  out.line("Comp sc_c[kRY], sc_h[kHaloLoads];");
  for (int j = 0; j < Q; ++j) {
    out.line("sc_column(sc_s0 - kH0 + {}, sc_c);", j);
    for (int i = 0; i < RY; ++i)
      out.line("sc_q{0}_{1} = sc_c[{1}];", j, i);
  }
  out.line("sc_halo(sc_s0, sc_h);");
  {
    std::string c = "sc_put(sc_buf, {";
    for (int i = 0; i < RY; ++i)
      c += std::string(i ? ", " : "") + q(0, 0, i);
    out.line("{}}}, sc_h);", c);
  }
  out.line("__syncthreads();");
  out.line("const int sc_planes = static_cast<int>(min(static_cast<long long>"
           "(kT0), a.n0 - sc_s0));");
  emitPlaneStoreSetup(g);
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

/// Copy `c` of the plane loop, unrolled kQ times: the queue's slots are
/// named rotated by c.
void StencilEmitter::emitStarPlane(
    int c, const std::map<std::array<int, 3>, std::string> &w,
    const std::string &start) {
  const std::string n = s.grids[updated.front()].name;
  const int r0 = plan.radius[0], r1 = plan.radius[1], r2 = plan.radius[2];
  const int Q = 2 * r0 + 1, RY = plan.planeRows;
  auto q = [&](int d, int cc, int i) {
    return "sc_q" + std::to_string(((d + r0 + cc) % Q + Q) % Q) + "_" +
           std::to_string(i);
  };
  {
    auto copy = out.scope("");
    out.line("const int sc_p = sc_p0 + {};", c);
    if (c)
      out.line("if (sc_p >= sc_planes)\n  break;");
    out.line("const bool sc_more = sc_p + 1 < sc_planes;");
    out.line("// In flight while this plane is summed: the column kR0 + 1 "
             "planes on, and the\n// next plane's halo.");
    out.line("if (sc_more) {{\n  sc_column(sc_s0 + sc_p + 1 + kR0, sc_c);\n"
             "  sc_halo(sc_s0 + sc_p + 1, sc_h);\n}}");
    out.line("const Comp *const sc_src = sc_buf + (sc_p & 1) * kPlane + "
             "(sc_ty + kR1) * kB2 + sc_tx + kR2;");
    auto conv = [](const std::string &v) {
      return "stencilc::rt::Convert<Comp>::from(" + v + ")";
    };
    for (int i = 0; i < RY; ++i) {
      std::string sum = "sc_sum" + std::to_string(i);
      out.line("Comp {} = {};", sum, start);
      for (int d = -r0; d <= r0; ++d) {
        auto it = w.find({d, 0, 0});
        if (it != w.end())
          out.line("{} += {} * {};", sum, it->second, conv(q(d, c, i)));
      }
      for (int d = -r1; d <= r1; ++d) {
        auto it = w.find({0, d, 0});
        if (d == 0 || it == w.end())
          continue;
        // Rows the thread owns come from its queues' centres.
        std::string v = i + d >= 0 && i + d < RY
                            ? q(0, c, i + d)
                            : fmt::format("sc_src[{}]", (i + d) * plan.box(2));
        out.line("{} += {} * {};", sum, it->second, conv(v));
      }
      for (int d = -r2; d <= r2; ++d) {
        auto it = w.find({0, 0, d});
        if (d == 0 || it == w.end())
          continue;
        out.line("{} += {} * {};", sum, it->second,
                 conv(fmt::format("sc_src[{}]", i * plan.box(2) + d)));
      }
    }
    emitPlaneStore(updated.front(), "sc_s0 + sc_p",
                   [](int i) { return "sc_sum" + std::to_string(i); });
    // The oldest slot (plane g0 - kR0) takes plane g0 + kR0 + 1; the next
    // plane's interior is the queues' next centre.
    {
      auto next = out.scope("if (sc_more)");
      std::string centre;
      for (int i = 0; i < RY; ++i) {
        out.line("{} = sc_c[{}];", q(-r0, c, i), i);
        centre += std::string(i ? ", " : "") + q(0, c + 1, i);
      }
      out.line("sc_put(sc_buf + ((sc_p + 1) & 1) * kPlane, {{{}}}, sc_h);",
               centre);
    }
    out.line("__syncthreads();");
  }
}
