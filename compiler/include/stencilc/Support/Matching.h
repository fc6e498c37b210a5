//===- Matching.h - Maximum matching in general graphs ----------*- C++ -*-===//
//
// Sparsity conversion pairs columns of A that never share a nonzero row; the
// fewest zero columns it must add is the number of columns a maximum
// matching of the non-conflict graph leaves unmatched. That graph is general
// (odd cycles are common), so bipartite matching does not apply: this is
// Edmonds' blossom algorithm, which contracts odd cycles while it searches
// for augmenting paths. One search per vertex, each O(V^2) at worst, so
// O(V^3) overall; for the few thousand columns a kernel matrix has, the
// greedy start leaves few searches to do.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_SUPPORT_MATCHING_H
#define STENCILC_SUPPORT_MATCHING_H

#include <vector>

namespace stencilc {

/// A maximum cardinality matching of the undirected graph with vertices
/// 0..n-1 and adjacency lists `adj` (each edge listed at both ends;
/// self-loops, duplicate and out-of-range entries are ignored). Returns
/// mate[v], the vertex matched to v, or -1 where v is unmatched.
std::vector<int> maximumMatching(int n,
                                 const std::vector<std::vector<int>> &adj);

/// As above, but starts from `initial`, a valid matching of the same graph
/// (mate form; anything inconsistent is dropped), and only augments it: the
/// result keeps every vertex `initial` matched matched.
std::vector<int> maximumMatching(int n,
                                 const std::vector<std::vector<int>> &adj,
                                 std::vector<int> initial);

} // namespace stencilc

#endif // STENCILC_SUPPORT_MATCHING_H
