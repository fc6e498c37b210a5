//===- BoxKernelEmitter.cpp - The CUDA-core box kernel ---------------------===//
//
// The box kernel of the CUDA-core strategy (CudaEmitter.cpp): a block loads
// its tile with a halo of fuse * radius points per side into shared memory,
// advances it `nt` steps in strips of registers, each step computing a
// region that shrinks by one radius, and stores the interior.
//
//===----------------------------------------------------------------------===//

#include "StencilEmitter.h"
#include "stencilc/CodeGen/DistributedEmitter.h"
#include "stencilc/IR/LinearForm.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

using namespace stencilc;

void StencilEmitter::emitComputeStrip() {
  const int V = plan.strip, C = plan.stripCols, L = D - 1;
  if (C > 1) {
    out.line("// kV rows of kC adjacent columns of an interior tile: each read "
             "column is loaded");
    out.line("// once into registers and shared by the points of the strip, "
             "and neighbouring");
    out.line("// columns load together as aligned pairs "
             "(stencilc::rt::loadPair), which the");
    out.line("// buffers' layout guarantees in every step.");
  } else {
    out.line("// kV consecutive points along axis 0 of an interior tile: each "
             "read column is");
    out.line("// loaded once into registers and shared by the points of the "
             "strip.");
  }
  std::string params;
  for (int g : updated)
    params += "const " + elemOf(g) + " *src_" + name(g) + ", " + elemOf(g) +
              " *dst_" + name(g) + ", ";
  auto fn = out.scope(
      "__device__ __forceinline__ void computeStrip(" + params +
      axes([](int a) { return "int l" + std::to_string(a); }) + ", " +
      axes([](int a) { return "long long g" + std::to_string(a); }) +
      ", const Args &a" + (usesStep ? ", long long sc_step" : "") + ")");
  if (usesStep)
    out.line("const Comp sc_t = static_cast<Comp>(sc_step);");
  // Point (v, j) of the strip is row v, column j along the last axis; a
  // row's store index is that of its first point.
  auto storeIndex = [&](int v) {
    return linear(
        [&](int a) {
          if (a > 0)
            return "l" + std::to_string(a);
          return v == 0 ? std::string("l0") : "(" + plus("l0", v) + ")";
        },
        [](int a) { return "kB" + std::to_string(a); });
  };
  auto roRead = [&](const Node &n, int v, int j) {
    return this->roRead(s.grids[n.index], axes([&](int a) {
                          return plus("g" + std::to_string(a),
                                      n.offset[a] + (a == 0 ? v : 0) +
                                          (a == L ? j : 0));
                        }));
  };
  // Columns: for each updated grid and offset along axes 1.. (the last
  // counted from the strip's first column), the rows read, relative to the
  // strip's first row.
  using Key = std::pair<int, Offset>;
  std::map<Key, std::set<int>> columns;
  // The column of a read at `off` by point (v, j); `row` gets its row.
  auto columnOf = [&](int g, Offset off, int v, int j, int &row) {
    row = v + off[0];
    off[0] = 0;
    off[L] += j;
    return Key{g, off};
  };
  auto addRead = [&](int g, const Offset &off) {
    for (int v = 0; v < V; ++v)
      for (int j = 0; j < C; ++j) {
        int row;
        Key k = columnOf(g, off, v, j, row);
        columns[k].insert(row);
      }
  };
  // Columns load in groups: alone, or with strips of two columns in pairs
  // (d, d + 1) with d + kR<L> even, the pairs the buffers keep aligned
  // (emitKernel). Every pair lies within the strip's reads, columns -kR<L>
  // .. kC - 1 + kR<L>, so the column a read does not need is still in the
  // box.
  auto groupOf = [&](Key k) {
    if (C > 1) {
      int d = k.second[L];
      k.second[L] = d - ((d + plan.radius[L]) % 2 + 2) % 2;
    }
    return k;
  };
  // Each group's lowest row, which the names of its values count from.
  std::map<Key, int> groupLo;
  auto windowName = [&](const Key &k, const std::string &prefix = "w_") {
    std::string n = prefix + name(k.first);
    for (int a = 1; a < D; ++a)
      n += "_" + std::string(k.second[a] < 0 ? "m" : "") +
           std::to_string(std::abs(k.second[a]));
    return n + "_";
  };
  // The value of a read at `off` by point (v, j).
  auto value = [&](int g, const Offset &off, int v, int j) {
    int row;
    Key k = columnOf(g, off, v, j, row);
    return windowName(k) + std::to_string(row - groupLo.at(groupOf(k)));
  };
  // Loads a group's columns into registers. Strips are always full and
  // inside the region (the last one of a column overlaps its neighbour), so
  // loads need no clamp and the row offset folds into the load's address.
  auto emitGroup = [&](const Key &gk,
                       const std::function<void(int)> &afterRow = nullptr) {
    int lo = groupLo.at(gk), hi = lo;
    for (int j = 0; j < (C > 1 ? 2 : 1); ++j) {
      Key k = gk;
      k.second[L] += j;
      if (auto it = columns.find(k); it != columns.end())
        hi = std::max(hi, *it->second.rbegin());
    }
    for (int row = lo; row <= hi; ++row) {
      std::string index = linear(
          [&](int a) {
            return a == 0 ? plus("l0", row)
                          : plus("l" + std::to_string(a), gk.second[a]);
          },
          [](int a) { return "kB" + std::to_string(a); });
      if (C == 1) {
        if (columns.at(gk).count(row))
          out.line("const Comp {}{} = "
                   "stencilc::rt::Convert<Comp>::from(src_{}[{}]);",
                   windowName(gk), row - lo, name(gk.first), index);
      } else {
        std::string halves[2] = {"x", "y"}, pair;
        for (int j = 0; j < 2; ++j) {
          Key k = gk;
          k.second[L] += j;
          auto it = columns.find(k);
          if (it == columns.end() || !it->second.count(row))
            continue;
          if (pair.empty()) {
            pair = windowName(gk, "pair_") + std::to_string(row - lo);
            out.line("const stencilc::rt::Pair<{}> {} = "
                     "stencilc::rt::loadPair(&src_{}[{}]);",
                     elemOf(gk.first), pair, name(gk.first), index);
          }
          out.line("const Comp {}{} = "
                   "stencilc::rt::Convert<Comp>::from({}.{});",
                   windowName(k), row - lo, pair, halves[j]);
        }
      }
      if (afterRow)
        afterRow(row);
    }
  };
  std::vector<Key> groups;
  auto collectGroups = [&]() {
    for (const auto &[k, rows] : columns) {
      auto [it, inserted] = groupLo.try_emplace(groupOf(k), *rows.begin());
      it->second = std::min(it->second, *rows.begin());
    }
    for (const auto &[gk, lo] : groupLo)
      groups.push_back(gk);
  };
  auto accName = [&](int g, int v, int j) {
    return "acc_" + name(g) + "_" + std::to_string(v) +
           (C > 1 ? "_" + std::to_string(j) : "");
  };
  // Stores row v of the strip: its kC values, one access for a pair.
  auto emitStore = [&](int g, int v,
                       const std::function<std::string(int)> &valueOf) {
    auto conv = [&](int j) {
      return "stencilc::rt::Convert<" + elemOf(g) + ">::from(" + valueOf(j) +
             ")";
    };
    if (C == 1)
      out.line("dst_{}[{}] = {};", name(g), storeIndex(v), conv(0));
    else
      out.line("stencilc::rt::storePair(&dst_{}[{}], {}, {});", name(g),
               storeIndex(v), conv(0), conv(1));
  };

  if (s.isLinear()) {
    // Linear: accumulate group by group of columns, and in a group row by
    // row right after each row's load, so that few loaded values are live
    // at once (a group of two columns holds twice the rows).
    std::vector<int> constantRoots;
    for (const Update &u : s.updates) {
      for (const Tap &t : u.linear->taps)
        if (s.grids[t.grid].updated)
          addRead(t.grid, t.offset);
      if (u.linear->constant >= 0)
        constantRoots.push_back(u.linear->constant);
    }
    collectGroups();
    auto cName = [](int i) { return "c" + std::to_string(i); };
    emitNodes(liveNodes(constantRoots), /*forDevice=*/true, cName,
              [](const Node &) { return std::string("0"); });
    // One weight per tap, rounded keeping the sum (planWeights).
    std::map<const Tap *, std::string> wName;
    for (size_t ui = 0; ui < s.updates.size(); ++ui)
      for (size_t k = 0; k < s.updates[ui].linear->taps.size(); ++k) {
        const TapWeight &w = weights[ui][k];
        std::string n = "w" + std::to_string(ui) + "_" + std::to_string(k);
        wName[&s.updates[ui].linear->taps[k]] = n;
        out.line("const Comp {} = {};", n, weightText(w, compFloat));
      }
    for (const Update &u : s.updates)
      for (int v = 0; v < V; ++v)
        for (int j = 0; j < C; ++j)
          out.line("Comp {} = {};", accName(u.grid, v, j),
                   u.linear->constant >= 0
                       ? cName(u.linear->constant)
                       : std::string(compFloat ? "0.0f" : "0.0"));
    for (const Key &gk : groups) {
      auto blk = out.scope("");
      emitGroup(gk, [&](int row) {
        for (int col = 0; col < (C > 1 ? 2 : 1); ++col)
          for (const Update &u : s.updates)
            for (int j = 0; j < C; ++j)
              for (const Tap &t : u.linear->taps) {
                Offset inner = t.offset;
                inner[0] = 0;
                inner[L] += j;
                Key k = gk;
                k.second[L] += col;
                int v = row - t.offset[0];
                if (t.grid != gk.first || inner != k.second || v < 0 || v >= V)
                  continue;
                out.line("{} += {} * {};", accName(u.grid, v, j),
                         wName[&t], value(t.grid, t.offset, v, j));
              }
      });
    }
    // Taps on read-only grids come from global memory.
    for (const Update &u : s.updates)
      for (const Tap &t : u.linear->taps) {
        if (s.grids[t.grid].updated)
          continue;
        Node n;
        n.op = Op::Read;
        n.index = t.grid;
        n.offset = t.offset;
        for (int v = 0; v < V; ++v)
          for (int j = 0; j < C; ++j)
            out.line("{} += {} * {};", accName(u.grid, v, j), wName[&t],
                     roRead(n, v, j));
      }
    for (const Update &u : s.updates)
      for (int v = 0; v < V; ++v)
        emitStore(u.grid, v, [&](int j) { return accName(u.grid, v, j); });
    return;
  }

  // General expressions: load every window, then evaluate point by point.
  std::vector<int> live = liveNodes(s.roots());
  for (int i : live)
    if (s.graph[i].op == Op::Read && s.grids[s.graph[i].index].updated)
      addRead(s.graph[i].index, s.graph[i].offset);
  collectGroups();
  for (const Key &gk : groups)
    emitGroup(gk);
  std::vector<int> gridFree, perPoint;
  for (int i : live)
    (s.graph.isGridFree(i) ? gridFree : perPoint).push_back(i);
  auto vName = [](int i) { return "v" + std::to_string(i); };
  emitNodes(gridFree, /*forDevice=*/true, vName,
            [](const Node &) { return std::string("0"); });
  // Node i at point (v, j).
  auto pointName = [&](int i, int v, int j) {
    if (s.graph.isGridFree(i))
      return vName(i);
    return "v" + std::to_string(i) + "_" + std::to_string(v) +
           (C > 1 ? "_" + std::to_string(j) : "");
  };
  for (int v = 0; v < V; ++v) {
    auto point = out.scope("");
    for (int j = 0; j < C; ++j)
      emitNodes(
          perPoint, /*forDevice=*/true,
          [&](int i) { return pointName(i, v, j); },
          [&](const Node &n) {
            if (!s.grids[n.index].updated)
              return roRead(n, v, j);
            return value(n.index, n.offset, v, j);
          },
          "double",
          [&](const Node &n) {
            // Strips lie inside the domain: coordinates need no wrap.
            return coordText(n, [&](int a) {
              return plus("g" + std::to_string(a),
                          (a == 0 ? v : 0) + (a == L ? j : 0));
            });
          });
    for (const Update &u : s.updates)
      emitStore(u.grid, v, [&](int j) { return pointName(u.root, v, j); });
  }
}

void StencilEmitter::emitKernel() {
  // Every pass but the last fuses kFuse steps: with the count a constant,
  // each step's region, its strips and their division into rows and
  // columns are constants too (box-2d49p f32 t = 2: 300.6 -> 305.2
  // GStencils/s, H200, docs/benchmarks.md, session 9).
  out.line("// Full: a pass of kFuse steps, the count a constant; the last "
           "pass may fuse fewer.");
  out.line("template <bool Full>");
  out.line("__global__ void __launch_bounds__(kThreads) {}_kernel(const Args "
           "a) {{",
           s.name);
  out.indent();
  out.line("STENCILC_DYNAMIC_SHARED(sc_smem);");
  out.line("const int sc_nt = Full ? kFuse : a.nt;");
  std::string shift;
  if (plan.stripCols > 1) {
    // Step s computes from column lo = (kFuse - nt + s) * r on (r the
    // radius along the last axis) and reads from lo - r on, in buffers s & 1
    // and (s - 1) & 1. Starting buffer b at an element of parity
    // (kFuse - nt + b) * r makes both columns even in every step, so the
    // pairs of a strip's columns are aligned where the emitter pairs them.
    int last = D - 1;
    out.line("// Buffer b starts at an element of parity (kFuse - nt + b) * "
             "kR{0}: every step's\n// region then starts at an even column "
             "of its output buffer, and its reads\n// kR{0} columns before, "
             "at an even column of its input buffer.",
             last);
    out.line("const int sc_shift = (kFuse - sc_nt) * kR{} & 1;", last);
    shift = "sc_shift + ";
  }
  for (size_t k = 0; k < updated.size(); ++k) {
    int g = updated[k];
    if (mixedUpdated())
      out.line("{0} *const s_{1} = reinterpret_cast<{0} *>(sc_smem + "
               "kOff_{1}){2};",
               elemOf(g), name(g), shift.empty() ? "" : " + sc_shift");
    else
      out.line("Elem *const s_{} = reinterpret_cast<Elem *>(sc_smem) + {}{} "
               "* kBufStride;",
               name(g), shift, 2 * k);
  }
  if (tcPlan) {
    // Tiles the tensor-core kernel covers whole are its alone: the blocks
    // are the other tiles only, the frame around that hole.
    out.line("// blockIdx.x numbers the tiles outside the hole, the last "
             "axis fastest.");
    auto list = [&](const std::string &f) {
      return "{" + axes([&](int a) { return f + std::to_string(a); }) + "}";
    };
    out.line("const long long sc_tiles[{}] = {{{}}};", D, axes([](int a) {
               std::string i = std::to_string(a);
               return "(a.n" + i + " + kT" + i + " - 1) / kT" + i;
             }));
    out.line("const long long sc_lo[{0}] = {1}, sc_hi[{0}] = {2};", D,
             list("a.holeLo"), list("a.holeHi"));
    out.line("long long sc_t[{}];", D);
    out.line("stencilc::rt::frameTile(blockIdx.x, {}, sc_tiles, sc_lo, sc_hi, "
             "sc_t);",
             D);
    for (int a = 0; a < D; ++a)
      out.line("const long long o{0} = sc_t[{0}] * kT{0} - kH{0};", a);
  } else {
    out.line("// blockIdx.x numbers the tiles, the last axis fastest.");
    emitTileOrigins();
    out.line("const long long o0 = sc_rest * kT0 - kH0;");
  }
  out.blank();
  emitBoxLoad();
  out.line("__syncthreads();");
  out.line("const bool sc_edge = {};", axes([](int a) {
             std::string i = std::to_string(a);
             return "o" + i + " < kE" + i + " || o" + i + " + kB" + i +
                    " > a.n" + i + " - kE" + i;
           }, " || "));
  out.blank();
  out.line("// Step s is valid on a region that shrinks by one radius per "
           "step.");
  {
    auto steps = out.scope("for (int sc_s = 1; sc_s <= sc_nt; ++sc_s)");
    out.line("const int sc_src = (sc_s - 1) & 1;");
    for (int g : updated) {
      out.line("const {1} *const src_{0} = s_{0} + sc_src * kBufStride;",
               name(g), elemOf(g));
      out.line("{1} *const dst_{0} = s_{0} + (sc_src ^ 1) * kBufStride;",
               name(g), elemOf(g));
    }
    for (int a = 0; a < D; ++a)
      out.line("const int m{0} = (sc_nt - sc_s) * kR{0}, lo{0} = kH{0} - m{0}, "
               "w{0} = kT{0} + 2 * m{0};",
               a);
    std::string bufs;
    for (int g : updated)
      bufs += "src_" + name(g) + ", dst_" + name(g) + ", ";
    std::string coords =
        axes([](int a) { return "l" + std::to_string(a); }) + ", " +
        axes([](int a) { return "g" + std::to_string(a); });
    // The step index of step sc_s, for stencils that read t.
    const std::string args = usesStep ? ", a, a.t0 + sc_s - 1" : ", a";
    // Work items of the interior: strips times the points of the other
    // axes, the last one counted in strips of kC columns.
    const int L = D - 1, C = plan.stripCols;
    auto extent = [&](int a) {
      return a == L && C > 1 ? std::string("sc_cols") : "w" + std::to_string(a);
    };
    if (C > 1)
      out.line("const int sc_cols = w{} / kC; // strips across the region's "
               "width",
               L);
    std::string inner = "1";
    for (int a = 1; a < D; ++a)
      inner = (a == 1 ? "" : inner + " * ") + extent(a);
    // One thread per `count` work items over the region; the item's tile
    // coordinates, the slowest axis scaled by `rowsPerItem`.
    // Work item i's tile coordinates l and global ones g, the slowest axis
    // scaled by `rows`.
    auto decode = [&](const std::string &rows) {
      out.line("int r = i;");
      for (int a = D - 1; a >= 1; --a)
        if (a == L && C > 1 && !rows.empty())
          out.line("const int l{0} = lo{0} + r % {1} * kC;\nr /= {1};", a,
                   extent(a));
        else
          out.line("const int l{0} = lo{0} + r % w{0};\nr /= w{0};", a);
      if (rows.empty())
        out.line("const int l0 = lo0 + r;");
      else
        // The last strip of a column overlaps the one before it instead of
        // running past the region: every strip is full and in bounds, and
        // the overlapped points are written twice (at the domain's edge the
        // second round's write, after a barrier, is the last).
        out.line("const int l0 = min(lo0 + r{}, lo0 + w0 - kV);", rows);
      out.line("const long long {};", axes([](int a) {
                 std::string i = std::to_string(a);
                 return "g" + i + " = o" + i + " + l" + i;
               }));
    };
    auto workLoop = [&](const std::string &count, const std::string &rows,
                        const std::string &call) {
      out.line("const int sc_count = {};", count);
      auto loop =
          out.scope("for (int i = threadIdx.x; i < sc_count; i += kThreads)");
      decode(rows);
      out.line("{}", call);
    };
    std::string points =
        axes([](int a) { return "w" + std::to_string(a); }, " * ");
    {
      auto edge = out.scope("if (sc_edge)");
      if (plan.strip == 1) {
        out.line("// Near the domain's edge: point by point, through the "
                 "boundary conditions.");
        workLoop(points, "",
                 "computeStep<true>(" + bufs + coords + args + ");");
      } else {
        // A strip whose points and reads all lie kE or more inside the
        // domain computes as in the interior; only the others pay for the
        // boundary conditions, point by point.
        std::string inside = "g0 >= kE0 && g0 + kV <= a.n0 - kE0";
        for (int a = 1; a < D; ++a)
          inside +=
              a == L && C > 1
                  ? fmt::format(" && g{0} >= kE{0} && g{0} + kC <= a.n{0} - "
                                "kE{0}",
                                a)
                  : fmt::format(" && g{0} >= kE{0} && g{0} < a.n{0} - kE{0}",
                                a);
        // The coordinates of point (sc_v, sc_c) of the strip.
        auto point = [&](const std::string &c) {
          return axes([&](int a) {
            return c + std::to_string(a) + (a == 0 ? " + sc_v" : "") +
                   (a == L && C > 1 ? " + sc_c" : "");
          });
        };
        std::string shifted = point("l") + ", " + point("g");
        // Two rounds. The strips inside as in the interior; then the
        // columns of the other strips, one a thread, so that a warp holding
        // one of them no longer runs its kC columns alone while the rest of
        // the warp waits. One point a thread would pack them tighter, but
        // nvcc then holds every read of the point at once (100 registers
        // instead of 40 for box-2d49p). The barrier between the rounds
        // orders the two writes of points where the last strip of a column
        // overlaps the one before it.
        out.line("// Near the domain's edge: strips kE or more inside the "
                 "domain as in the interior;\n// then the columns of the "
                 "others, one a thread, through the boundary conditions.");
        workLoop("(w0 + kV - 1) / kV * " + inner, " * kV",
                 "if (" + inside + ")\n  computeStrip(" + bufs + coords + args +
                     ");");
        out.line("__syncthreads();");
        auto loop = out.scope(
            fmt::format("for (int sc_p = threadIdx.x; sc_p < sc_count{}; "
                        "sc_p += kThreads)",
                        C > 1 ? " * kC" : ""));
        out.write(C > 1 ? "const int i = sc_p / kC, sc_c = sc_p % kC;"
                        : "const int i = sc_p;");
        decode(" * kV");
        out.line("if ({})\n  continue;", inside);
        out.line("for (int sc_v = 0; sc_v < kV; ++sc_v)\n  "
                 "computeStep<true>({}{}{});",
                 bufs, shifted, args);
      }
    }
    {
      auto interior = out.scope("else");
      if (plan.strip == 1) {
        workLoop(points, "",
                 "computeStep<false>(" + bufs + coords + args + ");");
      } else {
        if (C > 1)
          out.line("// Inside: strips of kV x kC points, consecutive threads "
                   "on consecutive strips\n// along axis {}.",
                   L);
        else
          out.line("// Inside: strips of kV points along axis 0, consecutive "
                   "threads on consecutive columns.");
        workLoop("(w0 + kV - 1) / kV * " + inner, " * kV",
                 "computeStrip(" + bufs + coords + args + ");");
      }
    }
    out.line("__syncthreads();");
  }
  out.blank();
  emitTileStore();
  out.dedent();
  out.line("}}");
  out.blank();
}

void StencilEmitter::emitBoxLoad() {
  const int L = D - 1;
  const bool vec = plan.vec > 1;
  out.line("// Load the tile and its halo. Periodic axes wrap here; points "
           "outside the");
  out.line("// domain along other axes are never read as values.");
  if (vec) {
    out.line("// Where every grid's rows are 16-byte aligned, the box moves "
             "in chunks of kVec\n// elements along axis {0}: the chunks start "
             "at box column kLoad{0} <= 0, whose\n// global column is a "
             "multiple of kVec, as every tile origin o{0} + kH{0} is; their "
             "parts\n// outside the box are dropped, and chunks not wholly "
             "inside the domain go\n// element by element.",
             L);
    out.line("constexpr int kLoad{0} = -((kVec - kH{0} % kVec) % kVec);", L);
    out.line("constexpr int kChunks = (kB{0} - kLoad{0} + kVec - 1) / kVec; "
             "// per row of the box",
             L);
    std::string aligned = "a.n" + std::to_string(L) + " % kVec == 0";
    if (addr.distributed())
      aligned += " && a.v.grain % kVec == 0";
    for (int g : updated)
      aligned += fmt::format(" && stencilc::rt::chunkAligned(a.in_{0}) && "
                             "stencilc::rt::chunkAligned(a.out_{0})",
                             name(g));
    out.line("const bool sc_vec = {};", aligned);
  }
  // Declares `q`, the global coordinate along axis a of grid `grid` at
  // box coordinate `l`.
  auto periodic = [](const Grid &grid, int a) {
    return grid.boundary[a].periodic();
  };
  auto coord = [&](const Grid &grid, int a, const std::string &q,
                   const std::string &l) {
    out.line(
        "const long long {} = {};", q,
        addr.coord(a, periodic(grid, a), "o" + std::to_string(a) + " + " + l));
  };
  auto inDomain = [&](const Grid &grid, int from, int to) {
    std::string r;
    for (int a = from; a < to; ++a)
      r += (r.empty() ? "" : " && ") +
           addr.holds(a, periodic(grid, a), "q" + std::to_string(a));
    return r;
  };
  auto gidx = linear([](int a) { return "q" + std::to_string(a); },
                     [&](int a) { return addr.extent(a); });
  auto zero = [&](const Grid &grid) {
    return "stencilc::rt::Convert<" + elemOf(s.findGrid(grid.name)) +
           ">::from(0.0f)";
  };
  // The element loop of the box, one element per work item.
  auto elementLoop = [&]() {
    auto loop = out.scope(
        "for (int i = threadIdx.x; i < kBoxElems; i += kThreads)");
    out.line("int r = i;");
    for (int a = D - 1; a >= 1; --a)
      out.line("const int l{0} = r % kB{0};\nr /= kB{0};", a);
    out.line("const int l0 = r;");
    for (int g : updated) {
      const Grid &grid = s.grids[g];
      auto blk = out.scope("");
      for (int a = 0; a < D; ++a)
        coord(grid, a, "q" + std::to_string(a), "l" + std::to_string(a));
      out.line("const bool in = {};", inDomain(grid, 0, D));
      out.line("s_{}[i] = in ? a.in_{}[{}] : {};", grid.name, grid.name, gidx,
               zero(grid));
    }
  };
  if (!vec) {
    elementLoop();
    return;
  }
  {
    auto chunked = out.scope("if (sc_vec)");
    out.line("// kBatch chunks per thread are loaded before any is stored, "
             "so that their\n// loads are in flight together.");
    // One chunk at a time exposed the loads' latency: f64, at two blocks
    // per SM, lost 4-12% against element loads (H200, session 8). Two
    // keep the registers of the strips (40 for box-2d49p f32); four took
    // box-2d49p f32 to 71.
    out.line("constexpr int kBatch = 2;");
    out.line("constexpr int kBoxChunks = kBoxElems / kB{} * kChunks;", L);
    auto batches = out.scope("for (int i0 = threadIdx.x; i0 < kBoxChunks; "
                             "i0 += kBatch * kThreads)");
    for (int g : updated)
      out.line("stencilc::rt::Chunk<{}> v_{}[kBatch];", elemOf(g), name(g));
    std::string l = "l" + std::to_string(L);
    // Declares the box coordinates l<a> of chunk i.
    auto chunkCoords = [&]() {
      if (L == 0) {
        out.line("const int l0 = kLoad0 + i * kVec;");
        return;
      }
      out.line("int r = i;");
      out.line("const int l{0} = kLoad{0} + r % kChunks * kVec;\nr /= "
               "kChunks;",
               L);
      for (int a = L - 1; a >= 1; --a)
        out.line("const int l{0} = r % kB{0};\nr /= kB{0};", a);
      out.line("const int l0 = r;");
    };
    // Whether chunk i lies wholly in grid g's rows and columns.
    auto whole = [&](const Grid &grid) {
      std::string rows = inDomain(grid, 0, L);
      return (rows.empty() ? "" : rows + " && ") +
             addr.holds(L, periodic(grid, L), "q" + std::to_string(L), "kVec");
    };
    // Declares grid g's global coordinates q<a> of chunk i.
    auto gridCoords = [&](const Grid &grid) {
      for (int a = 0; a < L; ++a)
        coord(grid, a, "q" + std::to_string(a), "l" + std::to_string(a));
      out.line("const long long q{} = {};", L,
               addr.shifted(L, "o" + std::to_string(L) + " + " + l));
    };
    // Opens the loop over the batch's chunks k, each chunk i's box
    // coordinates declared; `last` ends it at the box's last chunk.
    auto batchLoop = [&](bool last) {
      out.line("#pragma unroll");
      Emitter::Scope loop = out.scope("for (int k = 0; k < kBatch; ++k)");
      out.line("const int i = i0 + k * kThreads;");
      if (last)
        out.line("if (i >= kBoxChunks)\n  break;");
      chunkCoords();
      return loop;
    };
    {
      auto loads = batchLoop(false);
      for (int g : updated) {
        const Grid &grid = s.grids[g];
        auto blk = out.scope("");
        gridCoords(grid);
        out.line("if (i < kBoxChunks && {})\n  v_{}[k] = "
                 "stencilc::rt::loadChunk(&a.in_{}[{}]);",
                 whole(grid), grid.name, grid.name, gidx);
      }
    }
    std::string inBox = fmt::format("{0} + e >= 0 && {0} + e < kB{1}", l, L);
    std::string sidx = linear(
        [&](int a) { return a == L ? l + " + e" : "l" + std::to_string(a); },
        [](int a) { return "kB" + std::to_string(a); });
    auto stores = batchLoop(true);
    for (int g : updated) {
      const Grid &grid = s.grids[g];
      auto blk = out.scope("");
      gridCoords(grid);
      {
        auto fast = out.scope("if (" + whole(grid) + ")");
        out.line("#pragma unroll");
        out.line("for (int e = 0; e < kVec; ++e)");
        out.line("  if ({})\n    s_{}[{}] = v_{}[k].v[e];", inBox, grid.name,
                 sidx, grid.name);
      }
      // Chunks not wholly inside the domain, element by element.
      auto slow = out.scope("else");
      out.line("#pragma unroll");
      auto each = out.scope("for (int e = 0; e < kVec; ++e)");
      auto inside = out.scope("if (" + inBox + ")");
      coord(grid, L, "qe", l + " + e");
      std::string rows = inDomain(grid, 0, L);
      std::string ein = (rows.empty() ? "" : rows + " && ") +
                        addr.holds(L, periodic(grid, L), "qe");
      std::string eidx = linear(
          [&](int a) {
            return a == L ? std::string("qe") : "q" + std::to_string(a);
          },
          [&](int a) { return addr.extent(a); });
      out.line("s_{0}[{1}] = {2} ? a.in_{0}[{3}] : {4};", grid.name, sidx, ein,
               eidx, zero(grid));
    }
  }
  auto fallback = out.scope("else");
  elementLoop();
}

void StencilEmitter::emitTileStore() {
  const int L = D - 1;
  out.line("// Write the tile's interior.");
  out.line("const int sc_res = sc_nt & 1;");
  // One loop over the tile in units of `w` elements along the last axis.
  auto storeLoop = [&](int w) {
    std::string ext = w > 1 ? "(kT" + std::to_string(L) + " / kVec)"
                            : "kT" + std::to_string(L);
    auto loop = out.scope(
        "for (int i = threadIdx.x; i < " + axes([&](int a) {
          return a == L ? ext : "kT" + std::to_string(a);
        }, " * ") + "; i += kThreads)");
    out.line("int r = i;");
    for (int a = D - 1; a >= 1; --a)
      out.line("const int l{0} = kH{0} + r % {1}{2};\nr /= {1};", a,
               a == L ? ext : "kT" + std::to_string(a),
               a == L && w > 1 ? " * kVec" : "");
    out.line("const int l0 = kH0 + r{};", L == 0 && w > 1 ? " * kVec" : "");
    out.line("const long long {};", axes([](int a) {
               std::string i = std::to_string(a);
               return "g" + i + " = o" + i + " + l" + i;
             }));
    auto inside = out.scope(
        "if (" +
        axes([&](int a) { return addr.stores(a, "g" + std::to_string(a)); },
             " && ") +
        ")");
    out.line("const int sc_idx = {};",
             linear([](int a) { return "l" + std::to_string(a); },
                    [](int a) { return "kB" + std::to_string(a); }));
    out.line(
        "const long long sc_gidx = {};",
        linear([&](int a) { return addr.shifted(a, "g" + std::to_string(a)); },
               [&](int a) { return addr.extent(a); }));
    for (int g : updated) {
      if (w == 1) {
        out.line("a.out_{0}[sc_gidx] = s_{0}[sc_res * kBufStride + sc_idx];",
                 name(g));
        continue;
      }
      auto blk = out.scope("");
      out.line("stencilc::rt::Chunk<{}> v;", elemOf(g));
      out.line("#pragma unroll");
      out.line("for (int e = 0; e < kVec; ++e)");
      out.line("  v.v[e] = s_{}[sc_res * kBufStride + sc_idx + e];", name(g));
      out.line("stencilc::rt::storeChunk(&a.out_{}[sc_gidx], v);", name(g));
    }
  };
  if (plan.vec == 1) {
    storeLoop(1);
    return;
  }
  {
    out.line("// In chunks where the rows are aligned: n{0} and the chunks' "
             "columns are\n// multiples of kVec, so a chunk lies wholly "
             "inside the domain or wholly outside.",
             L);
    auto chunked = out.scope("if (sc_vec)");
    storeLoop(plan.vec);
  }
  auto fallback = out.scope("else");
  storeLoop(1);
}
