//===- LinearFormTest.cpp - Tap extraction --------------------------------===//

#include "../Frontend/TestUtil.h"
#include "stencilc/IR/LinearForm.h"

#include "gtest/gtest.h"

using namespace stencilc;
using stencilc::test::Compiled;

namespace {

TEST(LinearForm, ParameterCoefficientsEvaluate) {
  Compiled c("stencil s { grid u : f64[1]; param a : f64 = 0.25;\n"
             "boundary u : clamp; u' = u + a * (u[-1] - 2*u + u[1]); }");
  ASSERT_TRUE(c.module) << c.diagText;
  const Stencil &s = c.stencil();
  const LinearForm &lf = *s.updates[0].linear;
  ASSERT_EQ(lf.taps.size(), 3u);
  std::vector<double> p = {0.25};
  EXPECT_EQ(evaluateGridFree(s.graph, lf.taps[0].coeff, p), 0.25);
  EXPECT_EQ(evaluateGridFree(s.graph, lf.taps[1].coeff, p), 0.5);
  EXPECT_EQ(evaluateGridFree(s.graph, lf.taps[2].coeff, p), 0.25);
  EXPECT_EQ(lf.constant, -1);
}

TEST(LinearForm, CancellingTapsDisappear) {
  Compiled c("stencil s { grid u : f32[1]; boundary u : clamp;\n"
             "u' = u[1] - u[1] + 2 * u; }");
  ASSERT_TRUE(c.module) << c.diagText;
  EXPECT_EQ(c.stencil().updates[0].linear->taps.size(), 1u);
}

} // namespace
