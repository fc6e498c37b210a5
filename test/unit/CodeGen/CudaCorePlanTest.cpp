//===- CudaCorePlanTest.cpp - Tiles that fit shared memory ----------------===//

#include "../Frontend/TestUtil.h"
#include "stencilc/CodeGen/CudaCorePlan.h"

#include "llvm/ADT/STLExtras.h"

#include "gtest/gtest.h"

#include <array>
#include <string>
#include <vector>

using namespace stencilc;
using stencilc::test::Compiled;

namespace {

TEST(CudaCorePlan, TilesShrinkToFitAndDeepFusionIsRejected) {
  Compiled c("stencil s { grid u : f64[3]; boundary u : clamp;\n"
             "u' = box(u, 2, 0.01); }");
  ASSERT_TRUE(c.module) << c.diagText;
  for (int fuse = 1; fuse <= 4; ++fuse) {
    auto p = planCudaCore(c.stencil(), fuse, GpuArch::SM80, c.diags,
                          /*frame=*/true);
    ASSERT_TRUE(p) << fuse;
    EXPECT_FALSE(p->stream);
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

TEST(CudaCorePlan, EveryArchitecturesPlansFitItsBlocks) {
  // The 99 KB of sm_86, sm_89 and sm_120 shrink what 227 KB hold on sm_90
  // and sm_100: the 3-D rings and the 2-D tiles of deep fusion.
  Compiled cube("stencil s { grid u : f32[3]; boundary u : clamp;\n"
                "u' = box(u, 1, 0.01); }");
  Compiled flat("stencil s { grid u : f64[2]; boundary u : clamp;\n"
                "u' = box(u, 2, 0.01); }");
  ASSERT_TRUE(cube.module) << cube.diagText;
  ASSERT_TRUE(flat.module) << flat.diagText;
  for (const ArchInfo &a : allArchs()) {
    SCOPED_TRACE(a.name.str());
    for (int fuse : {1, 3, 6}) {
      auto stream = planCudaCore(cube.stencil(), fuse, a.arch, cube.diags);
      ASSERT_TRUE(stream) << fuse;
      EXPECT_TRUE(stream->stream);
      EXPECT_LE(stream->sharedBytes, a.sharedPerBlock) << fuse;
      auto box = planCudaCore(flat.stencil(), fuse, a.arch, flat.diags);
      ASSERT_TRUE(box) << fuse;
      EXPECT_LE(box->sharedBytes, a.sharedPerBlock) << fuse;
    }
  }
  // Deep 3-D fusion advances fewer rows per iteration, with smaller rings,
  // in 99 KB than in 227 KB.
  auto big = planCudaCore(cube.stencil(), 6, GpuArch::SM100, cube.diags);
  auto small = planCudaCore(cube.stencil(), 6, GpuArch::SM120, cube.diags);
  ASSERT_TRUE(big && small);
  EXPECT_GT(big->sharedBytes, maxSharedBytesPerBlock(GpuArch::SM120));
  EXPECT_LT(small->rows, big->rows);
  EXPECT_LT(small->ring, big->ring);
}

TEST(CudaCorePlan, ThreeDimensionalStencilsStream) {
  Compiled c("stencil s { grid u : f64[3]; boundary u : clamp;\n"
             "u' = box(u, 1, 0.01); }");
  ASSERT_TRUE(c.module) << c.diagText;
  int lastRows = 4;
  for (int fuse = 1; fuse <= 4; ++fuse) {
    auto p = planCudaCore(c.stencil(), fuse, GpuArch::SM90, c.diags);
    ASSERT_TRUE(p) << fuse;
    ASSERT_TRUE(p->stream) << fuse;
    // One thread per point of the slab box, a halo of fuse along axes 1, 2.
    EXPECT_EQ(p->threads, p->box(1) * p->box(2));
    EXPECT_EQ(p->box(1), p->tile[1] + 2 * fuse);
    EXPECT_LE(p->threads, 1024);
    // A ring a power of two, and long enough that no row a level reads is
    // overwritten in the same iteration.
    EXPECT_EQ(p->ring & (p->ring - 1), 0) << fuse;
    EXPECT_GE(p->ring, 2 * (p->rows + 1)) << fuse;
    EXPECT_EQ(p->sharedBytes, int64_t(fuse) * p->ring * p->threads * 8);
    EXPECT_LE(p->sharedBytes, maxSharedBytesPerBlock(GpuArch::SM90));
    // Deeper fusion needs more rings: the rows per iteration never grow.
    EXPECT_LE(p->rows, lastRows) << fuse;
    lastRows = p->rows;
  }
  // f64 at depth 2 cannot hold rings for 4 planes per iteration.
  EXPECT_LT(lastRows, 4);
  // A halo that leaves fewer than 8 outputs of 32 falls back to the box.
  Compiled f32("stencil s { grid u : f32[3]; boundary u : clamp;\n"
               "u' = box(u, 1, 0.01); }");
  ASSERT_TRUE(f32.module) << f32.diagText;
  auto deep = planCudaCore(f32.stencil(), 12, GpuArch::SM90, f32.diags);
  ASSERT_TRUE(deep && deep->stream);
  EXPECT_EQ(deep->tile[1], 8);
  deep = planCudaCore(f32.stencil(), 13, GpuArch::SM90, f32.diags);
  ASSERT_TRUE(deep);
  EXPECT_FALSE(deep->stream);
}

TEST(CudaCorePlan, TheStreamingLoopUnrollsWhereItsReadsFitTheRegisters) {
  // An iteration of box-3d27p reads (rows + 2) planes of 9 columns: 108
  // registers in f64 at 4 rows, over the bound of 96; 72 at 2 rows and
  // 54 in f32 stay under it.
  auto plan = [](const std::string &type, int fuse) {
    Compiled c("stencil s { grid u : " + type +
               "[3]; boundary u : clamp;\nu' = box(u, 1, 0.01); }");
    EXPECT_TRUE(c.module) << c.diagText;
    auto p = planCudaCore(c.stencil(), fuse, GpuArch::SM90, c.diags);
    EXPECT_TRUE(p && p->stream);
    return *p;
  };
  CudaCorePlan f64 = plan("f64", 1);
  EXPECT_EQ(f64.rows, 4);
  EXPECT_EQ(f64.unroll, 1);
  CudaCorePlan f64two = plan("f64", 2);
  EXPECT_EQ(f64two.rows, 2);
  EXPECT_EQ(f64two.unroll, f64two.ring / f64two.rows);
  CudaCorePlan f32 = plan("f32", 1);
  EXPECT_EQ(f32.rows, 4);
  EXPECT_EQ(f32.unroll, f32.ring / f32.rows);
  EXPECT_GT(f32.unroll, 1);
}

TEST(CudaCorePlan, AQuotientOfReadsStreamsThroughItsLinearForm) {
  auto plan = [](const std::string &update) {
    Compiled c("stencil s { param h : f32 = 2.0; grid u : f32[3];\n"
               "boundary u : clamp;\nu' = " +
               update + "; }");
    EXPECT_TRUE(c.module) << c.diagText;
    EXPECT_EQ(streamsLinearForm(c.stencil()),
              planCudaCore(c.stencil(), 2, GpuArch::SM90, c.diags)->linearForm);
    return *planCudaCore(c.stencil(), 2, GpuArch::SM90, c.diags);
  };
  // A sum of reads over a constant or a parameter: the linear form.
  EXPECT_TRUE(plan("(u[-1,0,0] + u[1,0,0] + 2.0 * u) / 4.0").linearForm);
  EXPECT_TRUE(plan("u + (u[0,1,0] - u[0,-1,0]) / h").linearForm);
  // A grid-free quotient is a coefficient: the update as written.
  EXPECT_FALSE(plan("box(u, 1, 1.0 / 27.0)").linearForm);
  EXPECT_FALSE(plan("u + (1.0 / h) * (u[0,1,0] - u)").linearForm);
  EXPECT_FALSE(plan("0.4 * u + 0.1 * (u[1,0,0] + u[-1,0,0])").linearForm);
  // A quotient of two reads is not linear: as written.
  EXPECT_FALSE(plan("u / (1.0 + u[1,0,0] * u[1,0,0])").linearForm);
  // The values: the levels' rows and the loads in flight, and the
  // constants, all of them at 4 rows (box(u, 1, 1/27): 1).
  CudaCorePlan box = plan("box(u, 1, 1.0 / 27.0)");
  EXPECT_EQ(box.rows, 4);
  EXPECT_EQ(box.values, 2 * (4 + 2) + 2 * 4 + 1);
}

TEST(CudaCorePlan, TheCostModelsDepthIsKept) {
  Compiled c("stencil s { grid u : f32[3]; boundary u : clamp;\n"
             "u' = box(u, 1, 0.01); }");
  ASSERT_TRUE(c.module) << c.diagText;
  Stencil s = c.stencil();
  for (int depth : {1, 3, 5}) {
    // What stencilc's driver sets when the model chose the depth.
    s.hints.fuse = depth;
    s.hints.fuseByModel = true;
    auto p = planCudaCore(s, std::nullopt, GpuArch::SM90, c.diags);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->fuse, depth);
    EXPECT_TRUE(p->fuseFromModel);
  }
  // --fuse=auto without a model's choice: the plan's own rule.
  auto p = planCudaCore(s, 0, GpuArch::SM90, c.diags);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->fuseFromModel);
  EXPECT_EQ(p->fuse, 2);
}

TEST(CudaCorePlan, TwoDimensionalAndMultiGridStencilsKeepTheBox) {
  Compiled flat("stencil s { grid u : f32[2]; boundary u : clamp;\n"
                "u' = box(u, 1, 0.1); }");
  ASSERT_TRUE(flat.module) << flat.diagText;
  auto p = planCudaCore(flat.stencil(), 2, GpuArch::SM90, flat.diags);
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->stream);
  Compiled two("stencil s { grid u : f32[3]; grid v : f32[3];\n"
               "boundary u : clamp; boundary v : clamp;\n"
               "u' = u + v[1,0,0]; v' = v + u[0,0,1]; }");
  ASSERT_TRUE(two.module) << two.diagText;
  p = planCudaCore(two.stencil(), 2, GpuArch::SM90, two.diags);
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->stream);
}

TEST(CudaCorePlan, TheStream2dFlagStreamsTwoDimensionalStencils) {
  // --stream-2d (Hints::stream2d): a row of 256 threads, segments of 512
  // rows, two blocks an SM and more values before the rows halve.
  Compiled star("stencil s { grid u : f32[2]; boundary u : fixed;\n"
                "u' = 0.2 * u + 0.2 * u[-1,0] + 0.2 * u[1,0]\n"
                "     + 0.2 * u[0,-1] + 0.2 * u[0,1]; }");
  ASSERT_TRUE(star.module) << star.diagText;
  Stencil s = star.stencil();
  EXPECT_TRUE(streamsIn2D(s));
  s.hints.stream2d = true;
  auto p = planCudaCore(s, 6, GpuArch::SM90, star.diags);
  ASSERT_TRUE(p) << star.diagText;
  EXPECT_TRUE(p->stream);
  EXPECT_EQ(p->tile[0], 512);
  EXPECT_EQ(p->tile[1], 256 - 2 * 6);
  EXPECT_EQ(p->threads, 256);
  EXPECT_EQ(p->minBlocks, 2);
  EXPECT_EQ(p->valueBudget, kStream2dRegisterValues);
  // 6 levels of 4 + 2 rows, 8 loads in flight, the weight (one distinct
  // value, kept at 4 rows): within the budget, so 4 rows an iteration.
  EXPECT_EQ(p->rows, 4);
  EXPECT_LE(p->values, p->valueBudget);
  EXPECT_LE(p->sharedBytes, maxSharedBytesPerBlock(GpuArch::SM90));
  // Deeper, the values pass the budget and the rows halve: at t = 10,
  // 10 x 6 + 8 + 1 = 69.
  p = planCudaCore(s, 10, GpuArch::SM90, star.diags);
  ASSERT_TRUE(p && p->stream);
  EXPECT_EQ(p->rows, 2);
  // Three blocks an SM where three blocks' rings fit and the values are
  // few (kStream2dThreeBlockValues): t = 2 .. 4 here (4 x 6 + 8 + 1 = 33
  // values, 64 KiB of rings a block); t = 6 has rings of 96 KiB, and one
  // step a pass keeps two blocks (not measured at three).
  for (int fuse : {2, 3, 4}) {
    p = planCudaCore(s, fuse, GpuArch::SM90, star.diags);
    ASSERT_TRUE(p && p->stream) << fuse;
    EXPECT_EQ(p->minBlocks, 3) << fuse;
    EXPECT_LE(p->values, kStream2dThreeBlockValues) << fuse;
    EXPECT_LE(3 * (p->sharedBytes + kReservedSharedPerBlock),
              sharedBytesPerSM(GpuArch::SM90))
        << fuse;
  }
  for (int fuse : {1, 6})
    EXPECT_EQ(planCudaCore(s, fuse, GpuArch::SM90, star.diags)->minBlocks, 2)
        << fuse;
  // On sm_86 (100 KiB an SM) three blocks' rings of 32 KiB fit at t = 2
  // only.
  EXPECT_EQ(planCudaCore(s, 2, GpuArch::SM86, star.diags)->minBlocks, 3);
  EXPECT_EQ(planCudaCore(s, 3, GpuArch::SM86, star.diags)->minBlocks, 2);
  // Many values (a radius-4 star's 17 weights at t = 3: 3 x 12 + 8 + 17
  // = 61) keep two blocks.
  Compiled wide("stencil s { grid u : f32[2]; boundary u : fixed;\n"
                "u' = star(u, 4, [0.2, 0.05, 0.051, 0.052, 0.053, 0.054,\n"
                "0.055, 0.056, 0.057, 0.049, 0.048, 0.047, 0.046, 0.045,\n"
                "0.044, 0.043, 0.042]); }");
  ASSERT_TRUE(wide.module) << wide.diagText;
  Stencil w = wide.stencil();
  w.hints.stream2d = true;
  p = planCudaCore(w, 3, GpuArch::SM90, wide.diags);
  ASSERT_TRUE(p && p->stream) << wide.diagText;
  EXPECT_GT(p->values, kStream2dThreeBlockValues);
  EXPECT_EQ(p->minBlocks, 2);
  // A 3-D stencil's plan does not change with the flag.
  Compiled cube("stencil s { grid u : f32[3]; boundary u : clamp;\n"
                "u' = box(u, 1, 0.01); }");
  ASSERT_TRUE(cube.module) << cube.diagText;
  Stencil c = cube.stencil();
  EXPECT_FALSE(streamsIn2D(c));
  auto before = planCudaCore(c, 3, GpuArch::SM90, cube.diags);
  c.hints.stream2d = true;
  auto after = planCudaCore(c, 3, GpuArch::SM90, cube.diags);
  ASSERT_TRUE(before && after);
  EXPECT_EQ(before->tile, after->tile);
  EXPECT_EQ(before->minBlocks, after->minBlocks);
  EXPECT_EQ(after->valueBudget, kStreamRegisterValues);
  // Two grids do not stream in 2-D.
  Compiled two("stencil s { grid u : f32[2]; grid v : f32[2];\n"
               "boundary u : clamp; boundary v : clamp;\n"
               "u' = u + v[1,0]; v' = v + u[0,1]; }");
  ASSERT_TRUE(two.module) << two.diagText;
  EXPECT_FALSE(streamsIn2D(two.stencil()));
}

TEST(CudaCorePlan, StarsStreamThroughRingsOfRowGroups) {
  // A star computing in f32 at 4 rows an iteration and two blocks an SM
  // keeps its rings in groups of 2 rows (8 bytes), with the fast
  // iterations in their own copy.
  Compiled star("stencil s { grid u : f32[2]; boundary u : fixed;\n"
                "u' = star(u, 2, [0.2, 0.1, 0.11, 0.12, 0.13, 0.09, 0.08,\n"
                "0.07, 0.1]); }");
  ASSERT_TRUE(star.module) << star.diagText;
  Stencil s = star.stencil();
  s.hints.stream2d = true;
  auto p = planCudaCore(s, 6, GpuArch::SM90, star.diags);
  ASSERT_TRUE(p && p->stream) << star.diagText;
  ASSERT_EQ(p->rows, 4);
  ASSERT_EQ(p->minBlocks, 2);
  EXPECT_EQ(p->groupRows, 2);
  EXPECT_TRUE(p->splitFast);
  // Three blocks an SM (t = 2): rows a group each.
  p = planCudaCore(s, 2, GpuArch::SM90, star.diags);
  ASSERT_TRUE(p && p->stream);
  ASSERT_EQ(p->minBlocks, 3);
  EXPECT_EQ(p->groupRows, 0);
  EXPECT_FALSE(p->splitFast);
  // The hidden flags: groups of 4 rows (16 bytes), or none.
  s.hints.groupRows = 4;
  p = planCudaCore(s, 6, GpuArch::SM90, star.diags);
  EXPECT_EQ(p->groupRows, 4);
  s.hints.groupRows = 0;
  p = planCudaCore(s, 6, GpuArch::SM90, star.diags);
  EXPECT_EQ(p->groupRows, 0);
  EXPECT_FALSE(p->splitFast);
  // A group must divide the iteration's rows and be 8 or 16 bytes.
  s.hints.groupRows = 3;
  EXPECT_EQ(planCudaCore(s, 6, GpuArch::SM90, star.diags)->groupRows, 0);
  // 3-D: a star streams in groups; a box, whose taps in other columns lie
  // in other rows, does not; nor does f64 by the rule.
  Compiled star3("stencil s { grid u : f32[3]; boundary u : clamp;\n"
                 "u' = star(u, 1, [0.4, 0.1, 0.11, 0.09, 0.1, 0.12, 0.08]); }");
  ASSERT_TRUE(star3.module) << star3.diagText;
  p = planCudaCore(star3.stencil(), 2, GpuArch::SM90, star3.diags);
  ASSERT_TRUE(p && p->stream && p->rows == 4) << star3.diagText;
  EXPECT_EQ(p->groupRows, 2);
  Compiled box("stencil s { grid u : f32[3]; boundary u : clamp;\n"
               "u' = box(u, 1, 0.01); }");
  ASSERT_TRUE(box.module) << box.diagText;
  p = planCudaCore(box.stencil(), 2, GpuArch::SM90, box.diags);
  ASSERT_TRUE(p && p->stream);
  EXPECT_EQ(p->groupRows, 0);
  Stencil b = box.stencil();
  b.hints.groupRows = 2;
  EXPECT_EQ(planCudaCore(b, 2, GpuArch::SM90, box.diags)->groupRows, 0);
  // The linear form (a sum of reads over a coefficient) streams in groups
  // where its weights are constants, not where they come from a
  // parameter (the kernel's arguments, in registers).
  Compiled divide("stencil s { grid u : f32[3]; boundary u : clamp;\n"
                  "u' = (u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0]\n"
                  "      + u[0,0,-1] + u[0,0,1]) / 6.5; }");
  ASSERT_TRUE(divide.module) << divide.diagText;
  p = planCudaCore(divide.stencil(), 2, GpuArch::SM90, divide.diags);
  ASSERT_TRUE(p && p->stream && p->linearForm && p->rows == 4);
  EXPECT_EQ(p->groupRows, 2);
  Compiled param("stencil s { param h : f32 = 6.5; grid u : f32[3];\n"
                 "boundary u : clamp;\n"
                 "u' = (u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0]\n"
                 "      + u[0,0,-1] + u[0,0,1]) / h; }");
  ASSERT_TRUE(param.module) << param.diagText;
  p = planCudaCore(param.stencil(), 2, GpuArch::SM90, param.diags);
  ASSERT_TRUE(p && p->stream && p->linearForm && p->rows == 4);
  EXPECT_EQ(p->groupRows, 0);
  Compiled wide("stencil s { grid u : f64[2]; boundary u : fixed;\n"
                "u' = star(u, 1, [0.4, 0.1, 0.11, 0.09, 0.3]); }");
  ASSERT_TRUE(wide.module) << wide.diagText;
  Stencil d = wide.stencil();
  d.hints.stream2d = true;
  p = planCudaCore(d, 6, GpuArch::SM90, wide.diags);
  ASSERT_TRUE(p && p->stream && p->rows == 4) << wide.diagText;
  EXPECT_EQ(p->groupRows, 0);
  // Asked for, f64 pairs are 16 bytes.
  d.hints.groupRows = 2;
  EXPECT_EQ(planCudaCore(d, 6, GpuArch::SM90, wide.diags)->groupRows, 2);
}

TEST(CudaCorePlan, TheTensorPlaneKernelsTileTheirWarps) {
  // A 3-D f16 box of radius 2: the dense kernel's warps own 16 rows by 2
  // blocks of 8 columns (tile 32 x 64), with a B table of 256 bytes per
  // (dz, dy); the sparse one's 16 columns by 2 blocks of 8 rows, with a
  // compressed A of 512. Both: a ring of plane buffers of 36 rows at a
  // pitch of 88 and 8 staging tiles of 384 elements, two blocks an SM.
  Compiled box("stencil s { grid u : f16[3]; boundary u : clamp;\n"
               "u' = box(u, 2, 0.01); }");
  ASSERT_TRUE(box.module) << box.diagText;
  Stencil s = box.stencil();
  ASSERT_TRUE(tensorPlaneApplies(s));
  for (int kind : {1, 2}) {
    SCOPED_TRACE(kind);
    s.hints.tensorPlane = kind;
    auto p = planCudaCore(s, 1, GpuArch::SM90, box.diags);
    ASSERT_TRUE(p) << box.diagText;
    EXPECT_EQ(p->tensorPlane, kind);
    EXPECT_EQ(p->planeBlocks, 2);
    EXPECT_EQ(p->tile, (std::array<int, 3>{128, 32, 64}));
    EXPECT_EQ(p->minBlocks, 2);
    const int64_t table = 25 * (kind == 1 ? 256 : 512);
    EXPECT_EQ(p->sharedBytes,
              table + p->planeStages * 36 * 88 * 2 + 8 * 384 * 2);
    EXPECT_LE(2 * p->sharedBytes, sharedBytesPerSM(GpuArch::SM90));
  }
  // The hidden --plane-blocks: the dense warps' blocks, and the tile's
  // rows with them (8 / blocks warps along axis 2).
  s.hints.tensorPlane = 1;
  for (int blocks : {1, 4}) {
    s.hints.planeBlocks = blocks;
    auto p = planCudaCore(s, 1, GpuArch::SM90, box.diags);
    ASSERT_TRUE(p) << blocks;
    EXPECT_EQ(p->planeBlocks, blocks);
    EXPECT_EQ(p->tile[1], 16 * blocks);
  }
}

TEST(CudaCorePlan, TwoDimensionalStripsSpanTwoColumns) {
  // In 2-D a strip is two columns wide, the tile stays even along axis 1,
  // and where the radius along axis 1 is odd the buffers take one spare
  // element each and one more for the launch's shift. A tensor-core
  // program's frame keeps one column (its time is a block's latency).
  for (int r : {1, 2, 3}) {
    Compiled c("stencil s { grid u : f32[2]; boundary u : clamp;\n"
               "u' = box(u, " +
               std::to_string(r) + ", 0.01); }");
    ASSERT_TRUE(c.module) << c.diagText;
    for (int fuse : {1, 2, 3, 8}) {
      for (bool frame : {false, true}) {
        auto p = planCudaCore(c.stencil(), fuse, GpuArch::SM90, c.diags, frame);
        ASSERT_TRUE(p) << r << " " << fuse;
        EXPECT_EQ(p->stripCols, frame ? 1 : 2);
        EXPECT_EQ(p->tile[1] % 2, 0);
        int64_t elems = int64_t(p->box(0)) * p->box(1);
        int64_t spare = frame ? 0 : r % 2;
        EXPECT_EQ(p->sharedBytes, (2 * (elems + spare) + spare) * 4)
            << r << " " << fuse;
      }
    }
  }
  // 1-D and 3-D strips keep one column, and their buffers no spare.
  Compiled line("stencil s { grid u : f32[1]; boundary u : clamp;\n"
                "u' = box(u, 1, 0.3); }");
  ASSERT_TRUE(line.module) << line.diagText;
  auto p = planCudaCore(line.stencil(), 3, GpuArch::SM90, line.diags);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->stripCols, 1);
  Compiled cube("stencil s { grid u : f32[3]; boundary u : clamp;\n"
                "u' = box(u, 1, 0.01); }");
  ASSERT_TRUE(cube.module) << cube.diagText;
  p = planCudaCore(cube.stencil(), 2, GpuArch::SM90, cube.diags,
                   /*frame=*/true);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->stripCols, 1);
  EXPECT_EQ(p->sharedBytes, 2 * 4 * int64_t(p->box(0)) * p->box(1) * p->box(2));
}

TEST(CudaCorePlan, BoxKernelsMoveSixteenByteChunks) {
  // The box kernel loads and stores 16 bytes per access along the last
  // axis where the tile is a whole number of chunks: 4 f32, 2 f64, 8 f16.
  // The streaming kernel keeps element accesses.
  const std::pair<const char *, int> types[] = {
      {"f32", 4}, {"f64", 2}, {"f16", 8}, {"bf16", 8}};
  for (const auto &[type, vec] : types)
    for (int dims : {1, 2, 3}) {
      std::string grid = std::string(type) + "[" + std::to_string(dims) + "]";
      Compiled c("stencil s { grid u : " + grid + "; grid v : " + grid +
                 ";\nboundary u, v : clamp;\n"
                 "u' = box(u, 1, 0.1) + v; v' = v + u; }");
      ASSERT_TRUE(c.module) << c.diagText;
      auto p = planCudaCore(c.stencil(), 2, GpuArch::SM90, c.diags);
      ASSERT_TRUE(p) << type << " " << dims;
      EXPECT_FALSE(p->stream);
      EXPECT_EQ(p->tile[dims - 1] % vec, 0) << type << " " << dims;
      EXPECT_EQ(p->vec, vec) << type << " " << dims;
    }
  Compiled one("stencil s { grid u : f32[3]; boundary u : clamp;\n"
               "u' = box(u, 1, 0.01); }");
  ASSERT_TRUE(one.module) << one.diagText;
  auto p = planCudaCore(one.stencil(), 2, GpuArch::SM90, one.diags);
  ASSERT_TRUE(p && p->stream);
  EXPECT_EQ(p->vec, 1);
  // A tile too narrow for a chunk keeps element accesses: f16 at radius 3
  // and depth 39 (a halo of 117) shrinks the 2-D tile to 8 x 4.
  Compiled deep("stencil s { grid u : f16[2]; boundary u : clamp;\n"
                "u' = box(u, 3, 0.01); }");
  ASSERT_TRUE(deep.module) << deep.diagText;
  p = planCudaCore(deep.stencil(), 39, GpuArch::SM90, deep.diags);
  ASSERT_TRUE(p);
  EXPECT_LT(p->tile[1], 8);
  EXPECT_EQ(p->vec, 1);
}

TEST(CudaCorePlan, WideTwoDimensionalStencilsTakeMoreThreads) {
  // 2-D strips spread over 384 threads from radius 3 on, 256 below; a
  // tensor-core program's frame keeps its 128.
  for (int r : {1, 2, 3, 4}) {
    Compiled c("stencil s { grid u : f32[2]; boundary u : clamp;\n"
               "u' = box(u, " +
               std::to_string(r) + ", 0.01); }");
    ASSERT_TRUE(c.module) << c.diagText;
    auto p = planCudaCore(c.stencil(), 2, GpuArch::SM90, c.diags);
    ASSERT_TRUE(p) << r;
    EXPECT_EQ(p->threads, r >= 3 ? 384 : 256) << r;
    p = planCudaCore(c.stencil(), 2, GpuArch::SM90, c.diags, /*frame=*/true);
    ASSERT_TRUE(p) << r;
    EXPECT_EQ(p->threads, 128) << r;
  }
}

TEST(CudaCorePlan, AGivenTileAndBlockAreKept) {
  Compiled c("stencil s { grid u : f32[2]; boundary u : clamp;\n"
             "u' = box(u, 1, 0.1); }");
  ASSERT_TRUE(c.module) << c.diagText;
  Stencil s = c.stencil();
  // An odd tile: strips shorten to its 5 rows, pairs of columns and
  // 16-byte chunks do not divide its 13 columns.
  s.hints.tile = {5, 13, 1};
  s.hints.threads = 96;
  auto p = planCudaCore(s, 3, GpuArch::SM90, c.diags);
  ASSERT_TRUE(p) << c.diagText;
  EXPECT_EQ(p->tile[0], 5);
  EXPECT_EQ(p->tile[1], 13);
  EXPECT_EQ(p->threads, 96);
  EXPECT_EQ(p->strip, 5);
  EXPECT_EQ(p->stripCols, 1);
  EXPECT_EQ(p->vec, 1);
  // A tensor-core program's frame keeps its own tiles.
  auto frame = planCudaCore(s, 3, GpuArch::SM90, c.diags, /*frame=*/true);
  ASSERT_TRUE(frame);
  EXPECT_EQ(frame->tile[0], 32);
  EXPECT_EQ(frame->threads, 128);
  // A tile too large for shared memory is an error, not shrunk.
  s.hints.tile = {512, 512, 1};
  EXPECT_FALSE(planCudaCore(s, 1, GpuArch::SM90, c.diags));
  EXPECT_NE(c.diagText.find("the tile 512x512 of stencil 's' at t=1 needs"),
            std::string::npos)
      << c.diagText;
}

TEST(CudaCorePlan, AGivenTileSetsTheStreamingSlab) {
  Compiled c("stencil s { grid u : f32[3]; boundary u : clamp;\n"
             "u' = box(u, 1, 0.01); }");
  ASSERT_TRUE(c.module) << c.diagText;
  Stencil s = c.stencil();
  s.hints.tile = {64, 14, 30};
  auto p = planCudaCore(s, 1, GpuArch::SM90, c.diags);
  ASSERT_TRUE(p && p->stream) << c.diagText;
  EXPECT_EQ(p->tile[0], 64);
  EXPECT_EQ(p->threads, 16 * 32);
  // Registers for two such blocks per SM, as many threads as the plan's
  // own 32x32 slab, which asks for one.
  EXPECT_EQ(p->minBlocks, 2);
  Stencil own = c.stencil();
  auto rules = planCudaCore(own, 1, GpuArch::SM90, c.diags);
  ASSERT_TRUE(rules && rules->stream);
  EXPECT_EQ(rules->threads, 1024);
  EXPECT_EQ(rules->minBlocks, 1);
  // The slab of a deeper pass outgrows a block.
  EXPECT_FALSE(planCudaCore(s, 10, GpuArch::SM90, c.diags));
  EXPECT_NE(c.diagText.find("34x50 = 1700 threads"), std::string::npos)
      << c.diagText;
  // The streaming kernel's block is its slab: --threads does not apply.
  s.hints.threads = 512;
  EXPECT_FALSE(planCudaCore(s, 1, GpuArch::SM90, c.diags));
}

TEST(CudaCorePlan, TuneShapesAreThePlansNeighboursThatPlan) {
  Compiled flat("stencil s { grid u : f32[2]; boundary u : clamp;\n"
                "u' = box(u, 1, 0.1); }");
  ASSERT_TRUE(flat.module) << flat.diagText;
  Stencil s = flat.stencil();
  auto own = planCudaCore(s, 2, GpuArch::SM90, flat.diags);
  ASSERT_TRUE(own);
  std::vector<CudaCoreShape> shapes = tuneShapes(s, 2, GpuArch::SM90, flat.diags);
  // 64x64 at 256 threads: each extent halved and doubled, then 384 threads.
  ASSERT_EQ(shapes.size(), 5u);
  auto has = [&](std::array<int, 3> tile, int threads) {
    return llvm::any_of(shapes, [&](const CudaCoreShape &c) {
      return c.tile[0] == tile[0] && c.tile[1] == tile[1] &&
             c.threads == threads;
    });
  };
  EXPECT_TRUE(has({32, 64, 1}, 0));
  EXPECT_TRUE(has({128, 64, 1}, 0));
  EXPECT_TRUE(has({64, 32, 1}, 0));
  EXPECT_TRUE(has({64, 128, 1}, 0));
  EXPECT_TRUE(has({64, 64, 1}, 384));
  EXPECT_FALSE(has({own->tile[0], own->tile[1], 1}, 0));
  EXPECT_EQ(own->threads, 256);
  // Every shape plans as given; 0 threads: the plan's.
  for (const CudaCoreShape &c : shapes) {
    s.hints.tile = c.tile;
    s.hints.threads.reset();
    if (c.threads)
      s.hints.threads = c.threads;
    auto p = planCudaCore(s, 2, GpuArch::SM90, flat.diags);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->tile, c.tile);
    EXPECT_EQ(p->threads, c.threads ? c.threads : own->threads);
  }

  // The streaming kernel: segments of 64 and 256, slabs of 16x32, 32x16
  // and 16x64 points; at t = 3 a slab of 16 leaves a tile of 10.
  Compiled deep("stencil s { grid u : f32[3]; boundary u : clamp;\n"
                "u' = box(u, 1, 0.01); }");
  ASSERT_TRUE(deep.module) << deep.diagText;
  std::vector<CudaCoreShape> slabs = tuneShapes(deep.stencil(), 3,
                                                GpuArch::SM90, deep.diags);
  ASSERT_EQ(slabs.size(), 5u);
  for (const CudaCoreShape &c : slabs)
    EXPECT_EQ(c.threads, 0);
  EXPECT_EQ(slabs[0].tile, (std::array<int, 3>{64, 26, 26}));
  EXPECT_EQ(slabs[1].tile, (std::array<int, 3>{256, 26, 26}));
  EXPECT_EQ(slabs[2].tile, (std::array<int, 3>{128, 10, 26}));
  EXPECT_EQ(slabs[3].tile, (std::array<int, 3>{128, 26, 10}));
  EXPECT_EQ(slabs[4].tile, (std::array<int, 3>{128, 10, 58}));
  // Nothing to try where the stencil does not plan.
  EXPECT_TRUE(tuneShapes(deep.stencil(), 40, GpuArch::SM90, deep.diags).empty());
}

TEST(CudaCorePlan, TheStarRingIsFilledByTmaOnHopperWhenAsked) {
  // A 16-bit star's ring (two planes in flight) on sm_90 with --star-tma:
  // TMA, whose boxes start on 16 bytes, so the 4-element vectors either
  // side of a row come in pairs (8 halves), and slots of 128 bytes with a
  // barrier each.
  Compiled c("stencil s { grid u : f16[3]; boundary u : fixed;\n"
             "u' = star(u, 2, [0.4, 0.1, 0.11, 0.09, 0.1, 0.12, 0.08,\n"
             "0.1, 0.1, 0.11, 0.09, 0.1, 0.12]); }");
  ASSERT_TRUE(c.module) << c.diagText;
  Stencil on = c.stencil();
  on.hints.starTma = true;
  auto hopper = planCudaCore(on, 1, GpuArch::SM90, c.diags);
  ASSERT_TRUE(hopper && hopper->star);
  EXPECT_EQ(hopper->starPipeline, 2);
  EXPECT_TRUE(hopper->starTma);
  EXPECT_EQ(hopper->starSide, 2);
  EXPECT_EQ(hopper->starWidth(), 32 + 2 * 2 * 4);
  const int64_t plane = int64_t(32 + 2 * 2) * hopper->starWidth() * 2;
  EXPECT_EQ(hopper->sharedBytes,
            hopper->starRing() * ((plane + 127) / 128 * 128 + 8));
  // Ampere has no TMA: cp.async, one vector either side, unpadded planes.
  auto ampere = planCudaCore(on, 1, GpuArch::SM80, c.diags);
  ASSERT_TRUE(ampere && ampere->star);
  EXPECT_FALSE(ampere->starTma);
  EXPECT_EQ(ampere->starSide, 1);
  EXPECT_EQ(ampere->sharedBytes,
            int64_t(ampere->starRing()) * (32 + 2 * 2) * (32 + 2 * 4) * 2);
  // Not asked (the default) or --star-tma=false, and the register
  // prefetch of f32 (no ring), take no TMA on Hopper either.
  auto plain = planCudaCore(c.stencil(), 1, GpuArch::SM90, c.diags);
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->starTma);
  EXPECT_EQ(plain->sharedBytes, ampere->sharedBytes);
  Stencil off = c.stencil();
  off.hints.starTma = false;
  EXPECT_FALSE(planCudaCore(off, 1, GpuArch::SM90, c.diags)->starTma);
  Compiled f32("stencil s { grid u : f32[3]; boundary u : fixed;\n"
               "u' = star(u, 1, [0.4, 0.1, 0.11, 0.09, 0.1, 0.12, 0.08]); }");
  ASSERT_TRUE(f32.module) << f32.diagText;
  Stencil asked = f32.stencil();
  asked.hints.starTma = true;
  auto single = planCudaCore(asked, 1, GpuArch::SM90, f32.diags);
  ASSERT_TRUE(single && single->star);
  EXPECT_EQ(single->starPipeline, 0);
  EXPECT_FALSE(single->starTma);
  // With a ring (--star-pipeline), f32 vectors are 16 bytes: one a side.
  Stencil ring = asked;
  ring.hints.starPipeline = 2;
  auto tma = planCudaCore(ring, 1, GpuArch::SM90, f32.diags);
  ASSERT_TRUE(tma);
  EXPECT_TRUE(tma->starTma);
  EXPECT_EQ(tma->starSide, 1);
}

} // namespace
