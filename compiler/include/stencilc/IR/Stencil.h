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

struct AxisBoundary {
  BoundaryKind kind = BoundaryKind::Dirichlet;
  double value = 0; ///< Dirichlet only.
  llvm::SMLoc valueLoc; ///< Dirichlet only: where the value is written.
};

struct Grid {
  std::string name;
  llvm::SMLoc loc;
  ElemType type = ElemType::F32;
  bool updated = false;
  /// One entry per axis.
  std::vector<AxisBoundary> boundary;
  bool hasBoundary = false;
  llvm::SMLoc boundaryLoc;
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
};

llvm::StringRef opName(Op op);
inline bool isBinaryOp(Op op) {
  return op == Op::Add || op == Op::Sub || op == Op::Mul || op == Op::Div ||
         op == Op::Min || op == Op::Max;
}

/// One expression node. Operands are node indices smaller than its own.
struct Node {
  Op op = Op::Const;
  int lhs = -1, rhs = -1;
  double value = 0;   ///< Const.
  int index = -1;     ///< Param: parameter index. Read: grid index.
  Offset offset{};    ///< Read.
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
  int read(int grid, const Offset &off, llvm::SMLoc loc = {});
  int param(int index, llvm::SMLoc loc = {});
  int unary(Op op, int operand, llvm::SMLoc loc = {}, int exponent = 0);
  int binary(Op op, int lhs, int rhs, llvm::SMLoc loc = {});
  /// The sum of `terms` (at least one) as a balanced tree of additions, so
  /// that long sums stay shallow; the left half's nodes come first.
  int balancedSum(llvm::ArrayRef<int> terms, llvm::SMLoc loc = {});

  const Node &operator[](int i) const { return nodes[i]; }
  size_t size() const { return nodes.size(); }
  const std::vector<Node> &all() const { return nodes; }

  /// Marks the nodes reachable from `roots`; the result is indexed by node.
  std::vector<bool> reachable(const std::vector<int> &roots) const;
  /// True when the node depends on no grid read.
  bool isGridFree(int i) const;

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
  int root = -1;
  llvm::SMLoc loc;
  std::optional<LinearForm> linear;
  /// Reach of the expression along each axis, below and above: the width of
  /// a `fixed` boundary band.
  std::array<int, kMaxDims> reachLo{}, reachHi{};
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
};

struct Stencil {
  std::string name;
  llvm::SMLoc loc;
  int dims = 0;
  ElemType elemType = ElemType::F32;
  std::vector<Grid> grids;
  std::vector<Param> params;
  std::vector<Update> updates;
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
  /// The root node of every update, in update order.
  std::vector<int> roots() const;
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
