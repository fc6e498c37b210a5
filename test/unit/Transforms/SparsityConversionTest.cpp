//===- SparsityConversionTest.cpp - Minimal padding, valid patterns -------===//
//
// Sparsity conversion on hand-built kernel matrices: random 0/1 patterns
// and exact self-similar staircases. After PIT every row must hold the
// pattern on aligned groups, the zero columns the matching adds must be
// the minimum of Problem 1 (found here by exhaustive search), and A * B
// must be unchanged. The pass shell's errors are checked on a compiled
// stencil.
//
//===----------------------------------------------------------------------===//

#include "stencilc/Transforms/SparsityConversion.h"
#include "../Frontend/TestUtil.h"
#include "stencilc/Support/Matching.h"
#include "stencilc/Transforms/LayoutMorph.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <random>

using namespace stencilc;
using stencilc::test::Compiled;

namespace {

/// A program with rows x cols of A from `nz(r, c)`; nonzero (r, c) holds
/// the node r * cols + c, so every entry has its own value. Column j reads
/// offset j of a 1-D input.
template <typename F>
MatrixProgram makeProgram(int rows, int cols, MmaType type, F nz) {
  MatrixProgram p;
  p.dims = 1;
  p.shape.type = type;
  p.arch = 90;
  for (int r = 0; r < rows; ++r)
    p.outputs.push_back(Offset{r, 0, 0});
  for (int c = 0; c < cols; ++c) {
    MatrixColumn col;
    col.offset = Offset{c, 0, 0};
    col.origin = c;
    p.columns.push_back(col);
  }
  p.a.assign(static_cast<size_t>(rows) * cols, -1);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      if (nz(r, c))
        p.a[static_cast<size_t>(r) * cols + c] = r * cols + c;
  return p;
}

/// An exact staircase: blockRows x (blockRows + k - 1) blocks of
/// rowsPerBlock x (rowsPerBlock + kElem - 1) elements, as layout morphing
/// builds it; block (i, j) is nonzero for i <= j < i + k, and inside it
/// element (r, c) for r <= c < r + kElem.
MatrixProgram makeStaircase(int blockRows, int k, int rowsPerBlock, int kElem,
                            MmaType type) {
  const int blockCols = blockRows + k - 1;
  const int blockSize = rowsPerBlock + kElem - 1;
  MatrixProgram p = makeProgram(
      blockRows * rowsPerBlock, blockCols * blockSize, type, [&](int r, int c) {
        int i = r / rowsPerBlock, rr = r % rowsPerBlock;
        int j = c / blockSize, cc = c % blockSize;
        return i <= j && j < i + k && rr <= cc && cc < rr + kElem;
      });
  p.blockRows = blockRows;
  p.blockCols = blockCols;
  p.staircaseK = k;
  p.elementK = kElem;
  return p;
}

bool columnIsZero(const MatrixProgram &p, int c) {
  for (int r = 0; r < p.rows(); ++r)
    if (p.nonzero(r, c))
      return false;
  return true;
}

bool conflictByRows(const MatrixProgram &p, int i, int j) {
  for (int r = 0; r < p.rows(); ++r)
    if (p.nonzero(r, i) && p.nonzero(r, j))
      return true;
  return false;
}

/// Problem 1 by exhaustive search: over all matchings of the non-conflict
/// graph of A's nonzero columns, the fewest columns left unmatched.
int bruteForceMinPadding(const MatrixProgram &p) {
  std::vector<int> cols;
  for (int c = 0; c < p.cols(); ++c)
    if (!p.columns[c].zero && !columnIsZero(p, c))
      cols.push_back(c);
  const int n = static_cast<int>(cols.size());
  EXPECT_LE(n, 16) << "too many columns to enumerate";
  std::vector<uint32_t> ok(n);
  for (int u = 0; u < n; ++u)
    for (int v = 0; v < n; ++v)
      if (u != v && !conflictByRows(p, cols[u], cols[v]))
        ok[u] |= 1u << v;
  // fewest[mask]: fewest unmatched columns among those in `mask`.
  std::vector<int> fewest(size_t(1) << n, -1);
  fewest[0] = 0;
  auto solve = [&](auto &self, uint32_t mask) -> int {
    if (fewest[mask] >= 0)
      return fewest[mask];
    int v = __builtin_ctz(mask);
    uint32_t rest = mask & ~(1u << v);
    int best = 1 + self(self, rest);
    for (uint32_t cand = ok[v] & rest; cand; cand &= cand - 1)
      best = std::min(best, self(self, rest & ~(1u << __builtin_ctz(cand))));
    return fewest[mask] = best;
  };
  return solve(solve, n == 0 ? 0u : (1u << n) - 1);
}

/// Problem 1 through the blossom matcher (itself checked against brute
/// force in MatchingTest), for matrices too large to enumerate.
int blossomMinPadding(const MatrixProgram &p) {
  std::vector<int> cols;
  for (int c = 0; c < p.cols(); ++c)
    if (!p.columns[c].zero && !columnIsZero(p, c))
      cols.push_back(c);
  const int n = static_cast<int>(cols.size());
  std::vector<std::vector<int>> adj(n);
  for (int u = 0; u < n; ++u)
    for (int v = 0; v < n; ++v)
      if (u != v && !conflictByRows(p, cols[u], cols[v]))
        adj[u].push_back(v);
  std::vector<int> mate = maximumMatching(n, adj);
  return static_cast<int>(std::count(mate.begin(), mate.end(), -1));
}

/// Unmatched columns of a mate array that pairs only non-conflicting
/// columns (checked).
int unmatchedOf(const MatrixProgram &p, const std::vector<int> &mate) {
  int unmatched = 0;
  for (int c = 0; c < static_cast<int>(mate.size()); ++c) {
    if (mate[c] == -1) {
      ++unmatched;
      continue;
    }
    EXPECT_EQ(mate[mate[c]], c);
    EXPECT_FALSE(conflictByRows(p, c, mate[c]))
        << "columns " << c << " and " << mate[c] << " conflict";
  }
  return unmatched;
}

/// A with `order` applied as PIT does, by hand: column j is old column
/// order[j], or zero.
std::vector<int> permutedA(const MatrixProgram &p,
                           const std::vector<int> &order) {
  std::vector<int> a(static_cast<size_t>(p.rows()) * order.size(), -1);
  for (int r = 0; r < p.rows(); ++r)
    for (size_t j = 0; j < order.size(); ++j)
      if (order[j] >= 0)
        a[r * order.size() + j] = p.at(r, order[j]);
  return a;
}

/// Every row holds at most groupSize/2 nonzeros per aligned group.
void expectPattern(const std::vector<int> &a, int rows, int cols,
                   SparsityPattern pattern, const std::string &what) {
  const int g = groupSize(pattern);
  ASSERT_EQ(cols % g, 0) << what;
  for (int r = 0; r < rows; ++r)
    for (int c0 = 0; c0 < cols; c0 += g) {
      int count = 0;
      for (int c = c0; c < c0 + g; ++c)
        count += a[static_cast<size_t>(r) * cols + c] >= 0;
      ASSERT_LE(count, g / 2) << what << ": row " << r << ", group at " << c0;
    }
}

/// Checks everything planSparsity promises about `plan` for `p`, and that
/// A * B survives PIT, by hand and through MatrixProgram::permuteColumns.
void checkPlan(const MatrixProgram &p, const SparsityResult &plan,
               SparsityPattern pattern, std::mt19937_64 &rng,
               const std::string &what) {
  // Each nonzero column exactly once; no column twice; padding counted.
  std::vector<int> seen(p.cols(), 0);
  int zeros = 0;
  for (int c : plan.order) {
    if (c == -1) {
      ++zeros;
      continue;
    }
    ASSERT_TRUE(c >= 0 && c < p.cols()) << what;
    ++seen[c];
  }
  int dropped = 0;
  for (int c = 0; c < p.cols(); ++c) {
    bool zeroCol = p.columns[c].zero || columnIsZero(p, c);
    if (zeroCol) {
      EXPECT_EQ(seen[c], 0) << what << ": zero column " << c << " kept";
      ++dropped;
    } else {
      EXPECT_EQ(seen[c], 1) << what << ": column " << c;
    }
  }
  EXPECT_EQ(plan.droppedZeroColumns, dropped) << what;
  EXPECT_EQ(zeros, plan.matchPadding + plan.groupPadding + plan.fragmentPadding)
      << what;
  ASSERT_GT(plan.shape.k, 0);
  EXPECT_TRUE(plan.shape.sparse) << what;
  EXPECT_EQ(plan.order.size() % plan.shape.k, 0u) << what;
  // Padding stays below one fragment, except that an all-zero A still gets
  // one fragment of zero columns.
  if (zeros < static_cast<int>(plan.order.size()))
    EXPECT_LT(plan.fragmentPadding, plan.shape.k) << what;
  else
    EXPECT_EQ(static_cast<int>(plan.order.size()), plan.shape.k) << what;
  if (pattern == SparsityPattern::OneOfTwo)
    EXPECT_EQ(plan.groupPadding, 0) << what;

  const int cols = static_cast<int>(plan.order.size());
  std::vector<int> a2 = permutedA(p, plan.order);
  expectPattern(a2, p.rows(), cols, pattern, what);

  // A * B before and after, with integer values so sums are exact. Input
  // point at offset o in patch q holds in(o, q); a zero column reads 0.
  std::uniform_int_distribution<int> val(-9, 9);
  std::vector<double> node(static_cast<size_t>(p.rows()) * p.cols());
  for (double &x : node)
    x = val(rng);
  const int patches = 3;
  std::vector<double> in(static_cast<size_t>(p.cols()) * patches);
  for (double &x : in)
    x = val(rng);
  auto input = [&](const MatrixColumn &c, int q) {
    return c.zero ? 0.0 : in[static_cast<size_t>(c.offset[0]) * patches + q];
  };
  MatrixProgram after = p;
  after.permuteColumns(plan.order);
  ASSERT_EQ(after.cols(), cols) << what;
  ASSERT_EQ(after.a, a2) << what << ": permuteColumns disagrees with PIT";
  for (int r = 0; r < p.rows(); ++r)
    for (int q = 0; q < patches; ++q) {
      double before = 0, byHand = 0, byPass = 0;
      for (int c = 0; c < p.cols(); ++c)
        if (p.nonzero(r, c))
          before += node[p.at(r, c)] * input(p.columns[c], q);
      for (int j = 0; j < cols; ++j) {
        int n = a2[static_cast<size_t>(r) * cols + j];
        if (n >= 0)
          byHand += node[n] * input(p.columns[plan.order[j]], q);
        if (after.nonzero(r, j))
          byPass += node[after.at(r, j)] * input(after.columns[j], q);
      }
      ASSERT_EQ(before, byHand) << what << ": row " << r;
      ASSERT_EQ(before, byPass) << what << ": row " << r;
    }
}

TEST(SparsityConversion, ConflictGraphIsSharedNonzeroRows) {
  std::mt19937_64 rng(11);
  for (int iter = 0; iter < 200; ++iter) {
    int rows = std::uniform_int_distribution<int>(1, 70)(rng);
    int cols = std::uniform_int_distribution<int>(1, 80)(rng);
    std::bernoulli_distribution nz(
        std::uniform_real_distribution<double>(0.01, 0.3)(rng));
    MatrixProgram p = makeProgram(rows, cols, MmaType::F16,
                                  [&](int, int) { return nz(rng); });
    ConflictGraph g = buildConflictGraph(p);
    ASSERT_EQ(g.n, cols);
    for (int i = 0; i < cols; ++i) {
      int degree = 0;
      for (int j = 0; j < cols; ++j) {
        bool want = i != j && conflictByRows(p, i, j);
        ASSERT_EQ(g.conflict(i, j), want) << i << "," << j;
        degree += want;
      }
      EXPECT_EQ(g.degree(i), degree);
    }
  }
}

TEST(SparsityConversion, RandomPatternsGetMinimalPadding) {
  std::mt19937_64 rng(20260324);
  const MmaType types[] = {MmaType::F16, MmaType::BF16, MmaType::TF32};
  int nonTrivial = 0;
  for (int iter = 0; iter < 400; ++iter) {
    int rows = std::uniform_int_distribution<int>(1, 8)(rng);
    int cols = std::uniform_int_distribution<int>(1, 12)(rng);
    std::bernoulli_distribution nz(
        std::uniform_real_distribution<double>(0.05, 0.8)(rng));
    MmaType type = types[iter % 3];
    MatrixProgram p =
        makeProgram(rows, cols, type, [&](int, int) { return nz(rng); });
    // Sometimes padding from an earlier pass: zero columns flagged as such.
    if (iter % 5 == 0) {
      int extra = std::uniform_int_distribution<int>(1, 3)(rng);
      MatrixProgram q =
          makeProgram(rows, cols + extra, type, [&](int r, int c) {
            return c < cols && p.nonzero(r, c);
          });
      for (int c = cols; c < cols + extra; ++c)
        q.columns[c].zero = true;
      p = q;
    }
    SparsityPattern pattern = type == MmaType::TF32
                                  ? SparsityPattern::OneOfTwo
                                  : SparsityPattern::TwoOfFour;
    std::string why;
    std::optional<SparsityResult> plan = planSparsity(p, pattern, why);
    ASSERT_TRUE(plan) << why;
    std::string what = "iteration " + std::to_string(iter);
    EXPECT_FALSE(plan->hierarchical) << what;
    int want = bruteForceMinPadding(p);
    EXPECT_EQ(plan->matchPadding, want) << what;
    nonTrivial += want > 1;
    checkPlan(p, *plan, pattern, rng, what);
  }
  // Enough cases where the minimum is not just parity.
  EXPECT_GT(nonTrivial, 40);
}

TEST(SparsityConversion, ExactStaircasesGetMinimalPadding) {
  std::mt19937_64 rng(7);
  int enumerated = 0, hierarchicalKept = 0;
  for (int rounds = 0; rounds < 3; ++rounds)
    for (int blockRows = 1; blockRows <= 4; ++blockRows)
      for (int k = 1; k <= 4; ++k)
        for (int rowsPerBlock = 1; rowsPerBlock <= 5; ++rowsPerBlock)
          for (int kElem = 1; kElem <= 4; ++kElem) {
            MmaType type = rounds == 1 ? MmaType::TF32 : MmaType::F16;
            SparsityPattern pattern = type == MmaType::TF32
                                          ? SparsityPattern::OneOfTwo
                                          : SparsityPattern::TwoOfFour;
            MatrixProgram p =
                makeStaircase(blockRows, k, rowsPerBlock, kElem, type);
            std::string what = "staircase R=" + std::to_string(blockRows) +
                               " k=" + std::to_string(k) +
                               " r=" + std::to_string(rowsPerBlock) +
                               " kElem=" + std::to_string(kElem);
            StaircaseReport report = verifyStaircase(p);
            ASSERT_TRUE(report.exact) << what << ": " << report.why;

            // Algorithm 1 alone: valid pairs (Theorem 5).
            std::vector<int> h = hierarchicalMatching(
                p.blockCols, p.cols() / p.blockCols, k, kElem);
            ASSERT_EQ(static_cast<int>(h.size()), p.cols()) << what;
            int alg1 = unmatchedOf(p, h);

            std::string why;
            std::optional<SparsityResult> plan = planSparsity(p, pattern, why);
            ASSERT_TRUE(plan) << what << ": " << why;
            int want =
                p.cols() <= 12 ? bruteForceMinPadding(p) : blossomMinPadding(p);
            enumerated += p.cols() <= 12;
            EXPECT_EQ(plan->matchPadding, want) << what;
            EXPECT_EQ(plan->hierarchical, alg1 == want) << what;
            hierarchicalKept += plan->hierarchical;
            EXPECT_GE(alg1, want) << what;
            checkPlan(p, *plan, pattern, rng, what);
          }
  EXPECT_GE(enumerated, 100);
  EXPECT_GT(hierarchicalKept, 100);
}

TEST(SparsityConversion, StaircasesWithHolesUseBlossom) {
  // Holes make the staircase inexact: the blossom path must still be
  // minimal, and columns emptied entirely must be dropped.
  std::mt19937_64 rng(99);
  int checked = 0;
  for (int iter = 0; checked < 200; ++iter) {
    ASSERT_LT(iter, 5000);
    int blockRows = std::uniform_int_distribution<int>(1, 3)(rng);
    int k = std::uniform_int_distribution<int>(1, 3)(rng);
    int r = std::uniform_int_distribution<int>(1, 4)(rng);
    int kElem = std::uniform_int_distribution<int>(1, 3)(rng);
    MatrixProgram p = makeStaircase(blockRows, k, r, kElem, MmaType::F16);
    if (p.cols() > 12)
      continue;
    bool holed = false;
    std::bernoulli_distribution hole(0.3);
    for (int &x : p.a)
      if (x >= 0 && hole(rng)) {
        x = -1;
        holed = true;
      }
    if (!holed)
      continue;
    std::string what = "iteration " + std::to_string(iter);
    EXPECT_FALSE(verifyStaircase(p).exact) << what;
    std::string why;
    auto plan = planSparsity(p, SparsityPattern::TwoOfFour, why);
    ASSERT_TRUE(plan) << why;
    EXPECT_FALSE(plan->hierarchical) << what;
    EXPECT_EQ(plan->matchPadding, bruteForceMinPadding(p)) << what;
    checkPlan(p, *plan, SparsityPattern::TwoOfFour, rng, what);
    ++checked;
  }
}

TEST(SparsityConversion, AlgorithmOneIsNotAlwaysMinimal) {
  // One block row, k = 2, three rows per block, kElem = 1: A = [I3 I3],
  // columns c and c + 3 conflict (row c), nothing else does. Algorithm 1:
  // s1 = max(2/2, 2) = 2 leaves both blocks unpaired; s2 = max(3/2, 1) = 1
  // pairs 0-1 and 3-4 and strands 2 and 5, which conflict with each other.
  // Yet 0-1, 2-3, 4-5 pairs every column: the minimum is 0.
  MatrixProgram p = makeStaircase(1, 2, 3, 1, MmaType::F16);
  std::vector<int> h = hierarchicalMatching(2, 3, 2, 1);
  EXPECT_EQ(h, (std::vector<int>{1, 0, -1, 4, 3, -1}));
  EXPECT_EQ(bruteForceMinPadding(p), 0);
  std::string why;
  auto plan = planSparsity(p, SparsityPattern::TwoOfFour, why);
  ASSERT_TRUE(plan) << why;
  EXPECT_EQ(plan->matchPadding, 0);
  EXPECT_FALSE(plan->hierarchical);
}

TEST(SparsityConversion, HierarchicalMatchingHandCases) {
  EXPECT_TRUE(hierarchicalMatching(0, 4, 1, 1).empty());
  // 4 blocks of 2, k = 1, kElem = 1: s1 = 2 pairs blocks 0-2 and 1-3
  // element by element; nothing is left for level 2.
  EXPECT_EQ(hierarchicalMatching(4, 2, 1, 1),
            (std::vector<int>{4, 5, 6, 7, 0, 1, 2, 3}));
  // 3 blocks of 3, k = 3, kElem = 2: s1 = 3 pairs no block; s2 =
  // max(1, 2) = 2 pairs elements 0-2 in each block and strands element 1.
  EXPECT_EQ(hierarchicalMatching(3, 3, 3, 2),
            (std::vector<int>{2, -1, 0, 5, -1, 3, 8, -1, 6}));
}

TEST(SparsityConversion, PaddingCountsForSmallHandCase) {
  // A 2 x 3 with rows {0, 1} and {2}: columns 0 and 1 conflict, 2
  // conflicts with neither, so one pair (0-2 or 1-2) and one column alone:
  // matchPadding 1 and 4 columns in two pairs, which make one 2:4 group (no
  // group padding); the rest up to K is fragment padding.
  MatrixProgram p = makeProgram(
      2, 3, MmaType::F16, [](int r, int c) { return r == 0 ? c < 2 : c == 2; });
  std::string why;
  auto plan = planSparsity(p, SparsityPattern::TwoOfFour, why);
  ASSERT_TRUE(plan) << why;
  EXPECT_EQ(plan->matchPadding, 1);
  EXPECT_EQ(plan->groupPadding, 0);
  EXPECT_EQ(plan->fragmentPadding, plan->shape.k - 4);
  // Units in order of their smallest column: {0, partner}, {1, partner}.
  std::vector<int> head(plan->order.begin(), plan->order.begin() + 4);
  EXPECT_TRUE(head == (std::vector<int>{0, 2, 1, -1}) ||
              head == (std::vector<int>{0, -1, 1, 2}))
      << head[0] << " " << head[1] << " " << head[2] << " " << head[3];

  // Three nonzero columns that all conflict: three zero partners, three
  // pairs, so 2:4 adds one zero pair to complete the second group.
  MatrixProgram q =
      makeProgram(1, 3, MmaType::BF16, [](int, int) { return true; });
  plan = planSparsity(q, SparsityPattern::TwoOfFour, why);
  ASSERT_TRUE(plan) << why;
  EXPECT_EQ(plan->matchPadding, 3);
  EXPECT_EQ(plan->groupPadding, 2);
}

TEST(SparsityConversion, PlanRejectsPatternsTheHardwareLacks) {
  MatrixProgram p =
      makeProgram(2, 4, MmaType::F64, [](int r, int c) { return r == c; });
  std::string why;
  EXPECT_FALSE(planSparsity(p, SparsityPattern::TwoOfFour, why));
  EXPECT_NE(why.find("f64"), std::string::npos) << why;
  p.shape.type = MmaType::TF32;
  EXPECT_FALSE(planSparsity(p, SparsityPattern::TwoOfFour, why));
  EXPECT_NE(why.find("1:2"), std::string::npos) << why;
  p.shape.type = MmaType::F16;
  EXPECT_FALSE(planSparsity(p, SparsityPattern::OneOfTwo, why));
  EXPECT_NE(why.find("2:4"), std::string::npos) << why;
  EXPECT_FALSE(planSparsity(p, SparsityPattern::Dense, why));
  p.a.pop_back();
  EXPECT_FALSE(planSparsity(p, SparsityPattern::TwoOfFour, why));
}

const char *kSource = "stencil s {\n"
                      "  grid u : f32[1];\n"
                      "  boundary u : periodic;\n"
                      "  u' = 0.25 * u[-1] + 0.5 * u + 0.25 * u[1];\n"
                      "}\n";

TEST(SparsityConversion, PassNeedsALayoutFirst) {
  Compiled c(kSource);
  ASSERT_TRUE(c.module) << c.diagText;
  Stencil &s = c.module->stencils[0];
  EXPECT_FALSE(convertSparsity(s, 0, c.diags));
  c.diagStream.flush();
  EXPECT_NE(c.diagText.find("error: sparsity-conversion needs a layout pass "
                            "(flatten, decompose or layout-morph) first"),
            std::string::npos)
      << c.diagText;
}

TEST(SparsityConversion, PassRejectsBadPatterns) {
  struct Case {
    MmaType type;
    int pattern;
    const char *message;
  } cases[] = {
      {MmaType::F64, 0, "sparse tensor cores have no f64 shapes"},
      {MmaType::F64, 24, "sparse tensor cores have no f64 shapes"},
      {MmaType::TF32, 24, "tf32 sparse tensor cores use the 1:2 pattern"},
      {MmaType::F16, 12, "PTX's f16 sparse mma (mma.sp) is 2:4, not 1:2"},
      {MmaType::BF16, 12, "PTX's bf16 sparse mma (mma.sp) is 2:4, not 1:2"},
      {MmaType::F16, 7, "invalid sparsity pattern 7 for sparsity-conversion"},
  };
  for (const Case &k : cases) {
    Compiled c(kSource);
    ASSERT_TRUE(c.module) << c.diagText;
    Stencil &s = c.module->stencils[0];
    s.matrix =
        makeProgram(3, 5, k.type, [](int r, int col) { return r <= col; });
    MatrixProgram before = *s.matrix;
    EXPECT_FALSE(convertSparsity(s, k.pattern, c.diags));
    c.diagStream.flush();
    EXPECT_NE(c.diagText.find(k.message), std::string::npos) << c.diagText;
    EXPECT_NE(c.diagText.find("t.st:1:9: error:"), std::string::npos)
        << c.diagText;
    // A failed pass leaves the program alone.
    EXPECT_EQ(s.matrix->a, before.a);
    EXPECT_EQ(s.matrix->pattern, SparsityPattern::Dense);
  }
}

TEST(SparsityConversion, PassConvertsAndRecordsPadding) {
  std::mt19937_64 rng(5);
  struct Case {
    MmaType type;
    int number;
    SparsityPattern pattern;
  } cases[] = {{MmaType::F16, 0, SparsityPattern::TwoOfFour},
               {MmaType::BF16, 24, SparsityPattern::TwoOfFour},
               {MmaType::TF32, 0, SparsityPattern::OneOfTwo},
               {MmaType::TF32, 12, SparsityPattern::OneOfTwo}};
  for (const Case &k : cases)
    for (int stair = 0; stair < 2; ++stair) {
      Compiled c(kSource);
      ASSERT_TRUE(c.module) << c.diagText;
      Stencil &s = c.module->stencils[0];
      MatrixProgram original =
          stair ? makeStaircase(3, 3, 4, 3, k.type)
                : makeProgram(12, 40, k.type, [&](int, int) {
                    return std::bernoulli_distribution(0.15)(rng);
                  });
      s.matrix = original;
      std::string why;
      auto plan = planSparsity(original, k.pattern, why);
      ASSERT_TRUE(plan) << why;
      ASSERT_TRUE(convertSparsity(s, k.number, c.diags)) << c.diagText;
      const MatrixProgram &p = *s.matrix;
      EXPECT_EQ(p.pattern, k.pattern);
      std::vector<FragmentShape> shapes = legalFragments(k.type, true, 90);
      ASSERT_FALSE(shapes.empty());
      int largestK = 0;
      for (const FragmentShape &f : shapes)
        largestK = std::max(largestK, f.k);
      EXPECT_TRUE(p.shape.sparse);
      EXPECT_EQ(p.shape.type, k.type);
      EXPECT_EQ(p.shape.k, largestK);
      EXPECT_EQ(p.cols() % p.shape.k, 0);
      EXPECT_EQ(p.a, permutedA(original, plan->order));
      EXPECT_EQ(p.stats.matchPadding, plan->matchPadding);
      EXPECT_EQ(p.stats.groupPadding, plan->groupPadding);
      EXPECT_EQ(p.stats.fragmentPadding, plan->fragmentPadding);
      EXPECT_EQ(p.stats.columns, p.cols());
      EXPECT_EQ(verifyMatrixProgram(p), "");
      expectPattern(p.a, p.rows(), p.cols(), k.pattern, "pass");
    }
}

} // namespace
