//===- SemaLoweringTest.cpp - The IR that sema produces, per feature ------===//
//
// What each language feature lowers to: taps, boundaries, updates, hints.
// The messages themselves are checked by the lit tests; these look at the IR.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "stencilc/Frontend/Sema.h"
#include "stencilc/IR/LinearForm.h"

#include "gtest/gtest.h"

#include <map>

using namespace stencilc;
using stencilc::test::Compiled;

namespace {

/// The taps of update `k` as (grid, offset) -> coefficient value.
std::map<std::pair<int, Offset>, double>
taps(const Stencil &s, int k = 0, const std::vector<double> &params = {}) {
  std::map<std::pair<int, Offset>, double> out;
  const LinearForm &lf = *s.updates[k].linear;
  for (const Tap &t : lf.taps)
    out[{t.grid, t.offset}] = evaluateGridFree(s.graph, t.coeff, params);
  return out;
}

Offset off(int a, int b = 0, int c = 0) { return {a, b, c}; }

/// The expression below `node` as an S-expression.
std::string tree(const ExprGraph &g, int node) {
  const Node &n = g[node];
  switch (n.op) {
  case Op::Const:
    return std::to_string(n.value);
  case Op::Param:
    return "p" + std::to_string(n.index);
  case Op::Read:
    return "g" + std::to_string(n.index) + "[" + std::to_string(n.offset[0]) +
           "," + std::to_string(n.offset[1]) + "," +
           std::to_string(n.offset[2]) + "]";
  default:
    break;
  }
  std::string out = "(" + opName(n.op).str();
  if (n.op == Op::Pow)
    out += std::to_string(n.exponent);
  out += " " + tree(g, n.lhs);
  if (n.rhs >= 0)
    out += " " + tree(g, n.rhs);
  return out + ")";
}

//===--- box ---===//

TEST(SemaBox, TableIsRowMajorWithTheSlowestAxisFirst) {
  // 3-D radius 1: weight = 1 + index in row-major order.
  std::string table = "[";
  for (int i = 0; i < 27; ++i)
    table += (i ? ", " : "") + std::to_string(i + 1);
  Compiled c("stencil s { grid u : f64[3]; boundary u : clamp;\n"
             "u' = box(u, 1, " + table + "]); }");
  ASSERT_TRUE(c.module) << c.diagText;
  auto t = taps(c.stencil());
  ASSERT_EQ(t.size(), 27u);
  for (int i = 0; i < 27; ++i) {
    Offset o = off(i / 9 - 1, (i / 3) % 3 - 1, i % 3 - 1);
    EXPECT_EQ((t[{0, o}]), i + 1) << i;
  }
  // Nested tables flatten to the same order.
  Compiled n("stencil s { grid u : f64[2]; boundary u : clamp;\n"
             "u' = box(u, 1, [[1, 2, 3], [4, 5, 6], [7, 8, 9]]); }");
  Compiled f("stencil s { grid u : f64[2]; boundary u : clamp;\n"
             "u' = box(u, 1, [1, 2, 3, 4, 5, 6, 7, 8, 9]); }");
  ASSERT_TRUE(n.module && f.module) << n.diagText << f.diagText;
  EXPECT_EQ(taps(n.stencil()), taps(f.stencil()));
}

TEST(SemaBox, SumsAreBuiltLeftHalfFirst) {
  // The taps' balanced sum creates its left half's nodes before its
  // right half's, whichever order the C++ compiler evaluates a call's
  // arguments in: node order shows in the generated code, which must not
  // depend on the compiler that built stencilc.
  Compiled c("stencil s { grid u : f32[1]; boundary u : clamp;\n"
             "u' = box(u, 2, 0.1); }");
  ASSERT_TRUE(c.module) << c.diagText;
  const ExprGraph &g = c.stencil().graph;
  int first = -1;
  for (size_t i = 0; i < g.size() && first < 0; ++i)
    if (g[i].op == Op::Add)
      first = static_cast<int>(i);
  ASSERT_GE(first, 0);
  EXPECT_EQ(tree(g, first), "(add (mul 0.100000 g0[-2,0,0]) "
                            "(mul 0.100000 g0[-1,0,0]))");
}

TEST(SemaBox, ScalarOrNoWeightAndZeroHoles) {
  Compiled c("stencil s { grid u : f32[2]; boundary u : clamp;\n"
             "u' = box(u, 2, 0.04); }");
  ASSERT_TRUE(c.module) << c.diagText;
  auto t = taps(c.stencil());
  EXPECT_EQ(t.size(), 25u);
  for (auto &[k, w] : t)
    EXPECT_EQ(w, 0.04);
  Compiled one("stencil s { grid u : f32[1]; boundary u : clamp;\n"
               "u' = box(u, 3); }");
  ASSERT_TRUE(one.module) << one.diagText;
  auto t1 = taps(one.stencil());
  EXPECT_EQ(t1.size(), 7u);
  for (auto &[k, w] : t1)
    EXPECT_EQ(w, 1.0);
  // Zeros are holes: no read, and no reach along that side.
  Compiled h("stencil s { grid u : f32[1]; boundary u : fixed;\n"
             "u' = box(u, 2, [0, 0, 1, 2, 0]); }");
  ASSERT_TRUE(h.module) << h.diagText;
  auto th = taps(h.stencil());
  EXPECT_EQ(th.size(), 2u);
  EXPECT_EQ((th[{0, off(0)}]), 1.0);
  EXPECT_EQ((th[{0, off(1)}]), 2.0);
  const Update &u = h.stencil().updates[0];
  EXPECT_EQ(u.reachLo[0], 0);
  EXPECT_EQ(u.reachHi[0], 1);
  EXPECT_EQ(h.stencil().radius(), 1);
}

TEST(SemaBox, WrongTableSizeOrRadiusIsRejected) {
  EXPECT_FALSE(Compiled("stencil s { grid u : f32[2]; boundary u : clamp;\n"
                        "u' = box(u, 1, [1, 2, 3]); }")
                   .module);
  EXPECT_FALSE(Compiled("stencil s { grid u : f32[1]; boundary u : clamp;\n"
                        "u' = box(u, 0); }")
                   .module);
  EXPECT_FALSE(Compiled("stencil s { grid u : f32[1]; boundary u : clamp;\n"
                        "u' = box(u, 9); }")
                   .module);
  EXPECT_TRUE(Compiled("stencil s { grid u : f32[1]; boundary u : clamp;\n"
                       "u' = box(u, 8); }")
                  .module);
}

//===--- star ---===//

TEST(SemaStar, PerDistanceTable) {
  Compiled c("stencil s { grid u : f64[3]; boundary u : periodic;\n"
             "u' = star(u, 2, [10, 1, 0.5]); }");
  ASSERT_TRUE(c.module) << c.diagText;
  auto t = taps(c.stencil());
  ASSERT_EQ(t.size(), 13u); // centre + 2 * 3 * 2
  EXPECT_EQ((t[{0, off(0, 0, 0)}]), 10);
  for (int a = 0; a < 3; ++a)
    for (int k : {-2, -1, 1, 2}) {
      Offset o{0, 0, 0};
      o[a] = k;
      EXPECT_EQ((t[{0, o}]), std::abs(k) == 1 ? 1 : 0.5) << a << " " << k;
    }
}

TEST(SemaStar, PerPointTableIsCentreThenAxesFromLowToHigh) {
  // 2-D radius 2: centre, then axis 0 at -2, -1, 1, 2, then axis 1.
  Compiled c("stencil s { grid u : f64[2]; boundary u : clamp;\n"
             "u' = star(u, 2, [1, 2, 3, 4, 5, 6, 7, 8, 9]); }");
  ASSERT_TRUE(c.module) << c.diagText;
  auto t = taps(c.stencil());
  ASSERT_EQ(t.size(), 9u);
  EXPECT_EQ((t[{0, off(0, 0)}]), 1);
  EXPECT_EQ((t[{0, off(-2, 0)}]), 2);
  EXPECT_EQ((t[{0, off(-1, 0)}]), 3);
  EXPECT_EQ((t[{0, off(1, 0)}]), 4);
  EXPECT_EQ((t[{0, off(2, 0)}]), 5);
  EXPECT_EQ((t[{0, off(0, -2)}]), 6);
  EXPECT_EQ((t[{0, off(0, -1)}]), 7);
  EXPECT_EQ((t[{0, off(0, 1)}]), 8);
  EXPECT_EQ((t[{0, off(0, 2)}]), 9);
  // In 1-D with radius 1 the per-point table (3 entries) is not ambiguous
  // with a per-distance one (2 entries).
  Compiled d("stencil s { grid u : f64[1]; boundary u : clamp;\n"
             "u' = star(u, 1, [1, 2]); }");
  Compiled p("stencil s { grid u : f64[1]; boundary u : clamp;\n"
             "u' = star(u, 1, [1, 2, 3]); }");
  ASSERT_TRUE(d.module && p.module) << d.diagText << p.diagText;
  auto td = taps(d.stencil()), tp = taps(p.stencil());
  EXPECT_EQ((td[{0, off(-1)}]), 2);
  EXPECT_EQ((td[{0, off(1)}]), 2);
  EXPECT_EQ((tp[{0, off(-1)}]), 2);
  EXPECT_EQ((tp[{0, off(1)}]), 3);
}

TEST(SemaStar, ParameterWeightsAndWrongTable) {
  Compiled c("stencil s { grid u : f32[2]; param a : f32 = 0.5;\n"
             "boundary u : clamp; u' = star(u, 1, [1 - 4 * a, a]); }");
  ASSERT_TRUE(c.module) << c.diagText;
  auto t = taps(c.stencil(), 0, {0.25});
  EXPECT_EQ((t[{0, off(0, 0)}]), 1 - 4 * 0.25);
  EXPECT_EQ((t[{0, off(0, 1)}]), 0.25);
  EXPECT_EQ(t.size(), 5u);
  EXPECT_FALSE(Compiled("stencil s { grid u : f32[2]; boundary u : clamp;\n"
                        "u' = star(u, 1, [1, 2, 3]); }")
                   .module);
}

//===--- lets ---===//

TEST(SemaLet, LetsInlineIntoTheSameNodes) {
  Compiled withLet("stencil s { grid u : f64[1]; boundary u : clamp;\n"
                   "let l = u[-1] + u[1]; let m = 2 * l;\n"
                   "u' = m - l * 0.5 + u; }");
  Compiled inlined("stencil s { grid u : f64[1]; boundary u : clamp;\n"
                   "u' = 2 * (u[-1] + u[1]) - (u[-1] + u[1]) * 0.5 + u; }");
  ASSERT_TRUE(withLet.module && inlined.module)
      << withLet.diagText << inlined.diagText;
  const Stencil &a = withLet.stencil(), &b = inlined.stencil();
  // The same expression tree, and shared subtrees are one node.
  EXPECT_EQ(tree(a.graph, a.updates[0].root), tree(b.graph, b.updates[0].root));
  EXPECT_EQ(a.graph.size(), b.graph.size());
  auto t = taps(a);
  EXPECT_EQ((t[{0, off(-1)}]), 1.5);
  EXPECT_EQ((t[{0, off(0)}]), 1.0);
  EXPECT_EQ((t[{0, off(1)}]), 1.5);
}

TEST(SemaLet, AnUnusedLetIsNotLiveAndUseBeforeLetFails) {
  Compiled c("stencil s { grid u : f64[1]; boundary u : clamp;\n"
             "let unused = u[5] * u[5]; u' = u[1]; }");
  ASSERT_TRUE(c.module) << c.diagText;
  EXPECT_EQ(c.stencil().radius(), 1); // u[5] is not reachable
  EXPECT_TRUE(c.stencil().isLinear());
  EXPECT_EQ(c.stencil().updates[0].reachHi[0], 1);
  EXPECT_FALSE(Compiled("stencil s { grid u : f64[1]; boundary u : clamp;\n"
                        "u' = l; let l = u[1]; }")
                   .module);
  EXPECT_FALSE(Compiled("stencil s { grid u : f64[1]; boundary u : clamp;\n"
                        "let l = u[1]; let l = u; u' = l; }")
                   .module);
}

//===--- multi-grid ---===//

TEST(SemaGrids, SeveralGridsKeepDeclarationOrderAndUpdateFlags) {
  Compiled c("stencil s { grid u, v : f32[2]; grid k : f32[2];\n"
             "boundary u, v : periodic; boundary k : clamp;\n"
             "v' = v + k[1, 0] * u[0, -1]; u' = 0.5 * (u + v[0, 1]); }");
  ASSERT_TRUE(c.module) << c.diagText;
  const Stencil &s = c.stencil();
  ASSERT_EQ(s.grids.size(), 3u);
  EXPECT_EQ(s.grids[0].name, "u");
  EXPECT_EQ(s.grids[1].name, "v");
  EXPECT_EQ(s.grids[2].name, "k");
  EXPECT_TRUE(s.grids[0].updated);
  EXPECT_TRUE(s.grids[1].updated);
  EXPECT_FALSE(s.grids[2].updated);
  ASSERT_EQ(s.updates.size(), 2u);
  EXPECT_EQ(s.updates[0].grid, 1); // source order of the updates
  EXPECT_EQ(s.updates[1].grid, 0);
  EXPECT_FALSE(s.updates[0].linear); // k * u
  ASSERT_TRUE(s.updates[1].linear);
  auto t = taps(s, 1);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ((t[{0, off(0, 0)}]), 0.5);
  EXPECT_EQ((t[{1, off(0, 1)}]), 0.5);
  // Reach counts reads of every grid; the updated radius only updated ones.
  EXPECT_EQ(s.updates[0].reachHi[0], 1); // from k[1, 0]
  EXPECT_EQ(s.updatedRadius(0), 0);
  EXPECT_EQ(s.updatedRadius(1), 1);
  EXPECT_EQ(s.radius(), 1);
  EXPECT_EQ(s.findGrid("k"), 2);
  EXPECT_EQ(s.findGrid("x"), -1);
  EXPECT_EQ(s.updateOf(2), nullptr);
  ASSERT_NE(s.updateOf(0), nullptr);
  EXPECT_EQ(s.updateOf(0)->grid, 0);
}

TEST(SemaGrids, GridsShareShapeAndAreUpdatedOnce) {
  EXPECT_FALSE(Compiled("stencil s { grid u : f32[2]; grid v : f32[3];\n"
                        "u' = u; }")
                   .module);
  // Element types may differ; f64 read by an update makes the compute type
  // f64, a grid no update reads does not.
  Compiled mixed("stencil s { grid u : f32[2]; grid v : f64[2];\n"
                 "u' = u + v; }");
  ASSERT_TRUE(mixed.module) << mixed.diagText;
  EXPECT_EQ(mixed.stencil().compType, ElemType::F64);
  EXPECT_EQ(mixed.stencil().elemType, ElemType::F32);
  Compiled unread("stencil s { grid u : f16[2]; grid v : f64[2]; u' = u; }");
  ASSERT_TRUE(unread.module) << unread.diagText;
  EXPECT_EQ(unread.stencil().compType, ElemType::F32);
  EXPECT_FALSE(Compiled("stencil s { grid u : f32[1]; u' = u; u' = 2 * u; }")
                   .module);
  EXPECT_FALSE(Compiled("stencil s { grid u : f32[4]; u' = u; }").module);
  // A read-only grid read off centre needs a boundary, an updated one too.
  EXPECT_FALSE(Compiled("stencil s { grid u, k : f32[1];\n"
                        "boundary u : clamp; u' = k[1]; }")
                   .module);
  // Centre reads need none.
  Compiled c("stencil s { grid u, k : f32[1]; u' = u * k; }");
  ASSERT_TRUE(c.module) << c.diagText;
  EXPECT_FALSE(c.stencil().grids[1].hasBoundary);
}

//===--- boundaries ---===//

TEST(SemaBoundary, PerAxisListsAndBroadcast) {
  Compiled c("stencil s { grid u, v : f32[3];\n"
             "boundary u : periodic, dirichlet(-1 / 4), fixed;\n"
             "boundary v : dirichlet(2 * 3 - 0.5);\n"
             "u' = u[1, 1, 1] + v[-1, -1, -1]; }");
  ASSERT_TRUE(c.module) << c.diagText;
  const Stencil &s = c.stencil();
  const std::vector<AxisBoundary> &u = s.grids[0].boundary;
  ASSERT_EQ(u.size(), 3u);
  EXPECT_EQ(u[0].side[0].kind, BoundaryKind::Periodic);
  EXPECT_EQ(u[1].side[0].kind, BoundaryKind::Dirichlet);
  EXPECT_EQ(u[1].side[1].value, -1.0 / 4);
  EXPECT_EQ(u[2].side[1].kind, BoundaryKind::Fixed);
  const std::vector<AxisBoundary> &v = s.grids[1].boundary;
  ASSERT_EQ(v.size(), 3u);
  for (const AxisBoundary &b : v) {
    EXPECT_TRUE(b.uniform());
    EXPECT_EQ(b.side[0].kind, BoundaryKind::Dirichlet);
    EXPECT_EQ(b.side[0].value, 2 * 3 - 0.5);
  }
  // The fixed band follows the update's reach along each side.
  const Update &up = s.updates[0];
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(up.reachLo[a], 1);
    EXPECT_EQ(up.reachHi[a], 1);
  }
}

TEST(SemaBoundary, OneDeclarationForSeveralGrids) {
  Compiled c("stencil s { grid u, v : f32[2]; boundary u, v : clamp, periodic;\n"
             "u' = v[1, 1]; v' = u[-1, -1]; }");
  ASSERT_TRUE(c.module) << c.diagText;
  for (const Grid &g : c.stencil().grids) {
    EXPECT_TRUE(g.hasBoundary);
    EXPECT_EQ(g.boundary[0].side[0].kind, BoundaryKind::Clamp);
    EXPECT_EQ(g.boundary[1].side[1].kind, BoundaryKind::Periodic);
  }
}

TEST(SemaBoundary, InvalidBoundariesAreRejected) {
  const char *bad[] = {
      "boundary u : clamp, clamp, clamp;",       // 3 for a 2-D grid
      "boundary u : clamp; boundary u : fixed;", // twice
      "boundary u : dirichlet;",                 // no value
      "boundary u : dirichlet(k);",              // a grid, not a parameter
      "boundary u : (periodic, clamp);",         // periodic on one side
      "boundary u : periodic(1);",               // no arguments
      "boundary u : wrap;",                      // unknown
      "boundary k : fixed;",                     // fixed on read-only
      "boundary a : clamp;",                     // not a grid
  };
  // u and k are read at the centre only, so the base needs no boundary.
  auto source = [](const char *b) {
    return std::string("stencil s { grid u, k : f32[2]; param a : f32 = 1; ") +
           b + " u' = u + k; }";
  };
  EXPECT_TRUE(Compiled(source("boundary u : clamp, periodic;")).module);
  EXPECT_TRUE(Compiled(source("boundary u : fixed;")).module);
  EXPECT_TRUE(Compiled(source("boundary u : dirichlet(a);")).module);
  EXPECT_TRUE(Compiled(source("boundary u : (dirichlet(a), clamp);")).module);
  for (const char *b : bad)
    EXPECT_FALSE(Compiled(source(b)).module) << b;
}

//===--- hints ---===//

TEST(SemaHint, FuseAndSteps) {
  Compiled c("stencil s { grid u : f32[1]; hint fuse = 3; hint steps = 100;\n"
             "u' = u; }");
  ASSERT_TRUE(c.module) << c.diagText;
  EXPECT_EQ(c.stencil().hints.fuse, 3);
  EXPECT_EQ(c.stencil().hints.steps, 100);
  Compiled a("stencil s { grid u : f32[1]; hint fuse = auto; u' = u; }");
  ASSERT_TRUE(a.module) << a.diagText;
  EXPECT_FALSE(a.stencil().hints.fuse);
  EXPECT_FALSE(a.stencil().hints.steps);
  Compiled z("stencil s { grid u : f32[1]; hint steps = 0; hint fuse = 64;"
             " u' = u; }");
  ASSERT_TRUE(z.module) << z.diagText;
  EXPECT_EQ(z.stencil().hints.steps, 0);
  EXPECT_EQ(z.stencil().hints.fuse, 64);
}

TEST(SemaHint, OutOfRangeOrUnknownHintsAreRejected) {
  for (const char *h : {"hint fuse = 0;", "hint fuse = 65;", "hint fuse = 2.0;",
                        "hint steps = -1;", "hint steps = 1.5;",
                        "hint fuse = many;", "hint fusion = 2;"})
    EXPECT_FALSE(Compiled(std::string("stencil s { grid u : f32[1]; ") + h +
                          " u' = u; }")
                     .module)
        << h;
}

//===--- reserved names ---===//

TEST(SemaReserved, ReservedNameList) {
  for (const char *n : {"int", "double", "float", "class", "namespace", "run",
                        "steps", "params", "stream", "n0", "n2", "std",
                        "stencilc", "_u", "a__b", "__", "Params", "xor"})
    EXPECT_TRUE(isReservedName(n)) << n;
  for (const char *n : {"u", "alpha", "u_1", "n3", "Run", "x_y", "stencil2",
                        "kappa", "u_"})
    EXPECT_FALSE(isReservedName(n)) << n;
}

TEST(SemaReserved, ReservedNamesCannotBeDeclared) {
  for (const char *src :
       {"stencil s { grid double : f32[1]; double' = double; }",
        "stencil s { grid u : f32[1]; param run : f32 = 1; u' = u * run; }",
        "stencil s { grid u : f32[1]; let _t = u; u' = _t; }",
        "stencil float { grid u : f32[1]; u' = u; }",
        "stencil s { grid u : f32[1]; u' = u; }\n"
        "stencil s { grid v : f32[1]; v' = v; }"})
    EXPECT_FALSE(Compiled(src).module) << src;
  // Two differently named stencils lower to two IR stencils.
  Compiled two("stencil a1 { grid u : f32[1]; u' = u; }\n"
               "stencil b1 { grid u : f64[2]; u' = 2 * u; }");
  ASSERT_TRUE(two.module) << two.diagText;
  ASSERT_EQ(two.module->stencils.size(), 2u);
  EXPECT_EQ(two.module->stencils[1].name, "b1");
  EXPECT_EQ(two.module->stencils[1].dims, 2);
  EXPECT_EQ(two.module->stencils[1].elemType, ElemType::F64);
}

//===--- params ---===//

TEST(SemaParam, TypesAndDefaultValues) {
  Compiled c("stencil s { grid u : f32[1]; param a : f16 = -3 / 8;\n"
             "param b : f64 = 1e-3 * 2; u' = a * u + b; }");
  ASSERT_TRUE(c.module) << c.diagText;
  const Stencil &s = c.stencil();
  ASSERT_EQ(s.params.size(), 2u);
  EXPECT_EQ(s.params[0].type, ElemType::F16);
  EXPECT_EQ(s.params[0].defaultValue, -3.0 / 8);
  EXPECT_EQ(s.params[1].type, ElemType::F64);
  EXPECT_EQ(s.params[1].defaultValue, 1e-3 * 2);
  const LinearForm &lf = *s.updates[0].linear;
  ASSERT_EQ(lf.taps.size(), 1u);
  EXPECT_EQ(s.graph[lf.taps[0].coeff].op, Op::Param);
  EXPECT_EQ(s.graph[lf.taps[0].coeff].index, 0);
  ASSERT_GE(lf.constant, 0);
  EXPECT_EQ(s.graph[lf.constant].op, Op::Param);
  EXPECT_EQ(s.graph[lf.constant].index, 1);
  EXPECT_FALSE(Compiled("stencil s { grid u : f32[1]; param a : f32;"
                        " u' = a * u; }")
                   .module);
  EXPECT_FALSE(Compiled("stencil s { grid u : f32[1]; param a : f32 = 1 / 0;"
                        " u' = a * u; }")
                   .module);
}

} // namespace
