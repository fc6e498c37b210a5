//===- StageEmitter.cpp - Stages, new values, point and boundary values ---===//
//
// The parts of a stencil's CUDA that the language's later features add
// (docs/language.md §4.8, §5, §6): stages and new-value reads, computed as
// written through their boundary conditions near the domain's edge (device
// functions stage_NAME and new_NAME) and, in the --emit-main driver, by a
// float64 reference and a tracked error bound that compute each stage and
// update over the whole domain in order; dirichlet values built from
// parameters (Args::bv); and the aliases of grids of other element types.
//
//===----------------------------------------------------------------------===//

#include "StencilEmitter.h"

#include <algorithm>
#include <memory>

using namespace stencilc;

void StencilEmitter::emitElemAliases() {
  for (size_t g = 0; g < s.grids.size(); ++g)
    if (s.grids[g].type != s.elemType)
      out.line("using Elem_{} = {};", s.grids[g].name,
               cppElemType(s.grids[g].type));
}

//===- Dirichlet values of parameters ------------------------------------===//

void StencilEmitter::planBoundaryValues() {
  auto plan = [&](const Field &f) {
    for (int a = 0; a < static_cast<int>(f.boundary.size()); ++a)
      for (int side = 0; side < 2; ++side) {
        const BoundarySide &b = f.boundary[a].side[side];
        if (b.kind != BoundaryKind::Dirichlet || b.node < 0)
          continue;
        // Both sides of one condition share the slot.
        if (side == 1 && f.boundary[a].uniform())
          bvSlots[{&f, 2 * a + 1}] = bvSlots.at({&f, 2 * a});
        else
          bvSlots[{&f, 2 * a + side}] = numBv++;
      }
  };
  for (const Grid &g : s.grids)
    plan(g);
  for (const Stage &st : s.stages)
    plan(st);
}

void StencilEmitter::emitHostBoundaryValues(const std::string &array) {
  if (numBv == 0)
    return;
  out.line("double {}[{}];", array, numBv);
  auto blk = out.scope("");
  for (const Param &p : s.params)
    out.line("[[maybe_unused]] const double p_{0} = stencilc::rt::param<{1}, "
             "double>(params.{0});",
             p.name, cppElemType(p.type));
  std::vector<int> roots;
  for (const auto &[key, slot] : bvSlots) {
    const BoundarySide &b =
        key.first->boundary[key.second / 2].side[key.second % 2];
    roots.push_back(b.node);
  }
  auto vName = [](int i) { return "bv" + std::to_string(i); };
  emitNodes(liveNodes(roots), /*forDevice=*/false, vName,
            [](const Node &) { return std::string("0"); });
  for (const auto &[key, slot] : bvSlots) {
    const BoundarySide &b =
        key.first->boundary[key.second / 2].side[key.second % 2];
    out.line("{}[{}] = {};", array, slot, vName(b.node));
  }
}

std::string StencilEmitter::dirichletText(const Field &f, int a, int side,
                                          bool asFloat, const std::string &bv) {
  const BoundarySide &b = f.boundary[a].side[side];
  if (b.node < 0)
    return literal(b.value, asFloat);
  return bv + "[" + std::to_string(bvSlots.at({&f, 2 * a + side})) + "]";
}

bool StencilEmitter::gridNeedsBv(int g) const {
  for (int key = 0; key < 2 * D; ++key)
    if (bvSlots.count({&s.grids[g], key}))
      return true;
  return false;
}

//===- Device: the edge's stages and new values --------------------------===//

std::string StencilEmitter::bufParams() const {
  std::string p;
  for (int g : updated)
    p += "const " + elemOf(g) + " *src_" + name(g) + ", const " + elemOf(g) +
         " *dst_" + name(g) + ", ";
  return p;
}

std::string StencilEmitter::bufArgs() const {
  std::string p;
  for (int g : updated)
    p += "src_" + name(g) + ", dst_" + name(g) + ", ";
  return p;
}

std::string StencilEmitter::writtenLeaf(const Node &n) {
  if (n.op != Op::StageRead && n.op != Op::NewRead)
    return coordText(n, [](int a) { return "sc_i" + std::to_string(a); });
  std::string fn = n.op == Op::StageRead ? "stage_" + s.stages[n.index].name
                                         : "new_" + s.grids[n.index].name;
  auto at = [&](const char *c) {
    return axes(
        [&](int a) { return plus(c + std::to_string(a), n.offset[a]); });
  };
  return fn + "(" + bufArgs() + at("l") + ", " + at("g") + ", a" +
         (usesStep ? ", sc_step" : "") + ")";
}

void StencilEmitter::emitFieldFunctions() {
  if (!s.hasStages())
    return;
  // Grids whose new value a stage or an update reads.
  std::vector<bool> newRead(s.grids.size(), false);
  std::vector<bool> live = s.graph.reachable(s.writtenRoots());
  for (size_t i = 0; i < live.size(); ++i)
    if (live[i] && s.graph[i].op == Op::NewRead)
      newRead[s.graph[i].index] = true;
  out.line("// Near the domain's edge an update is computed as written: a "
           "stage or a new\n// value it reads is computed at the point read, "
           "through that field's boundary\n// conditions (only the edge's "
           "points call these; the interior computes the\n// updates with "
           "their stages and new values inlined).");
  auto vName = [](int i) { return "v" + std::to_string(i); };
  for (const StepItem &item : s.order) {
    const Field *field;
    int root;
    std::string fn;
    const Grid *grid = nullptr;
    if (item.stage) {
      const Stage &st = s.stages[item.index];
      field = &st;
      root = st.root;
      fn = "stage_" + st.name;
    } else {
      const Update &u = s.updates[item.index];
      if (!newRead[u.grid])
        continue;
      grid = &s.grids[u.grid];
      field = grid;
      root = u.written;
      fn = "new_" + grid->name;
    }
    auto f = out.scope(
        "__device__ __forceinline__ Comp " + fn + "(" + bufParams() +
        axes([](int a) { return "int l" + std::to_string(a); }) + ", " +
        axes([](int a) { return "long long g" + std::to_string(a); }) +
        ", const Args &a" + (usesStep ? ", long long sc_step" : "") + ")");
    // The field's boundary conditions at the point: a dirichlet side
    // returns its value (in Comp, as a read of the field there would);
    // clamp and fixed sides move the point to the edge; a periodic axis's
    // point outside the domain is its image, which the box holds.
    {
      auto q = out.scope("");
      out.line("[[maybe_unused]] const long long {};", axes([](int a) {
                 return "q" + std::to_string(a) + " = g" + std::to_string(a);
               }));
      emitDirichletReturns(*field, "a.n", "Comp", "a.bv");
    }
    for (int a = 0; a < D; ++a) {
      const AxisBoundary &b = field->boundary[a];
      for (int side = 0; side < 2; ++side) {
        BoundaryKind k = b.side[side].kind;
        if (k != BoundaryKind::Clamp && k != BoundaryKind::Fixed)
          continue;
        if (side == 0)
          out.line("if (g{0} < 0) {{\n  l{0} -= static_cast<int>(g{0});\n  "
                   "g{0} = 0;\n}}",
                   a);
        else
          out.line("if (g{0} >= a.n{0}) {{\n  l{0} -= static_cast<int>(g{0} "
                   "- (a.n{0} - 1));\n  g{0} = a.n{0} - 1;\n}}",
                   a);
      }
    }
    if (grid) {
      // A new value in the band of a fixed boundary is the old one.
      std::string frozen = frozenCondition(s.findGrid(grid->name), "a.n");
      if (!frozen.empty())
        out.line(
            "if ({})\n  return stencilc::rt::Convert<Comp>::from(src_{}[{}]);",
            frozen, grid->name,
            linear([](int a) { return "l" + std::to_string(a); },
                   [](int a) { return "kB" + std::to_string(a); }));
    }
    if (usesStep)
      out.line("[[maybe_unused]] const Comp sc_t = "
               "static_cast<Comp>(sc_step);");
    if (usesCoords)
      for (int a = 0; a < D; ++a)
        out.line("[[maybe_unused]] const long long sc_i{0} = "
                 "stencilc::rt::wrap(g{0}, a.n{0});",
                 a);
    emitNodes(
        liveNodes({root}), /*forDevice=*/true, vName,
        [&](const Node &n) {
          // As sread_<true> / gread_: the edge's reads.
          std::string r = deviceRead(n);
          size_t at = r.find("<Edge>");
          if (at != std::string::npos)
            r.replace(at, 6, "<true>");
          return r;
        },
        "double", [&](const Node &n) { return writtenLeaf(n); });
    if (grid)
      // The GPU stores the new value in the grid's type.
      out.line("return stencilc::rt::Convert<Comp>::from("
               "stencilc::rt::Convert<{}>::from(v{}));",
               elemOf(s.findGrid(grid->name)), root);
    else
      out.line("return v{};", root);
  }
  out.blank();
}

//===- Host: the float64 reference and the bound -------------------------===//

void StencilEmitter::emitStagedReference() {
  // Host reads of a stage's values through its boundary conditions.
  for (const Stage &st : s.stages) {
    bool bv = false;
    for (const AxisBoundary &b : st.boundary)
      for (const BoundarySide &side : b.side)
        bv |= side.kind == BoundaryKind::Dirichlet && side.node >= 0;
    auto fn = out.scope(
        "static double hstage_" + st.name + "(const double *v, " +
        axes([](int a) { return "long long q" + std::to_string(a); }) + ", " +
        axes([](int a) { return "long long n" + std::to_string(a); }) +
        (bv ? ", const double *bv" : "") + ")");
    emitDirichletReturns(st, "n", "double", "bv");
    emitIndexMapping(st);
    out.line("return v[{}];",
             linear([](int a) { return "q" + std::to_string(a); },
                    [](int a) { return "n" + std::to_string(a); }));
  }
  auto fn = out.scope("static void referenceStep(const double *const *in, "
                      "double *const *out, const long long *n, "
                      "[[maybe_unused]] long long sc_step)");
  if (!s.params.empty())
    out.line("const Params params;");
  for (const Param &p : s.params)
    out.line("const double p_{0} = stencilc::rt::param<{1}, "
             "double>(params.{0});",
             p.name, cppElemType(p.type));
  emitHostBoundaryValues("sc_bv");
  if (usesStep)
    out.line("const long long sc_t = sc_step;");
  if (!s.stages.empty())
    out.line("const long long sc_points = {};",
             axes([](int a) { return "n[" + std::to_string(a) + "]"; }, " * "));
  for (const Stage &st : s.stages)
    out.line("std::vector<double> st_{}(sc_points);", st.name);
  // Each stage and update over the whole domain, in order.
  for (const StepItem &item : s.order) {
    int root =
        item.stage ? s.stages[item.index].root : s.updates[item.index].written;
    auto blk = out.scope("");
    auto loops = emitHostPointLoops();
    emitNodes(
        liveNodes({root}), /*forDevice=*/false,
        [](int i) { return "v" + std::to_string(i); },
        [&](const Node &n) { return hostRead(n, "in"); }, "double",
        [&](const Node &n) {
          if (n.op == Op::NewRead)
            return hostRead(n, "out");
          if (n.op != Op::StageRead)
            return coordText(
                n, [](int a) { return "g" + std::to_string(a); }, "double");
          const Stage &st = s.stages[n.index];
          bool bv = false;
          for (const AxisBoundary &b : st.boundary)
            for (const BoundarySide &side : b.side)
              bv |= side.kind == BoundaryKind::Dirichlet && side.node >= 0;
          return "hstage_" + st.name + "(st_" + st.name + ".data(), " +
                 axes([&](int a) {
                   return plus("g" + std::to_string(a), n.offset[a]);
                 }) +
                 ", " +
                 axes([](int a) { return "n[" + std::to_string(a) + "]"; }) +
                 (bv ? ", sc_bv" : "") + ")";
        });
    if (item.stage) {
      out.line("st_{}[sc_idx] = v{};", s.stages[item.index].name, root);
      continue;
    }
    const Update &u = s.updates[item.index];
    std::string frozen = frozenCondition(u.grid, "n[");
    if (frozen.empty())
      out.line("out[{}][sc_idx] = v{};", u.grid, root);
    else
      out.line("out[{0}][sc_idx] = ({1}) ? in[{0}][sc_idx] : v{2};", u.grid,
               frozen, root);
    while (!loops.empty())
      loops.pop_back();
  }
}

void StencilEmitter::emitStagedBound() {
  for (size_t g = 0; g < s.grids.size(); ++g)
    emitTrackedRead(s.grids[g], "tread_" + s.grids[g].name,
                    elemOf(static_cast<int>(g)));
  // A stage's values are of the compute type.
  for (const Stage &st : s.stages)
    emitTrackedRead(st, "tstage_" + st.name, "Comp");
  out.blank();
  out.line("/// One step of the bound E on |gpu - reference| of every updated "
           "grid (docs/benchmarks.md,\n/// \"Error bounds\"): each stage's "
           "values and bounds over the domain, then each\n/// update's, in "
           "order. Near the edge the GPU computes an update as written, "
           "reading\n/// the stages' and new values' bounds; inside, the "
           "inlined form, bounded as a\n/// stencil without stages.");
  auto fn = out.scope(
      "static void boundStep(const double *const *in, [[maybe_unused]] const "
      "double *const *out, const double *const *err, double *const *errOut, "
      "const long long *n, [[maybe_unused]] long long sc_step, "
      "[[maybe_unused]] const stencilc::rt::TensorCoreRounding &tc)");
  // The axes along which every grid and stage wraps.
  std::vector<bool> periodic(D, true);
  for (int a = 0; a < D; ++a) {
    for (const Grid &g : s.grids)
      periodic[a] = periodic[a] && g.boundary[a].periodic();
    for (const Stage &st : s.stages)
      periodic[a] = periodic[a] && st.boundary[a].periodic();
  }
  // Wrapping along every axis, an update with an inlined form is bounded
  // as that form at every point, which overwrites its bound as written:
  // that sweep is dead, and so are the stages' when no update needs them.
  // Leaving them out changes no bound, and saves most of a step's bound
  // on a periodic grid (hdiff: three stage sweeps and one update's).
  const bool wraps =
      std::find(periodic.begin(), periodic.end(), false) == periodic.end();
  bool stagesRead = !wraps;
  for (const Update &u : s.updates)
    stagesRead = stagesRead || u.written == u.root;
  if (!s.stages.empty() && stagesRead)
    out.line("const long long sc_points = {};",
             axes([](int a) { return "n[" + std::to_string(a) + "]"; }, " * "));
  for (const Stage &st : s.stages)
    if (stagesRead)
      out.line("std::vector<double> sv_{0}(sc_points), se_{0}(sc_points);",
               st.name);
  for (const StepItem &item : s.order) {
    if (item.stage) {
      if (stagesRead)
        emitBoundLoop({{s.stages[item.index].root, nullptr, -1, item.index}},
                      "");
      continue;
    }
    const Update &u = s.updates[item.index];
    if (!wraps || u.written == u.root)
      emitBoundLoop({{u.written, nullptr, u.grid, -1}}, "");
    if (u.written == u.root)
      continue;
    // Where every stage and new value it reads lies inside the domain (or
    // wraps), the update equals its inlined form, which the interior's
    // kernels compute: bounded as such (linear forms as linear).
    std::string inside;
    for (int a = 0; a < D; ++a) {
      if (periodic[a])
        continue;
      inside += fmt::format("{0}g{1} >= {2} && g{1} < n[{1}] - {3}",
                            inside.empty() ? "" : " && ", a, u.spanLo[a],
                            u.spanHi[a]);
    }
    emitBoundLoop({{u.root, u.linear ? &*u.linear : nullptr, u.grid, -1}},
                  inside.empty() ? "true" : inside);
  }
}
