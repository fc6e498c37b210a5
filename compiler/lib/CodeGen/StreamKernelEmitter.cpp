//===- StreamKernelEmitter.cpp - The CUDA-core streaming kernel ------------===//
//
// The streaming kernel of the CUDA-core strategy (CudaEmitter.cpp): 2.5-D
// blocking of a 3-D stencil of one grid along axis 0, every fused level in
// flight (docs/architecture.md).
//
//===----------------------------------------------------------------------===//

#include "StencilEmitter.h"
#include "stencilc/CodeGen/DistributedEmitter.h"
#include "stencilc/IR/LinearForm.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

using namespace stencilc;

//===- The streaming kernel ----------------------------------------------===//
//
// One thread per point of the slab box (axes 1..); the block walks its
// segment of axis 0 kV rows (planes in 3-D) at a time. Iteration j loads
// rows j * kV .. j * kV + kV - 1 of the segment's window into level 0, and
// level k computes the kV rows from j * kV - k * kD out of the rows level
// k - 1 made in earlier iterations (kD = kV + kR0), so one barrier per
// iteration separates every write from every read. A level's
// rows live twice: in the thread's registers (q<k>_<m>, the reads of its
// own column) and in a ring of kRing slabs in shared memory (the reads of
// other columns). Rows of a level before its first valid one hold garbage
// that no valid row reads. With CudaCorePlan::groupRows the rings keep
// their rows in groups of kG, written and read a group an access, and
// the fast iterations take a copy of the loop body of their own
// (emitGroupRingWrites says which rows an iteration writes).

/// `value`, of the grid's type, as the rings hold it: in the computation's
/// type.
std::string StencilEmitter::toComp(const std::string &value) const {
  return elem == comp ? value
                      : "stencilc::rt::Convert<Comp>::from(" + value + ")";
}

/// `value`, of the grid's type, as a ring holds it. A 16-bit grid's ghost
/// columns hold the wall's value there in the computation's type, set
/// here, as the reads through the boundary conditions return it: rounded
/// to the grid's type it would differ. (Other grids' ghosts hold it from
/// the load on.)
std::string StencilEmitter::ringValue(const std::string &value) const {
  if (elem == comp || ghostAxes().empty())
    return toComp(value);
  return "(sc_ghost ? sc_ghostValue : " + toComp(value) + ")";
}

/// The ring slot of window row `row`: `row & (kRing - 1)`, parenthesised.
static std::string ringSlot(const std::string &row) {
  bool bare = row.find(' ') == std::string::npos;
  return "(" + (bare ? row : "(" + row + ")") + " & (kRing - 1))";
}

std::vector<int> StencilEmitter::ghostAxes() const {
  std::vector<int> axesOut;
  const Grid &grid = s.grids[updated.front()];
  // Axes with one constant dirichlet value on both sides.
  for (int a = 1; a < D; ++a) {
    const AxisBoundary &b = grid.boundary[a];
    if (b.uniform() && b.side[0].kind == BoundaryKind::Dirichlet &&
        b.side[0].node < 0)
      axesOut.push_back(a);
  }
  return axesOut;
}

std::vector<int> StencilEmitter::bandAxes() const {
  std::vector<int> axesOut;
  const int g = updated.front();
  const Grid &grid = s.grids[g];
  const Update &u = *s.updateOf(g);
  for (int a = 1; a < D; ++a) {
    const AxisBoundary &b = grid.boundary[a];
    if (b.side[0].kind != BoundaryKind::Fixed ||
        b.side[1].kind != BoundaryKind::Fixed)
      continue;
    // Each side's band must hold every point whose value the edge can
    // change: every update's reads and its form as written.
    bool wide = true;
    for (const Update &v : s.updates)
      wide &= std::max(v.reachLo[a], v.spanLo[a]) <= u.reachLo[a] &&
              std::max(v.reachHi[a], v.spanHi[a]) <= u.reachHi[a];
    if (wide)
      axesOut.push_back(a);
  }
  return axesOut;
}

/// The streaming kernel's constants after those it shares with the box
/// kernel (emitConstants).
void StencilEmitter::emitStreamConstants() {
  std::string slab;
  for (int a = 1; a < D; ++a) {
    std::string i = std::to_string(a);
    out.line("constexpr int kB{0} = kT{0} + 2 * kH{0};", a);
    slab += (a > 1 ? " * kB" : "kB") + i;
  }
  out.line("constexpr int kSlab = {};", slab);
  out.line("static_assert(kSlab == kThreads, \"one thread per slab point\");");
  out.line("constexpr int kV = {}; // rows per iteration", plan.rows);
  out.line("constexpr int kD = kV + kR0; // rows between consecutive levels");
  out.line("constexpr int kRing = {}; // slabs per level, >= 2 * (kV + kR0)",
           plan.ring);
  out.line("static_assert((kRing & (kRing - 1)) == 0 && kRing >= 2 * (kV + "
           "kR0), \"ring too small\");");
  out.line("constexpr size_t kSmemBytes = size_t(kFuse) * kRing * kSlab * "
           "sizeof(Comp);");
  out.line("static_assert(kSmemBytes == {}, \"plan and kernel disagree\");",
           plan.sharedBytes);
  if (plan.groupRows) {
    out.line("// A ring keeps its rows in groups of kG consecutive rows, "
             "slab after slab: a\n// column's group is one {}-byte "
             "access, and a warp's groups of one slab are\n// consecutive.",
             plan.groupRows * elemTypeBytes(s.compType));
    out.line("constexpr int kG = {};", plan.groupRows);
    out.line("static_assert(kV % kG == 0, \"an iteration's rows are whole "
             "groups\");");
  }
  out.blank();
}

/// The index in a level's ring of window row `row` (slot-shifted) of column
/// `col`: `(row & (kRing - 1)) * kSlab + col`, or with the group ring, in
/// groups of kG rows (sc_at).
std::string StencilEmitter::ringIndex(const std::string &row,
                                      const std::string &col) const {
  if (plan.groupRows)
    return "sc_at(" + row + ", " + col + ")";
  return ringSlot(row) + " * kSlab + " + col;
}

void StencilEmitter::emitStreamReads() {
  const Grid &grid = s.grids[updated.front()];
  if (plan.groupRows) {
    out.line("// The index of window row `row` (shifted by its level's "
             "lag) of column `col` in\n// a ring.");
    out.line("__device__ __forceinline__ int sc_at(int row, int col) {{\n"
             "  const int s = row & (kRing - 1);\n"
             "  return (s / kG * kSlab + col) * kG + s % kG;\n}}");
    out.blank();
  }
  out.line("// A read of level ring `s` at window row l0 and slab point l, "
           "global q, through");
  out.line("// the boundary conditions (points near the domain's edge "
           "only).");
  std::string slabArgs;
  for (int a = 1; a < D; ++a)
    slabArgs += ", int l" + std::to_string(a);
  auto fn = out.scope(
      "__device__ __forceinline__ Comp sring_" + grid.name +
      "(const Comp *s, int l0" + slabArgs + ", " +
      axes([](int a) { return "long long q" + std::to_string(a); }) +
      ", const Args &a)");
  emitReadBoundaries(grid);
  out.line("return s[{}];", ringIndex("l0", D == 2 ? "l1" : "l1 * kB2 + l2"));
  out.blank();
}

void StencilEmitter::emitStreamLevel(int k) {
  const int g = updated.front();
  const Grid &grid = s.grids[g];
  const int r0 = plan.radius[0];
  const int V = plan.rows;
  auto blk = out.scope("if constexpr (" + std::to_string(k) + " <= NT)");
  out.line("// Level {0} makes window rows sc_rel .. sc_rel + kV - 1 from "
           "level {1}'s rows",
           k, k - 1);
  out.line("// sc_rel - kR0 .. sc_rel + kV - 1 + kR0, q{}_0 .. q{}_{}.", k - 1,
           k - 1, V + 2 * r0 - 1);
  out.line("const int sc_rel = j * kV - {} * kD;", k);
  out.line("const Comp *const sc_src = sc_ring + {} * kRing * kSlab;", k - 1);
  // The group ring holds level k - 1's window row w at slot w + k r0.
  const int shift = plan.groupRows ? k * r0 : 0;
  std::string zero = "stencilc::rt::Convert<Elem>::from(" +
                     std::string(compFloat ? "0.0f" : "0.0") + ")";
  std::string decl = "Elem ";
  for (int m = 0; m < V; ++m)
    decl += std::string(m ? ", " : "") + "sc_e" + std::to_string(m) + " = " +
            zero;
  out.line("{};", decl);
  std::vector<int> live = liveNodes(s.roots());
  const Update &u = *s.updateOf(g);
  auto vName = [](int i) { return "v" + std::to_string(i); };
  // The update at one row, v<root>, from the reads `read` gives: as
  // written, or the linear form's sum (CudaCorePlan::linearForm).
  auto emitUpdate = [&](const std::function<std::string(const Node &)> &read) {
    if (!plan.linearForm) {
      emitNodes(live, /*forDevice=*/true, vName, read);
      return;
    }
    const size_t ui = static_cast<size_t>(&u - s.updates.data());
    const std::vector<Tap> &taps = u.linear->taps;
    out.line("Comp v{} = {};", u.root,
             u.linear->constant >= 0 ? "c" + std::to_string(u.linear->constant)
                                     : std::string(compFloat ? "0.0f" : "0.0"));
    for (size_t t = 0; t < taps.size(); ++t) {
      Node n;
      n.op = Op::Read;
      n.index = taps[t].grid;
      n.offset = taps[t].offset;
      out.line("v{} += {} * {};", u.root, weightText(weights[ui][t], compFloat),
               read(n));
    }
  };
  if (plan.linearForm) {
    out.line("// The update through its linear form, its weights rounded "
             "keeping their sum\n// (a sum of reads over a coefficient: "
             "CudaCorePlan::linearForm).");
    if (u.linear->constant >= 0)
      emitNodes(
          liveNodes({u.linear->constant}), /*forDevice=*/true,
          [](int i) { return "c" + std::to_string(i); },
          [](const Node &) { return std::string("0"); });
  }
  std::string keep;
  for (int a = 0; a < D; ++a)
    if (!grid.boundary[a].periodic())
      keep += std::string(keep.empty() ? "" : " && ") + "g" +
              std::to_string(a) + " >= 0 && g" + std::to_string(a) +
              " < a.n" + std::to_string(a);
  std::string frozen = frozenCondition(g, "a.n");
  const bool banded = !bandAxes().empty();
  {
    auto in = out.scope("if (" + std::to_string(k) + " <= sc_depth)");
    {
      // sc_fast holds only where no row of any level is near the edge.
      auto edge = out.scope("if (!sc_fast && (sc_slabEdge || sc_rel < "
                            "sc_edgeLo || sc_rel + kV > sc_edgeHi))");
      out.line("// Near the domain's edge: through the boundary conditions.");
      for (int m = 0; m < V; ++m) {
        auto row = out.scope("");
        std::string rel = plus("sc_rel", m);
        out.line("const long long g0 = sc_first + {};", rel);
        auto kept = out.scope("if (" + (keep.empty() ? "true" : keep) + ")");
        emitUpdate([&](const Node &n) {
          std::string slabArgs;
          for (int a = 1; a < D; ++a)
            slabArgs += ", " + plus("l" + std::to_string(a), n.offset[a]);
          return "sring_" + grid.name + "(sc_src, " +
                 plus("sc_rel", m + n.offset[0] + shift) + slabArgs + ", " +
                 axes([&](int a) {
                   return plus("g" + std::to_string(a), n.offset[a]);
                 }) +
                 ", a)";
        });
        if (frozen.empty())
          out.line("sc_e{} = stencilc::rt::Convert<Elem>::from(v{});", m,
                   u.root);
        else
          // A fixed band keeps the level below's value, exact in the ring.
          out.line("sc_e{0} = ({1}) ? stencilc::rt::Convert<Elem>::from("
                   "sc_src[{2}]) : "
                   "stencilc::rt::Convert<Elem>::from(v{3});",
                   m, frozen,
                   ringIndex(plan.groupRows ? plus("sc_rel", m + shift) : rel,
                             "threadIdx.x"),
                   u.root);
      }
    }
    {
      auto inside = out.scope("else");
      // With the group ring, each other column's rows sc_rel .. sc_rel +
      // kV - 1 in one access (its taps lie in their row: planGroupRows).
      std::map<int, int> groupOf;
      if (plan.groupRows) {
        for (const Offset &o : s.updatedReads()) {
          int d = D == 2 ? o[1] : o[1] * plan.box(2) + o[2];
          if (d != 0 && !groupOf.count(d))
            groupOf.emplace(d, static_cast<int>(groupOf.size()));
        }
        if (!groupOf.empty())
          out.line("// The other columns' rows sc_rel .. sc_rel + kV - 1, "
                   "a group an access.");
        for (const auto &[d, i] : groupOf)
          for (int g = 0; g < V / plan.groupRows; ++g)
            out.line("const auto sc_w{}_{} = stencilc::rt::loadRows<kG>("
                     "sc_src + sc_at({}, {}));",
                     i, g, plus("sc_rel", shift + g * plan.groupRows),
                     plus("threadIdx.x", d));
      }
      for (int m = 0; m < V; ++m) {
        auto row = out.scope("");
        // The thread's own column from registers, the others from the ring.
        emitUpdate([&](const Node &n) {
          bool ownColumn = true;
          for (int a = 1; a < D; ++a)
            ownColumn &= n.offset[a] == 0;
          if (ownColumn)
            return "q" + std::to_string(k - 1) + "_" +
                   std::to_string(m + r0 + n.offset[0]);
          int d = D == 2 ? n.offset[1]
                         : n.offset[1] * plan.box(2) + n.offset[2];
          if (plan.groupRows)
            return "sc_w" + std::to_string(groupOf.at(d)) + "_" +
                   std::to_string(m / plan.groupRows) + ".v[" +
                   std::to_string(m % plan.groupRows) + "]";
          return "sc_src[" + ringSlot(plus("sc_rel", m + n.offset[0])) +
                 " * kSlab + " + plus("threadIdx.x", d) + "]";
        });
        if (!banded)
          out.line("sc_e{} = stencilc::rt::Convert<Elem>::from(v{});", m,
                   u.root);
        else
          // A band column keeps its own value of the level below.
          out.line("sc_e{0} = stencilc::rt::Convert<Elem>::from(sc_band ? "
                   "q{1}_{2} : v{3});",
                   m, k - 1, m + r0, u.root);
      }
    }
    // The last level's rows go to the output only, never to a ghost. A
    // 16-bit grid's ghosts are set as the rows enter the ring (ringValue).
    if (!ghostAxes().empty() && elem == comp && k < plan.fuse) {
      std::string set;
      for (int m = 0; m < V; ++m)
        set += fmt::format("{}sc_e{} = sc_ghostValue;", m ? "\n  " : "", m);
      out.line("if (sc_ghost) {{\n  {}\n}}", set);
    }
  }
  {
    auto last = out.scope("if constexpr (" + std::to_string(k) + " == NT)");
    auto mine = out.scope("if (sc_mine)");
    out.line("Elem *sc_o = sc_outCol + sc_st;");
    for (int m = 0; m < V; ++m) {
      if (m)
        out.line("sc_o += sc_stride;");
      out.line("if ({0} >= {2} && {0} < sc_outHi)\n  *sc_o = sc_e{1};",
               plus("sc_rel", m), m, addr.distributed() ? "sc_outLo" : "kH0");
    }
  }
  if (k < plan.fuse && plan.groupRows) {
    auto more = out.scope("else");
    emitStreamPush(k, "sc_e", /*elems=*/true);
    emitGroupRingWrites(k, "sc_rel");
  } else if (k < plan.fuse) {
    auto more = out.scope("else");
    for (int m = 0; m < V; ++m)
      out.line("sc_ring[({} * kRing + {}) * kSlab + threadIdx.x] = {};", k,
               ringSlot(plus("sc_rel", m)),
               ringValue("sc_e" + std::to_string(m)));
    for (int m = 0; m < 2 * r0; ++m)
      out.line("q{0}_{1} = q{0}_{2};", k, m, m + V);
    // A ghost column's own registers feed only its own rows, which the
    // ring's ghost value replaces: they need no ghost value.
    for (int m = 0; m < V; ++m)
      out.line("q{}_{} = stencilc::rt::Convert<Comp>::from(sc_e{});", k,
               2 * r0 + m, m);
  }
}

/// Level k's registers take this iteration's rows: q<k>_0 .. q<k>_<2 r0 -
/// 1> the oldest kept, then `rows`0 .. `rows`<kV - 1> (sc_e<m> where
/// `elems`, else the array `rows`[m]).
void StencilEmitter::emitStreamPush(int k, const std::string &rows,
                                    bool elems) {
  const int r0 = plan.radius[0];
  const int V = plan.rows;
  for (int m = 0; m < 2 * r0; ++m)
    out.line("q{0}_{1} = q{0}_{2};", k, m, m + V);
  for (int m = 0; m < V; ++m)
    out.line("q{}_{} = stencilc::rt::Convert<Comp>::from({});", k, 2 * r0 + m,
             elems ? rows + std::to_string(m)
                   : rows + "[" + std::to_string(m) + "]");
}

/// Level k's rows into its group ring, from its registers after the push
/// (rows `rel` - 2 r0 .. `rel` + kV - 1). In a fast iteration the group of
/// rows `rel` - r0 .. `rel` + kV - 1 - r0, the next level's rows in the
/// next iteration, in one access, and where the next iteration is not
/// fast, the rows after it, which its boundary conditions may read. In
/// the others the rows `rel` .. `rel` + kV - 1, each on its own: there the
/// next level reads up to row `rel` - 1, so a group would write rows while
/// they are read. Window row w of level k is at slot w + (k + 1) r0, which
/// makes the groups whole.
void StencilEmitter::emitGroupRingWrites(int k, const std::string &rel) {
  const int r0 = plan.radius[0];
  const int V = plan.rows;
  const int shift = (k + 1) * r0;
  const std::string ring = k == 0
                               ? std::string("sc_ring")
                               : fmt::format("sc_ring + {} * kRing * kSlab", k);
  auto value = [&](int m) {
    std::string q = fmt::format("q{}_{}", k, m);
    if (elem == comp || ghostAxes().empty())
      return q;
    return "(sc_ghost ? sc_ghostValue : " + q + ")";
  };
  auto store = [&](int row, int m) {
    out.line("{}[sc_at({}, threadIdx.x)] = {};",
             k == 0 ? ring : "(" + ring + ")", plus(rel, row + shift),
             value(m));
  };
  {
    auto fast = out.scope("if (sc_fast)");
    const int G = plan.groupRows;
    for (int g = 0; g < V / G; ++g) {
      std::string group;
      for (int m = 0; m < G; ++m)
        group += (m ? ", " : "") + value(r0 + g * G + m);
      out.line("stencilc::rt::storeRows<kG>({} + sc_at({}, threadIdx.x), "
               "stencilc::rt::Rows<kG, Comp>{{{{{}}}}});",
               ring, plus(rel, shift - r0 + g * G), group);
    }
    if (r0 > 0) {
      auto tail = out.scope("if (!sc_fastNext)");
      for (int i = 0; i < r0; ++i)
        store(V - r0 + i, r0 + V + i);
    }
  }
  auto slow = out.scope("else");
  for (int m = 0; m < V; ++m)
    store(m, 2 * r0 + m);
}

void StencilEmitter::emitStreamKernel() {
  const Grid &grid = s.grids[updated.front()];
  const int r0 = plan.radius[0];
  const int V = plan.rows;
  out.line("// NT, the levels of this pass, is kFuse but in the last pass.");
  out.line("template <int NT>");
  // A slab of fewer than 1024 threads asks for registers that let
  // 1024 / kThreads blocks reside, as many threads as the plan's slab.
  out.line("__global__ void __launch_bounds__(kThreads{}) {}_kernel(const "
           "Args a) {{",
           plan.minBlocks > 1 ? ", " + std::to_string(plan.minBlocks) : "",
           s.name);
  out.indent();
  out.line("STENCILC_DYNAMIC_SHARED(sc_smem);");
  out.line("// The rings hold the computation's type: a 16-bit grid's value "
           "converts once,\n// as it is loaded or made, not at each of its "
           "reads.");
  out.line("Comp *const sc_ring = reinterpret_cast<Comp *>(sc_smem);");
  out.line("// blockIdx.x numbers the tiles, the last axis fastest; a tile "
           "is a slab of the");
  out.line("// other axes times a segment of kT0 rows of axis 0.");
  emitTileOrigins();
  out.line("const long long sc_s0 = sc_rest * kT0;");
  out.line("const long long sc_first = sc_s0 - kH0; // window row 0");
  if (D == 2) {
    out.line("const int l1 = threadIdx.x;");
  } else {
    out.line("const int l2 = threadIdx.x % kB2, l1 = threadIdx.x / kB2;");
  }
  const std::vector<int> ghosts = ghostAxes(), bands = bandAxes();
  // Ghost and band axes need no boundary conditions at the slab's edge.
  auto ghosted = [&](int a) {
    return std::find(ghosts.begin(), ghosts.end(), a) != ghosts.end() ||
           std::find(bands.begin(), bands.end(), a) != bands.end();
  };
  std::string slabIn, slabEdge, mine, depth;
  for (int a = 1; a < D; ++a) {
    std::string i = std::to_string(a);
    const bool periodic = grid.boundary[a].periodic();
    out.line("const long long g{0} = o{0} + l{0};", a);
    out.line("const long long q{} = {};", a, addr.coord(a, periodic, "g" + i));
    slabIn +=
        std::string(a > 1 ? " && " : "") + addr.holds(a, periodic, "q" + i);
    if (!ghosted(a))
      slabEdge += std::string(slabEdge.empty() ? "" : " || ") + "g" + i +
                  " < kE" + i + " || g" + i + " >= a.n" + i + " - kE" + i;
    mine += std::string(a > 1 ? " && " : "") + "l" + i + " >= kH" + i +
            " && l" + i + " < kH" + i + " + kT" + i + " && " +
            addr.stores(a, "g" + i);
    if (plan.radius[a] > 0) {
      std::string term = "min(l" + i + ", kB" + i + " - 1 - l" + i +
                         ") / kR" + i;
      depth = depth.empty() ? term : "min(" + depth + ", " + term + ")";
    }
  }
  if (!ghosts.empty()) {
    // Columns outside the domain along a ghost axis hold the boundary value
    // (the lowest such axis's) in every row of every level; the columns
    // beside them read it from the ring as any other.
    std::string ghost, value = literal(0.0, compFloat);
    for (auto it = ghosts.rbegin(); it != ghosts.rend(); ++it) {
      std::string outside =
          fmt::format("g{0} < 0 || g{0} >= a.n{0}", *it);
      ghost = ghost.empty() ? outside : outside + " || " + ghost;
      value = "(" + outside + ") ? " +
              literal(grid.boundary[*it].side[0].value, compFloat) + " : " +
              value;
    }
    out.line("// Columns outside the domain along a dirichlet axis (ghosts) "
             "hold its value in\n// every level: the columns beside them "
             "need no boundary conditions.");
    out.line("const bool sc_ghost = {};", ghost);
    out.line("const {} sc_ghostValue = {};", elem == comp ? "Elem" : "Comp",
             value);
  }
  if (!bands.empty()) {
    std::string band;
    for (int a : bands)
      band += (band.empty() ? "" : " || ") +
              frozenAxisCondition(updated.front(), a, "g" + std::to_string(a),
                                  "a.n");
    out.line("// Columns in a fixed band along a slab axis (band columns) "
             "keep the level\n// below's value in every level; the other "
             "columns read inside the domain.");
    out.line("const bool sc_band = {};", band);
  }
  out.line("const bool sc_slabEdge = {};",
           slabEdge.empty() ? "false" : slabEdge);
  out.line("// The output point of this thread's column, if it has one.");
  out.line("const bool sc_mine = {};", mine);
  out.line("// Level k is valid on slab points at least k radii inside the "
           "box.");
  out.line("const int sc_depth = {};", depth.empty() ? "kFuse" : depth);
  out.line("const long long sc_stride = {};",
           D == 2 ? addr.extent(1) : addr.extent(1) + " * " + addr.extent(2));
  std::string colIdx = D == 2 ? "q1" : "q1 * " + addr.extent(2) + " + q2";
  std::string g1 = addr.shifted(1, "g1");
  std::string outIdx = D == 2 ? g1
                              : (addr.distributed() ? "(" + g1 + ")" : g1) +
                                    " * " + addr.extent(2) + " + " +
                                    addr.shifted(2, "g2");
  out.line("const bool sc_slabIn = {};", slabIn);
  out.line("const Elem *const sc_inCol = a.in_{} + (sc_slabIn ? {} : 0);",
           grid.name, colIdx);
  out.line("Elem *const sc_outCol = a.out_{} + (sc_mine ? {} : 0);",
           grid.name, outIdx);
  out.line("// Window rows as ints: the domain's rows, the rows near its "
           "edge, the outputs.");
  out.line("constexpr long long kWindow = kT0 + 2 * kH0 + (kFuse + 2) * kD + "
           "2 * kV;");
  out.line("auto sc_window = [](long long v) {{\n"
           "  return static_cast<int>(v < -1 ? -1 : v > kWindow ? kWindow : "
           "v);\n}};");
  const bool periodic0 = grid.boundary[0].periodic();
  // Window row of global row r.
  auto fromFirst = [](const std::string &r) {
    return r == "0" ? std::string("-sc_first") : r + " - sc_first";
  };
  out.line("const int sc_inLo = sc_window({}), sc_inHi = sc_window({});",
           fromFirst(addr.rowLo(periodic0)), fromFirst(addr.rowHi(periodic0)));
  out.line("const int sc_edgeLo = sc_window(kE0 - sc_first), sc_edgeHi = "
           "sc_window(a.n0 - kE0 - sc_first);");
  out.line("const int sc_outHi = sc_window(min(sc_s0 + kT0, {}) - "
           "sc_first);",
           addr.storeHi());
  // A distributed block starts its outputs at its own first row.
  if (addr.distributed())
    out.line("const int sc_outLo = sc_window(max(sc_s0, {}) - sc_first);",
             addr.storeLo());
  out.line("// Loads window row `rel`: periodic axes wrap, points outside the "
           "domain along");
  out.line("// other axes read 0 and are never used as values.");
  {
    auto fn = out.scope("auto sc_load = [&](int rel) -> Elem", "};");
    if (!ghosts.empty() && elem == comp)
      out.line("if (sc_ghost)\n  return sc_ghostValue;");
    if (periodic0 && addr.distributed())
      out.line("const long long q0 = {};\nreturn sc_slabIn && q0 < a.v.m[0] "
               "? sc_inCol[q0 * sc_stride] : "
               "stencilc::rt::Convert<Elem>::from(0.0f);",
               addr.coord(0, true, "sc_first + rel"));
    else if (periodic0)
      out.line("return sc_slabIn ? sc_inCol[stencilc::rt::wrap(sc_first + "
               "rel, a.n0) * sc_stride] : "
               "stencilc::rt::Convert<Elem>::from(0.0f);");
    else
      out.line("return sc_slabIn && rel >= sc_inLo && rel < sc_inHi ? "
               "sc_inCol[{} * sc_stride] : "
               "stencilc::rt::Convert<Elem>::from(0.0f);",
               addr.row("sc_first + rel"));
  }
  out.line("// Level k's last kV + 2 * kR0 rows of this thread's column, "
           "oldest first.");
  for (int k = 0; k < plan.fuse; ++k) {
    std::string decl = "Comp ";
    for (int m = 0; m < V + 2 * r0; ++m)
      decl += std::string(m ? ", " : "") + "q" + std::to_string(k) + "_" +
              std::to_string(m) + " = 0";
    out.line("{};", decl);
  }
  out.line("// The last iteration: level NT writes the segment's last row.");
  out.line("const int sc_last = (sc_outHi - 1 + NT * kD) / kV;");
  std::string inner;
  for (int a = 1; a < D; ++a) {
    if (ghosted(a))
      continue;
    std::string i = std::to_string(a);
    inner += std::string(inner.empty() ? "" : " && ") + "o" + i + " >= kE" +
             i + " && o" + i + " + kB" + i + " <= a.n" + i + " - kE" + i;
  }
  out.line("// Iterations sc_loadLo <= j < sc_loadHi load rows of the domain "
           "only: they skip");
  out.line("// the load tests (a column outside the domain reads column 0, "
           "never used as a");
  out.line("// value). The fast iterations, sc_fastLo <= j < sc_fastHi in a "
           "block whose slab");
  out.line("// is inside the domain and away from its edge, also make every "
           "level's rows at");
  out.line("// least kE0 rows from the edge: they skip the boundary "
           "conditions.");
  if (!ghosts.empty() || !bands.empty())
    out.line("// Ghost and band axes do not count: their edge needs no "
             "boundary conditions.");
  out.line("const bool sc_inner = {};", inner.empty() ? "true" : inner);
  out.line("auto sc_ceil = [](long long p) {{ return p >= 0 ? (p + kV - 1) / "
           "kV : -(-p / kV); }};");
  out.line("const int sc_loadLo = sc_window(sc_ceil({}) - 1);",
           fromFirst(addr.rowLo(periodic0)));
  out.line("const int sc_loadHi = sc_window(sc_ceil({} - sc_first + 1) - "
           "2);",
           addr.rowHi(periodic0));
  out.line("const int sc_fastLo = sc_inner ? max(sc_loadLo, "
           "sc_window(sc_ceil(kE0 - sc_first + NT * kD))) : 0;");
  out.line("const int sc_fastHi = sc_inner ? min(sc_loadHi, "
           "sc_window(sc_ceil(a.n0 - kE0 - sc_first + kD + 1) - 1)) : 0;");
  out.line("// Element offsets along axis 0 of the next load's first row and "
           "of this");
  out.line("// iteration's first output row, stepped by kV rows an "
           "iteration.");
  out.line("long long sc_ld = {} * sc_stride;", addr.row("sc_first + kV"));
  out.line("long long sc_st = {} * sc_stride;", addr.row("sc_first - NT * kD"));
  out.line("const long long sc_step = kV * sc_stride;");
  out.line("// The next iteration's rows are in flight during this one.");
  out.line("Elem sc_next[kV];");
  out.line("#pragma unroll\nfor (int m = 0; m < kV; ++m)\n"
           "  sc_next[m] = sc_load(m);");
  // One turn of the rings an unrolled trip: the level registers' shifts
  // become renames instead of moves (docs/benchmarks.md has the
  // measurement), unless the plan expects the trip to spill.
  if (plan.unroll > 1)
    out.line("// One turn of the rings, kRing / kV iterations, an unrolled "
             "trip.");
  else
    out.line("// Not unrolled: an unrolled trip would hold more reads than "
             "the registers.");
  out.line("#pragma unroll {}", plan.unroll);
  {
    auto loop = out.scope("for (int j = 0; j <= sc_last; ++j)");
    // One iteration; `fast`: the fast iterations' copy (splitFast), whose
    // tests the compiler folds.
    auto iteration = [&](bool fast) {
      if (fast) {
        out.line("constexpr bool sc_fast = true, sc_loadFast = true;");
      } else {
        out.line("const bool sc_fast = {};",
                 plan.splitFast ? "false" : "j >= sc_fastLo && j < sc_fastHi");
        out.line("const bool sc_loadFast = j >= sc_loadLo && j < sc_loadHi;");
      }
      if (plan.groupRows && r0 > 0)
        out.line("const bool sc_fastNext = j + 1 >= sc_fastLo && j + 1 < "
                 "sc_fastHi;");
      out.line("Elem sc_in[kV];");
      out.line(
          "#pragma unroll\nfor (int m = 0; m < kV; ++m) {{\n"
          "  sc_in[m] = sc_next[m];\n"
          "  sc_next[m] = sc_loadFast ? {}sc_inCol[sc_ld + m * sc_stride]{} : "
          "sc_load((j + 1) * kV + m);\n}}",
          ghosts.empty() || elem != comp ? "" : "(sc_ghost ? sc_ghostValue : ",
          ghosts.empty() || elem != comp ? "" : ")");
      out.line("// The deepest level first: each reads the registers of the "
               "level below before");
      out.line("// that level pushes this iteration's rows.");
      for (int k = plan.fuse; k >= 1; --k)
        emitStreamLevel(k);
      if (plan.groupRows) {
        emitStreamPush(0, "sc_in", /*elems=*/false);
        emitGroupRingWrites(0, "j * kV");
      } else {
        out.line("#pragma unroll\nfor (int m = 0; m < kV; ++m)\n"
                 "  sc_ring[((j * kV + m) & (kRing - 1)) * kSlab + "
                 "threadIdx.x] = {};",
                 ringValue("sc_in[m]"));
        emitStreamPush(0, "sc_in", /*elems=*/false);
      }
    };
    if (plan.splitFast) {
      // The fast iterations in a copy of their own: no level tests the
      // edge, and the loads take no tests.
      {
        auto fast = out.scope("if (j >= sc_fastLo && j < sc_fastHi)");
        iteration(true);
      }
      auto slow = out.scope("else");
      iteration(false);
    } else {
      iteration(false);
    }
    out.line("sc_ld += sc_step;");
    out.line("sc_st += sc_step;");
    out.line("__syncthreads();");
  }
  out.dedent();
  out.line("}}");
  out.blank();
}
