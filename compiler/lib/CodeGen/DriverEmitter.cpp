//===- DriverEmitter.cpp - The --emit-main problem of one stencil ---------===//
//
// What driver.cuh's driverMain<Problem>() needs of a stencil, printed from
// the same IR as its kernels: its grids and their element types, its entry
// point, a float64 host reference of one step and the step of the error
// bound E of --check (docs/benchmarks.md, "Error bounds"). The tensor
// cores' rounding constants of the bound are emitBoundConstants's
// (CudaEmitter.cpp); stencils with stages or new values get their
// reference and bound from StageEmitter.cpp.
//
//===----------------------------------------------------------------------===//

#include "StencilEmitter.h"
#include "stencilc/CodeGen/DistributedEmitter.h"

#include "stencilc/IR/LinearForm.h"

#include <memory>

using namespace stencilc;

void StencilEmitter::emitDriverProblem() {
  auto ns = out.scope("namespace " + s.name + "::driver",
                      "} // namespace " + s.name + "::driver");
  auto st = out.scope("struct Problem", "};");
  out.line("using Elem = {};", elem);
  emitElemAliases();
  out.line("static constexpr const char *kName = \"{}\";", s.name);
  out.line("static constexpr const char *kTypeName = \"{}\";",
           s.mixedTypes() ? "mixed" : elemTypeName(s.elemType).str());
  out.line("static constexpr int kDims = {};", D);
  out.line("static constexpr int kNumGrids = {};", s.grids.size());
  std::string flags;
  for (size_t g = 0; g < s.grids.size(); ++g)
    flags +=
        std::string(g ? ", " : "") + (s.grids[g].updated ? "true" : "false");
  out.line("static constexpr bool kUpdated[kNumGrids] = {{{}}};", flags);
  std::string names;
  for (size_t g = 0; g < s.grids.size(); ++g)
    names += std::string(g ? ", " : "") + "\"" + s.grids[g].name + "\"";
  out.line("static constexpr const char *kGridNames[kNumGrids] = {{{}}};",
           names);
  std::string bytes;
  for (size_t g = 0; g < s.grids.size(); ++g)
    bytes += std::string(g ? ", " : "") + "sizeof(" +
             elemOf(static_cast<int>(g)) + ")";
  out.line("static constexpr size_t kElemBytes[kNumGrids] = {{{}}};", bytes);
  out.line("/// Element i of grid g's values at p, in double; and x stored "
           "there, rounded.");
  {
    auto fn = out.scope("static double load(int g, const void *p, long long "
                        "i)");
    for (size_t g = 0; g < s.grids.size(); ++g)
      out.line("if (g == {0})\n  return stencilc::rt::Convert<double>::from("
               "static_cast<const {1} *>(p)[i]);",
               g, elemOf(static_cast<int>(g)));
    out.line("return 0;");
  }
  {
    auto fn = out.scope("static void store(int g, void *p, long long i, "
                        "double x)");
    for (size_t g = 0; g < s.grids.size(); ++g)
      out.line("if (g == {0})\n  static_cast<{1} *>(p)[i] = "
               "stencilc::rt::Convert<{1}>::from(x);",
               g, elemOf(static_cast<int>(g)));
  }
  out.line("static constexpr long long kDefaultSteps = {};",
           s.hints.steps ? *s.hints.steps : 100);
  out.line("static constexpr int kFuse = {};", plan.fuse);
  emitBoundConstants();
  emitAmplification();
  out.blank();
  {
    auto fn = out.scope("static cudaError_t run(void *const *grids, void "
                        "*const *scratch, const long long *n, long long "
                        "steps, cudaStream_t stream)");
    out.line("Scratch sc;");
    for (int g : updated)
      out.line("sc.{} = static_cast<{} *>(scratch[{}]);", name(g), elemOf(g),
               g);
    std::string args;
    for (size_t g = 0; g < s.grids.size(); ++g)
      args += "static_cast<" + elemOf(static_cast<int>(g)) + " *>(grids[" +
              std::to_string(g) + "]), ";
    args += axes([](int a) { return "n[" + std::to_string(a) + "]"; });
    out.line("return {}::run({}, steps, Params(), stream, sc);", s.name, args);
  }
  if (opts.distributed)
    DistributedEmitter(s, plan, elem, out).emitDriverEntry();
  out.blank();
  out.line("/// One float64 time step of every updated grid, on the host; "
           "sc_step is its\n/// step index t.");
  if (s.hasStages()) {
    emitStagedReference();
    out.blank();
    emitStagedBound();
    return;
  }
  {
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
    auto loops = emitHostPointLoops();
    emitNodes(
        liveNodes(s.roots()), /*forDevice=*/false,
        [](int i) { return "v" + std::to_string(i); },
        [&](const Node &n) { return hostRead(n, "in"); });
    for (const Update &u : s.updates) {
      std::string frozen = frozenCondition(u.grid, "n[");
      if (frozen.empty())
        out.line("out[{}][sc_idx] = v{};", u.grid, u.root);
      else
        out.line("out[{0}][sc_idx] = ({1}) ? in[{0}][sc_idx] : v{2};", u.grid,
                 frozen, u.root);
    }
    while (!loops.empty())
      loops.pop_back();
  }
  out.blank();
  emitBoundStep();
}

std::string StencilEmitter::hostRead(const Node &n, const std::string &array) {
  return "gread_" + s.grids[n.index].name + "<double>(" + array + "[" +
         std::to_string(n.index) + "], " + axes([&](int a) {
           return plus("g" + std::to_string(a), n.offset[a]);
         }) +
         ", " + axes([](int a) { return "n[" + std::to_string(a) + "]"; }) +
         (gridNeedsBv(n.index) ? ", sc_bv" : "") + ")";
}

void StencilEmitter::emitTrackedParams() {
  for (const Param &p : s.params)
    out.line("[[maybe_unused]] const T p_{0} = T::param(stencilc::rt::param<"
             "{1}, double>(params.{0}), stencilc::rt::param<{1}, {2}>(params."
             "{0}));",
             p.name, cppElemType(p.type), comp);
}

void StencilEmitter::emitTrackedRead(const Field &field,
                                     const std::string &fnName,
                                     const std::string &type) {
  bool bv = false;
  for (const AxisBoundary &b : field.boundary)
    for (const BoundarySide &side : b.side)
      bv |= side.kind == BoundaryKind::Dirichlet && side.node >= 0;
  out.line("template <class T>");
  auto fn = out.scope(
      "static T " + fnName + "(const double *v, const double *e, " +
      axes([](int a) { return "long long q" + std::to_string(a); }) + ", " +
      axes([](int a) { return "long long n" + std::to_string(a); }) +
      ", int k" + (bv ? ", const double *bv" : "") + ")");
  emitDirichletReturns(field, "n", "T::template dirichlet<" + type + ">", "bv",
                       ", k");
  emitIndexMapping(field);
  out.line("const long long i = {};",
           linear([](int a) { return "q" + std::to_string(a); },
                  [](int a) { return "n" + std::to_string(a); }));
  out.line("return T::read(v[i], e[i], k);");
}

void StencilEmitter::emitBoundStep() {
  // Reads through each grid's boundary rules, as gread_ but Tracked.
  for (size_t g = 0; g < s.grids.size(); ++g)
    emitTrackedRead(s.grids[g], "tread_" + s.grids[g].name,
                    elemOf(static_cast<int>(g)));
  out.blank();

  out.line("/// One step of the bound E on |gpu - reference| of every updated "
           "grid: from the\n/// reference's values `in` and their bounds "
           "`err` to the bounds `errOut` after\n/// the step "
           "(docs/benchmarks.md, \"Error bounds\").");
  auto fn = out.scope(
      "static void boundStep(const double *const *in, [[maybe_unused]] const "
      "double *const *out, const double *const *err, double *const *errOut, "
      "const long long *n, [[maybe_unused]] long long sc_step, "
      "[[maybe_unused]] const stencilc::rt::TensorCoreRounding &tc)");
  std::vector<BoundItem> items;
  for (const Update &u : s.updates)
    items.push_back({u.root, u.linear ? &*u.linear : nullptr, u.grid, -1});
  emitBoundLoop(items, "");
}

void StencilEmitter::emitBoundLoop(const std::vector<BoundItem> &items,
                                   const std::string &where) {
  auto blk = out.scope("");
  // The nodes: every item's, and the coefficients of the linear ones.
  std::vector<int> roots;
  bool anyNonlinear = false;
  for (const BoundItem &item : items) {
    roots.push_back(item.root);
    if (!item.linear) {
      anyNonlinear = true;
      continue;
    }
    for (const Tap &t : item.linear->taps)
      roots.push_back(t.coeff);
    if (item.linear->constant >= 0)
      roots.push_back(item.linear->constant);
  }
  std::vector<int> live = liveNodes(roots), gridFree, perPoint;
  for (int i : live)
    (s.graph.isGridFree(i) ? gridFree : perPoint).push_back(i);
  // Nonlinear updates carry the derivatives of the value by each read, up
  // to kMaxDerivatives reads; beyond, only the node-by-node bound.
  constexpr size_t kMaxDerivatives = 64;
  std::map<int, int> readNumber;
  std::vector<int> reads;
  for (int i : perPoint)
    if (isReadOp(s.graph[i].op))
      reads.push_back(i);
  if (anyNonlinear && reads.size() <= kMaxDerivatives)
    for (size_t k = 0; k < reads.size(); ++k)
      readNumber[reads[k]] = static_cast<int>(k);
  // A read of an old grid, a stage or a new value; `number` counts it
  // among the reads whose derivatives are carried (-1: none).
  auto readOf = [&](const Node &n, const Offset &off, int number) {
    std::string fn, values, errors;
    if (n.op == Op::StageRead) {
      const std::string &st = s.stages[n.index].name;
      fn = "tstage_" + st;
      values = "sv_" + st + ".data()";
      errors = "se_" + st + ".data()";
    } else {
      std::string g = std::to_string(n.index);
      fn = "tread_" + s.grids[n.index].name;
      values = (n.op == Op::NewRead ? "out[" : "in[") + g + "]";
      errors = (n.op == Op::NewRead ? "errOut[" : "err[") + g + "]";
    }
    const Field &field = n.op == Op::StageRead
                             ? static_cast<const Field &>(s.stages[n.index])
                             : static_cast<const Field &>(s.grids[n.index]);
    bool bv = false;
    for (const AxisBoundary &b : field.boundary)
      for (const BoundarySide &side : b.side)
        bv |= side.kind == BoundaryKind::Dirichlet && side.node >= 0;
    return fn + "<T>(" + values + ", " + errors + ", " +
           axes([&](int a) { return plus("g" + std::to_string(a), off[a]); }) +
           ", " + axes([](int a) { return "n[" + std::to_string(a) + "]"; }) +
           ", " + std::to_string(number) + (bv ? ", sc_bv" : "") + ")";
  };
  out.line("using T = stencilc::rt::Tracked<{}, {}>;", comp, readNumber.size());
  if (!s.params.empty())
    out.line("const Params params;");
  emitTrackedParams();
  emitHostBoundaryValues("sc_bv");
  if (usesStep)
    out.line("[[maybe_unused]] const long long sc_t = sc_step;");
  auto vName = [](int i) { return "v" + std::to_string(i); };
  emitNodes(
      gridFree, /*forDevice=*/false, vName,
      [](const Node &) { return std::string("0"); }, "T");
  auto loops = emitHostPointLoops(where);
  auto readNode = [&](const Node &n) {
    auto it = readNumber.find(static_cast<int>(&n - &s.graph[0]));
    return readOf(n, n.offset, it == readNumber.end() ? -1 : it->second);
  };
  emitNodes(perPoint, /*forDevice=*/false, vName, readNode, "T",
            [&](const Node &n) {
              if (n.op == Op::StageRead || n.op == Op::NewRead)
                return readNode(n);
              return coordText(
                  n, [](int a) { return "g" + std::to_string(a); }, "double");
            });
  if (anyNonlinear && !readNumber.empty()) {
    std::string eps;
    for (int i : reads)
      eps += (eps.empty() ? "" : ", ") + vName(i) + ".full";
    out.line("const double sc_eps[{}] = {{{}}};", reads.size(), eps);
  }
  for (const BoundItem &item : items) {
    std::string value;
    auto blk = out.scope("");
    if (item.linear) {
      out.line("stencilc::rt::LinearBound<{}> sc_lb;", comp);
      for (const Tap &t : item.linear->taps) {
        // The tap's read node, or a read of its own where the expression
        // has none (it then reads the same value).
        std::string x;
        for (int i : perPoint)
          if (s.graph[i].op == Op::Read && s.graph[i].index == t.grid &&
              s.graph[i].offset == t.offset)
            x = vName(i);
        if (x.empty()) {
          x = "sc_x" + std::to_string(&t - &item.linear->taps[0]);
          Node n;
          n.op = Op::Read;
          n.index = t.grid;
          out.line("const T {} = {};", x, readOf(n, t.offset, -1));
        }
        out.line("sc_lb.tap(v{}, {});", t.coeff, x);
      }
      if (item.linear->constant >= 0)
        out.line("sc_lb.constant(v{});", item.linear->constant);
      value = "sc_lb.bound(v" + std::to_string(item.root) + ", tc)";
    } else {
      value = "stencilc::rt::nonlinearBound(v" + std::to_string(item.root) +
              ", " + (readNumber.empty() ? "nullptr" : "sc_eps") + ")";
    }
    if (item.stage >= 0) {
      const std::string &st = s.stages[item.stage].name;
      out.line("sv_{0}[sc_idx] = v{1}.v;\nse_{0}[sc_idx] = {2};", st, item.root,
               value);
      continue;
    }
    value = "stencilc::rt::storeBound<" + elemOf(item.grid) + ", " + comp +
            ">(" + value + ", v" + std::to_string(item.root) + ".v)";
    std::string frozen = frozenCondition(item.grid, "n[");
    if (frozen.empty())
      out.line("errOut[{}][sc_idx] = {};", item.grid, value);
    else
      out.line("errOut[{0}][sc_idx] = ({1}) ? err[{0}][sc_idx] : {2};",
               item.grid, frozen, value);
  }
  while (!loops.empty())
    loops.pop_back();
}

bool StencilEmitter::amplificationApplies() const {
  if (s.updates.empty())
    return false;
  for (const Update &u : s.updates)
    if (!u.linearPart || !frozenCondition(u.grid, "n[").empty())
      return false;
  // A read across an axis must wrap: then every block of the step's linear
  // part commutes with the shifts of the grid. The inlined forms and the
  // forms as written (stages, new values) both count.
  std::vector<int> roots = s.roots(), written = s.writtenRoots();
  roots.insert(roots.end(), written.begin(), written.end());
  std::vector<bool> live = s.graph.reachable(roots);
  for (size_t i = 0; i < live.size(); ++i) {
    const Node &n = s.graph[i];
    if (!live[i] || !isReadOp(n.op))
      continue;
    if (n.op != Op::StageRead && !s.grids[n.index].updated)
      continue; // A read-only grid's values are a source term.
    const Field &field = n.op == Op::StageRead
                             ? static_cast<const Field &>(s.stages[n.index])
                             : static_cast<const Field &>(s.grids[n.index]);
    for (int a = 0; a < D; ++a)
      if (n.offset[a] != 0 && !field.boundary[a].periodic())
        return false;
  }
  return true;
}

void StencilEmitter::emitAmplification() {
  if (!amplificationApplies()) {
    out.line("static constexpr bool kAmplification = false;");
    return;
  }
  out.line("/// The step is affine with constant coefficients on a grid "
           "periodic along\n/// every axis it reads across: the "
           "amplification bound applies (amplification.h).");
  out.line("static constexpr bool kAmplification = true;");
  size_t maxTaps = 0;
  std::vector<int> coeffs;
  for (const Update &u : s.updates) {
    size_t taps = 0;
    for (const Tap &t : u.linearPart->taps)
      if (s.grids[t.grid].updated) {
        ++taps;
        coeffs.push_back(t.coeff);
      }
    maxTaps = std::max(maxTaps, taps);
  }
  out.line("static constexpr int kLinearTaps = {};",
           std::max<size_t>(1, maxTaps));
  std::string store;
  for (size_t g = 0; g < s.grids.size(); ++g) {
    const std::string e = elemOf(static_cast<int>(g));
    store += fmt::format("{}std::is_same_v<{}, {}> ? 0.0 : "
                         "stencilc::rt::unitRoundoff<{}>()",
                         g ? ", " : "", e, comp, e);
  }
  out.line("static constexpr double kStoreRoundoff[kNumGrids] = {{{}}};",
           store);
  std::vector<int> live = liveNodes(coeffs);
  auto vName = [](int i) { return "v" + std::to_string(i); };
  auto zero = [](const Node &) { return std::string("0"); };
  {
    out.line("/// theta of impulseAmplification: over the source grids, the "
             "largest sum of\n/// gamma_K(u_d) |c| + |double(c) - c| over "
             "the taps that read it.");
    auto fn = out.scope("static double linearTheta()");
    out.line("using T = stencilc::rt::Tracked<{}, 0>;", comp);
    if (!s.params.empty())
      out.line("const Params params;");
    emitTrackedParams();
    emitNodes(live, /*forDevice=*/false, vName, zero, "T");
    out.line("double sc_theta[kNumGrids] = {{}};");
    for (const Update &u : s.updates) {
      size_t taps = 0;
      for (const Tap &t : u.linearPart->taps)
        taps += s.grids[t.grid].updated;
      for (const Tap &t : u.linearPart->taps)
        if (s.grids[t.grid].updated)
          out.line("sc_theta[{0}] += stencilc::rt::gammaBound({1}, 0x1.0p-53) "
                   "* std::fabs(v{2}.v) + v{2}.ref;",
                   t.grid, taps, t.coeff);
    }
    out.line("double sc_max = 0;\nfor (double x : sc_theta)\n  sc_max = "
             "std::max(sc_max, x);\nreturn sc_max;");
  }
  {
    out.line("/// The step's linear part in double, the source terms left out: "
             "out[g] = A in\n/// for every updated grid g.");
    auto fn = out.scope("static void linearStep(const double *const *in, "
                        "double *const *out, const long long *n)");
    out.line("using T = stencilc::rt::Tracked<{}, 0>;", comp);
    if (!s.params.empty())
      out.line("const Params params;");
    emitTrackedParams();
    emitHostBoundaryValues("sc_bv");
    if (numBv > 0)
      out.line("(void)sc_bv;");
    emitNodes(live, /*forDevice=*/false, vName, zero, "T");
    auto loops = emitHostPointLoops();
    for (const Update &u : s.updates) {
      std::string sum;
      for (const Tap &t : u.linearPart->taps) {
        if (!s.grids[t.grid].updated)
          continue;
        Node n;
        n.op = Op::Read;
        n.index = t.grid;
        n.offset = t.offset;
        sum += fmt::format("{}v{}.v * {}", sum.empty() ? "" : " + ", t.coeff,
                           hostRead(n, "in"));
      }
      out.line("out[{}][sc_idx] = {};", u.grid, sum.empty() ? "0.0" : sum);
    }
  }
}

HostLoops StencilEmitter::emitHostPointLoops(const std::string &where) {
  HostLoops loops;
  // Each point of a host sweep depends only on arrays that the sweep does
  // not write, so axis 0's rows run on the host's threads (driver.cuh's
  // hostRows) with the very same bits as one thread.
  loops.push_back(std::make_unique<Emitter::Scope>(
      out.scope("stencilc::rt::hostRows(n[0], [&](long long sc_lo, long long "
                "sc_hi)",
                "});")));
  for (int a = 0; a < D; ++a) {
    std::string g = "g" + std::to_string(a);
    loops.push_back(std::make_unique<Emitter::Scope>(out.scope(
        "for (long long " + g + " = " + (a ? "0" : "sc_lo") + "; " + g + " < " +
        (a ? "n[" + std::to_string(a) + "]" : "sc_hi") + "; ++" + g + ")")));
  }
  if (!where.empty())
    out.line("if (!({}))\n  continue;", where);
  out.line("const long long sc_idx = {};",
           linear([](int a) { return "g" + std::to_string(a); },
                  [](int a) { return "n[" + std::to_string(a) + "]"; }));
  return loops;
}
