//===- MatrixProgram.cpp - Names, stats, PIT and the verifier -------------===//

#include "stencilc/IR/MatrixProgram.h"

#include "llvm/ADT/Twine.h"

#include <algorithm>

using namespace stencilc;

llvm::StringRef stencilc::mmaTypeName(MmaType t) {
  switch (t) {
  case MmaType::F16:
    return "f16";
  case MmaType::BF16:
    return "bf16";
  case MmaType::TF32:
    return "tf32";
  case MmaType::F64:
    return "f64";
  }
  return "?";
}

MmaType stencilc::mmaTypeFor(ElemType t) {
  switch (t) {
  case ElemType::F16:
    return MmaType::F16;
  case ElemType::BF16:
    return MmaType::BF16;
  case ElemType::F32:
    return MmaType::TF32;
  case ElemType::F64:
    return MmaType::F64;
  }
  return MmaType::F64;
}

unsigned stencilc::mmaTypeBytes(MmaType t) {
  switch (t) {
  case MmaType::F16:
  case MmaType::BF16:
    return 2;
  case MmaType::TF32:
    return 4;
  case MmaType::F64:
    return 8;
  }
  return 8;
}

std::string FragmentShape::name() const {
  return "m" + std::to_string(m) + "n" + std::to_string(n) + "k" +
         std::to_string(k) + "." + mmaTypeName(type).str() +
         (sparse ? ".sp" : "");
}

std::vector<FragmentShape> stencilc::legalFragments(MmaType type, bool sparse,
                                                    int arch) {
  auto shapes = [&](std::initializer_list<std::array<int, 3>> mnk) {
    std::vector<FragmentShape> out;
    for (const auto &s : mnk)
      out.push_back(FragmentShape{type, s[0], s[1], s[2], sparse});
    return out;
  };
  switch (type) {
  case MmaType::F16:
  case MmaType::BF16:
    return sparse ? shapes({{16, 8, 32}, {16, 8, 16}})
                  : shapes({{16, 8, 16}, {16, 8, 8}});
  case MmaType::TF32:
    return sparse ? shapes({{16, 8, 16}, {16, 8, 8}})
                  : shapes({{16, 8, 8}, {16, 8, 4}});
  case MmaType::F64:
    if (sparse)
      return {};
    // PTX.md: the m16n8k{4,8,16} f64 shapes need sm_90; sm_100 and sm_120
    // have them too (ptxas of CUDA 13.0), sm_86 and sm_89 do not.
    return arch >= 90 ? shapes({{16, 8, 16}, {16, 8, 8}, {16, 8, 4}, {8, 8, 4}})
                      : shapes({{8, 8, 4}});
  }
  return {};
}

llvm::StringRef stencilc::matrixLayoutName(MatrixLayout l) {
  switch (l) {
  case MatrixLayout::Flatten:
    return "flatten";
  case MatrixLayout::Decompose:
    return "decompose";
  case MatrixLayout::Morph:
    return "morph";
  }
  return "?";
}

llvm::StringRef stencilc::sparsityPatternName(SparsityPattern p) {
  switch (p) {
  case SparsityPattern::Dense:
    return "dense";
  case SparsityPattern::OneOfTwo:
    return "1:2";
  case SparsityPattern::TwoOfFour:
    return "2:4";
  }
  return "?";
}

int stencilc::groupSize(SparsityPattern p) {
  switch (p) {
  case SparsityPattern::Dense:
    return 1;
  case SparsityPattern::OneOfTwo:
    return 2;
  case SparsityPattern::TwoOfFour:
    return 4;
  }
  return 1;
}

void MatrixProgram::permuteColumns(const std::vector<int> &order) {
  std::vector<MatrixColumn> newColumns;
  std::vector<int> newA(static_cast<size_t>(rows()) * order.size(), -1);
  for (size_t j = 0; j < order.size(); ++j) {
    if (order[j] < 0) {
      newColumns.push_back(MatrixColumn{{}, /*zero=*/true, -1});
      continue;
    }
    newColumns.push_back(columns[order[j]]);
    for (int i = 0; i < rows(); ++i)
      newA[i * order.size() + j] = at(i, order[j]);
  }
  columns = std::move(newColumns);
  a = std::move(newA);
  compressed.reset();
  packed.reset();
}

static int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

void stencilc::computeMatrixStats(MatrixProgram &p) {
  MatrixStats &st = p.stats;
  st.rows = p.rows();
  st.columns = p.cols();
  st.realColumns = 0;
  for (const MatrixColumn &c : p.columns)
    st.realColumns += c.zero ? 0 : 1;
  st.nonzeros = 0;
  for (int v : p.a)
    st.nonzeros += v >= 0 ? 1 : 0;
  st.paddedRows = static_cast<int>(roundUp(st.rows, p.shape.m));
  st.paddedColumns = static_cast<int>(roundUp(st.columns, p.shape.k));
  // Over the logical (uncompressed) A, as Gu et al. count it: a sparse
  // shape halves the work, and the cost model credits that through the
  // sparse peak, not through S.
  double logical = static_cast<double>(st.paddedRows) * st.paddedColumns;
  st.S = logical > 0 ? st.nonzeros / logical : 0;
  st.alpha = p.alpha;
  st.steps = p.steps;
  st.fragmentPadding = st.paddedColumns - st.columns;
  // SparStencil eq. 9 for shape.n patches.
  st.mmaPerPatchBlock = static_cast<int64_t>(st.paddedRows / p.shape.m) *
                        (st.paddedColumns / p.shape.k);
  double pointsPerBlock = static_cast<double>(st.rows) * p.shape.n;
  st.mmaPerPoint =
      pointsPerBlock > 0 ? st.mmaPerPatchBlock / pointsPerBlock : 0;
  // B is gathered once per patch from shared memory: every real column;
  // A' lives in registers and costs nothing per point.
  unsigned bytes = mmaTypeBytes(p.shape.type);
  st.sharedBytesPerPoint =
      st.rows > 0 ? static_cast<double>(st.realColumns) * bytes / st.rows : 0;
  st.globalBytesPerPoint = 2.0 * bytes;
}

std::string stencilc::verifyMatrixProgram(const MatrixProgram &p) {
  if (p.dims < 1 || p.dims > kMaxDims)
    return "dims out of range";
  if (p.a.size() != static_cast<size_t>(p.rows()) * p.cols())
    return "A has " + std::to_string(p.a.size()) +
           " entries, not rows x "
           "columns = " +
           std::to_string(p.rows() * p.cols());
  for (int j = 0; j < p.cols(); ++j)
    if (p.columns[j].zero)
      for (int i = 0; i < p.rows(); ++i)
        if (p.nonzero(i, j))
          return "zero column " + std::to_string(j) + " has a nonzero in row " +
                 std::to_string(i);
  int g = groupSize(p.pattern);
  if (p.pattern != SparsityPattern::Dense) {
    if (p.cols() % g)
      return "the column count " + std::to_string(p.cols()) +
             " is not a multiple of the group size " + std::to_string(g);
    for (int i = 0; i < p.rows(); ++i)
      for (int c0 = 0; c0 < p.cols(); c0 += g) {
        int count = 0;
        for (int c = c0; c < c0 + g; ++c)
          count += p.nonzero(i, c) ? 1 : 0;
        if (count > g / 2)
          return "row " + std::to_string(i) + " has " + std::to_string(count) +
                 " nonzeros in the group at column " + std::to_string(c0) +
                 " (" + sparsityPatternName(p.pattern).str() + ")";
      }
    if (!p.shape.sparse)
      return "a " + sparsityPatternName(p.pattern).str() +
             " program with the dense shape " + p.shape.name();
    if ((p.pattern == SparsityPattern::OneOfTwo) !=
        (p.shape.type == MmaType::TF32))
      return "pattern " + sparsityPatternName(p.pattern).str() +
             " does not match the shape " + p.shape.name();
  }
  if (p.split && p.shape.type != MmaType::TF32)
    return "split-TF32 splits tf32 operands, not those of " + p.shape.name();
  if (p.compressed) {
    const CompressedMatrix &c = *p.compressed;
    int keep = g / 2;
    if (c.rows != p.rows() || c.groups * g != p.cols() ||
        c.values.size() != static_cast<size_t>(c.rows) * c.groups * keep)
      return "the compressed matrix does not match A's shape";
    for (int i = 0; i < c.rows; ++i)
      for (int gr = 0; gr < c.groups; ++gr) {
        std::vector<int> seen(g, -1);
        for (int e = 0; e < keep; ++e) {
          size_t idx = (static_cast<size_t>(i) * c.groups + gr) * keep + e;
          int pos = c.positions[idx];
          if (pos >= g || (e > 0 && pos <= c.positions[idx - 1]))
            return "compressed positions out of order at row " +
                   std::to_string(i) + ", group " + std::to_string(gr);
          seen[pos] = c.values[idx];
        }
        for (int q = 0; q < g; ++q)
          if (p.at(i, gr * g + q) != seen[q])
            return "the compressed matrix drops or moves A's entry at row " +
                   std::to_string(i) + ", column " + std::to_string(gr * g + q);
      }
  }
  return "";
}
