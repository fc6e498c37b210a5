//===- Decompose.h - One banded matrix per kernel row -----------*- C++ -*-===//
//
// TCStencil / SPIDER §3.1.1: a patch is n consecutive outputs along the
// fastest axis. Each row of the kernel (each offset along the slower axes)
// gives an n x (n + kx - 1) banded block of A, the row repeated down the
// diagonal; the blocks sit side by side, so D = sum of the row products.
// Each block is padded with zero columns to 2n when n >= kx - 1, which is
// the shape SPIDER's strided swap turns into 1:2 pairs. SPIDER's n is
// kx + 1 (2r + 2 for a symmetric kernel), the smallest n with density at
// most 1/2.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_TRANSFORMS_DECOMPOSE_H
#define STENCILC_TRANSFORMS_DECOMPOSE_H

#include "stencilc/IR/Stencil.h"
#include "stencilc/Support/Diagnostics.h"

namespace stencilc {

/// Builds the row-decomposed MatrixProgram with `rows` outputs per patch
/// (0: SPIDER's kx + 1, rounded up to even).
bool decomposeStencil(Stencil &stencil, int rows, DiagnosticEngine &diags,
                      int arch = 90);

} // namespace stencilc

#endif // STENCILC_TRANSFORMS_DECOMPOSE_H
