//===- WeightsTest.cpp - Rounding weights keeps their sum -----------------===//
//
// stencilc::rt::roundWeights (runtime/include/stencilc/weights.h) and the
// per-grid grouping of IR/Weights.h: rounded weights sum to the exact sum
// rounded once, each weight stays next to its own rounding, and no weight
// changes sign.
//
//===----------------------------------------------------------------------===//

#include "../Frontend/TestUtil.h"
#include "stencilc/IR/ElemType.h"
#include "stencilc/IR/LinearForm.h"
#include "stencilc/IR/MatrixEmulator.h"
#include "stencilc/IR/Weights.h"
#include "stencilc/weights.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace stencilc;
using stencilc::test::Compiled;

namespace {

double roundF32(double x) { return static_cast<float>(x); }

/// The exact sum of `w` with counts, as a long double: the values here are
/// floats (24 bits) within a few binades, so the sum is exact in 64 bits.
long double exactSum(const std::vector<double> &w,
                     const std::vector<int> &count = {}) {
  long double s = 0;
  for (size_t i = 0; i < w.size(); ++i)
    s += static_cast<long double>(w[i]) * (count.empty() ? 1 : count[i]);
  return s;
}

TEST(Weights, FiveFifthsSumToOneInF32) {
  // The heat scheme of issue 22: centre 1 - 4 * 0.2 folded in double.
  std::vector<double> w = {1 - 4 * 0.2, 0.2, 0.2, 0.2, 0.2};
  std::vector<double> naive;
  for (double x : w)
    naive.push_back(roundF32(x));
  EXPECT_NE(exactSum(naive), 1.0L); // the defect: 1 + 1.49e-8
  rt::roundWeights(w.data(), nullptr, 5, roundF32);
  EXPECT_EQ(exactSum(w), 1.0L);
  // The centre, listed first, takes the correction; the others stay the
  // nearest floats to 0.2, so the scheme stays symmetric.
  for (int i = 1; i < 5; ++i)
    EXPECT_EQ(w[i], roundF32(0.2));
  EXPECT_EQ(w[0], 1.0 - 4.0 * roundF32(0.2));
}

TEST(Weights, BoxOfAveragesSumsToOneInEveryType) {
  for (MmaType t : {MmaType::F16, MmaType::BF16, MmaType::TF32}) {
    std::vector<double> w(49, 1.0 / 49.0);
    auto round = [t](double x) { return roundToOperand(t, x); };
    rt::roundWeights(w.data(), nullptr, 49, round);
    EXPECT_EQ(exactSum(w), 1.0L) << mmaTypeName(t).str();
    for (double x : w) {
      EXPECT_EQ(round(x), x); // representable in the operand type
      EXPECT_GT(x, 0.0);
    }
  }
}

TEST(Weights, SharedWeightsCountOncePerTap) {
  // One node for the four neighbours (count 4) and one for the centre.
  std::vector<double> w = {1 - 4 * 0.1, 0.1};
  std::vector<int> count = {1, 4};
  rt::roundWeights(w.data(), count.data(), 2,
                   [](double x) { return roundToOperand(MmaType::TF32, x); });
  EXPECT_EQ(exactSum(w, count), 1.0L);
}

/// Random weights in every target type: the rounded sum is never farther
/// from the exact sum than independent rounding leaves it,
/// and each weight moves from its own rounding by at most that error plus
/// one spacing of the type at the weight (the moved weight is rounded).
TEST(Weights, NeverWorseThanIndependentRounding) {
  std::mt19937_64 rng(22);
  for (int iter = 0; iter < 2000; ++iter) {
    int n = std::uniform_int_distribution<int>(1, 60)(rng);
    MmaType t = static_cast<MmaType>(std::uniform_int_distribution<int>(0, 2)(rng));
    auto round = [t](double x) { return roundToOperand(t, x); };
    std::vector<double> w(n);
    for (double &x : w)
      x = std::uniform_real_distribution<double>(-1, 1)(rng) /
          std::uniform_int_distribution<int>(1, 20)(rng);
    std::vector<double> naive, mine = w;
    for (double x : w)
      naive.push_back(round(x));
    long double target = exactSum(w);
    rt::roundWeights(mine.data(), nullptr, n, round);
    long double errNaive = std::fabs(exactSum(naive) - target);
    long double errMine = std::fabs(exactSum(mine) - target);
    EXPECT_LE(errMine, errNaive) << "iteration " << iter;
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(round(mine[i]), mine[i]);
      EXPECT_TRUE(mine[i] == 0 || (mine[i] > 0) == (w[i] > 0));
      int bits = t == MmaType::BF16 ? 7 : 10;
      double spacing = std::max(
          std::ldexp(1.0, std::ilogb(naive[i] == 0 ? 1e-30 : naive[i]) - bits),
          std::ldexp(1.0, -24));
      EXPECT_LE(std::fabs(mine[i] - naive[i]), errNaive + spacing)
          << "iteration " << iter;
    }
  }
}

TEST(Weights, ExactWeightsNeverMove) {
  // Exact in f16, but their sum 1 + 2^-11 + 2^-12 is not: nothing moves.
  std::vector<double> w = {1.0, std::ldexp(1.0, -11), std::ldexp(1.0, -12)};
  std::vector<double> before = w;
  rt::roundWeights(w.data(), nullptr, 3,
                   [](double x) { return roundToOperand(MmaType::F16, x); });
  EXPECT_EQ(w, before);
}

TEST(Weights, GroupsPerGridCentreFirst) {
  Compiled c("stencil s { grid u, v : f32[1]; boundary u, v : periodic;\n"
             "  u' = 0.3 * u[-1] + 0.3 * u[1] + 0.4 * u + 0.1 * v[2]; }");
  ASSERT_TRUE(c.module) << c.diagText;
  const std::vector<Tap> &taps = c.stencil().updates[0].linear->taps;
  std::vector<std::vector<int>> groups = weightGroups(taps);
  ASSERT_EQ(groups.size(), 2u);
  ASSERT_EQ(groups[0].size(), 3u);
  EXPECT_EQ(taps[groups[0][0]].offset[0], 0);
  EXPECT_EQ(groups[1].size(), 1u);
  std::vector<double> values =
      evaluateGridFreeAll(c.stencil().graph, std::vector<double>());
  std::vector<double> w =
      roundedTapWeights(taps, values, roundingTo(ElemType::F32));
  long double sumU = 0;
  for (int i : groups[0])
    sumU += w[i];
  EXPECT_EQ(sumU, 1.0L);
}

TEST(Weights, OneWeightOfAParameterPutsAllAtRunTime) {
  // u's weights: one over the parameter k, so the host rounds all three
  // (their sum is kept together); v's are constants, folded.
  Compiled c("stencil s { grid u, v : f32[1]; boundary u, v : periodic;\n"
             "  param k : f32 = 0.5;\n"
             "  u' = 0.3 * u[-1] + k * u[1] + 0.2 * u;\n"
             "  v' = 0.25 * v[-1] + 0.5 * v + 0.25 * v[1]; }");
  ASSERT_TRUE(c.module) << c.diagText;
  const Stencil &s = c.stencil();
  ASSERT_EQ(s.updates.size(), 2u);
  EXPECT_TRUE(weightsAtRunTime(s, s.updates[0].linear->taps));
  EXPECT_FALSE(weightsAtRunTime(s, s.updates[1].linear->taps));
}

} // namespace
