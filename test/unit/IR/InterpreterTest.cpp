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

} // namespace
