//===- InterpreterTest.cpp - The CPU reference ----------------------------===//

#include "../Frontend/TestUtil.h"
#include "stencilc/IR/Interpreter.h"

#include "gtest/gtest.h"

using namespace stencilc;
using stencilc::test::Compiled;

namespace {

/// u' = u[-1] + 10 u + 100 u[1] on 4 points, one step, by hand per boundary.
std::vector<double> oneStep(const char *boundary) {
  std::string src = std::string("stencil s { grid u : f64[1]; boundary u : ") +
                    boundary + "; u' = u[-1] + 10 * u + 100 * u[1]; }";
  Compiled c(src);
  EXPECT_TRUE(c.module) << c.diagText;
  Interpreter in(c.stencil(), {4, 1, 1}, {}, RefPrecision::Float64);
  in.setGrid(0, {1, 2, 3, 4});
  in.run(1);
  return in.getGrid(0);
}

TEST(Interpreter, BoundaryConditionsOnOneStep) {
  EXPECT_EQ(oneStep("dirichlet(5)"),
            (std::vector<double>{5 + 10 + 200, 1 + 20 + 300, 2 + 30 + 400,
                                 3 + 40 + 500}));
  EXPECT_EQ(oneStep("periodic"),
            (std::vector<double>{4 + 10 + 200, 1 + 20 + 300, 2 + 30 + 400,
                                 3 + 40 + 100}));
  EXPECT_EQ(oneStep("clamp"),
            (std::vector<double>{1 + 10 + 200, 1 + 20 + 300, 2 + 30 + 400,
                                 3 + 40 + 400}));
  EXPECT_EQ(oneStep("fixed"),
            (std::vector<double>{1, 1 + 20 + 300, 2 + 30 + 400, 4}));
}

/// Runs `src` (one 1-D stencil) on `init` (one vector per grid) for `steps`
/// steps in double; returns every grid.
std::vector<std::vector<double>> runSteps(const std::string &src,
                                          std::vector<std::vector<double>> init,
                                          int steps,
                                          std::vector<double> params = {}) {
  Compiled c(src);
  EXPECT_TRUE(c.module) << c.diagText;
  if (!c.module)
    return {};
  Interpreter in(c.stencil(), {static_cast<int64_t>(init[0].size()), 1, 1},
                 params, RefPrecision::Float64);
  for (size_t g = 0; g < init.size(); ++g)
    in.setGrid(static_cast<int>(g), init[g]);
  in.run(steps);
  std::vector<std::vector<double>> out;
  for (size_t g = 0; g < init.size(); ++g)
    out.push_back(in.getGrid(static_cast<int>(g)));
  return out;
}

TEST(Interpreter, StageOutsideTheDomainIsItsBoundary) {
  // d = u[1] - u over the domain, clamped: d[-1] at point 0 is d at 0, not
  // the expression at -1 (which would read u clamped: 0).
  auto r = runSteps("stencil s { grid u : f64[1]; boundary u, d : clamp;"
                    " stage d = u[1] - u; u' = d[-1]; }",
                    {{1, 2, 4, 8}}, 1);
  EXPECT_EQ(r[0], (std::vector<double>{1, 1, 2, 4}));
  // A dirichlet stage returns its value outside, even where the grid wraps.
  r = runSteps("stencil s { grid u : f64[1]; boundary u : periodic;"
               " boundary d : (dirichlet(-5), dirichlet(7));"
               " stage d = u[1] - u; u' = d[-1] + d[1]; }",
               {{1, 2, 4, 8}}, 1);
  EXPECT_EQ(r[0], (std::vector<double>{-5 + 2, 1 + 4, 2 - 7, 4 + 7}));
}

TEST(Interpreter, NewValuesAreReadInOrder) {
  // a' first; b' reads the new a at offsets (a clamped), and the old b.
  auto r = runSteps("stencil s { grid a, b : f64[1]; boundary a : clamp;"
                    " a' = 10 * a; b' = b + a'[1] - a'; }",
                    {{1, 2, 3}, {100, 200, 300}}, 1);
  EXPECT_EQ(r[0], (std::vector<double>{10, 20, 30}));
  EXPECT_EQ(r[1], (std::vector<double>{100 + 10, 200 + 10, 300 + 0}));
  // A fixed band's new value is the old one.
  r = runSteps("stencil s { grid a, b : f64[1]; boundary a : fixed;"
               " a' = 10 * a[1]; b' = a'; }",
               {{1, 2, 3}, {0, 0, 0}}, 1);
  EXPECT_EQ(r[0], (std::vector<double>{20, 30, 3}));
  EXPECT_EQ(r[1], (std::vector<double>{20, 30, 3}));
}

TEST(Interpreter, StepAndCoordinates) {
  // t counts the steps of one run from 0: three steps add 0, 1 and 2; the
  // coordinate and a choice by it select the points.
  auto r = runSteps("stencil s { grid u : f64[1];"
                    " u' = u + t + (i0 == 1 ? 100 : 0); }",
                    {{0, 0, 0}}, 3);
  EXPECT_EQ(r[0], (std::vector<double>{3, 303, 3}));
}

TEST(Interpreter, DirichletValueOfParameters) {
  // The value comes from the parameters the run gets, in double from their
  // declared types (0.1 as f32).
  auto r = runSteps("stencil s { grid u : f64[1]; param c : f32 = 1;"
                    " boundary u : dirichlet(2 * c); u' = u[-1]; }",
                    {{7, 8}}, 1, {0.1});
  EXPECT_EQ(r[0], (std::vector<double>{2 * static_cast<double>(0.1f), 7}));
}

} // namespace
