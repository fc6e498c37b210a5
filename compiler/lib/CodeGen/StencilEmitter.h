//===- StencilEmitter.h - The CUDA-core emitter of one stencil --*- C++ -*-===//
//
// The class that prints one stencil's CUDA-core kernels, host entry point and
// --emit-main problem (CudaEmitter.cpp), with the code of stages and new
// values in StageEmitter.cpp. Private to compiler/lib/CodeGen.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_LIB_CODEGEN_STENCILEMITTER_H
#define STENCILC_LIB_CODEGEN_STENCILEMITTER_H

#include "stencilc/CodeGen/CudaEmitter.h"
#include "stencilc/CodeGen/DistributedEmitter.h"
#include "stencilc/CodeGen/Emitter.h"
#include "stencilc/CodeGen/ExprPrinter.h"
#include "stencilc/CodeGen/TensorCoreEmitter.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stencilc {

/// The nested scopes of a host sweep (emitHostPointLoops): hostRows's
/// lambda, then one loop per axis. They close innermost first, whether
/// popped one by one or dropped at once (a vector alone would close them
/// outermost first).
class HostLoops {
public:
  HostLoops() = default;
  HostLoops(HostLoops &&) = default;
  ~HostLoops() {
    while (!empty())
      pop_back();
  }
  void push_back(std::unique_ptr<Emitter::Scope> s) {
    scopes.push_back(std::move(s));
  }
  bool empty() const { return scopes.empty(); }
  void pop_back() { scopes.pop_back(); }

private:
  std::vector<std::unique_ptr<Emitter::Scope>> scopes;
};

class StencilEmitter {
public:
  StencilEmitter(const Stencil &s, const CudaCorePlan &plan,
                 const std::optional<TensorCorePlan> &tcPlan,
                 const CudaOptions &opts, Emitter &out)
      : s(s), plan(plan), tcPlan(tcPlan), opts(opts), out(out), D(s.dims),
        elem(cppElemType(s.elemType)), compFloat(s.compType == ElemType::F32),
        comp(compFloat ? "float" : "double"), addr(s.dims, opts.distributed) {
    for (size_t g = 0; g < s.grids.size(); ++g)
      (s.grids[g].updated ? updated : readOnly).push_back(static_cast<int>(g));
    planWeights();
    planBoundaryValues();
    std::vector<int> all = s.roots();
    for (int r : s.writtenRoots())
      all.push_back(r);
    std::vector<bool> live = s.graph.reachable(all);
    for (size_t i = 0; i < live.size(); ++i) {
      usesStep |= live[i] && s.graph[i].op == Op::Step;
      usesCoords |= live[i] && s.graph[i].op == Op::Coord;
    }
  }

  void emitHeaderDecls();
  void emitSource();
  void emitDriverProblem();
  /// A value that had no literal in its type, if the emitter met one.
  std::optional<double> nonFiniteValue() const { return nonFinite; }

private:
  /// literalText, or a placeholder after recording the value: emitCuda then
  /// reports an internal error and writes nothing.
  std::string literal(double v, bool asFloat) {
    std::optional<std::string> text = literalText(v, asFloat);
    if (text)
      return *text;
    if (!nonFinite)
      nonFinite = v;
    return "0";
  }

  /// Joins f(a) for every axis with `sep`.
  std::string axes(const std::function<std::string(int)> &f,
                   const std::string &sep = ", ") const {
    std::string r;
    for (int a = 0; a < D; ++a)
      r += (a ? sep : "") + f(a);
    return r;
  }
  /// Row-major linear index of coordinates named by `coord` with extents
  /// named by `extent`.
  std::string linear(const std::function<std::string(int)> &coord,
                     const std::function<std::string(int)> &extent) const {
    // Parenthesise a compound coordinate: it is multiplied next.
    std::string r = coord(0);
    if (D > 1 && r.find(' ') != std::string::npos && r.front() != '(')
      r = "(" + r + ")";
    for (int a = 1; a < D; ++a)
      r = (a > 1 ? "(" + r + ")" : r) + " * " + extent(a) + " + " + coord(a);
    return r;
  }
  std::string name(int g) const { return s.grids[g].name; }
  /// The C++ alias of grid g's element type in the generated code: Elem
  /// where the grids share the type, else Elem for the stencil's type and
  /// Elem_NAME for a grid of another.
  std::string elemOf(int g) const {
    return s.grids[g].type == s.elemType ? "Elem" : "Elem_" + name(g);
  }
  /// The `using Elem_NAME = ...;` lines of the grids of another type.
  void emitElemAliases();
  /// Whether the updated grids differ in type: their shared-memory buffers
  /// then start at byte offsets kOff_NAME.
  bool mixedUpdated() const {
    for (int g : updated)
      if (s.grids[g].type != s.grids[updated.front()].type)
        return true;
    return false;
  }
  /// The entry point's signature up to `steps`. The definition names grids
  /// sc_gridN, so no user name can clash with the names in its body.
  std::string entrySignature(bool internalNames) const;
  void emitConstants();
  void emitArgs();
  void emitGlobalReads();
  /// A device read's boundary rules at local l and global q: dirichlet
  /// axes return their constant, clamp and fixed axes move l to the edge.
  void emitReadBoundaries(const Field &field);
  /// The returns of a read at q outside a dirichlet side, as `type`; the
  /// lowest axis decides. Values of parameters come from the array `bv`.
  void emitDirichletReturns(const Field &field, const std::string &n,
                            const std::string &type, const std::string &bv,
                            const std::string &extra = "");
  /// The driver's tracked read `fnName` of a field with values v and
  /// bounds e, through its boundary conditions; `type` is the type a
  /// kernel may hold a dirichlet value in.
  void emitTrackedRead(const Field &field, const std::string &fnName,
                       const std::string &type);
  void emitSharedReads();
  /// Maps q<a> into 0..n<a>-1 on the periodic, clamp and fixed axes of
  /// `grid` (its dirichlet axes return before).
  void emitIndexMapping(const Field &field);
  /// A read of an old grid value in device code at l<a>, g<a> plus the
  /// node's offset (sread_ of an updated grid with the Edge parameter,
  /// gread_ of a read-only one).
  std::string deviceRead(const Node &n);
  /// A read of read-only grid `grid` at global coordinates `coords` in
  /// device code: through gread_, or the distributed view's vread_.
  std::string roRead(const Grid &grid, const std::string &coords);
  /// Host code: loops over every point g0.. of the domain n[], skipping
  /// the points where `where` (if any) is false, and sc_idx, the point's
  /// linear index. The loops close when the returned scopes go.
  HostLoops emitHostPointLoops(const std::string &where = "");
  /// A read of an old (`array` "in") or new ("out") grid value in host code
  /// at g<a> plus the node's offset, through gread_<double>.
  std::string hostRead(const Node &n, const std::string &array);
  /// sc_t from sc_step and the coordinates sc_i<a> from g<a>, where the
  /// stencil uses them; wrapped only where Edge is when `edgeTemplate`.
  void emitPointValues(bool edgeTemplate);
  void emitComputeStep();
  /// The block's box origins o<a> along axes 1.., leaving the tile index
  /// along axis 0 in sc_rest.
  void emitTileOrigins();
  /// The box kernel's load of its box into buffer 0, and its store of the
  /// tile from the last step's buffer: in 16-byte chunks along the last
  /// axis where the plan and the grids' alignment allow.
  void emitBoxLoad();
  void emitTileStore();
  void emitKernel();
  /// The box kernel's launch on `blocks` blocks: the full kernel for passes
  /// of kFuse steps, the other for the last.
  void emitBoxLaunch(const std::string &blocks, const std::string &stream);
  /// A pass's launch of the CUDA-core kernel (box or streaming).
  void emitPassLaunch(const std::string &blocks, const std::string &stream);
  /// `Args sc_args` filled for run(): the read-only grids' pointers (with
  /// `readOnlyGrids`), extents, parameters, weights and dirichlet values.
  void emitArgsSetup(const std::function<std::string(int)> &extent,
                     bool readOnlyGrids);
  void emitKernelAttributes();
  void emitRun();
  /// Prints the nodes `ids` (in topological order) as `const T NAME =
  /// ...;`, naming node i by `nameOf(i)`, grid reads through `read` and
  /// the other leaves (stages, new values, t, coordinates) through `other`,
  /// or by default t as sc_t and coordinate a as sc_i<a> (device) or g<a>
  /// (host). T is Comp on the device, `hostType` on the host; conditions
  /// are bool.
  void
  emitNodes(const std::vector<int> &ids, bool forDevice,
            const std::function<std::string(int)> &nameOf,
            const std::function<std::string(const Node &)> &read,
            const std::string &hostType = "double",
            const std::function<std::string(const Node &)> &other = nullptr);
  /// The driver's error bound (driver.cuh, docs/benchmarks.md "Error
  /// bounds"): the tensor cores' rounding constants, and boundStep.
  void emitBoundConstants();
  void emitBoundStep();
  /// The tensor cores' tcRowTaps and baseTaps (the bound's coefficients).
  void emitRowTaps();
  void emitBaseTaps();
  /// The linear part of the step for the amplification bound (driver.cuh,
  /// amplification.h): kAmplification, and where it holds linearStep,
  /// linearTheta, kLinearTaps and kStoreRoundoff.
  void emitAmplification();
  /// Whether the step is affine with constant coefficients and shift
  /// invariant: every update has a linear part, no band is frozen, and
  /// every field read across an axis is periodic along it.
  bool amplificationApplies() const;
  /// What one loop of the bound evaluates at every point: a node `root`
  /// with its linear form (null: bounded as nonlinear), stored as the
  /// bound of grid `grid` or of stage `stage` (the other -1).
  struct BoundItem {
    int root = -1;
    const LinearForm *linear = nullptr;
    int grid = -1, stage = -1;
  };
  /// A block with one loop over the domain's points (those where `where`
  /// holds, if given) that evaluates the items with tracked values and
  /// stores their bounds: errOut of a grid (with the rounding to its type),
  /// or sv_NAME, se_NAME of a stage (value and bound).
  void emitBoundLoop(const std::vector<BoundItem> &items,
                     const std::string &where);
  /// `const T p_NAME = T::param(...)` for every parameter.
  void emitTrackedParams();
  /// The nodes the updates need, in topological order.
  std::vector<int> liveNodes(const std::vector<int> &roots) const;
  void emitComputeStrip();
  void emitStreamConstants();
  void emitStreamReads();
  void emitStreamLevel(int k);
  void emitStreamKernel();
  /// The plane kernel (PlaneKernelEmitter.cpp): its constants after those
  /// it shares with the box kernel, and the kernel.
  void emitPlaneConstants();
  void emitPlaneKernel();
  /// The register-queue star kernel (StarKernelEmitter.cpp), a kind of
  /// plane kernel (plan.star): its constants, the kernel, and one copy of
  /// its plane loop.
  /// The weights of update `u` (index `ui`) by tap offset, as literals or
  /// the host's rounding in Args::w, into `w`; emits the linear form's
  /// constant and returns the expression every sum starts from.
  /// The head of the plane kernel: the signature, the shared buffer of
  /// `bufType`, the tile's origins, the thread's position and whether the
  /// planes' box lies inside the domain.
  void emitPlaneKernelHead(const std::string &grid, const std::string &bufType);
  /// Its first part, which the star kernel shares: the signature, the
  /// shared buffer, the tile's origins o1, o2 and the segment's sc_s0.
  void emitPlaneKernelEntry(const std::string &bufType,
                            const std::string &moreParams = "");
  /// The plane kernel's stores (the star kernel stores vectors itself):
  /// once a block, whether the thread's kRY outputs all lie inside
  /// (sc_clear) and their pointer; once a plane
  /// (`plane`, an axis-0 index), each output `value(i)` or, in a fixed
  /// band, its old value.
  void emitPlaneStoreSetup(int g);
  void emitPlaneStore(int g, const std::string &plane,
                      const std::function<std::string(int)> &value);
  std::string emitPlaneWeights(const Update &u, size_t ui,
                               std::map<std::array<int, 3>, std::string> &w);
  void emitStarConstants();
  void emitStarKernel();
  void emitStarRingLoad();
  void emitStarPlane(int copy,
                     const std::map<std::array<int, 3>, std::string> &w,
                     const std::string &start);
  /// The tensor-core plane kernel (TensorPlaneEmitter.cpp): its constants,
  /// its weights' host function, the kernel, and the driver's rounding
  /// constants of its tensor cores.
  void emitTensorPlaneConstants();
  void emitTensorPlaneWeights();
  void emitTensorPlaneKernel();
  void emitTensorPlaneSparseHelpers();
  void emitTensorPlaneDenseHelpers();
  void emitTensorPlaneSparseProducts();
  void emitTensorPlaneDenseProducts();
  void emitTensorPlaneBound();
  /// The streaming kernel's ghost axes: slab axes with a dirichlet
  /// boundary, where the columns outside the domain hold the boundary
  /// value in every level, so that the columns beside them need no
  /// boundary conditions. A 16-bit grid's ghosts hold it in the
  /// computation's type (ringValue), as the reads return it.
  std::vector<int> ghostAxes() const;
  /// `value`, of the grid's type, as the streaming kernel's rings hold it:
  /// converted, or a 16-bit grid's ghost value.
  std::string ringValue(const std::string &value) const;
  /// The streaming kernel's level k takes this iteration's rows into its
  /// registers, and writes them to its group ring (CudaCorePlan::groupRows).
  void emitStreamPush(int k, const std::string &rows, bool elems);
  void emitGroupRingWrites(int k, const std::string &rel);
  /// The index in a level's ring of window row `row` of column `col`.
  std::string ringIndex(const std::string &row, const std::string &col) const;
  /// The streaming kernel's band axes: slab axes fixed on both sides whose
  /// bands hold every point the edge can change (each update's reads and
  /// form as written). A column in a band keeps the level below's value,
  /// and every other column reads inside the domain: no column needs
  /// boundary conditions.
  std::vector<int> bandAxes() const;
  /// How far from the domain's edge along axis `a` boundary conditions, or
  /// an update's form as written, can change a value (kE<a>).
  int edgeWidth(int a) const;
  /// `value`, of the grid's type, converted to the computation's where the
  /// two differ (the streaming kernel's rings hold the computation's type).
  std::string toComp(const std::string &value) const;
  std::string frozenCondition(int g, const std::string &nExpr) const;
  /// frozenCondition's part for axis `a`, of the coordinate `var`: empty
  /// where neither side of the axis is fixed.
  std::string frozenAxisCondition(int g, int a, const std::string &var,
                                  const std::string &nExpr) const;

  const Stencil &s;
  const CudaCorePlan &plan;
  /// Set for a tensor-core target.
  const std::optional<TensorCorePlan> &tcPlan;
  const CudaOptions &opts;
  Emitter &out;
  const int D;
  const std::string elem;
  const bool compFloat;
  const std::string comp;
  /// Global indices: the whole grid, or a distributed view.
  const GridAddress addr;
  std::vector<int> updated, readOnly;
  std::optional<double> nonFinite;
  /// The weights of the linear updates (docs/language.md §6.4), per update
  /// and tap: folded here where they are constant, else rounded by the host
  /// at run time into Args::w[slot].
  struct TapWeight {
    double value = 0;
    int slot = -1;
  };
  std::vector<std::vector<TapWeight>> weights;
  int runtimeWeights = 0;
  void planWeights();
  /// A weight as the kernels read it: its literal in the compute type, or
  /// the host's rounding, a.w[slot].
  std::string weightText(const TapWeight &w, bool compFloat) {
    return w.slot >= 0 ? "a.w[" + std::to_string(w.slot) + "]"
                       : literal(w.value, compFloat);
  }
  /// Host code that evaluates the run-time weights in double and rounds
  /// them into sc_args.w.
  void emitRuntimeWeights();

  // Values of the point and the step (t, i0, i1, i2) and dirichlet values
  // of parameters. The kernels get the step of a pass's first step in
  // Args::t0; a dirichlet value built from parameters gets a slot of
  // Args::bv, which the host fills from the parameters in double.
  bool usesStep = false, usesCoords = false;
  std::map<std::pair<const Field *, int>, int> bvSlots;
  int numBv = 0;
  void planBoundaryValues();
  /// Host code: `double sc_bv[]` from the parameters (p_NAME in double).
  void emitHostBoundaryValues(const std::string &array);
  /// The dirichlet value of `side` of axis `a` of field `f`: a literal, or
  /// `bv[slot]` of the array `bv`.
  std::string dirichletText(const Field &f, int a, int side, bool asFloat,
                            const std::string &bv);
  /// The parameter list that passes a dirichlet array to gread_NAME where
  /// one of grid g's values depends on parameters.
  bool gridNeedsBv(int g) const;
  /// The leaf values of the point and step in device code: t from sc_t,
  /// coordinate a at `offset` from the coordinate named by coord(a).
  std::string coordText(const Node &n,
                        const std::function<std::string(int)> &coord,
                        const std::string &type = "Comp") const;

  // Stages and new values (StageEmitter.cpp). On the device, a point near
  // the domain's edge computes an update as written: each stage or new
  // value it reads is a function of the point (stage_NAME, new_NAME) that
  // applies the field's boundary conditions and evaluates its expression
  // there. The interior uses the inlined form (Update::root).
  /// The buffer parameters (and arguments) every field function takes.
  std::string bufParams() const;
  std::string bufArgs() const;
  void emitFieldFunctions();
  /// The device leaf of a read as written at (l, g): old grids through
  /// sread_/gread_, stages and new values through their functions.
  std::string writtenLeaf(const Node &n);
  /// The host's float64 reference step and the bound of a stencil with
  /// stages or new-value reads: one loop over the domain per stage and
  /// update, in order.
  void emitStagedReference();
  void emitStagedBound();
};

} // namespace stencilc

#endif // STENCILC_LIB_CODEGEN_STENCILEMITTER_H
