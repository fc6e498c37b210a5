//===- MatrixProgram.h - A linear stencil as tensor-core products -*- C++
//-*-===//
//
// The MatrixProgram (DESIGN.md §2) describes one *patch* of outputs of a
// linear (possibly fused) stencil as the product D = A * B:
//
//   - the rows of A and D are the patch's output points (`outputs`, offsets
//     from the patch origin): the scatter from D to the output grid;
//   - the columns of A and the rows of B are input points (`columns`,
//     offsets from the patch origin): the gather table from the input tile
//     to B. A column may be a padding zero column, whose B row is zero;
//   - the columns of B and D are patches: patch p at origin P_p has
//     B[j][p] = in[P_p + columns[j].offset] and out[P_p + outputs[i]] =
//     D[i][p]. Patch origins step by `patch` along each axis.
//   - A[i][j] is the fused tap at columns[j].offset - outputs[i], a
//     grid-free node of the stencil's expression graph (its value depends
//     on run-time parameters), or a structural zero (-1).
//
// Flatten, Decompose and LayoutMorph build it; SparsityConversion and
// StridedSwap permute its columns (PIT: the columns of A together with the
// rows of B, so the product is unchanged) and pad them; Compress24 packs A
// into the PTX register layout of its fragment shape (PTX.md). The CPU
// emulator (MatrixEmulator.h) executes exactly that packing.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_IR_MATRIXPROGRAM_H
#define STENCILC_IR_MATRIXPROGRAM_H

#include "stencilc/IR/ElemType.h"
#include "stencilc/IR/Offset.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stencilc {

/// The operand type the tensor cores multiply in. f32 grids use tf32.
enum class MmaType { F16, BF16, TF32, F64 };

llvm::StringRef mmaTypeName(MmaType t);
/// The operand type of tensor-core products on grids of type `t`.
MmaType mmaTypeFor(ElemType t);
/// Bytes of one operand as stored in a register (tf32 travels as f32).
unsigned mmaTypeBytes(MmaType t);

/// One `mma` / `mma.sp` shape. For sparse shapes `k` is the logical K (the
/// uncompressed A has k columns; the registers hold k/2).
struct FragmentShape {
  MmaType type = MmaType::F16;
  int m = 16, n = 8, k = 16;
  bool sparse = false;

  /// "m16n8k16.f16" or "m16n8k32.f16.sp".
  std::string name() const;
  bool operator==(const FragmentShape &o) const {
    return type == o.type && m == o.m && n == o.n && k == o.k &&
           sparse == o.sparse;
  }
};

/// The shapes PTX offers for `type` (PTX.md), largest K first. Sparse shapes
/// exist for f16, bf16 and tf32 only; the f64 m16n8k{4,8,16} shapes need
/// sm_90 or later (`arch` is an architecture's number, GpuArch.h: 80 to
/// 120; ptxas of CUDA 13.0 takes them for sm_100 and sm_120 too).
std::vector<FragmentShape> legalFragments(MmaType type, bool sparse, int arch);

enum class MatrixLayout { Flatten, Decompose, Morph };
llvm::StringRef matrixLayoutName(MatrixLayout l);

/// The structured sparsity A satisfies after the sparsity passes.
enum class SparsityPattern {
  Dense,    ///< No constraint: `mma.sync`.
  OneOfTwo, ///< At most one nonzero per aligned pair in each row (tf32).
  TwoOfFour ///< At most two nonzeros per aligned group of 4 (f16, bf16).
};
llvm::StringRef sparsityPatternName(SparsityPattern p);
/// 2 for 1:2, 4 for 2:4, 1 for dense.
int groupSize(SparsityPattern p);

/// One column of A, equivalently one row of B.
struct MatrixColumn {
  /// The input point, relative to the patch origin. Meaningless for a zero
  /// column.
  Offset offset{};
  /// A padding column: all zero in A, and its B row is zero (never a read
  /// of the grid, so no NaN from the halo can leak into the product). The
  /// emulator keeps this exactly; the tensor-core kernel's table-free
  /// gather instead reads a real input point times A's zero, which equals
  /// it for finite input (CodeGen/TensorCoreEmitter.h).
  bool zero = false;
  /// Index of this column in the layout pass's order; -1 for padding.
  int origin = -1;
};

/// A compressed (2:4 or 1:2) kernel matrix: for every row and every group
/// of groupSize(pattern) columns, the kept entries (groupSize/2 of them) in
/// increasing position, as PTX's ordered metadata requires.
struct CompressedMatrix {
  SparsityPattern pattern = SparsityPattern::TwoOfFour;
  int rows = 0;
  int groups = 0; ///< Column groups; the logical width is groups*groupSize.
  /// rows x groups x (groupSize/2): the coefficient node kept, or -1 for a
  /// stored zero.
  std::vector<int> values;
  /// Same shape: the position of each kept entry inside its group.
  std::vector<uint8_t> positions;
  /// rows x groups: the metadata nibble of the group (PTX.md): p0 | p1 << 2
  /// for 2:4; 0x4 or 0xE for 1:2.
  std::vector<uint8_t> nibbles;
};

/// The A operand as the registers of one warp hold it, fragment tile by
/// fragment tile. Which coefficient sits in which lane and register is a
/// compile-time table; the values come from the parameters at run time.
struct PackedFragments {
  FragmentShape shape;
  int tilesM = 0, tilesK = 0; ///< Fragment tiles of A, row-major: tile
                              ///< (tm, tk) is number tm * tilesK + tk.
  int regsPerLane = 0;        ///< A registers of one tile per lane.
  int elemsPerReg = 0;        ///< 2 for f16/bf16, 1 for tf32 and f64.
  /// [tile][lane][reg][elem]: the coefficient node of A in that slot, or -1
  /// for zero.
  std::vector<int> slots;
  /// Sparse only. The metadata registers: [metaReg][lane]. Several tiles
  /// share one register through the sparsity selector.
  std::vector<uint32_t> metadata;
  int metaRegs = 0;
  /// Sparse only, per tile: which metadata register and which selector
  /// (the `f` immediate of mma.sp) it uses.
  std::vector<int> tileMetaReg, tileSelector;

  int slot(int tile, int lane, int reg, int elem) const {
    return slots[((static_cast<size_t>(tile) * 32 + lane) * regsPerLane + reg) *
                     elemsPerReg +
                 elem];
  }
};

/// What a MatrixProgram costs, recomputed by `computeMatrixStats` after
/// every pass. Counts are per patch unless said otherwise.
struct MatrixStats {
  int rows = 0;          ///< m': outputs per patch.
  int columns = 0;       ///< Columns of A, padding included.
  int realColumns = 0;   ///< Columns that gather an input point.
  int nonzeros = 0;      ///< Structural nonzeros of A.
  int paddedRows = 0;    ///< m' rounded up to the fragment's M.
  int paddedColumns = 0; ///< Columns rounded up to the fragment's K.
  /// Gu et al.'s sparsity factor: nonzeros over the elements of the
  /// logical A the fragments cover (paddedRows x paddedColumns). A sparse
  /// shape stores half of them; its 2x rate belongs to the peak, not to S.
  double S = 0;
  double alpha = 1;             ///< Fusion redundancy (1 when unfused).
  int steps = 1;                ///< Time steps one product advances.
  int matchPadding = 0;         ///< Zero columns sparsity conversion added (p).
  int groupPadding = 0;         ///< Zero columns that complete a group.
  int fragmentPadding = 0;      ///< Zero columns up to the fragment's K.
  int64_t mmaPerPatchBlock = 0; ///< MMAs for `shape.n` patches.
  double mmaPerPoint = 0;       ///< MMAs per output point and pass.
  /// Elements moved per output point and pass: B gathered from shared
  /// memory (SparStencil's data_trans), and the ideal global traffic (one
  /// read and one write).
  double sharedBytesPerPoint = 0;
  double globalBytesPerPoint = 0;
};

struct MatrixProgram {
  MatrixLayout layout = MatrixLayout::Flatten;
  int dims = 1;
  /// The grid read and written.
  int grid = 0;
  /// Outputs per patch along each axis; patch origins step by these.
  Offset patch{1, 1, 1};
  /// LayoutMorph's (r1, r2), or Decompose's rows; 0 where unused.
  int r1 = 0, r2 = 0;
  /// The scatter: D row i is the output at patch origin + outputs[i].
  std::vector<Offset> outputs;
  /// The gather: A column j / B row j.
  std::vector<MatrixColumn> columns;
  /// rows x columns, row-major: coefficient node or -1 (structural zero).
  std::vector<int> a;
  /// Time steps the taps advance (a fused kernel) and its redundancy.
  int steps = 1;
  double alpha = 1;
  /// Block structure the layout pass produced, for the staircase verifier
  /// and the hierarchical matching: A is blockRows x blockCols blocks of
  /// (rows/blockRows) x (columns/blockCols) elements; 1 x 1 when there is
  /// none. `staircaseK` / `elementK` are the band widths expected at block
  /// and at element level (0: no staircase claimed).
  int blockRows = 1, blockCols = 1;
  int staircaseK = 0, elementK = 0;

  SparsityPattern pattern = SparsityPattern::Dense;
  FragmentShape shape;
  int arch = 90; ///< The target's number (GpuArch.h): 80, 86, ..., 120.
  /// Split-TF32 (docs/language.md §6.4), tf32 shapes only, set by
  /// compress24{split=1}: every operand x is held as two tf32 parts, hi =
  /// tf32(x) and lo = tf32(x - hi), and each fragment tile's product takes
  /// three MMAs, A_lo B_hi and A_hi B_lo into a second accumulator and
  /// A_hi B_hi into the first, which are added at the end; two MMAs where
  /// every lo part of A is zero. hi and lo share the packing (and, sparse,
  /// the metadata). MatrixStats counts the products of tiles, one MMA each.
  bool split = false;
  /// Set by Compress24.
  std::optional<CompressedMatrix> compressed;
  std::optional<PackedFragments> packed;
  MatrixStats stats;

  int rows() const { return static_cast<int>(outputs.size()); }
  int cols() const { return static_cast<int>(columns.size()); }
  int at(int row, int col) const {
    return a[static_cast<size_t>(row) * columns.size() + col];
  }
  bool nonzero(int row, int col) const { return at(row, col) >= 0; }

  /// Applies PIT: column j of the result is column `order[j]` of this
  /// program, or a new zero column where order[j] == -1. Drops packing.
  void permuteColumns(const std::vector<int> &order);
};

/// One candidate of LayoutSearch (SparStencil eq. 6-11): a layout, its
/// parameters, a fusion depth and a fragment shape, with what the layout
/// costs on a grid of the benchmark size. The cost-model issue consumes
/// these; LayoutSearch only ranks them by SparStencil's T.
struct LayoutCandidate {
  MatrixLayout layout = MatrixLayout::Morph;
  int r1 = 0, r2 = 0; ///< Morph's (r1, r2); Decompose's rows in r1.
  int steps = 1;
  FragmentShape shape;
  SparsityPattern pattern = SparsityPattern::Dense;
  bool stridedSwap = false;   ///< Decompose made sparse by SPIDER's rule.
  int mPrime = 0, kPrime = 0; ///< m' and k' (padded columns) per patch.
  int64_t nPrime = 0;         ///< n': patches over the grid.
  int64_t nMma = 0;           ///< Eq. 9, for one fused pass over the grid.
  double S = 0, alpha = 1;
  int padding = 0;                  ///< Zero columns beyond the layout's own.
  double globalBytes = 0;           ///< data_R + data_W of one pass.
  double sharedBytes = 0;           ///< data_transR + data_transW of one pass.
  double tCompute = 0, tMemory = 0; ///< Eq. 7 and 8, seconds per pass.
  double gstencils = 0; ///< Points * steps / max(tCompute, tMemory) / 1e9.
  bool chosen = false;
};

/// Recomputes `program.stats` from its current A, columns and shape.
void computeMatrixStats(MatrixProgram &program);

/// Checks the invariants every pass must keep: A's size, zero columns
/// empty in A, the sparsity pattern holding in every row and group, the
/// compressed form and packing (when present) agreeing with A. Returns an
/// empty string, or what is wrong.
std::string verifyMatrixProgram(const MatrixProgram &program);

} // namespace stencilc

#endif // STENCILC_IR_MATRIXPROGRAM_H
