//===- StridedSwap.h - SPIDER's rule-based column swap ----------*- C++ -*-===//
//
// SPIDER §3.1.2: in a row-decomposed A every block is n rows by 2n columns
// and row i is nonzero only in columns i .. i + kx - 1. Columns j and j + n
// never share a row when kx <= n, so swapping each odd column j < n with
// column j + n - 1 leaves every aligned pair of positions holding such a
// pair: (2m, 2m + n) in the first half, (2m + 1, 2m + 1 + n) in the second.
// That is 1:2 sparsity for tf32, and two pairs per group of four give 2:4
// for f16 and bf16. The swap is O(1) per column and needs no search; the
// same permutation of B's rows becomes gather-table arithmetic (PIT).
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_TRANSFORMS_STRIDEDSWAP_H
#define STENCILC_TRANSFORMS_STRIDEDSWAP_H

#include "stencilc/IR/Stencil.h"
#include "stencilc/Support/Diagnostics.h"

#include <string>
#include <vector>

namespace stencilc {

/// The column order of the strided swap for a Decompose program, or an
/// empty vector with `why` set when the rule does not apply.
///
/// With `adjacent` (2:4 only, and kx <= n - 1), each group of four holds
/// columns j, j + 1, j + n, j + n + 1 (j even) instead of SPIDER's j,
/// j + n, j + 1, j + n + 1: the same pairs of pairs, still 2:4 (j + 1 and
/// j + n are n - 1 >= kx apart), but the halves of one B register are
/// neighbours in memory, so the kernel loads them as one word.
std::vector<int> stridedSwapOrder(const MatrixProgram &program,
                                  std::string &why, bool adjacent = false);

/// Applies the strided swap and switches the program to the sparse shape
/// of its type (2:4 for f16/bf16, 1:2 for tf32).
bool stridedSwap(Stencil &stencil, DiagnosticEngine &diags,
                 bool adjacent = false);

} // namespace stencilc

#endif // STENCILC_TRANSFORMS_STRIDEDSWAP_H
