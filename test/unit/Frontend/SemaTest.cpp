//===- SemaTest.cpp - Checking and lowering to IR -------------------------===//

#include "TestUtil.h"

#include "gtest/gtest.h"

using namespace stencilc;
using stencilc::test::Compiled;

namespace {

TEST(Sema, BoxExpandsInRowMajorOrder) {
  Compiled c("stencil s { grid u : f32[2]; boundary u : clamp;\n"
             "u' = box(u, 1, [[1,2,3],[4,5,6],[7,8,9]]); }");
  ASSERT_TRUE(c.module) << c.diagText;
  const LinearForm &lf = *c.stencil().updates[0].linear;
  ASSERT_EQ(lf.taps.size(), 9u);
  // Taps are sorted by offset; weight w sits at offset (w-1)/3-1, (w-1)%3-1.
  for (const Tap &t : lf.taps) {
    double w = c.stencil().graph[t.coeff].value;
    int k = static_cast<int>(w) - 1;
    EXPECT_EQ(t.offset[0], k / 3 - 1);
    EXPECT_EQ(t.offset[1], k % 3 - 1);
  }
}

TEST(Sema, UnknownNameSuggestsTheClosest) {
  Compiled c("stencil s { grid u : f32[1]; param alpha : f32 = 1;\n"
             "boundary u : clamp; u' = alpah * u[1]; }");
  EXPECT_FALSE(c.module);
  EXPECT_NE(c.diagText.find("t.st:2:26: error: unknown name 'alpah'; did you "
                            "mean 'alpha'?"),
            std::string::npos)
      << c.diagText;
}

TEST(Sema, NonlinearUpdatesHaveNoLinearForm) {
  Compiled c("stencil s { grid u : f32[1]; boundary u : clamp;\n"
             "u' = u * u[1]; }");
  ASSERT_TRUE(c.module) << c.diagText;
  EXPECT_FALSE(c.stencil().updates[0].linear);
  EXPECT_FALSE(c.stencil().isLinear());
}

} // namespace
