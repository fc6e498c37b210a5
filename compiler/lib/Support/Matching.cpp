//===- Matching.cpp - Maximum matching in general graphs (blossom) --------===//
//
// Edmonds' algorithm, grown one alternating tree at a time. A breadth-first
// search from an unmatched root labels vertices outer (even distance from
// the root along the tree) and inner (odd). An edge between two outer
// vertices closes an odd cycle, a blossom: every vertex on it can then be
// reached by an even alternating path, so the whole cycle is contracted
// into its base and its inner vertices become outer. An edge from an outer
// vertex to an unmatched one ends an augmenting path. Contraction is kept
// implicit (a `base` per vertex, and `parent` pointers rewired around the
// cycle), so the path can be walked back and flipped without expanding
// blossoms.
//
//===----------------------------------------------------------------------===//

#include "stencilc/Support/Matching.h"

#include <algorithm>
#include <numeric>

using namespace stencilc;

namespace {

class BlossomMatcher {
public:
  BlossomMatcher(int n, const std::vector<std::vector<int>> &rawAdj)
      : n(n), adj(n), mate(n, -1), parent(n, -1), base(n), outer(n, 0),
        inBlossom(n, 0), onRootPath(n, 0) {
    for (int v = 0; v < n; ++v) {
      if (v >= static_cast<int>(rawAdj.size()))
        break;
      for (int w : rawAdj[v])
        if (w >= 0 && w < n && w != v)
          adj[v].push_back(w);
      std::sort(adj[v].begin(), adj[v].end());
      adj[v].erase(std::unique(adj[v].begin(), adj[v].end()), adj[v].end());
    }
    // An edge listed at one end only still counts, so the graph the search
    // walks is symmetric whatever the caller passed.
    std::vector<std::pair<int, int>> missing;
    for (int v = 0; v < n; ++v)
      for (int w : adj[v])
        if (!hasEdge(w, v))
          missing.push_back({w, v});
    for (auto [v, w] : missing)
      adj[v].push_back(w);
    for (auto &list : adj) {
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
  }

  /// Keeps the pairs of `initial` that are edges and agree at both ends.
  void seed(const std::vector<int> &initial) {
    for (int v = 0; v < n && v < static_cast<int>(initial.size()); ++v) {
      int w = initial[v];
      if (w < 0 || w >= n || w == v || w >= static_cast<int>(initial.size()) ||
          initial[w] != v)
        continue;
      if (mate[v] == -1 && mate[w] == -1 && hasEdge(v, w)) {
        mate[v] = w;
        mate[w] = v;
      }
    }
  }

  /// Greedy start: most vertices get matched without a search. Low-degree
  /// vertices go first, as they have the fewest chances later.
  void greedy() {
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return adj[a].size() < adj[b].size();
    });
    for (int v : order) {
      if (mate[v] != -1)
        continue;
      for (int w : adj[v])
        if (mate[w] == -1) {
          mate[v] = w;
          mate[w] = v;
          break;
        }
    }
  }

  /// One search per unmatched vertex suffices: a vertex with no augmenting
  /// path now never gets one after other augmentations (a classical
  /// property of maximum matchings), so it need not be revisited.
  std::vector<int> run() {
    for (int v = 0; v < n; ++v)
      if (mate[v] == -1 && !adj[v].empty())
        augmentFrom(v);
    return mate;
  }

private:
  bool hasEdge(int v, int w) const {
    return std::binary_search(adj[v].begin(), adj[v].end(), w);
  }

  /// Grows an alternating tree from `root`; flips the first augmenting path
  /// it finds. Returns whether the matching grew.
  bool augmentFrom(int root) {
    std::fill(parent.begin(), parent.end(), -1);
    std::fill(outer.begin(), outer.end(), 0);
    std::iota(base.begin(), base.end(), 0);
    queue.clear();
    outer[root] = 1;
    queue.push_back(root);
    for (size_t head = 0; head < queue.size(); ++head) {
      int v = queue[head];
      for (int w : adj[v]) {
        // Inside one contracted blossom, or the matched edge we came by.
        if (base[v] == base[w] || mate[v] == w)
          continue;
        if (outer[w]) {
          contract(v, w);
          continue;
        }
        if (parent[w] != -1)
          continue; // Already inner: an even-odd edge adds nothing.
        parent[w] = v;
        if (mate[w] == -1) {
          flipPath(w);
          return true;
        }
        outer[mate[w]] = 1;
        queue.push_back(mate[w]);
      }
    }
    return false;
  }

  /// The base of the innermost blossom (or tree vertex) that is an ancestor
  /// of both `a` and `b`, walking up by matched edge then tree edge.
  int commonBase(int a, int b) {
    std::fill(onRootPath.begin(), onRootPath.end(), 0);
    for (;;) {
      a = base[a];
      onRootPath[a] = 1;
      if (mate[a] == -1)
        break; // The root.
      a = parent[mate[a]];
    }
    for (;;) {
      b = base[b];
      if (onRootPath[b])
        return b;
      b = parent[mate[b]];
    }
  }

  /// Walks from `v` up to the blossom base `b`, marking the bases passed and
  /// pointing each outer vertex's parent across the cycle edge, so the
  /// formerly inner vertices get an even path to the root through `child`.
  void markCycle(int v, int b, int child) {
    while (base[v] != b) {
      inBlossom[base[v]] = 1;
      inBlossom[base[mate[v]]] = 1;
      parent[v] = child;
      child = mate[v];
      v = parent[mate[v]];
    }
  }

  /// The edge v-w joins two outer vertices: contract the odd cycle it
  /// closes, and queue its inner vertices, which are outer from now on.
  void contract(int v, int w) {
    int b = commonBase(v, w);
    std::fill(inBlossom.begin(), inBlossom.end(), 0);
    markCycle(v, b, w);
    markCycle(w, b, v);
    for (int i = 0; i < n; ++i)
      if (inBlossom[base[i]]) {
        base[i] = b;
        if (!outer[i]) {
          outer[i] = 1;
          queue.push_back(i);
        }
      }
  }

  /// `end` is unmatched and was reached from an outer vertex: flip the
  /// alternating path from it back to the root.
  void flipPath(int end) {
    for (int v = end; v != -1;) {
      int up = parent[v];
      int next = mate[up];
      mate[v] = up;
      mate[up] = v;
      v = next;
    }
  }

  int n;
  std::vector<std::vector<int>> adj;
  std::vector<int> mate, parent, base, queue;
  std::vector<char> outer, inBlossom, onRootPath;
};

} // namespace

std::vector<int>
stencilc::maximumMatching(int n, const std::vector<std::vector<int>> &adj) {
  if (n <= 0)
    return {};
  BlossomMatcher m(n, adj);
  m.greedy();
  return m.run();
}

std::vector<int>
stencilc::maximumMatching(int n, const std::vector<std::vector<int>> &adj,
                          std::vector<int> initial) {
  if (n <= 0)
    return {};
  BlossomMatcher m(n, adj);
  m.seed(initial);
  m.greedy();
  return m.run();
}
