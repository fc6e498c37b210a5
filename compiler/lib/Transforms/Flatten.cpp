//===- Flatten.cpp - im2row: the kernel as one row of A -------------------===//

#include "stencilc/Transforms/Flatten.h"
#include "stencilc/Transforms/PatchLayout.h"

using namespace stencilc;

bool stencilc::flattenStencil(Stencil &s, DiagnosticEngine &diags, int arch) {
  if (!checkArch(s, "flatten", arch, diags))
    return false;
  std::optional<LayoutKernel> k = layoutKernel(s, "flatten", diags);
  if (!k)
    return false;
  // Only the taps: a hole of the kernel would be a zero column of a
  // one-row A, which no product needs.
  std::vector<MatrixColumn> cols;
  for (const auto &[offset, coeff] : k->taps)
    cols.push_back(MatrixColumn{offset, false, static_cast<int>(cols.size())});
  s.matrix = buildPatchProgram(s, *k, MatrixLayout::Flatten, {1, 1, 1},
                               std::move(cols), arch);
  return true;
}
