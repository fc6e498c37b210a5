//===- Weights.h - The rounded weights of a linear update -------*- C++ -*-===//
//
// The coefficients of a linear form are computed in double and rounded to
// the type that multiplies with them (the compute type on CUDA cores, the
// operand type on tensor cores) by stencilc::rt::roundWeights, which keeps
// the sum of the weights of each grid (docs/language.md §6.4). The
// compiler folds constant weights here; generated host code rounds the
// ones that depend on parameters with the same function at run time.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_IR_WEIGHTS_H
#define STENCILC_IR_WEIGHTS_H

#include "stencilc/IR/Stencil.h"

#include <functional>
#include <vector>

namespace stencilc {

/// The order in which roundWeights moves the weights of `taps` that tie in
/// magnitude: per grid, the centre tap first, then by distance from it
/// (sum of |offset|), then in the taps' order. Returns tap indices grouped
/// by grid (ascending), each group in that order.
std::vector<std::vector<int>> weightGroups(const std::vector<Tap> &taps);

/// One weight per tap: the value of its coefficient node (`nodeValues`,
/// indexed by node) rounded by `round`, keeping each grid's sum.
std::vector<double>
roundedTapWeights(const std::vector<Tap> &taps,
                  const std::vector<double> &nodeValues,
                  const std::function<double(double)> &round);

/// The distinct coefficient nodes of `taps` in roundWeights' order (the
/// groups of weightGroups, one after another), with how many taps use each.
struct WeightNodes {
  std::vector<int> nodes, counts;
};
WeightNodes weightNodes(const std::vector<Tap> &taps);

/// The taps the tensor cores multiply by: the fused kernel's where the
/// stencil is fused, else its one linear update's.
std::vector<Tap> kernelTaps(const Stencil &s);

/// The taps of one grid whose coefficient nodes are shared (tensor-core
/// operands hold a node once per slot): rounds the value of every node the
/// taps use, in place in `nodeValues`, keeping the sum over taps.
void roundTapNodes(const std::vector<Tap> &taps,
                   std::vector<double> &nodeValues,
                   const std::function<double(double)> &round);

/// Whether the weights of `taps` depend on a parameter of `s`: then the
/// host rounds all of them at run time into the kernel's arguments
/// (Args::w), and the compiler folds none.
bool weightsAtRunTime(const Stencil &s, const std::vector<Tap> &taps);

/// Rounding to the compute type of `t`'s grids, as a function.
std::function<double(double)> roundingTo(ElemType t);

} // namespace stencilc

#endif // STENCILC_IR_WEIGHTS_H
