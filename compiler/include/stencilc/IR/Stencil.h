//===- Stencil.h - The Stencil IR -------------------------------*- C++ -*-===//
//
// What sema produces and every later stage reads: grids with their boundary
// conditions, run-time parameters, and one update expression per updated
// grid. Expressions live in one hash-consed graph per stencil whose nodes are
// in topological order (an operand always has a smaller index), so each
// consumer evaluates them with one forward sweep, never by recursion, and
// identical subexpressions are shared. Where an update is linear in the grid
// reads, its linear form (taps: offset -> coefficient) is attached.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_IR_STENCIL_H
#define STENCILC_IR_STENCIL_H

#include "stencilc/IR/ElemType.h"
#include "stencilc/IR/MatrixProgram.h"
#include "stencilc/IR/Offset.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stencilc {


enum class BoundaryKind {
  Dirichlet, ///< Reads outside the domain see a constant.
  Periodic,  ///< Indices wrap around.
  Clamp,     ///< Reads outside see the nearest edge point (zero-gradient
             ///< Neumann).
  Fixed,     ///< The outer band, as wide as the update reaches, keeps its
             ///< initial values; outside reads clamp.
};

llvm::StringRef boundaryKindName(BoundaryKind k);

/// The condition on one side of one axis.
struct BoundarySide {
  BoundaryKind kind = BoundaryKind::Dirichlet;
  double value = 0; ///< Dirichlet only: the value where it is constant.
  /// Dirichlet only: a node of the graph built from parameters (and
  /// constants) when the value depends on them, else -1 and `value` holds.
  int node = -1;
  llvm::SMLoc valueLoc; ///< Dirichlet only: where the value is written.
};

/// The conditions of one axis: below 0 (`side[0]`) and at n and above
/// (`side[1]`). Periodic is always on both sides.
struct AxisBoundary {
  std::array<BoundarySide, 2> side;
  bool periodic() const { return side[0].kind == BoundaryKind::Periodic; }
  bool has(BoundaryKind k) const {
    return side[0].kind == k || side[1].kind == k;
  }
  /// Both sides alike (one condition, as the source's single spec says).
  bool uniform() const {
    return side[0].kind == side[1].kind && side[0].value == side[1].value &&
           side[0].node == side[1].node;
  }
};

/// Boundary conditions per axis, and where they were declared: what grids
/// and stages share.
struct Field {
  std::string name;
  llvm::SMLoc loc;
  /// One entry per axis.
  std::vector<AxisBoundary> boundary;
  bool hasBoundary = false;
  llvm::SMLoc boundaryLoc;
};

struct Grid : Field {
  ElemType type = ElemType::F32;
  bool updated = false;
};

/// `stage lap = expr;`: a field of the compute type computed at every point
/// of the domain in every step, before the updates and stages written after
/// it, which may read it at offsets; reads outside the domain apply its
/// boundary conditions (docs/language.md §4.8).
struct Stage : Field {
  int root = -1; ///< As written: may read stages and new values.
};

struct Param {
  std::string name;
  llvm::SMLoc loc;
  ElemType type = ElemType::F32;
  double defaultValue = 0;
  llvm::SMLoc valueLoc; ///< Where the default value is written.
};

enum class Op : uint8_t {
  Const,
  Param,
  Read,
  Neg,
  Add,
  Sub,
  Mul,
  Div,
  Min,
  Max,
  Sqrt,
  Abs,
  Pow, ///< Integer exponent.
  // Functions of the compute type, as CUDA's (docs/language.md §5).
  Exp,
  Log,
  Sin,
  Cos,
  Tanh,
  Floor,
  PowF, ///< pow(x, y) with a real exponent y.
  Fma,  ///< fma(a, b, c): a * b + c rounded once (third operand).
  // Conditions: their values are true or false (1 or 0), never numbers.
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  And,
  Or,
  Not,
  Select, ///< select(cond, a, b): lhs is the condition, rhs a, third b.
  // Values of the point and the step.
  Step,  ///< t, the index of the step being computed (0 for the first).
  Coord, ///< i<index> + offset[index]: a coordinate of the point.
  /// Rounding of a value to the element type `index` (an ElemType): a new
  /// grid value read by a later update, inlined (never folded).
  Round,
  StageRead, ///< Stage `index` at `offset` (as written, before inlining).
  NewRead,   ///< The new value of grid `index` at `offset` (as written).
};

llvm::StringRef opName(Op op);
inline bool isBinaryOp(Op op) {
  return op == Op::Add || op == Op::Sub || op == Op::Mul || op == Op::Div ||
         op == Op::Min || op == Op::Max || op == Op::PowF ||
         (op >= Op::Lt && op <= Op::Or);
}
/// Whether the value of `op` is a condition (true or false).
inline bool isLogicalOp(Op op) { return op >= Op::Lt && op <= Op::Not; }
/// Whether `op` reads a field (a grid, a stage, a new value) at an offset.
inline bool isReadOp(Op op) {
  return op == Op::Read || op == Op::StageRead || op == Op::NewRead;
}

/// One expression node. Operands are node indices smaller than its own.
struct Node {
  Op op = Op::Const;
  int lhs = -1, rhs = -1;
  int third = -1;     ///< Fma's addend, Select's second choice.
  double value = 0;   ///< Const.
  /// Const: the constant is a condition (1 true, 0 false), not a number.
  bool logical = false;
  /// Param: parameter index. Read, NewRead: grid index. StageRead: stage
  /// index. Coord: axis. Round: the ElemType rounded to.
  int index = -1;
  Offset offset{};    ///< Read, StageRead, NewRead, Coord.
  int exponent = 0;   ///< Pow.
  llvm::SMLoc loc;    ///< First place it was written.

  bool sameAs(const Node &o) const;
};

/// Hash-consed, topologically ordered expression nodes of one stencil.
class ExprGraph {
public:
  /// Returns the index of an identical node, or appends this one. Constant
  /// operands of arithmetic fold here, in double precision.
  int add(Node n);
  int constant(double v, llvm::SMLoc loc = {});
  /// The condition true or false as a constant.
  int condition(bool v, llvm::SMLoc loc = {});
  int read(int grid, const Offset &off, llvm::SMLoc loc = {});
  int param(int index, llvm::SMLoc loc = {});
  int unary(Op op, int operand, llvm::SMLoc loc = {}, int exponent = 0);
  int binary(Op op, int lhs, int rhs, llvm::SMLoc loc = {});
  int ternary(Op op, int a, int b, int c, llvm::SMLoc loc = {});
  /// A node of `op` with no operands that reads field `index` at `off`
  /// (StageRead, NewRead), or coordinate `index` + off[index] (Coord).
  int leaf(Op op, int index, const Offset &off, llvm::SMLoc loc = {});
  /// The sum of `terms` (at least one) as a balanced tree of additions, so
  /// that long sums stay shallow; the left half's nodes come first.
  int balancedSum(llvm::ArrayRef<int> terms, llvm::SMLoc loc = {});

  const Node &operator[](int i) const { return nodes[i]; }
  size_t size() const { return nodes.size(); }
  const std::vector<Node> &all() const { return nodes; }

  /// Marks the nodes reachable from `roots`; the result is indexed by node.
  std::vector<bool> reachable(const std::vector<int> &roots) const;
  /// True when the node depends on no read of a field and on neither the
  /// step nor the point: built from constants and parameters only, the
  /// same value at every point of every step (a coefficient).
  bool isGridFree(int i) const;
  /// True when the node's value is a condition rather than a number.
  bool isLogical(int i) const {
    return isLogicalOp(nodes[i].op) ||
           (nodes[i].op == Op::Const && nodes[i].logical);
  }

private:
  std::vector<Node> nodes;
  std::vector<bool> gridFree;
  llvm::DenseMap<uint64_t, std::vector<int>> buckets;
};

/// A linear (affine) update: sum of coefficient * grid[offset] plus a
/// constant. Coefficients are grid-free nodes of the stencil's graph.
struct Tap {
  int grid = 0;
  Offset offset{};
  int coeff = -1;
};

struct LinearForm {
  std::vector<Tap> taps; ///< Sorted by (grid, offset), no duplicates.
  int constant = -1;     ///< A grid-free node, or -1 when there is none.
};

struct Update {
  int grid = 0;
  /// The update with its stages and new-value reads inlined: grid reads
  /// only, valid at points at least `span` from every non-periodic edge.
  /// What the linear form, the tiling and the interior of every kernel use.
  int root = -1;
  /// The update as written, which may read stages and new values; equal to
  /// `root` when it reads neither. Its meaning at every point.
  int written = -1;
  llvm::SMLoc loc;
  std::optional<LinearForm> linear;
  /// The taps of `root`'s linear part where it is affine with grid-free
  /// coefficients and a source term that may depend on the step and the
  /// point (extractLinearPart); equal to `linear`'s taps where that exists.
  std::optional<LinearForm> linearPart;
  /// Reach of the expression as written along each axis, below and above:
  /// the width of a `fixed` boundary band.
  std::array<int, kMaxDims> reachLo{}, reachHi{};
  /// How far from the point the inlined form reads, or a stage or new value
  /// it inlines lies: where `root` and `written` may differ, the kernels
  /// compute `written` through the boundary conditions.
  std::array<int, kMaxDims> spanLo{}, spanHi{};
};

/// One computation of a step, in source order: a stage or an update.
struct StepItem {
  bool stage = false;
  int index = 0; ///< Into Stencil::stages or Stencil::updates.
};

/// The result of temporal fusion (Transforms/TemporalFusion.h): `steps`
/// steps of the single update as one linear kernel.
struct FusedKernel {
  int steps = 1;
  int grid = 0;
  /// Taps of the t-step kernel, sorted by offset; coefficients are nodes of
  /// the stencil's graph.
  std::vector<Tap> taps;
  /// Taps of one step, K, and of the fused kernel, K^(t).
  int baseTaps = 0;
  /// Gu et al. eq. 9: K^(t) / (t * K).
  double alpha = 1;
  /// Width of the boundary band per axis and side where the fused kernel is
  /// not exact: t times the reach of one step; 0 on periodic axes.
  std::array<int, kMaxDims> bandLo{}, bandHi{};
};

struct Hints {
  std::optional<int> fuse; ///< Unset: automatic.
  std::optional<int64_t> steps;
  /// `hint precision = exact | split_tf32 | tf32`, and where its value is.
  std::optional<Precision> precision;
  llvm::SMLoc precisionLoc;
  /// Set by the driver when the cost model chose `fuse`.
  bool fuseByModel = false;
  /// The CUDA-core kernel's output tile, one extent per axis, and its
  /// threads per block, from --tile and --threads (or stencilc --tune).
  /// Unset: the plan's rules (CodeGen/CudaCorePlan).
  std::optional<std::array<int, kMaxDims>> tile;
  std::optional<int> threads;
  /// Set by the driver for --target=tc (1) or sptc (2) where the
  /// tensor-core plane kernel applies (CodeGen/CudaCorePlan,
  /// tensorPlaneApplies): one step per pass, mma.sync or mma.sp.
  int tensorPlane = 0;
  /// The star kernel's planes in flight by cp.async, from the hidden
  /// --star-pipeline (experiments; 0: the register-prefetch kernel).
  /// Unset: the plan's rule (CodeGen/CudaCorePlan, planStar).
  std::optional<int> starPipeline;
  /// From the hidden --star-tma (experiments): whether the star kernel's
  /// ring is filled by TMA where the target has it (sm_90 and later).
  /// Unset: off (CodeGen/CudaCorePlan, planStar).
  std::optional<bool> starTma;
  /// From the hidden --group-rows (experiments): the rows of a group in the
  /// streaming kernel's rings, read and written a group an access (0: one
  /// row an access). Unset: the plan's rule (CodeGen/CudaCorePlan,
  /// planGroupRows).
  std::optional<int> groupRows;
  /// From the hidden --split-fast (experiments): CudaCorePlan::splitFast.
  /// Unset: with the group ring.
  std::optional<bool> splitFast;
  /// From the hidden --plane-blocks (experiments): the dense tensor-core
  /// plane kernel's CudaCorePlan::planeBlocks. Unset: the plan's
  /// (planTensorPlane).
  std::optional<int> planeBlocks;
  /// From the hidden --stream-2d (experiments): a 2-D stencil of one grid
  /// streams along axis 0 (the streaming kernel) instead of taking the box
  /// kernel's tiles (CodeGen/CudaCorePlan, planStream).
  bool stream2d = false;
};

struct Stencil {
  std::string name;
  llvm::SMLoc loc;
  int dims = 0;
  /// The element type of the first updated grid (of the first grid before
  /// sema marks updates): the type of a stencil whose grids share one, and
  /// the one the tensor cores and the cost model use.
  ElemType elemType = ElemType::F32;
  /// The type arithmetic runs in: f64 where a grid the stencil reads or
  /// updates is f64, else f32 (docs/language.md §6.4).
  ElemType compType = ElemType::F32;
  std::vector<Grid> grids;
  std::vector<Param> params;
  std::vector<Stage> stages;
  std::vector<Update> updates;
  /// The stages and updates in the order a step computes them.
  std::vector<StepItem> order;
  ExprGraph graph;
  Hints hints;
  /// Set by temporal fusion.
  std::optional<FusedKernel> fused;
  /// Set by a layout pass (Flatten, Decompose, LayoutMorph) and refined by
  /// the sparsity passes and Compress24.
  std::optional<MatrixProgram> matrix;
  /// Set by layout search: every candidate it scored, best first.
  std::vector<LayoutCandidate> layoutCandidates;

  int findGrid(llvm::StringRef name) const;
  const Update *updateOf(int grid) const;
  /// The root node of every update, in update order (inlined forms).
  std::vector<int> roots() const;
  /// The roots as written: every update's and every stage's.
  std::vector<int> writtenRoots() const;
  /// True when some update reads a stage or a new value (written != root).
  bool hasStages() const;
  /// True when the updates use the step index t or a coordinate.
  bool usesStepOrPoint() const;
  /// Whether the grids differ in element type.
  bool mixedTypes() const;
  /// Sets compType from the grids' types (after sema or --type).
  void updateTypes();
  /// The offsets of the live reads of updated grids, one per read node.
  std::vector<Offset> updatedReads() const;
  /// Largest |offset| along `axis` over reads of updated grids: the halo one
  /// time step needs in a tile.
  int updatedRadius(int axis) const;
  /// Largest updatedRadius over the axes.
  int maxUpdatedRadius() const;
  /// Largest |offset| over all reads and axes.
  int radius() const;
  /// True when every update has a linear form.
  bool isLinear() const;
  /// Changes the element type of every grid (the `--type` override).
  void setElemType(ElemType t);
};

struct Module {
  std::vector<Stencil> stencils;
};

} // namespace stencilc

#endif // STENCILC_IR_STENCIL_H
