//===- LayoutTest.cpp - Flatten, Decompose, LayoutMorph, StridedSwap ------===//
//
// The layouts are checked against the kernel itself: every entry of A must
// be the tap at (gather offset - output offset), every tap must appear once
// per output, and the staircase verifier must accept what LayoutMorph and
// Decompose build and reject what breaks the staircase. The strided swap
// must leave a valid 1:2 / 2:4 matrix whose columns are a permutation of
// the decomposed ones.
//
//===----------------------------------------------------------------------===//

#include "../Frontend/TestUtil.h"
#include "stencilc/IR/LinearForm.h"
#include "stencilc/Transforms/Decompose.h"
#include "stencilc/Transforms/Flatten.h"
#include "stencilc/Transforms/LayoutMorph.h"
#include "stencilc/Transforms/StridedSwap.h"
#include "stencilc/Transforms/TemporalFusion.h"

#include "gtest/gtest.h"

#include <map>
#include <random>
#include <set>

using namespace stencilc;
using stencilc::test::Compiled;

namespace {

/// A random single-grid linear stencil: `dims`, reach lo/hi per axis drawn
/// separately (asymmetric), holes with probability `holes`.
std::string randomSource(std::mt19937_64 &rng, int dims, int maxReach,
                         double holes, const char *type = "f32") {
  std::string src = "stencil s {\n  grid u : " + std::string(type) + "[" +
                    std::to_string(dims) +
                    "];\n  param p : f64 = 0.5;\n"
                    "  boundary u : clamp;\n  u' = 0";
  std::uniform_int_distribution<int> reach(0, maxReach);
  int lo[3], hi[3];
  for (int a = 0; a < dims; ++a) {
    lo[a] = reach(rng);
    hi[a] = reach(rng);
  }
  std::bernoulli_distribution drop(holes);
  std::uniform_int_distribution<int> w(-8, 8);
  int count = 0;
  for (int z = dims > 2 ? -lo[2] : 0; z <= (dims > 2 ? hi[2] : 0); ++z)
    for (int y = dims > 1 ? -lo[1] : 0; y <= (dims > 1 ? hi[1] : 0); ++y)
      for (int x = -lo[0]; x <= hi[0]; ++x) {
        bool corner = x == -lo[0] || x == hi[0];
        if (!corner && drop(rng))
          continue;
        int c = w(rng);
        if (c == 0)
          c = 3;
        std::string read = "u[" + std::to_string(x);
        if (dims > 1)
          read += "," + std::to_string(y);
        if (dims > 2)
          read += "," + std::to_string(z);
        read += "]";
        src += " + " + std::to_string(c) + (count % 3 ? "" : " * p") + " * " +
               read;
        ++count;
      }
  return src + ";\n}\n";
}

/// The kernel's taps by offset, from the linear form (one step).
std::map<Offset, int> kernelTaps(const Stencil &s) {
  std::map<Offset, int> taps;
  if (s.fused)
    for (const Tap &t : s.fused->taps)
      taps[t.offset] = t.coeff;
  else
    for (const Tap &t : s.updates[0].linear->taps)
      taps[t.offset] = t.coeff;
  return taps;
}

/// Every entry of A is the tap at gather - output, and each output row
/// holds every tap exactly once (no tap lost, none duplicated).
void expectMatchesKernel(const Stencil &s) {
  const MatrixProgram &p = *s.matrix;
  std::map<Offset, int> taps = kernelTaps(s);
  ASSERT_EQ(p.a.size(), static_cast<size_t>(p.rows()) * p.cols());
  for (int i = 0; i < p.rows(); ++i) {
    std::map<Offset, int> seen;
    for (int j = 0; j < p.cols(); ++j) {
      if (p.columns[j].zero) {
        EXPECT_FALSE(p.nonzero(i, j));
        continue;
      }
      Offset d;
      for (int a = 0; a < kMaxDims; ++a)
        d[a] = p.columns[j].offset[a] - p.outputs[i][a];
      auto it = taps.find(d);
      EXPECT_EQ(p.at(i, j), it == taps.end() ? -1 : it->second)
          << "row " << i << " column " << j;
      if (p.nonzero(i, j))
        ++seen[d];
    }
    EXPECT_EQ(seen.size(), taps.size()) << "row " << i;
    for (const auto &[d, n] : seen)
      EXPECT_EQ(n, 1);
  }
  // Gather offsets are distinct: B never loads a point twice.
  std::set<Offset> offsets;
  for (const MatrixColumn &c : p.columns)
    if (!c.zero)
      EXPECT_TRUE(offsets.insert(c.offset).second);
  EXPECT_EQ(verifyMatrixProgram(p), "");
}

TEST(Layout, MorphBuildsTheCrushedStaircase) {
  Compiled c("stencil s { grid u : f16[2]; boundary u : clamp;\n"
             "  u' = box(u, 1, 0.125); }");
  ASSERT_TRUE(c.module) << c.diagText;
  Stencil &s = c.module->stencils[0];
  ASSERT_TRUE(morphLayout(s, 4, 2, c.diags)) << c.diagText;
  const MatrixProgram &p = *s.matrix;
  // m' = r1 r2 = 8 outputs, k' = (k + r1 - 1)(k + r2 - 1) = 6 * 4 inputs.
  EXPECT_EQ(p.rows(), 8);
  EXPECT_EQ(p.cols(), 24);
  EXPECT_EQ(p.stats.nonzeros, 8 * 9);
  expectMatchesKernel(s);
  StaircaseReport r = verifyStaircase(p);
  EXPECT_TRUE(r.contained) << r.why;
  EXPECT_TRUE(r.exact) << r.why;
}

TEST(Layout, StaircaseVerifierRejectsBrokenBands) {
  Compiled c("stencil s { grid u : f16[2]; boundary u : clamp;\n"
             "  u' = star(u, 1, 0.125); }");
  ASSERT_TRUE(c.module) << c.diagText;
  Stencil &s = c.module->stencils[0];
  ASSERT_TRUE(morphLayout(s, 4, 4, c.diags)) << c.diagText;
  // A star has holes: inside the band, but not filling it.
  StaircaseReport r = verifyStaircase(*s.matrix);
  EXPECT_TRUE(r.contained) << r.why;
  EXPECT_FALSE(r.exact);
  EXPECT_NE(r.why.find("hole"), std::string::npos) << r.why;
  // A nonzero moved outside the element-level band.
  MatrixProgram broken = *s.matrix;
  int bw = broken.cols() / broken.blockCols;
  broken.a[static_cast<size_t>(0) * broken.cols() + bw - 1] = 0;
  r = verifyStaircase(broken);
  EXPECT_FALSE(r.contained);
  EXPECT_NE(r.why.find("element-level"), std::string::npos) << r.why;
  // And one outside the block-level band (the last block column).
  broken = *s.matrix;
  broken.a[broken.cols() - 1] = 0;
  r = verifyStaircase(broken);
  EXPECT_FALSE(r.contained);
  EXPECT_NE(r.why.find("block-level"), std::string::npos) << r.why;
}

TEST(Layout, RandomKernelsInEveryLayout) {
  std::mt19937_64 rng(7);
  int morphs = 0, exact = 0;
  for (int iter = 0; iter < 300; ++iter) {
    int dims = 1 + iter % 3;
    std::string src = randomSource(rng, dims, dims == 3 ? 2 : 4, 0.3);
    for (int layout = 0; layout < 3; ++layout) {
      Compiled c(src);
      ASSERT_TRUE(c.module) << c.diagText << src;
      Stencil &s = c.module->stencils[0];
      if (iter % 4 == 0)
        ASSERT_TRUE(fuseTemporally(s, 2, c.diags)) << c.diagText;
      int r1 = 1 + iter % 5, r2 = dims == 1 ? 1 : 1 + (iter / 5) % 4;
      bool ok = layout == 0   ? flattenStencil(s, c.diags)
                : layout == 1 ? decomposeStencil(s, 0, c.diags)
                              : morphLayout(s, r1, r2, c.diags);
      ASSERT_TRUE(ok) << c.diagText << src;
      expectMatchesKernel(s);
      if (layout == 0) {
        EXPECT_EQ(s.matrix->rows(), 1);
        EXPECT_EQ(s.matrix->cols(), static_cast<int>(kernelTaps(s).size()));
      }
      if (layout >= 1 && (layout == 1 || dims < 3)) {
        StaircaseReport r = verifyStaircase(*s.matrix);
        EXPECT_TRUE(r.contained) << r.why << "\n" << src;
        morphs += layout == 2;
        exact += r.exact;
      }
    }
  }
  EXPECT_GT(morphs, 100);
  EXPECT_GT(exact, 5); // Some kernels came out without holes.
}

TEST(Layout, StridedSwapGivesValidSparsity) {
  std::mt19937_64 rng(11);
  int swapped = 0, adjacentRuns = 0;
  for (int iter = 0; iter < 200; ++iter) {
    int dims = 1 + iter % 3;
    const char *type = iter % 2 ? "f16" : "f32";
    std::string src = randomSource(rng, dims, dims == 3 ? 2 : 4, 0.2, type);
    Compiled c(src);
    ASSERT_TRUE(c.module) << c.diagText;
    Stencil &s = c.module->stencils[0];
    int kx = 0;
    {
      int lo = 0, hi = 0;
      for (const auto &[o, n] : kernelTaps(s)) {
        lo = std::min(lo, o[dims - 1]);
        hi = std::max(hi, o[dims - 1]);
      }
      kx = hi - lo + 1;
    }
    int rows = (kx + 1) / 2 * 2 + 2 * (iter % 3);
    ASSERT_TRUE(decomposeStencil(s, rows, c.diags)) << c.diagText;
    std::vector<MatrixColumn> before = s.matrix->columns;
    std::vector<int> beforeA = s.matrix->a;
    int beforeCols = s.matrix->cols();
    // The adjacent order wherever it applies (2:4, kx <= n - 1).
    bool adjacent = type[1] == '1' && kx <= rows - 1 && iter % 4 < 2;
    ASSERT_TRUE(stridedSwap(s, c.diags, adjacent)) << c.diagText << src;
    if (adjacent)
      ++adjacentRuns;
    const MatrixProgram &p = *s.matrix;
    EXPECT_EQ(verifyMatrixProgram(p), "");
    EXPECT_EQ(p.pattern, *type == 'f' && type[1] == '1'
                             ? SparsityPattern::TwoOfFour
                             : SparsityPattern::OneOfTwo);
    EXPECT_TRUE(p.shape.sparse);
    EXPECT_EQ(p.cols() % p.shape.k, 0);
    // A permutation of the old columns, each carrying its A column.
    std::vector<int> uses(beforeCols, 0);
    for (int j = 0; j < p.cols(); ++j) {
      const MatrixColumn &col = p.columns[j];
      if (col.origin < 0)
        continue;
      int old = -1;
      for (int k = 0; k < beforeCols; ++k)
        if (before[k].origin == col.origin && !before[k].zero)
          old = k;
      ASSERT_GE(old, 0);
      ++uses[old];
      for (int i = 0; i < p.rows(); ++i)
        EXPECT_EQ(p.at(i, j),
                  beforeA[static_cast<size_t>(i) * beforeCols + old]);
    }
    for (int k = 0; k < beforeCols; ++k)
      EXPECT_EQ(uses[k], before[k].zero ? 0 : 1);
    ++swapped;
  }
  EXPECT_EQ(swapped, 200);
  EXPECT_GT(adjacentRuns, 20);
}

TEST(Layout, AdjacentStridedSwapPairsNeighbours) {
  Compiled c("stencil s { grid u : f16[1]; boundary u : clamp;\n"
             "  u' = u[-1] + 2 * u + 3 * u[1]; }");
  ASSERT_TRUE(c.module) << c.diagText;
  Stencil &s = c.module->stencils[0];
  ASSERT_TRUE(decomposeStencil(s, 4, c.diags));
  std::string why;
  // n = 4, one block of 8: groups (0, 1, 4, 5) and (2, 3, 6, 7).
  EXPECT_EQ(stridedSwapOrder(*s.matrix, why, true),
            (std::vector<int>{0, 1, 4, 5, 2, 3, 6, 7}));
  // SPIDER's own: odd j < n swaps with j + n - 1.
  EXPECT_EQ(stridedSwapOrder(*s.matrix, why, false),
            (std::vector<int>{0, 4, 2, 6, 1, 5, 3, 7}));
  // tf32 is 1:2: neighbours would share rows.
  Compiled t("stencil s { grid u : f32[1]; boundary u : clamp;\n"
             "  u' = u[-1] + 2 * u + 3 * u[1]; }");
  ASSERT_TRUE(t.module);
  Stencil &ts = t.module->stencils[0];
  ASSERT_TRUE(decomposeStencil(ts, 4, t.diags));
  EXPECT_TRUE(stridedSwapOrder(*ts.matrix, why, true).empty());
  EXPECT_NE(why.find("1:2"), std::string::npos) << why;
  // kx = n = 4 leaves j + 1 and j + n sharing a row.
  Compiled w("stencil s { grid u : f16[1]; boundary u : clamp;\n"
             "  u' = u[-2] + u[-1] + u + u[1]; }");
  ASSERT_TRUE(w.module);
  Stencil &ws = w.module->stencils[0];
  ASSERT_TRUE(decomposeStencil(ws, 4, w.diags));
  EXPECT_TRUE(stridedSwapOrder(*ws.matrix, why, true).empty());
  EXPECT_NE(why.find("n - 1"), std::string::npos) << why;
}

TEST(Layout, DecomposeMatchesSpiderForBox2D1RAtSevenSteps) {
  Compiled c("stencil s { grid u : f16[2]; boundary u : clamp;\n"
             "  u' = box(u, 1, 0.125); }");
  ASSERT_TRUE(c.module) << c.diagText;
  Stencil &s = c.module->stencils[0];
  ASSERT_TRUE(fuseTemporally(s, 7, c.diags));
  ASSERT_TRUE(decomposeStencil(s, 0, c.diags)) << c.diagText;
  // SPIDER: radius 7 gives n = 2r + 2 = 16 rows, 15 kernel rows of
  // 2n = 32 columns (30 banded plus 2 padding).
  EXPECT_EQ(s.matrix->rows(), 16);
  EXPECT_EQ(s.matrix->cols(), 15 * 32);
  ASSERT_TRUE(stridedSwap(s, c.diags)) << c.diagText;
  // Every row holds the 225 taps in 480 logical columns: S = 225 / 480 =
  // 15 / 32, SPIDER's 0.47 (Gu et al. Table 2, row 9).
  EXPECT_DOUBLE_EQ(s.matrix->stats.S, 15.0 / 32.0);
  EXPECT_EQ(s.matrix->stats.mmaPerPatchBlock, 480 / 32);
}

TEST(Layout, ErrorsAreReportedNotAsserted) {
  struct Case {
    const char *src;
    int which;
    const char *message;
  } cases[] = {
      {"stencil s { grid u : f32[1]; boundary u : clamp; u' = u * u[1]; }", 0,
       "flatten needs a linear stencil"},
      {"stencil s { grid u : f32[1]; boundary u : clamp; u' = u[1] + 1; }", 1,
       "decompose needs a linear stencil"},
      {"stencil s { grid u, k : f32[1]; boundary u, k : clamp;\n"
       "  u' = u[1] + k[1]; }",
       2, "cannot multiply reads of grid 'k'"},
      {"stencil s { grid u : f32[1]; boundary u : clamp; u' = u[1]; }", 3,
       "layout-morph needs r1, r2 >= 1"},
      {"stencil s { grid u : f32[1]; boundary u : clamp; u' = u[1]; }", 4,
       "takes r2=1"},
      {"stencil s { grid u : f32[1]; boundary u : clamp; u' = u[1]; }", 5,
       "strided-swap needs the decompose pass first"},
      {"stencil s { grid u : f32[2]; boundary u : clamp; u' = u[1,0]; }", 6,
       "it applies to the decompose layout, not morph"},
      {"stencil s { grid u : f32[1]; boundary u : clamp; u' = u[1]+u[-1]; }", 7,
       "even number of rows"},
      {"stencil s { grid u : f64[1]; boundary u : clamp; u' = u[1]+u[-1]; }", 8,
       "no sparse tensor cores for f64"},
      {"stencil s { grid u : f32[1]; boundary u : clamp; u' = u[1]+u[-1]; }", 9,
       "decompose needs 1 to 64 rows"},
      {"stencil s { grid u : f32[1]; boundary u : clamp; u' = u[1]+u[-1]; }",
       10, "arch=80, 86, 89, 90, 100 or 120, not arch=75"},
      {"stencil s { grid u : f32[1]; boundary u : clamp; u' = u[4]+u[-4]; }",
       11, "more than the 4 rows per patch"},
  };
  for (const Case &k : cases) {
    Compiled c(k.src);
    ASSERT_TRUE(c.module) << c.diagText;
    Stencil &s = c.module->stencils[0];
    bool ok = true;
    switch (k.which) {
    case 0:
      ok = flattenStencil(s, c.diags);
      break;
    case 1:
      ok = decomposeStencil(s, 0, c.diags);
      break;
    case 2:
      ok = morphLayout(s, 2, 1, c.diags);
      break;
    case 3:
      ok = morphLayout(s, 0, 1, c.diags);
      break;
    case 4:
      ok = morphLayout(s, 2, 2, c.diags);
      break;
    case 5:
      ok = stridedSwap(s, c.diags);
      break;
    case 6:
      ok = morphLayout(s, 2, 2, c.diags) && stridedSwap(s, c.diags);
      break;
    case 7:
      ok = decomposeStencil(s, 3, c.diags) && stridedSwap(s, c.diags);
      break;
    case 8:
      ok = decomposeStencil(s, 0, c.diags) && stridedSwap(s, c.diags);
      break;
    case 9:
      ok = decomposeStencil(s, 65, c.diags);
      break;
    case 10:
      ok = flattenStencil(s, c.diags, 75);
      break;
    case 11:
      ok = decomposeStencil(s, 4, c.diags) && stridedSwap(s, c.diags);
      break;
    }
    c.diagStream.flush();
    EXPECT_FALSE(ok) << k.src;
    EXPECT_NE(c.diagText.find(k.message), std::string::npos)
        << c.diagText << "\nwanted: " << k.message;
    // Located at the stencil's name.
    EXPECT_NE(c.diagText.find("t.st:1:9: error:"), std::string::npos)
        << c.diagText;
  }
}

} // namespace
