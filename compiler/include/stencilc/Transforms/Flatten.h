//===- Flatten.h - im2row: the kernel as one row of A -----------*- C++ -*-===//
//
// ConvStencil-style flattening (SparStencil §3.1's starting point): every
// output point is its own patch, A is the kernel as a single row (one
// column per tap) and each column of B is the input window of one output.
// It fills one of the fragment's M rows, so its sparsity factor S is at
// most 1/M; the other layouts exist to do better.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_TRANSFORMS_FLATTEN_H
#define STENCILC_TRANSFORMS_FLATTEN_H

#include "stencilc/IR/Stencil.h"
#include "stencilc/Support/Diagnostics.h"

namespace stencilc {

/// Builds the im2row MatrixProgram of the stencil's (fused) kernel.
bool flattenStencil(Stencil &stencil, DiagnosticEngine &diags, int arch = 90);

} // namespace stencilc

#endif // STENCILC_TRANSFORMS_FLATTEN_H
