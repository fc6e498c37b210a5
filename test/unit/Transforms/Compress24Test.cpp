//===- Compress24Test.cpp - Metadata and register layouts -----------------===//
//
// Packs random kernel matrices for every fragment shape and decodes the
// registers back with PTX.md's tables as PtxTables.h transcribes them
// (independently of the library's), so a slot in the wrong lane, register
// or half fails.
//
//===----------------------------------------------------------------------===//

#include "stencilc/Transforms/Compress24.h"
#include "../Frontend/TestUtil.h"
#include "PtxTables.h"

#include "gtest/gtest.h"

#include <random>
#include <set>

using namespace stencilc;
using namespace stencilc::test;

namespace {

//===----------------------------------------------------------------------===//
// Random programs.
//===----------------------------------------------------------------------===//

/// A hand-built program: `rows` x `cols` A, node ids 1000 + a counter where
/// an entry is nonzero.
MatrixProgram denseProgram(std::mt19937_64 &rng, const FragmentShape &shape,
                           int rows, int cols) {
  MatrixProgram p;
  p.shape = shape;
  p.outputs.assign(rows, Offset{0, 0, 0});
  for (int j = 0; j < cols; ++j)
    p.columns.push_back(MatrixColumn{{j, 0, 0}, false, j});
  std::bernoulli_distribution nz(0.6);
  int id = 1000;
  for (int i = 0; i < rows * cols; ++i)
    p.a.push_back(nz(rng) ? id++ : -1);
  return p;
}

/// A program already in 1:2 or 2:4 form: each group gets 0, 1 or
/// groupSize/2 nonzeros at random positions.
MatrixProgram sparseProgram(std::mt19937_64 &rng, const FragmentShape &shape,
                            int rows, int groups) {
  int gs = groupOf(shape);
  MatrixProgram p = denseProgram(rng, shape, rows, groups * gs);
  p.pattern = gs == 4 ? SparsityPattern::TwoOfFour : SparsityPattern::OneOfTwo;
  std::uniform_int_distribution<int> count(0, gs / 2), pos(0, gs - 1);
  int id = 5000;
  for (int i = 0; i < rows; ++i)
    for (int gr = 0; gr < groups; ++gr) {
      for (int q = 0; q < gs; ++q)
        p.a[i * p.cols() + gr * gs + q] = -1;
      int c = count(rng);
      std::set<int> where;
      while (static_cast<int>(where.size()) < c)
        where.insert(pos(rng));
      for (int q : where)
        p.a[i * p.cols() + gr * gs + q] = id++;
    }
  return p;
}

TEST(Compress24, DensePackingDecodesBackThroughPtxTables) {
  std::mt19937_64 rng(7);
  for (const FragmentShape &shape : denseShapes())
    for (int iter = 0; iter < 6; ++iter) {
      int rows = std::uniform_int_distribution<int>(1, 40)(rng);
      int cols = std::uniform_int_distribution<int>(1, 40)(rng);
      MatrixProgram p = denseProgram(rng, shape, rows, cols);
      PackedFragments pk = packFragments(p);
      int elems = isHalf(shape.type) ? 2 : 1;
      int regs = shape.m * shape.k / (32 * elems);
      ASSERT_EQ(pk.tilesM, (rows + shape.m - 1) / shape.m) << shape.name();
      ASSERT_EQ(pk.tilesK, (cols + shape.k - 1) / shape.k) << shape.name();
      ASSERT_EQ(pk.regsPerLane, regs) << shape.name();
      ASSERT_EQ(pk.elemsPerReg, elems) << shape.name();
      ASSERT_EQ(pk.slots.size(),
                static_cast<size_t>(pk.tilesM * pk.tilesK) * 32 * regs * elems);
      // Decode into the padded A; every slot must be hit exactly once.
      int pr = pk.tilesM * shape.m, pc = pk.tilesK * shape.k;
      std::vector<int> decoded(pr * pc, -2), hits(pr * pc, 0);
      for (int tm = 0; tm < pk.tilesM; ++tm)
        for (int tk = 0; tk < pk.tilesK; ++tk)
          for (int lane = 0; lane < 32; ++lane)
            for (int i = 0; i < regs * elems; ++i) {
              Coord c = ptxDenseA(shape, lane, i);
              int r = tm * shape.m + c.row, col = tk * shape.k + c.col;
              decoded[r * pc + col] =
                  pk.slot(tm * pk.tilesK + tk, lane, i / elems, i % elems);
              ++hits[r * pc + col];
            }
      for (int r = 0; r < pr; ++r)
        for (int c = 0; c < pc; ++c) {
          ASSERT_EQ(hits[r * pc + c], 1) << shape.name();
          int want = r < rows && c < cols ? p.at(r, c) : -1;
          ASSERT_EQ(decoded[r * pc + c], want)
              << shape.name() << " row " << r << " col " << c;
        }
      EXPECT_TRUE(pk.metadata.empty());
    }
}

TEST(Compress24, SparsePackingDecodesBackThroughPtxTables) {
  std::mt19937_64 rng(11);
  int sharedRegisters = 0;
  for (const FragmentShape &shape : sparseShapes())
    for (int iter = 0; iter < 6; ++iter) {
      int gs = groupOf(shape), keep = gs / 2;
      int rows = std::uniform_int_distribution<int>(1, 50)(rng);
      int groups = std::uniform_int_distribution<int>(1, 40)(rng);
      MatrixProgram p = sparseProgram(rng, shape, rows, groups);
      ASSERT_EQ(verifyMatrixProgram(p), "");
      PackedFragments pk = packFragments(p);
      int tiles = pk.tilesM * pk.tilesK;
      ASSERT_EQ(pk.tilesM, (rows + 15) / 16);
      ASSERT_EQ(pk.tilesK, (groups * gs + shape.k - 1) / shape.k);
      int regs = shape.m * shape.k / 2 / (32 * keep);
      ASSERT_EQ(pk.regsPerLane, regs) << shape.name();
      ASSERT_EQ(pk.elemsPerReg, keep) << shape.name();
      ASSERT_EQ(pk.tileMetaReg.size(), static_cast<size_t>(tiles));
      ASSERT_EQ(pk.tileSelector.size(), static_cast<size_t>(tiles));
      ASSERT_EQ(pk.metadata.size(), static_cast<size_t>(pk.metaRegs) * 32);

      // The selector packing: 4 tiles per register for k16 f16 / k8 tf32,
      // 2 for the wide shapes; no two tiles share (register, selector).
      int perReg = shape.k / gs == 4 ? 4 : 2;
      EXPECT_EQ(pk.metaRegs, (tiles + perReg - 1) / perReg);
      std::set<std::pair<int, int>> used;
      std::vector<std::set<int>> lanesOfReg(pk.metaRegs);
      for (int tile = 0; tile < tiles; ++tile) {
        int reg = pk.tileMetaReg[tile], f = pk.tileSelector[tile];
        ASSERT_GE(reg, 0);
        ASSERT_LT(reg, pk.metaRegs);
        ASSERT_GE(f, 0);
        ASSERT_LT(f, perReg);
        EXPECT_TRUE(used.insert({reg, f}).second) << shape.name();
        // The lanes of tiles sharing a register are disjoint.
        for (int lane : ptxMetadataLanes(shape, f))
          EXPECT_TRUE(lanesOfReg[reg].insert(lane).second) << shape.name();
      }
      for (int reg = 0; reg < pk.metaRegs; ++reg)
        sharedRegisters +=
            std::count(pk.tileMetaReg.begin(), pk.tileMetaReg.end(), reg) > 1;

      // Decode: values through the compressed table, positions through the
      // metadata the tile's selector names.
      int pr = pk.tilesM * 16, pc = pk.tilesK * shape.k;
      int tileGroups = shape.k / gs;
      std::vector<int> decoded(pr * pc, -1);
      for (int tile = 0; tile < tiles; ++tile) {
        int tm = tile / pk.tilesK, tk = tile % pk.tilesK;
        std::vector<uint32_t> lanes(
            pk.metadata.begin() + pk.tileMetaReg[tile] * 32,
            pk.metadata.begin() + pk.tileMetaReg[tile] * 32 + 32);
        std::vector<int> nib =
            ptxReadMetadata(shape, pk.tileSelector[tile], lanes);
        for (int lane = 0; lane < 32; ++lane)
          for (int reg = 0; reg < regs; ++reg) {
            Coord c = ptxSparseA(shape, lane, reg);
            int n = nib[c.row * tileGroups + c.col];
            int positions[2];
            if (gs == 4) {
              positions[0] = n & 3;
              positions[1] = n >> 2;
              // Ordered metadata: p0 < p1, even for short groups.
              ASSERT_LT(positions[0], positions[1]) << shape.name();
            } else {
              ASSERT_TRUE(n == 0x4 || n == 0xE) << shape.name() << " " << n;
              positions[0] = n == 0x4 ? 0 : 1;
            }
            int r = tm * 16 + c.row;
            for (int e = 0; e < keep; ++e) {
              int col = tk * shape.k + c.col * gs + positions[e];
              int node = pk.slot(tile, lane, reg, e);
              // A stored zero may sit on a zero of A; a value never moves.
              if (node >= 0)
                decoded[r * pc + col] = node;
            }
          }
      }
      for (int r = 0; r < pr; ++r)
        for (int c = 0; c < pc; ++c) {
          int want = r < rows && c < p.cols() ? p.at(r, c) : -1;
          ASSERT_EQ(decoded[r * pc + c], want)
              << shape.name() << " row " << r << " col " << c;
        }
    }
  // Registers really were shared, so overwrites would have shown.
  EXPECT_GT(sharedRegisters, 20);
}

TEST(Compress24, NibblesAndShortGroups) {
  // One row of 2:4 groups, hand-chosen: nonzeros at (1,3), (0,2), none,
  // only 3, only 0, (2,3).
  MatrixProgram p;
  p.pattern = SparsityPattern::TwoOfFour;
  p.shape = shapeOf(MmaType::F16, 16, 16, true);
  p.outputs = {Offset{0, 0, 0}};
  std::vector<int> row = {-1, 10, -1, 11, 12, -1, 13, -1, -1, -1, -1, -1,
                          -1, -1, -1, 14, 15, -1, -1, -1, -1, -1, 16, 17};
  for (size_t j = 0; j < row.size(); ++j)
    p.columns.push_back(MatrixColumn{{static_cast<int>(j), 0, 0}, false, -1});
  p.a = row;
  ASSERT_EQ(verifyMatrixProgram(p), "");
  CompressedMatrix c = compressMatrix(p);
  ASSERT_EQ(c.rows, 1);
  ASSERT_EQ(c.groups, 6);
  // PTX.md: (1,3) = 0xD, (0,2) = 0x8, (2,3) = 0xE.
  EXPECT_EQ(c.nibbles[0], 0xD);
  EXPECT_EQ(c.nibbles[1], 0x8);
  EXPECT_EQ(c.nibbles[5], 0xE);
  EXPECT_EQ(c.values[0], 10);
  EXPECT_EQ(c.values[1], 11);
  EXPECT_EQ(c.values[10], 16);
  EXPECT_EQ(c.values[11], 17);
  for (int gr = 0; gr < 6; ++gr) {
    int p0 = c.positions[2 * gr], p1 = c.positions[2 * gr + 1];
    // Every group, short or empty, names a valid increasing pair and its
    // nibble encodes exactly those positions.
    EXPECT_LT(p0, p1) << gr;
    EXPECT_LT(p1, 4) << gr;
    EXPECT_EQ(c.nibbles[gr], p0 | p1 << 2) << gr;
    for (int e = 0; e < 2; ++e) {
      int pos = c.positions[2 * gr + e];
      EXPECT_EQ(c.values[2 * gr + e], row[4 * gr + pos]) << gr;
    }
  }
  // The empty group stores two zeros; the one-nonzero groups one.
  EXPECT_EQ(c.values[4], -1);
  EXPECT_EQ(c.values[5], -1);
  EXPECT_EQ((c.values[6] == 14) + (c.values[7] == 14), 1);
  EXPECT_EQ(c.positions[7], 3); // 14 sits at position 3, necessarily p1.
  EXPECT_EQ((c.values[8] == 15) + (c.values[9] == 15), 1);
  EXPECT_EQ(c.positions[8], 0); // 15 sits at position 0, necessarily p0.
  EXPECT_EQ(verifyMatrixProgram([&] {
              MatrixProgram q = p;
              q.compressed = c;
              return q;
            }()),
            "");

  // 1:2: 0x4 for position 0, 0xE for position 1; an empty pair names a
  // valid position too.
  MatrixProgram t = p;
  t.pattern = SparsityPattern::OneOfTwo;
  t.shape = shapeOf(MmaType::TF32, 16, 8, true);
  t.a = {20, -1, -1, 21, -1, -1, -1, 22};
  t.columns.resize(8);
  CompressedMatrix ct = compressMatrix(t);
  ASSERT_EQ(ct.groups, 4);
  EXPECT_EQ(ct.nibbles[0], 0x4);
  EXPECT_EQ(ct.nibbles[1], 0xE);
  EXPECT_TRUE(ct.nibbles[2] == 0x4 || ct.nibbles[2] == 0xE);
  EXPECT_EQ(ct.nibbles[3], 0xE);
  EXPECT_EQ(ct.values, (std::vector<int>{20, 21, -1, 22}));
}

TEST(Compress24, PassSetsPackingAndRejectsBadPrograms) {
  const char *src = "stencil s { grid u : f16[1]; boundary u : clamp;\n"
                    "  u' = 0.25*u[-1] + 0.5*u + 0.25*u[1]; }";
  {
    Compiled c(src);
    ASSERT_TRUE(c.module) << c.diagText;
    Stencil &s = c.module->stencils[0];
    EXPECT_FALSE(compress24(s, c.diags));
    EXPECT_NE(c.diagText.find("error: compress24 needs a layout pass first"),
              std::string::npos)
        << c.diagText;
  }
  std::mt19937_64 rng(3);
  auto withProgram = [&](MatrixProgram p, const char *expect) {
    Compiled c(src);
    ASSERT_TRUE(c.module) << c.diagText;
    Stencil &s = c.module->stencils[0];
    s.matrix = std::move(p);
    bool ok = compress24(s, c.diags);
    c.diagStream.flush();
    if (!expect) {
      EXPECT_TRUE(ok) << c.diagText;
      EXPECT_TRUE(s.matrix->packed.has_value());
      EXPECT_EQ(s.matrix->compressed.has_value(), s.matrix->shape.sparse);
      EXPECT_EQ(verifyMatrixProgram(*s.matrix), "");
      return;
    }
    EXPECT_FALSE(ok);
    EXPECT_NE(c.diagText.find(expect), std::string::npos) << c.diagText;
    EXPECT_FALSE(s.matrix->packed.has_value());
  };
  withProgram(denseProgram(rng, shapeOf(MmaType::F16, 16, 16, false), 5, 9),
              nullptr);
  withProgram(sparseProgram(rng, shapeOf(MmaType::F16, 16, 32, true), 20, 9),
              nullptr);
  withProgram(sparseProgram(rng, shapeOf(MmaType::TF32, 16, 8, true), 3, 5),
              nullptr);

  MatrixProgram bad =
      sparseProgram(rng, shapeOf(MmaType::F16, 16, 16, true), 4, 3);
  bad.a[0] = bad.a[1] = bad.a[2] = 77; // Three nonzeros in one 2:4 group.
  withProgram(bad, "error: compress24: the matrix program of stencil 's' is "
                   "invalid");
  MatrixProgram denseShape =
      sparseProgram(rng, shapeOf(MmaType::F16, 16, 16, true), 4, 3);
  denseShape.shape.sparse = false;
  withProgram(denseShape, "needs a sparse fragment shape");
  MatrixProgram sparseShape =
      denseProgram(rng, shapeOf(MmaType::F16, 16, 16, true), 4, 8);
  withProgram(sparseShape, "run a sparsity pass first");
  MatrixProgram sm80 =
      denseProgram(rng, shapeOf(MmaType::F64, 16, 16, false), 4, 8);
  sm80.arch = 80;
  withProgram(sm80, "which PTX does not offer on sm_80");
  MatrixProgram odd =
      denseProgram(rng, shapeOf(MmaType::F16, 16, 4, false), 4, 8);
  withProgram(odd, "m16n8k4.f16");
}

} // namespace
