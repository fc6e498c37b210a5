//===- TemporalFusion.h - t steps of a linear stencil as one ----*- C++ -*-===//
//
// The t-step kernel of a linear stencil is the t-fold self-convolution of its
// taps (Gu et al., eq. 9-10): radius t*r, K^(t) taps, redundancy
// alpha = K^(t) / (t*K). It equals t steps of the stencil only where no step
// reads across a non-periodic boundary, i.e. at least t*reach away from it;
// that boundary band is recorded so code generation computes it step by
// step. Periodic axes have no band: the convolution wraps.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_TRANSFORMS_TEMPORALFUSION_H
#define STENCILC_TRANSFORMS_TEMPORALFUSION_H

#include "stencilc/IR/Stencil.h"
#include "stencilc/Support/Diagnostics.h"

namespace stencilc {

/// Fuses `steps` time steps of the stencil's single linear update. The
/// fused taps' coefficients are nodes of `stencil.graph` (sums of products
/// of the original coefficients, folded where they are constant). Sets
/// `stencil.fused`; reports an error and returns false when the stencil is
/// not a linear stencil of one grid without a constant term.
bool fuseTemporally(Stencil &stencil, int steps, DiagnosticEngine &diags);

} // namespace stencilc

#endif // STENCILC_TRANSFORMS_TEMPORALFUSION_H
