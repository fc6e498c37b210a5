//===- PatchLayout.h - The box-patch construction of the layouts -*- C++
//-*-===//
//
// Flatten, Decompose and LayoutMorph all write a linear stencil as
// D = A * B over patches: a box of outputs (the patch) reads the box of
// inputs the kernel reaches from it, and A[i][j] is the tap at
// input_j - output_i. They differ in the patch and in how the input box is
// laid out as columns; this is the construction they share.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_TRANSFORMS_PATCHLAYOUT_H
#define STENCILC_TRANSFORMS_PATCHLAYOUT_H

#include "stencilc/IR/Stencil.h"
#include "stencilc/Support/Diagnostics.h"

#include <map>
#include <optional>

namespace stencilc {

/// The linear kernel a layout multiplies: the fused kernel when temporal
/// fusion ran, else the single linear update of one grid.
struct LayoutKernel {
  int grid = 0;
  int steps = 1;
  double alpha = 1;
  std::map<Offset, int> taps; ///< Offset -> coefficient node.
  Offset lo{}, hi{};          ///< Bounding box of the taps.
  int extent(int axis) const { return hi[axis] - lo[axis] + 1; }
};

/// Extracts the kernel, or reports why `pass` cannot run on the stencil.
std::optional<LayoutKernel> layoutKernel(const Stencil &s, llvm::StringRef pass,
                                         DiagnosticEngine &diags);

/// A program whose patch is `patch` outputs per axis and whose columns are
/// `columns` (offsets from the patch origin; zero columns allowed); fills A
/// from the kernel's taps and sets the shape to the largest-K dense
/// fragment of the grid's type on `arch` (80, 86, 89, 90, 100 or 120).
MatrixProgram buildPatchProgram(const Stencil &s, const LayoutKernel &k,
                                MatrixLayout layout, const Offset &patch,
                                std::vector<MatrixColumn> columns, int arch);

/// Reports an error unless `arch` is an architecture's number (GpuArch.h).
bool checkArch(const Stencil &s, llvm::StringRef pass, int arch,
               DiagnosticEngine &diags);

/// Every offset of the input box a patch reads, row-major (axis 0
/// slowest): [lo, patch - 1 + hi] on each axis.
std::vector<MatrixColumn> inputBoxColumns(int dims, const LayoutKernel &k,
                                          const Offset &patch);

} // namespace stencilc

#endif // STENCILC_TRANSFORMS_PATCHLAYOUT_H
