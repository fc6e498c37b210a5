//===- SparsityConversion.cpp - Conflict graph, matching and PIT ----------===//
//
// Plans a PIT column order that gives A the 1:2 or 2:4 pattern with the
// fewest zero columns, then applies it. Matched column pairs become aligned
// 1:2 pairs, and any two pairs make an aligned 2:4 group, so the only
// padding beyond the matching's is one zero pair to complete the last 2:4
// group and the zero columns up to the fragment's K.
//
//===----------------------------------------------------------------------===//

#include "stencilc/Transforms/SparsityConversion.h"
#include "stencilc/Support/Matching.h"
#include "stencilc/Transforms/LayoutMorph.h"

#include <algorithm>
#include <bit>

using namespace stencilc;

int ConflictGraph::degree(int i) const {
  int d = 0;
  for (uint64_t w : bits[i])
    d += std::popcount(w);
  return d;
}

ConflictGraph stencilc::buildConflictGraph(const MatrixProgram &program) {
  ConflictGraph g;
  g.n = program.cols();
  const int rows = program.rows();
  const size_t colWords = (static_cast<size_t>(g.n) + 63) / 64;
  const size_t rowWords = (static_cast<size_t>(rows) + 63) / 64;
  // Two columns conflict when their sets of nonzero rows intersect, so
  // compare those sets a word at a time.
  std::vector<std::vector<uint64_t>> rowSets(g.n,
                                             std::vector<uint64_t>(rowWords));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < g.n; ++c)
      if (program.nonzero(r, c))
        rowSets[c][r >> 6] |= uint64_t(1) << (r & 63);
  g.bits.assign(g.n, std::vector<uint64_t>(colWords));
  for (int i = 0; i < g.n; ++i)
    for (int j = i + 1; j < g.n; ++j)
      for (size_t w = 0; w < rowWords; ++w)
        if (rowSets[i][w] & rowSets[j][w]) {
          g.bits[i][j >> 6] |= uint64_t(1) << (j & 63);
          g.bits[j][i >> 6] |= uint64_t(1) << (i & 63);
          break;
        }
  return g;
}

std::vector<int> stencilc::hierarchicalMatching(int blocks, int blockSize,
                                                int kBlock, int kElem) {
  if (blocks <= 0 || blockSize <= 0)
    return {};
  // A band narrower than one column claims nothing beyond the diagonal.
  kBlock = std::max(kBlock, 1);
  kElem = std::max(kElem, 1);
  std::vector<int> mate(static_cast<size_t>(blocks) * blockSize, -1);
  std::vector<int> blockMate(blocks, -1);

  // Level 1: whole block columns s1 >= kBlock apart never share a nonzero
  // block row, so they pair element by element.
  const int s1 = std::max(blocks / 2, kBlock);
  for (int i = 0; i + s1 < blocks; ++i) {
    if (blockMate[i] != -1 || blockMate[i + s1] != -1)
      continue;
    blockMate[i] = i + s1;
    blockMate[i + s1] = i;
    for (int t = 0; t < blockSize; ++t) {
      int u = i * blockSize + t, v = (i + s1) * blockSize + t;
      mate[u] = v;
      mate[v] = u;
    }
  }

  // Level 2: inside a block left over, elements s2 >= kElem apart never
  // share a nonzero row of any block row.
  const int s2 = std::max(blockSize / 2, kElem);
  for (int x = 0; x < blocks; ++x) {
    if (blockMate[x] != -1)
      continue;
    for (int u = 0; u + s2 < blockSize; ++u) {
      int a = x * blockSize + u, b = a + s2;
      if (mate[a] == -1 && mate[b] == -1) {
        mate[a] = b;
        mate[b] = a;
      }
    }
  }
  return mate;
}

/// Why `pattern` cannot run on `type`'s sparse tensor cores, or "".
static std::string patternProblem(MmaType type, SparsityPattern pattern) {
  if (type == MmaType::F64)
    return "sparse tensor cores have no f64 shapes (mma.sp takes f16, bf16 "
           "and tf32 only), so an f64 stencil stays dense";
  if (pattern == SparsityPattern::Dense)
    return "the dense pattern is not a sparsity pattern to convert to";
  if (type == MmaType::TF32 && pattern == SparsityPattern::TwoOfFour)
    return "tf32 sparse tensor cores use the 1:2 pattern, not 2:4 (use "
           "pattern=12, or 0 for automatic)";
  if (type != MmaType::TF32 && pattern == SparsityPattern::OneOfTwo)
    return "PTX's " + mmaTypeName(type).str() +
           " sparse mma (mma.sp) is 2:4, not 1:2; 1:2 is the tf32 pattern "
           "(use pattern=24, or 0 for automatic)";
  return "";
}

/// Columns an unmatched vertex count can never go below: a column that
/// conflicts with every other kept column stays alone, and the matched
/// columns are even in number.
static int unmatchedLowerBound(const ConflictGraph &g,
                               const std::vector<int> &kept) {
  int isolated = 0;
  for (int c : kept)
    if (g.degree(c) == static_cast<int>(kept.size()) - 1)
      ++isolated;
  return isolated + (static_cast<int>(kept.size()) - isolated) % 2;
}

static int countUnmatched(const std::vector<int> &mate) {
  return static_cast<int>(std::count(mate.begin(), mate.end(), -1));
}

/// The non-conflict graph on `kept` (vertex v is column kept[v]): the
/// complement of the conflict graph, where an edge is a legal 1:2 pair.
static std::vector<std::vector<int>>
nonConflictGraph(const ConflictGraph &g, const std::vector<int> &kept) {
  const int n = static_cast<int>(kept.size());
  std::vector<std::vector<int>> adj(n);
  for (int u = 0; u < n; ++u)
    for (int v = u + 1; v < n; ++v)
      if (!g.conflict(kept[u], kept[v])) {
        adj[u].push_back(v);
        adj[v].push_back(u);
      }
  return adj;
}

/// Whether the block fields of `program` describe its A exactly, so the
/// hierarchical matching's column numbering (block * blockSize + element)
/// is A's. All-zero columns would break that numbering once dropped.
static bool staircaseApplies(const MatrixProgram &program, int dropped) {
  if (dropped != 0 || program.blockRows < 1 || program.blockCols < 1 ||
      program.staircaseK < 1 || program.elementK < 1 ||
      program.rows() % program.blockRows != 0 ||
      program.cols() % program.blockCols != 0)
    return false;
  return verifyStaircase(program).exact;
}

std::optional<SparsityResult>
stencilc::planSparsity(const MatrixProgram &program, SparsityPattern pattern,
                       std::string &why) {
  MmaType type = program.shape.type;
  why = patternProblem(type, pattern);
  if (!why.empty())
    return std::nullopt;
  if (program.a.size() !=
      static_cast<size_t>(program.rows()) * program.cols()) {
    why = "A has " + std::to_string(program.a.size()) + " entries, not " +
          std::to_string(program.rows()) + " x " +
          std::to_string(program.cols());
    return std::nullopt;
  }
  std::vector<FragmentShape> shapes =
      legalFragments(type, /*sparse=*/true, program.arch);
  if (shapes.empty()) {
    why = "no sparse " + mmaTypeName(type).str() + " fragment on sm_" +
          std::to_string(program.arch);
    return std::nullopt;
  }
  SparsityResult result;
  result.pattern = pattern;
  // A larger K means fewer mma.sp per patch for the same columns.
  result.shape = *std::max_element(
      shapes.begin(), shapes.end(),
      [](const FragmentShape &a, const FragmentShape &b) { return a.k < b.k; });
  const int group = groupSize(pattern);
  if (result.shape.k % group != 0) {
    why = "fragment " + result.shape.name() + " is not a whole number of " +
          sparsityPatternName(pattern).str() + " groups";
    return std::nullopt;
  }

  // (a) A zero column of A multiplies its B row by zero: leave it out, and
  // the gather need not read that row at all.
  std::vector<int> kept;
  for (int c = 0; c < program.cols(); ++c) {
    bool any = false;
    if (!program.columns[c].zero)
      for (int r = 0; r < program.rows() && !any; ++r)
        any = program.nonzero(r, c);
    if (any)
      kept.push_back(c);
  }
  result.droppedZeroColumns = program.cols() - static_cast<int>(kept.size());

  // (b) Match. `mate` is indexed by original column.
  ConflictGraph g = buildConflictGraph(program);
  std::vector<int> mate(program.cols(), -1);
  const int lowerBound = unmatchedLowerBound(g, kept);
  bool done = false;
  if (staircaseApplies(program, result.droppedZeroColumns)) {
    std::vector<int> h = hierarchicalMatching(
        program.blockCols, program.cols() / program.blockCols,
        program.staircaseK, program.elementK);
    // Theorem 5 promises conflict-free pairs; check rather than trust, as a
    // wrong promise would break the pattern silently.
    bool valid = h.size() == mate.size();
    for (size_t c = 0; valid && c < h.size(); ++c)
      valid = h[c] == -1 ||
              (h[h[c]] == static_cast<int>(c) && !g.conflict(c, h[c]));
    if (valid) {
      mate = h;
      result.hierarchical = true;
      // Theorem 6 claims minimality, but argues one block at a time:
      // columns Algorithm 1 strands in one block may still pair with
      // columns of another (2 blocks of 3 columns, kBlock = 2, kElem = 1:
      // it strands 2 columns, yet a perfect matching exists; a 3x3 box
      // with r1 = 5, r2 = 1 strands 3 where 1 is minimal). Above the lower
      // bound, let the blossom algorithm augment Algorithm 1's matching.
      // Nothing was dropped here, so vertex v of the graph is column v.
      int unmatched = countUnmatched(mate);
      if (unmatched > lowerBound) {
        std::vector<int> better = maximumMatching(
            static_cast<int>(kept.size()), nonConflictGraph(g, kept), mate);
        if (countUnmatched(better) < unmatched) {
          mate = better;
          result.hierarchical = false;
        }
      }
      done = true;
    }
  }
  if (!done) {
    std::vector<int> local = maximumMatching(static_cast<int>(kept.size()),
                                             nonConflictGraph(g, kept));
    for (size_t v = 0; v < kept.size(); ++v)
      if (local[v] != -1)
        mate[kept[v]] = kept[local[v]];
  }

  // (c) Lay out pairs by their smallest column, which keeps the order
  // deterministic and close to the layout's gather order.
  for (int c : kept) {
    if (mate[c] == -1) {
      result.order.push_back(c);
      result.order.push_back(-1);
      ++result.matchPadding;
    } else if (mate[c] > c) {
      result.order.push_back(c);
      result.order.push_back(mate[c]);
    }
  }
  if (pattern == SparsityPattern::TwoOfFour && result.order.size() % 4 != 0) {
    result.order.insert(result.order.end(), 2, -1);
    result.groupPadding = 2;
  }

  // (d) Whole fragments along K; at least one, so the program still has a
  // K tile to multiply when A is entirely zero.
  const size_t k = result.shape.k;
  size_t width = std::max(k, (result.order.size() + k - 1) / k * k);
  result.fragmentPadding = static_cast<int>(width - result.order.size());
  result.order.resize(width, -1);
  return result;
}

bool stencilc::convertSparsity(Stencil &s, int patternNumber,
                               DiagnosticEngine &diags) {
  if (!s.matrix) {
    diags.error(s.loc, "sparsity-conversion needs a layout pass (flatten, "
                       "decompose or layout-morph) first");
    return false;
  }
  MatrixProgram &program = *s.matrix;
  MmaType type = program.shape.type;
  SparsityPattern pattern;
  if (patternNumber == 0)
    pattern = type == MmaType::TF32 ? SparsityPattern::OneOfTwo
                                    : SparsityPattern::TwoOfFour;
  else if (patternNumber == 24)
    pattern = SparsityPattern::TwoOfFour;
  else if (patternNumber == 12)
    pattern = SparsityPattern::OneOfTwo;
  else {
    diags.error(s.loc, "invalid sparsity pattern " +
                           llvm::Twine(patternNumber) +
                           " for sparsity-conversion; expected 0 "
                           "(automatic), 24 (2:4) or 12 (1:2)");
    return false;
  }

  std::string why;
  std::optional<SparsityResult> plan = planSparsity(program, pattern, why);
  if (!plan) {
    diags.error(s.loc, "cannot convert stencil '" + s.name + "' to " +
                           sparsityPatternName(pattern) + " sparsity: " + why);
    return false;
  }

  program.permuteColumns(plan->order);
  program.shape = plan->shape;
  program.pattern = pattern;
  // PIT scatters the staircase; claiming it still would mislead the
  // verifier and any later matching.
  program.blockRows = program.blockCols = 1;
  program.staircaseK = program.elementK = 0;
  computeMatrixStats(program);
  // computeMatrixStats sees only the result; the padding's origin is known
  // here alone.
  program.stats.matchPadding = plan->matchPadding;
  program.stats.groupPadding = plan->groupPadding;
  program.stats.fragmentPadding = plan->fragmentPadding;

  std::string broken = verifyMatrixProgram(program);
  if (!broken.empty()) {
    diags.error(s.loc, "internal error: sparsity-conversion left an invalid "
                       "matrix program for stencil '" +
                           s.name + "': " + broken);
    return false;
  }
  return true;
}
