//===- Decompose.cpp - One banded matrix per kernel row -------------------===//

#include "stencilc/Transforms/Decompose.h"
#include "stencilc/Transforms/PatchLayout.h"
#include "stencilc/IR/ElemType.h"

using namespace stencilc;

bool stencilc::decomposeStencil(Stencil &s, int rows, DiagnosticEngine &diags,
                                int arch) {
  if (!checkArch(s, "decompose", arch, diags))
    return false;
  std::optional<LayoutKernel> k = layoutKernel(s, "decompose", diags);
  if (!k)
    return false;
  int fast = s.dims - 1;
  int kx = k->extent(fast);
  if (rows == 0)
    rows = (kx + 2) / 2 * 2;
  if (rows < 1 || rows > 64) {
    diags.error(s.loc, "decompose needs 1 to 64 rows per patch, not " +
                           llvm::Twine(rows));
    return false;
  }
  Offset patch{1, 1, 1};
  patch[fast] = rows;
  int width = rows + kx - 1;
  int blockWidth = width <= 2 * rows ? 2 * rows : width;
  // The input box with the fastest axis split off: one block per kernel
  // row, its band columns, then the block's padding. For 16-bit grids,
  // when the band starts on an odd offset and the block has padding, one
  // padding column leads, so that the block starts on an even offset: B's
  // column pairs are then adjacent inputs at an even offset, which load as
  // one word with the patch on an even (16-byte aligned) output.
  std::vector<MatrixColumn> box = inputBoxColumns(s.dims, *k, patch);
  const bool halves = elemTypeBytes(s.grids[k->grid].type) == 2;
  const int lead =
      halves && (k->lo[fast] & 1) && blockWidth > width ? 1 : 0;
  std::vector<MatrixColumn> cols;
  int kernelRows = static_cast<int>(box.size()) / width;
  for (int b = 0; b < kernelRows; ++b) {
    for (int x = 0; x < lead; ++x)
      cols.push_back(MatrixColumn{{}, true, -1});
    for (int x = 0; x < width; ++x) {
      MatrixColumn c = box[b * width + x];
      c.origin = static_cast<int>(cols.size());
      cols.push_back(c);
    }
    for (int x = width + lead; x < blockWidth; ++x)
      cols.push_back(MatrixColumn{{}, true, -1});
  }
  MatrixProgram p = buildPatchProgram(s, *k, MatrixLayout::Decompose, patch,
                                      std::move(cols), arch);
  p.r1 = rows;
  p.blockRows = 1;
  p.blockCols = kernelRows;
  p.staircaseK = kernelRows;
  p.elementK = kx;
  s.matrix = std::move(p);
  return true;
}
