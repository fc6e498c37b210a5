//===- ElemTypeTest.cpp - Rounding to f16 and bf16 ------------------------===//

#include "stencilc/IR/ElemType.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace stencilc;

namespace {

TEST(ElemType, HalfRoundsToNearestEven) {
  // Between 1 and 2 the f16 spacing is 2^-10.
  float ulp = std::ldexp(1.0f, -10);
  EXPECT_EQ(roundToHalf(1.0f + ulp / 2), 1.0f);              // tie -> even
  EXPECT_EQ(roundToHalf(1.0f + 1.5f * ulp), 1.0f + 2 * ulp); // tie -> even
  EXPECT_EQ(roundToHalf(1.0f + 0.6f * ulp), 1.0f + ulp);
  EXPECT_EQ(roundToHalf(65504.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(roundToHalf(65520.0f)));
  // The smallest subnormal is 2^-24; half of it rounds to zero (even).
  EXPECT_EQ(roundToHalf(std::ldexp(1.0f, -24)), std::ldexp(1.0f, -24));
  EXPECT_EQ(roundToHalf(std::ldexp(1.0f, -25)), 0.0f);
}

TEST(ElemType, BFloat16KeepsEightBitsOfMantissa) {
  float ulp = std::ldexp(1.0f, -7);
  EXPECT_EQ(roundToBFloat16(1.0f + ulp / 2), 1.0f);
  EXPECT_EQ(roundToBFloat16(1.0f + 1.5f * ulp), 1.0f + 2 * ulp);
  EXPECT_TRUE(std::isnan(roundToBFloat16(NAN)));
}

} // namespace
