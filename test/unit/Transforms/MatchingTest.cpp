//===- MatchingTest.cpp - Blossom against brute force --------------------===//
//
// The blossom matcher must find a maximum matching in any graph, odd cycles
// included. Its size is compared with an exhaustive search over vertex
// subsets on thousands of small random graphs, and the mate array is
// checked to be a matching of the graph given.
//
//===----------------------------------------------------------------------===//

#include "stencilc/Support/Matching.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <random>
#include <set>

using namespace stencilc;

namespace {

using Graph = std::vector<std::vector<int>>;

Graph fromEdges(int n, const std::vector<std::pair<int, int>> &edges) {
  Graph adj(n);
  for (auto [u, v] : edges) {
    adj[u].push_back(v);
    adj[v].push_back(u);
  }
  return adj;
}

/// The size of a maximum matching, by trying every partner for the lowest
/// vertex of each subset (memoised over the 2^n subsets).
int bruteForceMaximum(int n, const Graph &adj) {
  std::vector<uint32_t> nbr(n);
  for (int v = 0; v < n; ++v)
    for (int w : adj[v])
      nbr[v] |= 1u << w;
  std::vector<int> best(size_t(1) << n, -1);
  best[0] = 0;
  auto solve = [&](auto &self, uint32_t mask) -> int {
    if (best[mask] >= 0)
      return best[mask];
    int v = __builtin_ctz(mask);
    uint32_t rest = mask & ~(1u << v);
    int b = self(self, rest);
    for (uint32_t cand = nbr[v] & rest; cand; cand &= cand - 1) {
      int w = __builtin_ctz(cand);
      b = std::max(b, 1 + self(self, rest & ~(1u << w)));
    }
    return best[mask] = b;
  };
  return n == 0 ? 0 : solve(solve, (n == 32 ? ~0u : (1u << n) - 1));
}

/// Checks `mate` is a matching of `adj` and returns its size (in edges).
int checkedSize(int n, const Graph &adj, const std::vector<int> &mate) {
  EXPECT_EQ(static_cast<int>(mate.size()), n);
  std::set<std::pair<int, int>> edges;
  for (int v = 0; v < n; ++v)
    for (int w : adj[v])
      edges.insert({v, w});
  int matched = 0;
  for (int v = 0; v < n && v < static_cast<int>(mate.size()); ++v) {
    int w = mate[v];
    if (w == -1)
      continue;
    EXPECT_TRUE(w >= 0 && w < n && w != v) << "vertex " << v;
    if (w < 0 || w >= n)
      continue;
    EXPECT_EQ(mate[w], v) << "mate is not symmetric at " << v;
    EXPECT_TRUE(edges.count({v, w})) << v << "-" << w << " is not an edge";
    ++matched;
  }
  return matched / 2;
}

TEST(Matching, HandCases) {
  // Empty graph: nothing to match.
  EXPECT_EQ(checkedSize(5, Graph(5), maximumMatching(5, Graph(5))), 0);
  EXPECT_TRUE(maximumMatching(0, {}).empty());

  // Triangle: one edge, one vertex left over.
  Graph tri = fromEdges(3, {{0, 1}, {1, 2}, {2, 0}});
  EXPECT_EQ(checkedSize(3, tri, maximumMatching(3, tri)), 1);

  // Pentagon 0..4 with a tail 4-5-6: 7 vertices, so at most 3 edges, and
  // 0-1, 2-3, 5-6 has 3.
  Graph tail =
      fromEdges(7, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0}, {4, 5}, {5, 6}});
  EXPECT_EQ(checkedSize(7, tail, maximumMatching(7, tail)), 3);
  // Two pentagons joined by the edge 3-8, each with a stem to a free
  // vertex: pentagon 4-0-1-2-3 (0=1, 2=3 matched) with stem 4=5-6, and
  // pentagon 7-8-9-10-11 (8=9, 10=11) with stem 7=12-13. The only
  // augmenting path is 6-5=4-0=1-2=3-8=9-10=11-7=12-13. A breadth-first
  // search from either free end reaches the near pentagon at its base, labels
  // the bridge vertex (3 or 8) odd from the base, and can leave by the
  // bridge only after contracting that pentagon.
  Graph twin = fromEdges(14, {{4, 0},
                              {0, 1},
                              {1, 2},
                              {2, 3},
                              {3, 4},
                              {4, 5},
                              {5, 6},
                              {7, 8},
                              {8, 9},
                              {9, 10},
                              {10, 11},
                              {11, 7},
                              {7, 12},
                              {12, 13},
                              {3, 8}});
  std::vector<int> twinSeed = {1, 0, 3, 2, 5, 4, -1, 12, 9, 8, 11, 10, 7, -1};
  std::vector<int> mate = maximumMatching(14, twin, twinSeed);
  EXPECT_EQ(checkedSize(14, twin, mate), 7);

  // Complete graphs: floor(n/2) edges.
  for (int n : {1, 2, 5, 6, 9, 10}) {
    std::vector<std::pair<int, int>> e;
    for (int u = 0; u < n; ++u)
      for (int v = u + 1; v < n; ++v)
        e.push_back({u, v});
    Graph k = fromEdges(n, e);
    EXPECT_EQ(checkedSize(n, k, maximumMatching(n, k)), n / 2) << "K" << n;
  }

  // Two triangles joined by the edge 2-3: 0-1, 2-3, 4-5 is perfect.
  Graph bow =
      fromEdges(6, {{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 4}, {4, 5}, {5, 3}});
  EXPECT_EQ(checkedSize(6, bow, maximumMatching(6, bow)), 3);
  // Seeded with 1=2 and 3=4, the only augmenting path is 0-1=2-3=4-5.
  EXPECT_EQ(checkedSize(6, bow, maximumMatching(6, bow, {-1, 2, 1, 4, 3, -1})),
            3);
}

TEST(Matching, IgnoresMalformedInput) {
  // Self-loops, duplicates, out-of-range ends and one-sided listings.
  Graph adj = {{0, 1, 1, 7, -2}, {}, {3}, {}};
  std::vector<int> mate = maximumMatching(4, adj);
  ASSERT_EQ(mate.size(), 4u);
  EXPECT_EQ(mate[0], 1);
  EXPECT_EQ(mate[1], 0);
  EXPECT_EQ(mate[2], 3);
  EXPECT_EQ(mate[3], 2);
  // An inconsistent seed (0 claims 2, which is no edge) is dropped.
  mate = maximumMatching(4, adj, {2, -1, 0, -1});
  EXPECT_EQ(mate[0], 1);
  EXPECT_EQ(mate[2], 3);
}

TEST(Matching, AgreesWithBruteForceOnRandomGraphs) {
  std::mt19937_64 rng(0x5eed2026);
  int withOddCycleWin = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    int n = std::uniform_int_distribution<int>(1, 12)(rng);
    double density = std::uniform_real_distribution<double>(0.05, 0.95)(rng);
    std::bernoulli_distribution edge(density);
    std::vector<std::pair<int, int>> e;
    // Some graphs are unions of odd cycles with chords, the shapes that
    // need blossoms; the rest are plain random graphs.
    if (iter % 3 == 0 && n >= 3) {
      std::vector<int> perm(n);
      for (int i = 0; i < n; ++i)
        perm[i] = i;
      std::shuffle(perm.begin(), perm.end(), rng);
      int len = 3 + 2 * std::uniform_int_distribution<int>(0, (n - 3) / 2)(rng);
      for (int i = 0; i < len; ++i)
        e.push_back({perm[i], perm[(i + 1) % len]});
      std::bernoulli_distribution sparse(0.15);
      for (int u = 0; u < n; ++u)
        for (int v = u + 1; v < n; ++v)
          if (sparse(rng))
            e.push_back({u, v});
    } else {
      for (int u = 0; u < n; ++u)
        for (int v = u + 1; v < n; ++v)
          if (edge(rng))
            e.push_back({u, v});
    }
    Graph adj = fromEdges(n, e);
    for (auto &list : adj)
      std::shuffle(list.begin(), list.end(), rng);
    int want = bruteForceMaximum(n, adj);
    std::vector<int> mate = maximumMatching(n, adj);
    ASSERT_EQ(checkedSize(n, adj, mate), want) << "iteration " << iter;

    // From a random maximal-or-not seed the result is still maximum, and
    // every seeded vertex stays matched.
    std::vector<int> seed(n, -1);
    for (auto [u, v] : e)
      if (seed[u] == -1 && seed[v] == -1 &&
          std::bernoulli_distribution(0.5)(rng))
        seed[u] = v, seed[v] = u;
    std::vector<int> seeded = maximumMatching(n, adj, seed);
    ASSERT_EQ(checkedSize(n, adj, seeded), want) << "iteration " << iter;
    for (int v = 0; v < n; ++v)
      if (seed[v] != -1)
        EXPECT_NE(seeded[v], -1) << "seeded vertex " << v << " lost its mate";
    // A greedy matching falls short on some of these; make sure the test
    // covers such graphs, not only ones greedy already solves.
    int greedy = 0;
    std::vector<int> g(n, -1);
    for (auto [u, v] : e)
      if (g[u] == -1 && g[v] == -1)
        g[u] = v, g[v] = u, ++greedy;
    if (greedy < want)
      ++withOddCycleWin;
  }
  EXPECT_GT(withOddCycleWin, 50);
}

TEST(Matching, LargeDenseGraphIsFast) {
  // A complete graph minus a perfect matching's worth of edges, 2001
  // vertices: a maximum matching has 1000 edges.
  const int n = 2001;
  Graph adj(n);
  for (int u = 0; u < n; ++u)
    for (int v = 0; v < n; ++v)
      if (u != v && !(u / 2 == v / 2))
        adj[u].push_back(v);
  std::vector<int> mate = maximumMatching(n, adj);
  int matched = 0;
  for (int v = 0; v < n; ++v) {
    if (mate[v] == -1)
      continue;
    ++matched;
    ASSERT_NE(mate[v] / 2, v / 2);
    ASSERT_EQ(mate[mate[v]], v);
  }
  EXPECT_EQ(matched, n - 1);
}

} // namespace
