//===- ExprGraphTest.cpp - Hash-consing, folding, order, reachability -----===//

#include "stencilc/IR/Stencil.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <set>

using namespace stencilc;

namespace {

llvm::SMLoc locAt(const char *p) { return llvm::SMLoc::getFromPointer(p); }

TEST(ExprGraph, IdenticalNodesAreShared) {
  ExprGraph g;
  static const char text[] = "abc";
  int r1 = g.read(0, {1, 0, 0}, locAt(text));
  int r2 = g.read(0, {1, 0, 0}, locAt(text + 2)); // another place
  EXPECT_EQ(r1, r2);
  EXPECT_EQ(g[r1].loc, locAt(text)); // the first place it was written
  int r3 = g.read(0, {-1, 0, 0});
  int r4 = g.read(1, {1, 0, 0});
  EXPECT_NE(r1, r3);
  EXPECT_NE(r1, r4);
  int p = g.param(0);
  EXPECT_EQ(g.param(0), p);
  EXPECT_NE(g.param(1), p);
  int a1 = g.binary(Op::Add, r1, r3);
  size_t before = g.size();
  int a2 = g.binary(Op::Add, r1, r3);
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(g.size(), before); // nothing appended
  EXPECT_NE(g.binary(Op::Sub, r1, r3), a1);
  EXPECT_NE(g.binary(Op::Mul, r1, r3), a1);
  int m1 = g.binary(Op::Mul, p, a1);
  EXPECT_EQ(g.binary(Op::Mul, p, g.binary(Op::Add, r1, r3)), m1);
  // Pow nodes differ by exponent.
  int q2 = g.unary(Op::Pow, r1, {}, 2);
  EXPECT_EQ(g.unary(Op::Pow, r1, {}, 2), q2);
  EXPECT_NE(g.unary(Op::Pow, r1, {}, 3), q2);
  EXPECT_NE(g.unary(Op::Sqrt, r1), g.unary(Op::Abs, r1));
}

TEST(ExprGraph, ConstantsAreComparedBitwise) {
  ExprGraph g;
  int z = g.constant(0.0);
  int nz = g.constant(-0.0);
  EXPECT_NE(z, nz);
  EXPECT_TRUE(std::signbit(g[nz].value));
  EXPECT_EQ(g.constant(0.0), z);
  int n1 = g.constant(NAN);
  EXPECT_EQ(g.constant(NAN), n1); // same bits, one node
  EXPECT_EQ(g.constant(0.1), g.constant(1.0 / 10.0));
  EXPECT_NE(g.constant(0.1), g.constant(std::nextafter(0.1, 1.0)));
}

TEST(ExprGraph, ConstantOperandsFold) {
  ExprGraph g;
  int two = g.constant(2), three = g.constant(3), m = g.constant(-0.5);
  auto isConst = [&](int i, double v) {
    return g[i].op == Op::Const &&
           std::memcmp(&g[i].value, &v, sizeof v) == 0;
  };
  EXPECT_TRUE(isConst(g.binary(Op::Add, two, three), 2.0 + 3.0));
  EXPECT_TRUE(isConst(g.binary(Op::Sub, two, three), 2.0 - 3.0));
  EXPECT_TRUE(isConst(g.binary(Op::Mul, three, m), 3.0 * -0.5));
  EXPECT_TRUE(isConst(g.binary(Op::Div, two, three), 2.0 / 3.0));
  EXPECT_TRUE(isConst(g.binary(Op::Min, two, m), -0.5));
  EXPECT_TRUE(isConst(g.binary(Op::Max, two, m), 2.0));
  EXPECT_TRUE(isConst(g.unary(Op::Neg, two), -2.0));
  EXPECT_TRUE(isConst(g.unary(Op::Sqrt, two), std::sqrt(2.0)));
  EXPECT_TRUE(isConst(g.unary(Op::Abs, m), 0.5));
  EXPECT_TRUE(isConst(g.unary(Op::Pow, three, {}, 3), 27.0));
  EXPECT_TRUE(isConst(g.unary(Op::Pow, two, {}, -2), 0.25));
  EXPECT_TRUE(isConst(g.unary(Op::Pow, m, {}, 0), 1.0));
  int zero = g.constant(0);
  EXPECT_TRUE(isConst(g.binary(Op::Div, two, zero), INFINITY));
  EXPECT_TRUE(isConst(g.unary(Op::Neg, zero), -0.0));
  // Nested: (2 + 3) * -(3) folds all the way.
  int nested = g.binary(Op::Mul, g.binary(Op::Add, two, three),
                        g.unary(Op::Neg, three));
  EXPECT_TRUE(isConst(nested, (2.0 + 3.0) * -3.0));
  // A parameter or a read stops folding.
  int p = g.param(0);
  int ap = g.binary(Op::Add, two, p);
  EXPECT_EQ(g[ap].op, Op::Add);
  EXPECT_EQ(g[ap].lhs, two);
  EXPECT_EQ(g[ap].rhs, p);
  EXPECT_EQ(g[g.unary(Op::Neg, p)].op, Op::Neg);
  EXPECT_EQ(g[g.binary(Op::Mul, g.read(0, {}), three)].op, Op::Mul);
}

/// A random graph built through the public interface: order, sharing,
/// folding and grid-freedom hold for every node.
TEST(ExprGraph, RandomGraphsAreTopologicalSharedAndFolded) {
  std::mt19937_64 rng(4242);
  auto uni = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  const Op binOps[] = {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Min, Op::Max};
  const Op unOps[] = {Op::Neg, Op::Sqrt, Op::Abs, Op::Pow};
  for (int trial = 0; trial < 50; ++trial) {
    ExprGraph g;
    std::vector<int> made;
    for (int k = 0; k < 400; ++k) {
      int kind = made.empty() ? 0 : uni(0, 5);
      int id;
      if (kind == 0)
        id = g.constant(uni(-3, 3) / 2.0);
      else if (kind == 1)
        id = g.read(uni(0, 1), {uni(-1, 1), uni(-1, 1), 0});
      else if (kind == 2)
        id = g.param(uni(0, 2));
      else if (kind == 3) {
        Op op = unOps[uni(0, 3)];
        id = g.unary(op, made[uni(0, made.size() - 1)], {},
                     op == Op::Pow ? uni(-3, 3) : 0);
      }
      else
        id = g.binary(binOps[uni(0, 5)], made[uni(0, made.size() - 1)],
                      made[uni(0, made.size() - 1)]);
      ASSERT_GE(id, 0);
      ASSERT_LT(id, static_cast<int>(g.size()));
      made.push_back(id);
    }
    // Grid-freedom, by recursion over operands (independent of add()).
    std::function<bool(int)> free = [&](int i) -> bool {
      const Node &n = g[i];
      if (n.op == Op::Read)
        return false;
      return (n.lhs < 0 || free(n.lhs)) && (n.rhs < 0 || free(n.rhs));
    };
    for (size_t i = 0; i < g.size(); ++i) {
      const Node &n = g[i];
      int self = static_cast<int>(i);
      // Topological: operands have smaller indices.
      EXPECT_LT(n.lhs, self);
      EXPECT_LT(n.rhs, self);
      bool leaf = n.op == Op::Const || n.op == Op::Param || n.op == Op::Read;
      EXPECT_EQ(n.lhs >= 0, !leaf);
      EXPECT_EQ(n.rhs >= 0, isBinaryOp(n.op));
      // Folded: no arithmetic node has only constant operands.
      if (!leaf)
        EXPECT_FALSE(g[n.lhs].op == Op::Const &&
                     (n.rhs < 0 || g[n.rhs].op == Op::Const))
            << "node " << i << " " << opName(n.op).str();
      EXPECT_EQ(g.isGridFree(self), free(self)) << i;
      // Shared: no two nodes are the same.
      for (size_t j = 0; j < i; ++j)
        ASSERT_FALSE(g[j].sameAs(n)) << j << " and " << i;
    }
  }
}

TEST(ExprGraph, ReachableMatchesADepthFirstSearch) {
  std::mt19937_64 rng(99);
  auto uni = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 50; ++trial) {
    ExprGraph g;
    std::vector<int> made;
    for (int k = 0; k < 200; ++k) {
      int id;
      if (made.size() < 3 || uni(0, 3) == 0)
        id = g.read(0, {uni(-4, 4), uni(-4, 4), 0});
      else if (uni(0, 1))
        id = g.unary(Op::Neg, made[uni(0, made.size() - 1)]);
      else
        id = g.binary(uni(0, 1) ? Op::Add : Op::Mul,
                      made[uni(0, made.size() - 1)],
                      made[uni(0, made.size() - 1)]);
      made.push_back(id);
    }
    std::vector<int> roots;
    int numRoots = uni(0, 4);
    for (int r = 0; r < numRoots; ++r)
      roots.push_back(made[uni(0, made.size() - 1)]);
    if (uni(0, 1))
      roots.push_back(-1); // ignored
    std::vector<bool> want(g.size(), false);
    std::vector<int> stack;
    for (int r : roots)
      if (r >= 0)
        stack.push_back(r);
    while (!stack.empty()) {
      int i = stack.back();
      stack.pop_back();
      if (want[i])
        continue;
      want[i] = true;
      if (g[i].lhs >= 0)
        stack.push_back(g[i].lhs);
      if (g[i].rhs >= 0)
        stack.push_back(g[i].rhs);
    }
    EXPECT_EQ(g.reachable(roots), want);
  }
  ExprGraph g;
  int a = g.read(0, {1, 0, 0});
  int b = g.read(0, {-1, 0, 0});
  int s = g.binary(Op::Add, a, b);
  int other = g.unary(Op::Neg, a);
  EXPECT_EQ(g.reachable({s}), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(g.reachable({other}),
            (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(g.reachable({}), std::vector<bool>(4, false));
}

} // namespace
