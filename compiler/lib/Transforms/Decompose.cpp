//===- Decompose.cpp - One banded matrix per kernel row -------------------===//

#include "stencilc/Transforms/Decompose.h"
#include "stencilc/Transforms/PatchLayout.h"

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
  // row, its band columns first, then the block's padding.
  std::vector<MatrixColumn> box = inputBoxColumns(s.dims, *k, patch);
  std::vector<MatrixColumn> cols;
  int kernelRows = static_cast<int>(box.size()) / width;
  for (int b = 0; b < kernelRows; ++b) {
    for (int x = 0; x < width; ++x) {
      MatrixColumn c = box[b * width + x];
      c.origin = static_cast<int>(cols.size());
      cols.push_back(c);
    }
    for (int x = width; x < blockWidth; ++x)
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
