//===- Stages.h - Stages and new values inlined into updates ----*- C++ -*-===//
//
// An update as written may read stages (`stage lap = ...;`) and the new
// values of grids updated before it (`ex'`) at offsets. Where every such
// read lies inside the domain, the update equals the expression with each
// of them replaced by its own expression, shifted to the point it reads:
// an expression of grid reads only, which the linear form, the tiling and
// the interior of every kernel use (Update::root). Near the domain's edge a
// read of a stage or new value applies that field's boundary conditions,
// and the kernels compute the update as written (Update::written).
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_IR_STAGES_H
#define STENCILC_IR_STAGES_H

#include "stencilc/IR/Stencil.h"

namespace stencilc {

/// Sets every update's `root` to its written form with the stages and new
/// values it reads inlined (a new value rounded to its grid's element type
/// where that is narrower than the compute type), and its `span`: how far
/// from the point the inlined form reads, or an inlined stage or new value
/// lies. Needs `compType` set.
void inlineStages(Stencil &s);

} // namespace stencilc

#endif // STENCILC_IR_STAGES_H
