//===- Stages.cpp - Stages and new values inlined into updates ------------===//

#include "stencilc/IR/Stages.h"

#include <algorithm>
#include <map>

using namespace stencilc;

namespace {

class Inliner {
public:
  Inliner(Stencil &s, Update &u) : s(s), g(s.graph), u(u) {}

  /// The node that computes `root` at the point shifted by `shift`.
  int at(int root, const Offset &shift) {
    std::vector<bool> live = g.reachable({root});
    for (int i = 0; i <= root; ++i)
      if (live[i] && !memo.count({i, shift}))
        memo[{i, shift}] = rebuild(i, shift);
    return memo.at({root, shift});
  }

private:
  static Offset add(const Offset &a, const Offset &b) {
    return {a[0] + b[0], a[1] + b[1], a[2] + b[2]};
  }
  /// Records a point the inlined form depends on.
  void reach(const Offset &o) {
    for (int a = 0; a < s.dims; ++a) {
      u.spanLo[a] = std::max(u.spanLo[a], -o[a]);
      u.spanHi[a] = std::max(u.spanHi[a], o[a]);
    }
  }

  int rebuild(int i, const Offset &shift) {
    const Node n = g[i];
    switch (n.op) {
    case Op::Const:
    case Op::Param:
    case Op::Step:
      return i;
    case Op::Read: {
      Offset o = add(n.offset, shift);
      reach(o);
      return g.read(n.index, o, n.loc);
    }
    case Op::Coord:
      return g.leaf(Op::Coord, n.index, add(n.offset, shift), n.loc);
    case Op::StageRead: {
      Offset o = add(n.offset, shift);
      reach(o);
      return at(s.stages[n.index].root, o);
    }
    case Op::NewRead: {
      Offset o = add(n.offset, shift);
      reach(o);
      int v = at(s.updateOf(n.index)->written, o);
      // The GPU stores the new value in the grid's type before it is read.
      if (s.grids[n.index].type == s.compType)
        return v;
      Node r;
      r.op = Op::Round;
      r.index = n.index;
      r.lhs = v;
      r.loc = n.loc;
      return g.add(r);
    }
    default: {
      Node m = n;
      if (m.lhs >= 0)
        m.lhs = memo.at({n.lhs, shift});
      if (m.rhs >= 0)
        m.rhs = memo.at({n.rhs, shift});
      if (m.third >= 0)
        m.third = memo.at({n.third, shift});
      return g.add(m);
    }
    }
  }

  Stencil &s;
  ExprGraph &g;
  Update &u;
  std::map<std::pair<int, Offset>, int> memo;
};

} // namespace

void stencilc::inlineStages(Stencil &s) {
  for (Update &u : s.updates) {
    u.spanLo = {};
    u.spanHi = {};
    u.root = Inliner(s, u).at(u.written, Offset{0, 0, 0});
  }
}
