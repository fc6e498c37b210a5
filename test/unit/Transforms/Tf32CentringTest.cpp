//===- Tf32CentringTest.cpp - tf32 operands centred on a tile's value -----===//
//
// Issue 22, through the CPU emulator of the tensor cores (DESIGN.md §2):
// heat with alpha = 0.2 on a periodic grid, f32 grid values as tf32
// operands, 1000 steps, one step a pass, against a float64 reference.
// Rounded to tf32 as they are, the values lose every change smaller than
// half a tf32 ulp (2^-12 of the value): once the field is smooth it stops
// diffusing, and the error grows to percents. Centred (docs/language.md
// §6.4: B holds u - r, D gets r times the row's sum of A back), the
// operands round only the field's variation around r. The issue asks for
// an error of at most 2e-3 at every layout; the test also evaluates the
// uncentred rounding by hand, independently of the emulator, to show that
// it fails that limit, so that the comparison can tell the two apart.
//
//===----------------------------------------------------------------------===//

#include "../Frontend/TestUtil.h"
#include "stencilc/IR/MatrixEmulator.h"
#include "stencilc/Transforms/Compress24.h"
#include "stencilc/Transforms/Decompose.h"
#include "stencilc/Transforms/Flatten.h"
#include "stencilc/Transforms/LayoutMorph.h"
#include "stencilc/Transforms/SparsityConversion.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <functional>

using namespace stencilc;
using stencilc::test::Compiled;

namespace {

constexpr int64_t kN0 = 96, kN1 = 128;
constexpr int kSteps = 1000;
constexpr double kLimit = 2e-3;

const char *const kHeat = "stencil h { grid u : f32[2]; boundary u : "
                          "periodic;\n  u' = u + 0.2 * (u[-1,0] + u[1,0] + "
                          "u[0,-1] + u[0,1] - 4*u); }";

std::vector<double> initialField() {
  std::vector<double> grid(kN0 * kN1);
  uint64_t state = 22;
  for (double &x : grid) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<float>(static_cast<double>(state >> 40) * 0x1.0p-24);
  }
  return grid;
}

/// One step of heat on the periodic grid, `weight(center, value)` giving
/// each tap's contribution.
std::vector<double>
heatStep(const std::vector<double> &u,
         const std::function<double(double, double)> &tap) {
  std::vector<double> out(u.size());
  for (int64_t i = 0; i < kN0; ++i)
    for (int64_t j = 0; j < kN1; ++j) {
      auto at = [&](int64_t a, int64_t b) {
        return u[((a + kN0) % kN0) * kN1 + (b + kN1) % kN1];
      };
      out[i * kN1 + j] = tap(1, at(i, j)) + tap(0, at(i - 1, j)) +
                         tap(0, at(i + 1, j)) + tap(0, at(i, j - 1)) +
                         tap(0, at(i, j + 1));
    }
  return out;
}

double relativeError(const std::vector<double> &x,
                     const std::vector<double> &ref) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    err = std::max(err, std::fabs(x[i] - ref[i]));
    scale = std::max(scale, std::fabs(ref[i]));
  }
  return err / scale;
}

std::vector<double> reference() {
  std::vector<double> u = initialField();
  for (int s = 0; s < kSteps; ++s)
    u = heatStep(u, [](bool, double v) { return 0.2 * v; });
  return u;
}

struct Layout {
  const char *name;
  std::function<bool(Stencil &, DiagnosticEngine &)> build;
};

class Tf32Centring : public ::testing::TestWithParam<Layout> {};

TEST_P(Tf32Centring, HeatStaysWithinTheLimit) {
  Compiled compiled(kHeat);
  ASSERT_TRUE(compiled.module) << compiled.diagText;
  Stencil &s = compiled.module->stencils[0];
  ASSERT_TRUE(GetParam().build(s, compiled.diags)) << compiled.diagText;
  ASSERT_TRUE(compress24(s, compiled.diags)) << compiled.diagText;
  ASSERT_EQ(s.matrix->packed->shape.type, MmaType::TF32);
  ASSERT_TRUE(centresOperands(*s.matrix));

  std::vector<double> u = initialField();
  for (int step = 0; step < kSteps; ++step) {
    EmulatedGrid next = emulateOnGrid(s, {kN0, kN1, 1}, u, {});
    for (int64_t i = 0; i < kN0 * kN1; ++i)
      ASSERT_TRUE(next.covered[i]) << "point " << i;
    u = std::move(next.values);
  }
  const double err = relativeError(u, reference());
  std::printf("tf32 %s, centred: relative error %.3e after %d steps\n",
              GetParam().name, err, kSteps);
  EXPECT_LE(err, kLimit);
}

INSTANTIATE_TEST_SUITE_P(
    Heat, Tf32Centring,
    ::testing::Values(
        Layout{"flatten",
               [](Stencil &s, DiagnosticEngine &d) {
                 return flattenStencil(s, d, 90);
               }},
        Layout{"decompose_sparse",
               [](Stencil &s, DiagnosticEngine &d) {
                 return decomposeStencil(s, 0, d, 90) &&
                        convertSparsity(s, 0, d);
               }},
        Layout{"morph_sparse",
               [](Stencil &s, DiagnosticEngine &d) {
                 return morphLayout(s, 4, 4, d, 90) &&
                        convertSparsity(s, 0, d);
               }}),
    [](const ::testing::TestParamInfo<Layout> &info) {
      return std::string(info.param.name);
    });

/// The same run with every operand rounded to tf32 as it is (the weights
/// keeping their sum, as roundWeights leaves them: 4 x tf32(0.2) beside a
/// centre that makes the sum 1), evaluated here without the emulator:
/// it exceeds the limit, so the test above can fail.
TEST(Tf32Centring, UncentredRoundingExceedsTheLimit) {
  const double side = roundToOperand(MmaType::TF32, 0.2);
  const double centre = 1 - 4 * side;
  ASSERT_EQ(roundToOperand(MmaType::TF32, centre), centre);
  std::vector<double> u = initialField();
  for (int s = 0; s < kSteps; ++s) {
    u = heatStep(u, [&](bool c, double v) {
      return (c ? centre : side) * roundToOperand(MmaType::TF32, v);
    });
    for (double &x : u)
      x = static_cast<float>(x);
  }
  const double err = relativeError(u, reference());
  std::printf("tf32, uncentred: relative error %.3e after %d steps\n", err,
              kSteps);
  EXPECT_GT(err, 4 * kLimit);
}

} // namespace
