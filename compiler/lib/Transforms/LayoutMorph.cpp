//===- LayoutMorph.cpp - Flatten-and-crush into a staircase ---------------===//

#include "stencilc/Transforms/LayoutMorph.h"
#include "stencilc/Transforms/PatchLayout.h"

using namespace stencilc;

StaircaseReport stencilc::verifyStaircase(const MatrixProgram &p) {
  StaircaseReport r;
  if (p.staircaseK <= 0 || p.elementK <= 0) {
    r.why = "the layout claims no staircase";
    return r;
  }
  if (p.blockRows <= 0 || p.blockCols <= 0 || p.rows() % p.blockRows ||
      p.cols() % p.blockCols) {
    r.why = "A's size is not a whole number of blocks";
    return r;
  }
  int bh = p.rows() / p.blockRows, bw = p.cols() / p.blockCols;
  r.contained = r.exact = true;
  for (int i = 0; i < p.rows() && r.contained; ++i)
    for (int j = 0; j < p.cols(); ++j) {
      int bi = i / bh, bj = j / bw, ei = i % bh, ej = j % bw;
      bool inBlockBand = bi <= bj && bj < bi + p.staircaseK;
      bool inBand = inBlockBand && ei <= ej && ej < ei + p.elementK;
      if (p.nonzero(i, j) && !inBand) {
        r.contained = r.exact = false;
        r.why = "row " + std::to_string(i) + ", column " + std::to_string(j) +
                " is nonzero outside the " +
                (inBlockBand ? "element-level" : "block-level") + " staircase";
        break;
      }
      if (!p.nonzero(i, j) && inBand && r.exact) {
        r.exact = false;
        r.why = "row " + std::to_string(i) + ", column " + std::to_string(j) +
                " is a hole inside the staircase";
      }
    }
  return r;
}

bool stencilc::morphLayout(Stencil &s, int r1, int r2, DiagnosticEngine &diags,
                           int arch) {
  if (!checkArch(s, "layout-morph", arch, diags))
    return false;
  std::optional<LayoutKernel> k = layoutKernel(s, "layout-morph", diags);
  if (!k)
    return false;
  if (r1 < 1 || r2 < 1 || r1 * r2 > 64) {
    diags.error(s.loc, "layout-morph needs r1, r2 >= 1 and r1 * r2 <= 64, "
                       "not r1=" +
                           llvm::Twine(r1) + ", r2=" + llvm::Twine(r2));
    return false;
  }
  if (s.dims == 1 && r2 != 1) {
    diags.error(s.loc, "layout-morph of the 1-D stencil '" + s.name +
                           "' takes r2=1, not r2=" + llvm::Twine(r2));
    return false;
  }
  int fast = s.dims - 1;
  Offset patch{1, 1, 1};
  patch[fast] = r1;
  if (s.dims >= 2)
    patch[fast - 1] = r2;
  MatrixProgram p = buildPatchProgram(s, *k, MatrixLayout::Morph, patch,
                                      inputBoxColumns(s.dims, *k, patch), arch);
  p.r1 = r1;
  p.r2 = r2;
  int kx = k->extent(fast);
  if (s.dims == 1) {
    p.staircaseK = 1;
    p.elementK = kx;
  } else if (s.dims == 2) {
    // Blocks are output rows x input rows (SparStencil Fig. 5).
    int ky = k->extent(0);
    p.blockRows = r2;
    p.blockCols = ky + r2 - 1;
    p.staircaseK = ky;
    p.elementK = kx;
  }
  // In 3-D the column blocks are (z, y) input rows, which do not form one
  // staircase; the program claims none and sparsity conversion matches
  // the conflict graph in general.
  s.matrix = std::move(p);
  return true;
}
