//===- CudaCorePlanTest.cpp - Tiles that fit shared memory ----------------===//

#include "../Frontend/TestUtil.h"
#include "stencilc/CodeGen/CudaCorePlan.h"

#include "gtest/gtest.h"

using namespace stencilc;
using stencilc::test::Compiled;

namespace {

TEST(CudaCorePlan, TilesShrinkToFitAndDeepFusionIsRejected) {
  Compiled c("stencil s { grid u : f64[3]; boundary u : clamp;\n"
             "u' = box(u, 2, 0.01); }");
  ASSERT_TRUE(c.module) << c.diagText;
  for (int fuse = 1; fuse <= 4; ++fuse) {
    auto p = planCudaCore(c.stencil(), fuse, GpuArch::SM80, c.diags);
    ASSERT_TRUE(p) << fuse;
    EXPECT_LE(p->sharedBytes, maxSharedBytesPerBlock(GpuArch::SM80));
    // Two buffers of the box: the tile plus a halo of fuse * 2 on each side.
    int64_t elems = 1;
    for (int a = 0; a < 3; ++a)
      elems *= p->tile[a] + 2 * fuse * 2;
    EXPECT_EQ(p->sharedBytes, 2 * 8 * elems);
    // A strip of points along axis 0 always fits in the tile.
    EXPECT_GE(p->tile[0], p->strip);
  }
  EXPECT_FALSE(planCudaCore(c.stencil(), 32, GpuArch::SM80, c.diags));
}

} // namespace
