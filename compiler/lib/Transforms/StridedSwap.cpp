//===- StridedSwap.cpp - SPIDER's rule-based column swap ------------------===//

#include "stencilc/Transforms/StridedSwap.h"

#include <numeric>

using namespace stencilc;

std::vector<int> stencilc::stridedSwapOrder(const MatrixProgram &p,
                                            std::string &why, bool adjacent) {
  if (p.layout != MatrixLayout::Decompose) {
    why = "it applies to the decompose layout, not " +
          matrixLayoutName(p.layout).str();
    return {};
  }
  int n = p.rows();
  if (n % 2) {
    why = "it needs an even number of rows per patch, not " +
          std::to_string(n) + " (decompose{rows=...})";
    return {};
  }
  if (p.elementK > n) {
    why = "the kernel is " + std::to_string(p.elementK) +
          " wide along the fastest axis, more than the " + std::to_string(n) +
          " rows per patch; use decompose{rows=" + std::to_string(p.elementK) +
          "} or more";
    return {};
  }
  if (p.blockCols <= 0 || p.cols() != p.blockCols * 2 * n) {
    why = "its blocks are not 2n = " + std::to_string(2 * n) + " columns wide";
    return {};
  }
  std::vector<int> order(p.cols());
  std::iota(order.begin(), order.end(), 0);
  if (adjacent) {
    if (p.shape.type == MmaType::TF32) {
      why = "adjacent pairs need the 2:4 pattern; tf32 is 1:2";
      return {};
    }
    if (p.elementK > n - 1) {
      why = "adjacent pairs need a kernel at most n - 1 = " +
            std::to_string(n - 1) + " wide, not " + std::to_string(p.elementK);
      return {};
    }
    for (int b = 0; b < p.blockCols; ++b)
      for (int j = 0; j < n; j += 2) {
        int *g = &order[b * 2 * n + 2 * j];
        int base = b * 2 * n;
        g[0] = base + j;
        g[1] = base + j + 1;
        g[2] = base + j + n;
        g[3] = base + j + n + 1;
      }
    return order;
  }
  for (int b = 0; b < p.blockCols; ++b)
    for (int j = 1; j < n; j += 2)
      std::swap(order[b * 2 * n + j], order[b * 2 * n + j + n - 1]);
  return order;
}

bool stencilc::stridedSwap(Stencil &s, DiagnosticEngine &diags, bool adjacent) {
  if (!s.matrix) {
    diags.error(s.loc, "strided-swap needs the decompose pass first");
    return false;
  }
  MatrixProgram &p = *s.matrix;
  if (p.pattern != SparsityPattern::Dense) {
    diags.error(s.loc, "strided-swap of stencil '" + s.name +
                           "': the matrix is already " +
                           sparsityPatternName(p.pattern) + " sparse");
    return false;
  }
  std::vector<FragmentShape> shapes =
      legalFragments(p.shape.type, true, p.arch);
  if (shapes.empty()) {
    diags.error(s.loc, "strided-swap of stencil '" + s.name +
                           "': there are no sparse tensor cores for " +
                           mmaTypeName(p.shape.type));
    return false;
  }
  std::string why;
  std::vector<int> order = stridedSwapOrder(p, why, adjacent);
  if (order.empty()) {
    diags.error(s.loc,
                "strided-swap cannot permute stencil '" + s.name + "': " + why);
    return false;
  }
  p.shape = shapes.front();
  p.pattern = p.shape.type == MmaType::TF32 ? SparsityPattern::OneOfTwo
                                            : SparsityPattern::TwoOfFour;
  // Whole fragments: zero columns up to the shape's logical K.
  int k = p.shape.k, appended = 0;
  for (; order.size() % k; ++appended)
    order.push_back(-1);
  p.permuteColumns(order);
  computeMatrixStats(p);
  p.stats.fragmentPadding = appended;
  std::string bad = verifyMatrixProgram(p);
  if (!bad.empty()) {
    diags.error(s.loc, "internal error: strided-swap produced an invalid "
                       "matrix for stencil '" +
                           s.name + "': " + bad);
    return false;
  }
  return true;
}
