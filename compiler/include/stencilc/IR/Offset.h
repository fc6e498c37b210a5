//===- Offset.h - Grid offsets ----------------------------------*- C++ -*-===//
//
// The offset of a read relative to the point being updated, one entry per
// axis (axis 0 slowest). Shared by the Stencil IR and the MatrixProgram.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_IR_OFFSET_H
#define STENCILC_IR_OFFSET_H

#include <array>

namespace stencilc {

constexpr int kMaxDims = 3;
/// Largest |offset| a single read may have (DESIGN.md §3).
constexpr int kMaxRadius = 8;

using Offset = std::array<int, kMaxDims>;

} // namespace stencilc

#endif // STENCILC_IR_OFFSET_H
