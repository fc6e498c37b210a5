//===- Weights.cpp - The rounded weights of a linear update ---------------===//

#include "stencilc/IR/Weights.h"

#include "stencilc/weights.h"

#include <algorithm>
#include <cstdlib>
#include <map>

using namespace stencilc;

std::vector<std::vector<int>>
stencilc::weightGroups(const std::vector<Tap> &taps) {
  std::map<int, std::vector<int>> byGrid;
  for (size_t i = 0; i < taps.size(); ++i)
    byGrid[taps[i].grid].push_back(static_cast<int>(i));
  std::vector<std::vector<int>> groups;
  for (auto &[grid, list] : byGrid) {
    auto distance = [&](int i) {
      const Offset &o = taps[i].offset;
      return std::abs(o[0]) + std::abs(o[1]) + std::abs(o[2]);
    };
    std::stable_sort(list.begin(), list.end(),
                     [&](int a, int b) { return distance(a) < distance(b); });
    groups.push_back(std::move(list));
  }
  return groups;
}

std::vector<double>
stencilc::roundedTapWeights(const std::vector<Tap> &taps,
                            const std::vector<double> &nodeValues,
                            const std::function<double(double)> &round) {
  std::vector<double> out(taps.size());
  for (const std::vector<int> &group : weightGroups(taps)) {
    std::vector<double> w;
    for (int i : group)
      w.push_back(nodeValues[taps[i].coeff]);
    rt::roundWeights(w.data(), nullptr, static_cast<int>(w.size()), round);
    for (size_t k = 0; k < group.size(); ++k)
      out[group[k]] = w[k];
  }
  return out;
}

WeightNodes stencilc::weightNodes(const std::vector<Tap> &taps) {
  WeightNodes out;
  std::map<int, int> index;
  for (const std::vector<int> &group : weightGroups(taps))
    for (int i : group) {
      auto [it, inserted] = index.try_emplace(
          taps[i].coeff, static_cast<int>(out.nodes.size()));
      if (inserted) {
        out.nodes.push_back(taps[i].coeff);
        out.counts.push_back(0);
      }
      ++out.counts[it->second];
    }
  return out;
}

std::vector<Tap> stencilc::kernelTaps(const Stencil &s) {
  if (s.fused)
    return s.fused->taps;
  if (s.updates.size() == 1 && s.updates[0].linear)
    return s.updates[0].linear->taps;
  return {};
}

void stencilc::roundTapNodes(const std::vector<Tap> &taps,
                             std::vector<double> &nodeValues,
                             const std::function<double(double)> &round) {
  WeightNodes wn = weightNodes(taps);
  std::vector<double> w;
  for (int v : wn.nodes)
    w.push_back(nodeValues[v]);
  rt::roundWeights(w.data(), wn.counts.data(), static_cast<int>(w.size()),
                   round);
  for (size_t k = 0; k < wn.nodes.size(); ++k)
    nodeValues[wn.nodes[k]] = w[k];
}

std::function<double(double)> stencilc::roundingTo(ElemType t) {
  ElemType comp = computeType(t);
  return [comp](double x) { return roundTo(comp, x); };
}

bool stencilc::weightsAtRunTime(const Stencil &s,
                                const std::vector<Tap> &taps) {
  std::vector<int> roots;
  for (const Tap &t : taps)
    roots.push_back(t.coeff);
  std::vector<bool> live = s.graph.reachable(roots);
  for (size_t i = 0; i < live.size(); ++i)
    if (live[i] && s.graph[i].op == Op::Param)
      return true;
  return false;
}
