//===- SparsityConversion.h - A into 1:2 / 2:4 by PIT -----------*- C++ -*-===//
//
// SparStencil §3.2. Sparse tensor cores need every row of A to hold at most
// one nonzero per aligned pair of columns (1:2, tf32) or two per aligned
// group of four (2:4, f16 and bf16). PIT permutes the columns of A together
// with the rows of B, which leaves A * B unchanged, so the pass looks for a
// column order in which that holds. Two columns may share an aligned pair
// when they conflict in no row (the conflict graph has no edge between
// them); a column left without a partner shares its pair with a new zero
// column. The fewest zero columns is therefore the number of columns a
// maximum matching of the non-conflict graph leaves unmatched (Problem 1).
// Two such pairs make a valid 2:4 group.
//
// On a layout-morphed A whose staircase the verifier finds exact, the
// hierarchical two-level matching (Algorithm 1) finds a matching in linear
// time. It is not always minimal (see planSparsity), so its result is
// checked against a lower bound and completed by the blossom algorithm when
// it falls short. Any other A goes to the blossom algorithm directly.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_TRANSFORMS_SPARSITYCONVERSION_H
#define STENCILC_TRANSFORMS_SPARSITYCONVERSION_H

#include "stencilc/IR/MatrixProgram.h"
#include "stencilc/IR/Stencil.h"
#include "stencilc/Support/Diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stencilc {

/// The conflict graph of A's columns (SparStencil Def. "conflict graph"):
/// columns i and j conflict when some row of A is nonzero in both, so they
/// cannot share an aligned 1:2 pair. Stored as one bit row per column.
struct ConflictGraph {
  int n = 0;
  /// bits[i], bit j: columns i and j conflict. A column never conflicts
  /// with itself; an all-zero column conflicts with nothing.
  std::vector<std::vector<uint64_t>> bits;

  bool conflict(int i, int j) const {
    return (bits[i][static_cast<size_t>(j) >> 6] >> (j & 63)) & 1;
  }
  /// How many columns conflict with column `i`.
  int degree(int i) const;
};

/// Builds the conflict graph of `program`'s A (whose size must be rows x
/// columns).
ConflictGraph buildConflictGraph(const MatrixProgram &program);

/// SparStencil's Algorithm 1 on a self-similar staircase of `blocks` block
/// columns of `blockSize` columns each (column index = block * blockSize +
/// element), with band width `kBlock` between blocks and `kElem` inside
/// them. Block i pairs with block i + s1, s1 = max(blocks/2, kBlock),
/// element by element; inside each block left over, element u pairs with
/// u + s2, s2 = max(blockSize/2, kElem). Both strides are at least the band
/// width, so the pairs never conflict (Theorem 5). Returns mate per column,
/// -1 where a column is left for a zero column; empty for an empty shape.
std::vector<int> hierarchicalMatching(int blocks, int blockSize, int kBlock,
                                      int kElem);

/// What planSparsity chose.
struct SparsityResult {
  /// The PIT column order (MatrixProgram::permuteColumns): original column
  /// indices, -1 for a new zero column. Dropped columns do not appear.
  std::vector<int> order;
  /// Zero columns added as partners of unmatched columns: the minimal p of
  /// Problem 1 (SparStencil §3.2).
  int matchPadding = 0;
  /// Zero columns that complete the last 2:4 group (0 or 2).
  int groupPadding = 0;
  /// Zero columns that round the width up to the fragment's logical K.
  int fragmentPadding = 0;
  /// The hierarchical matching's result was kept (minimal as it was).
  bool hierarchical = false;
  /// Columns left out because A is zero in them, padding included: their
  /// B rows contribute nothing to the product.
  int droppedZeroColumns = 0;
  /// The pattern and the sparse fragment (largest K legal for the
  /// program's MmaType and arch) the order is padded for.
  SparsityPattern pattern = SparsityPattern::TwoOfFour;
  FragmentShape shape;
};

/// Plans the conversion of `program`'s A to `pattern` (OneOfTwo or
/// TwoOfFour): drops all-zero columns, matches the rest with the fewest
/// zero partners, and lays the pairs out as aligned 1:2 pairs and 2:4
/// groups padded to the fragment's K. The program is not changed. Returns
/// nullopt and sets `why` when the pattern does not fit the program's
/// MmaType (f64 has no sparse shapes; tf32 is 1:2 only; f16 and bf16 are
/// 2:4 only) or A is malformed.
std::optional<SparsityResult> planSparsity(const MatrixProgram &program,
                                           SparsityPattern pattern,
                                           std::string &why);

/// The sparsity-conversion pass. `pattern` is 0 (automatic: 2:4 for f16
/// and bf16, 1:2 for tf32), 24 (2:4) or 12 (1:2). Applies planSparsity's
/// order to the stencil's MatrixProgram, switches it to the sparse
/// fragment and records the padding in its stats. Reports an error and
/// returns false when there is no MatrixProgram yet, or the pattern cannot
/// be used for the program's operand type.
bool convertSparsity(Stencil &stencil, int pattern, DiagnosticEngine &diags);

} // namespace stencilc

#endif // STENCILC_TRANSFORMS_SPARSITYCONVERSION_H
