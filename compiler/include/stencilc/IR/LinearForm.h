//===- LinearForm.h - Extracting taps from an update ------------*- C++ -*-===//
//
// Decides whether an update is affine in its grid reads with grid-free
// coefficients, and if so extracts the taps {(grid, offset) -> coefficient}.
// This is the form the tensor-core passes consume.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_IR_LINEARFORM_H
#define STENCILC_IR_LINEARFORM_H

#include "stencilc/IR/Stencil.h"

namespace stencilc {

/// Computes the linear form of the expression rooted at `root`, adding the
/// coefficient nodes it needs to `graph`. Returns nullopt when the
/// expression is not affine in the grid reads.
std::optional<LinearForm> extractLinearForm(ExprGraph &graph, int root);

/// The linear part of an update that is affine in its field reads with
/// grid-free coefficients, where the terms that read no field may depend on
/// the step and the point (a source): the taps, without a constant. Returns
/// nullopt where a coefficient would depend on a field, the step or the
/// point. The amplification bound of --check uses it (docs/benchmarks.md,
/// "Error bounds").
std::optional<LinearForm> extractLinearPart(ExprGraph &graph, int root);

/// Evaluates a grid-free node with the given parameter values, in double.
double evaluateGridFree(const ExprGraph &graph, int node,
                        const std::vector<double> &params);
/// The value of every grid-free node in one sweep (NaN for nodes that read
/// a grid), indexed by node.
std::vector<double> evaluateGridFreeAll(const ExprGraph &graph,
                                        const std::vector<double> &params);

} // namespace stencilc

#endif // STENCILC_IR_LINEARFORM_H
