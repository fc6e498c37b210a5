//===- MeanDriftTest.cpp - Tensor cores conserve a conservative mean ------===//
//
// Issue 22, through the CPU emulator of the tensor cores (DESIGN.md §2):
// heat with alpha = 0.2 (weights 0.2, summing to 1) on a periodic grid,
// 10^4 steps in tf32 operands (f32 grid) and in f16 (f16 grid), dense and
// sparse, one step a pass and four fused. The grid's mean must drift
// by no more than rounding: each pass rounds every new value with relative
// error at most rho = 2 u_op (the weight and the grid value as operands)
// + (K + 1) u_acc (K products summed in f32) + u_grid (the store), of the
// values it sums; errors of either sign add up like a random walk over
// the passes, sqrt(passes) * rho. The weights rounded one by one would sum
// to 5 * tf32(0.2) = 1 - 2.4e-4 and shrink the mean by a factor
// (1 - 2.4e-4)^steps: the test checks that this exceeds the bound, so it
// can tell the two apart. The CUDA-core f32 kernels are checked the same
// way by test/CodeGen/emulate/mean-drift.test.
//
//===----------------------------------------------------------------------===//

#include "../Frontend/TestUtil.h"
#include "stencilc/IR/MatrixEmulator.h"
#include "stencilc/IR/Weights.h"
#include "stencilc/Transforms/Compress24.h"
#include "stencilc/Transforms/Decompose.h"
#include "stencilc/Transforms/Flatten.h"
#include "stencilc/Transforms/SparsityConversion.h"
#include "stencilc/Transforms/TemporalFusion.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>

using namespace stencilc;
using stencilc::test::Compiled;

namespace {

struct Case {
  const char *type;
  int fuse;
  bool sparse;
};

class MeanDrift : public ::testing::TestWithParam<Case> {};

TEST_P(MeanDrift, StaysWithinRounding) {
  const Case c = GetParam();
  Compiled compiled(std::string("stencil h { grid u : ") + c.type +
                    "[2]; boundary u : periodic;\n"
                    "  u' = u + 0.2 * (u[-1,0] + u[1,0] + u[0,-1] + u[0,1] "
                    "- 4*u); }");
  ASSERT_TRUE(compiled.module) << compiled.diagText;
  Stencil &s = compiled.module->stencils[0];
  if (c.fuse > 1)
    ASSERT_TRUE(fuseTemporally(s, c.fuse, compiled.diags));
  if (c.sparse)
    ASSERT_TRUE(decomposeStencil(s, 0, compiled.diags, 90) &&
                convertSparsity(s, 0, compiled.diags))
        << compiled.diagText;
  else
    ASSERT_TRUE(flattenStencil(s, compiled.diags, 90)) << compiled.diagText;
  ASSERT_TRUE(compress24(s, compiled.diags)) << compiled.diagText;

  // A long axis keeps the field from becoming uniform within 10^4 steps
  // (its slowest mode decays by exp(-0.2 (2 pi / 256)^2 10^4) = 0.3).
  const std::array<int64_t, 3> sizes{4, 256, 1};
  const int64_t points = sizes[0] * sizes[1];
  const ElemType elem = s.elemType;
  std::vector<double> grid(points);
  uint64_t state = 7;
  double before = 0;
  for (double &x : grid) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = roundTo(elem, static_cast<double>(state >> 40) * 0x1.0p-24);
    before += x;
  }
  before /= points;
  const int steps = 10000, passes = steps / c.fuse;
  for (int p = 0; p < passes; ++p) {
    EmulatedGrid next = emulateOnGrid(s, sizes, grid, {});
    for (int64_t i = 0; i < points; ++i)
      ASSERT_TRUE(next.covered[i]) << "point " << i;
    grid = std::move(next.values);
  }
  double after = 0;
  for (double x : grid)
    after += x;
  after /= points;

  const MmaType op = s.matrix->packed->shape.type;
  const double uOp = op == MmaType::BF16 ? 0x1.0p-8 : 0x1.0p-11;
  const double uGrid = unitRoundoff(elem);
  const int K = static_cast<int>(kernelTaps(s).size());
  const double rho = 2 * uOp + (K + 1) * 0x1.0p-24 + uGrid;
  const double bound = std::sqrt(static_cast<double>(passes)) * rho;
  const double drift = std::fabs(after - before) / before;
  EXPECT_LE(drift, bound) << c.type << " t=" << c.fuse;
  std::printf("%s t=%d %s: mean drift %.3e, bound %.3e\n", c.type, c.fuse,
              c.sparse ? "sparse" : "dense", drift, bound);
  // Independently rounded weights would drift by this much: the bound
  // tells it apart.
  const double naiveSum = 4 * roundToOperand(op, 0.2) +
                          roundToOperand(op, 1 - 4 * 0.2);
  const double naiveDrift = 1 - std::pow(naiveSum, steps);
  EXPECT_GT(std::fabs(naiveDrift), 4 * bound);
}

INSTANTIATE_TEST_SUITE_P(
    Heat, MeanDrift,
    ::testing::Values(Case{"f32", 1, false}, Case{"f32", 4, true},
                      Case{"f16", 1, true}, Case{"f16", 4, false}),
    [](const ::testing::TestParamInfo<Case> &info) {
      return std::string(info.param.type) + "_t" +
             std::to_string(info.param.fuse) +
             (info.param.sparse ? "_sparse" : "_dense");
    });

} // namespace
