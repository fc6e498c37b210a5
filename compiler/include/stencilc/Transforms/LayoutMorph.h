//===- LayoutMorph.h - Flatten-and-crush into a staircase -------*- C++ -*-===//
//
// SparStencil §3.1: a patch of r2 x r1 outputs (r1 along the fastest axis)
// reads a (ky+r2-1) x (kx+r1-1) input patch, which B gathers once, with no
// duplicates (the "crush" of im2row's horizontal and vertical duplicates).
// A' (m' = r1*r2 rows, k' = (kx+r1-1)(ky+r2-1) columns) then has the
// self-similar staircase property: ky-staircase at block level (blocks are
// input rows), kx-staircase inside each nonzero block. In 1-D r2 is 1; in
// 3-D the patch is 1 x r2 x r1 and the column blocks are (z, y) input rows.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_TRANSFORMS_LAYOUTMORPH_H
#define STENCILC_TRANSFORMS_LAYOUTMORPH_H

#include "stencilc/IR/Stencil.h"
#include "stencilc/Support/Diagnostics.h"

#include <string>

namespace stencilc {

/// What the staircase verifier found in A.
struct StaircaseReport {
  /// Every nonzero lies inside the staircase band, at block level and at
  /// element level: columns farther apart than the band never conflict
  /// (SparStencil Theorem 5).
  bool contained = false;
  /// The nonzeros fill the band exactly (no holes): the hierarchical
  /// two-level matching is then minimal (Theorem 6).
  bool exact = false;
  /// Why `contained` or `exact` fails, for diagnostics and tests.
  std::string why;
};

/// Checks A against the staircase the layout claims (`blockRows`,
/// `blockCols`, `staircaseK`, `elementK` of the program): block (i, j) may
/// be nonzero only when i <= j < i + staircaseK, and inside it element
/// (r, c) only when r <= c < r + elementK.
StaircaseReport verifyStaircase(const MatrixProgram &program);

/// Builds the MatrixProgram of the stencil's fused kernel (or of its single
/// linear update) with patch r1 x r2. Reports an error and returns false
/// for a stencil that is not linear in one grid, or for r1, r2 < 1.
bool morphLayout(Stencil &stencil, int r1, int r2, DiagnosticEngine &diags,
                 int arch = 90);

} // namespace stencilc

#endif // STENCILC_TRANSFORMS_LAYOUTMORPH_H
