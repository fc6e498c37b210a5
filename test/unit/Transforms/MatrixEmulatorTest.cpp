//===- MatrixEmulatorTest.cpp - Lane-level mma semantics ------------------===//
//
// The emulator against plain matrix products, with the warp's registers
// built here from PTX.md's tables (PtxTables.h, transcribed independently
// of the library), and whole packed programs against the interpreter.
//
//===----------------------------------------------------------------------===//

#include "stencilc/IR/MatrixEmulator.h"
#include "../Frontend/TestUtil.h"
#include "PtxTables.h"
#include "stencilc/IR/Interpreter.h"
#include "stencilc/IR/LinearForm.h"
#include "stencilc/Transforms/Compress24.h"
#include "stencilc/Transforms/TemporalFusion.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>

using namespace stencilc;
using namespace stencilc::test;

namespace {

using Mat = std::vector<std::vector<double>>;

Mat zeros(int r, int c) { return Mat(r, std::vector<double>(c, 0.0)); }

struct Warp {
  std::vector<uint64_t> a, b;
  std::vector<double> cd;
  std::vector<uint32_t> meta;
};

/// Builds the registers of one mma from logical A (m x k, in 2:4 / 1:2
/// form for sparse shapes), B and C. Sparse: metadata for selector `f`,
/// and `junk` in every metadata lane the selector does not name.
Warp buildWarp(const FragmentShape &s, const Mat &A, const Mat &B, const Mat &C,
               int f, std::mt19937_64 &junk) {
  int e = elemsOf(s.type);
  int kStored = s.sparse ? s.k / 2 : s.k;
  int aRegs = s.m * kStored / (32 * e), bRegs = s.k * s.n / (32 * e);
  int accs = s.m * s.n / 32;
  Warp w;
  w.a.assign(32 * aRegs, 0);
  w.b.assign(32 * bRegs, 0);
  w.cd.assign(32 * accs, 0);
  auto put = [&](uint64_t &word, int i, double v) {
    word |= encodeOperand(s.type, v) << (isHalf(s.type) ? 16 * (i % 2) : 0);
  };
  // Compressed A, built here: kept values and positions per (row, group).
  int gs = groupOf(s), keep = gs / 2;
  Mat comp = zeros(s.m, kStored);
  std::vector<std::vector<int>> nib(s.m, std::vector<int>(s.k / gs, 0));
  if (s.sparse)
    for (int r = 0; r < s.m; ++r)
      for (int gr = 0; gr < s.k / gs; ++gr) {
        std::vector<int> pos;
        for (int q = 0; q < gs; ++q)
          if (A[r][gr * gs + q] != 0)
            pos.push_back(q);
        for (int q = 0; static_cast<int>(pos.size()) < keep; ++q)
          if (std::find(pos.begin(), pos.end(), q) == pos.end())
            pos.push_back(q);
        std::sort(pos.begin(), pos.end());
        for (int k = 0; k < keep; ++k)
          comp[r][gr * keep + k] = A[r][gr * gs + pos[k]];
        nib[r][gr] =
            gs == 4 ? (pos[0] | pos[1] << 2) : (pos[0] == 0 ? 0x4 : 0xE);
      }
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < aRegs * e; ++i) {
      Coord c = ptxA(s, lane, i);
      put(w.a[lane * aRegs + i / e], i,
          s.sparse ? comp[c.row][c.col] : A[c.row][c.col]);
    }
    for (int i = 0; i < bRegs * e; ++i) {
      Coord c = ptxB(s, lane, i);
      put(w.b[lane * bRegs + i / e], i, B[c.row][c.col]);
    }
    for (int i = 0; i < accs; ++i) {
      Coord c = ptxC(s, lane, i);
      w.cd[lane * accs + i] = C[c.row][c.col];
    }
  }
  if (s.sparse) {
    w.meta.assign(32, 0);
    std::set<int> named;
    for (int r = 0; r < s.m; ++r)
      for (int gr = 0; gr < s.k / gs; ++gr) {
        auto [lane, j] = ptxMetaSlot(s, f, r, gr);
        w.meta[lane] |= static_cast<uint32_t>(nib[r][gr]) << (4 * j);
        named.insert(lane);
      }
    for (int lane = 0; lane < 32; ++lane)
      if (!named.count(lane))
        w.meta[lane] = static_cast<uint32_t>(junk());
  }
  return w;
}

/// D read back from the lanes through the C table.
Mat readD(const FragmentShape &s, const std::vector<double> &cd) {
  int accs = s.m * s.n / 32;
  Mat d = zeros(s.m, s.n);
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < accs; ++i) {
      Coord c = ptxC(s, lane, i);
      d[c.row][c.col] = cd[lane * accs + i];
    }
  return d;
}

/// Random small integers; sparse shapes get 0 to groupSize/2 nonzeros per
/// group.
Mat randomA(const FragmentShape &s, std::mt19937_64 &rng) {
  std::uniform_int_distribution<int> v(-4, 4);
  Mat a = zeros(s.m, s.k);
  int gs = groupOf(s);
  for (int r = 0; r < s.m; ++r)
    for (int k = 0; k < s.k; ++k)
      a[r][k] = v(rng);
  if (s.sparse)
    for (int r = 0; r < s.m; ++r)
      for (int gr = 0; gr < s.k / gs; ++gr) {
        std::vector<int> q(gs);
        std::iota(q.begin(), q.end(), 0);
        std::shuffle(q.begin(), q.end(), rng);
        int kept = std::uniform_int_distribution<int>(0, gs / 2)(rng);
        for (int i = kept; i < gs; ++i)
          a[r][gr * gs + q[i]] = 0;
      }
  return a;
}

Mat randomMat(int r, int c, std::mt19937_64 &rng) {
  std::uniform_int_distribution<int> v(-4, 4);
  Mat m = zeros(r, c);
  for (auto &row : m)
    for (double &x : row)
      x = v(rng);
  return m;
}

//===----------------------------------------------------------------------===//
// Operand encodings
//===----------------------------------------------------------------------===//

TEST(MatrixEmulator, OperandEncodings) {
  // IEEE binary16: 1 = 0x3C00, -2 = 0xC000, 65504 = 0x7BFF (largest), 2^-24
  // = 0x0001 (smallest subnormal), 2^-14 = 0x0400 (smallest normal).
  EXPECT_EQ(encodeF16(1.0), 0x3C00);
  EXPECT_EQ(encodeF16(-2.0), 0xC000);
  EXPECT_EQ(encodeF16(65504.0), 0x7BFF);
  EXPECT_EQ(encodeF16(std::ldexp(1.0, -24)), 0x0001);
  EXPECT_EQ(encodeF16(std::ldexp(1.0, -14)), 0x0400);
  // Ties to even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
  EXPECT_EQ(encodeF16(1.0 + std::ldexp(1.0, -11)), 0x3C00);
  EXPECT_EQ(encodeF16(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);
  // bfloat16: the high half of the f32 bits, 1 = 0x3F80, -0.5 = 0xBF00.
  EXPECT_EQ(encodeBF16(1.0), 0x3F80);
  EXPECT_EQ(encodeBF16(-0.5), 0xBF00);
  // tf32 (cvt.rna): 1 + 2^-11 is a tie at the 10th mantissa bit and rounds
  // away from zero, to 1 + 2^-10 (f32 bits 0x3F802000); 1 + 2^-12 rounds
  // down to 1.
  EXPECT_EQ(encodeTF32(1.0 + std::ldexp(1.0, -11)), 0x3F802000u);
  EXPECT_EQ(encodeTF32(-1.0 - std::ldexp(1.0, -11)), 0xBF802000u);
  EXPECT_EQ(encodeTF32(1.0 + std::ldexp(1.0, -12)), 0x3F800000u);
  EXPECT_EQ(encodeF64(1.0), 0x3FF0000000000000ull);
  // Round trips of representable values, and decode(encode) = roundTo.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> d(-100, 100);
  for (int i = 0; i < 2000; ++i) {
    double x = d(rng);
    EXPECT_EQ(decodeF16(encodeF16(x)), roundTo(ElemType::F16, x));
    EXPECT_EQ(decodeBF16(encodeBF16(x)), roundTo(ElemType::BF16, x));
    EXPECT_EQ(decodeF64(encodeF64(x)), x);
    double t = decodeTF32(encodeTF32(x));
    // Within half a tf32 ulp (2^-11 relative) of the f32 value.
    EXPECT_LE(std::fabs(t - static_cast<float>(x)),
              std::ldexp(std::fabs(x), -11));
    EXPECT_EQ(roundToOperand(MmaType::TF32, t), t);
  }
  // Subnormal f16 values round-trip too.
  for (int m = 1; m < 1024; m += 37)
    EXPECT_EQ(decodeF16(encodeF16(std::ldexp(m, -24))), std::ldexp(m, -24));
}

//===----------------------------------------------------------------------===//
// One mma against a plain product.
//===----------------------------------------------------------------------===//

TEST(MatrixEmulator, MmaEqualsPlainProductOnEveryShape) {
  std::mt19937_64 rng(99);
  for (const FragmentShape &s : allShapes())
    for (int iter = 0; iter < 20; ++iter) {
      Mat A = randomA(s, rng), B = randomMat(s.k, s.n, rng),
          C = randomMat(s.m, s.n, rng);
      int selectors = s.k / groupOf(s) == 4 ? 4 : 2;
      int f = s.sparse ? iter % selectors : 0;
      Warp w = buildWarp(s, A, B, C, f, rng);
      emulateMma(s, w.a, w.b, w.cd, s.sparse ? &w.meta : nullptr, f);
      Mat D = readD(s, w.cd);
      for (int r = 0; r < s.m; ++r)
        for (int c = 0; c < s.n; ++c) {
          double want = C[r][c];
          for (int k = 0; k < s.k; ++k)
            want += A[r][k] * B[k][c];
          ASSERT_EQ(D[r][c], want)
              << s.name() << " row " << r << " col " << c << " selector " << f;
        }
    }
}

TEST(MatrixEmulator, MetadataComesFromTheLanesTheSelectorNames) {
  std::mt19937_64 rng(123);
  for (const FragmentShape &s : allShapes()) {
    if (!s.sparse)
      continue;
    int gs = groupOf(s), keep = gs / 2, groups = s.k / gs;
    int selectors = groups == 4 ? 4 : 2;
    for (int f = 0; f < selectors; ++f) {
      // Every group keeps `keep` positive values, and B's rows differ
      // (B[k][c] = k + 1), so moving a kept value to a higher position
      // changes the row's sum.
      Mat A = zeros(s.m, s.k), B = zeros(s.k, s.n), C = zeros(s.m, s.n);
      for (int r = 0; r < s.m; ++r)
        for (int gr = 0; gr < groups; ++gr) {
          int p0 = std::uniform_int_distribution<int>(0, gs - keep)(rng);
          for (int e = 0; e < keep; ++e)
            A[r][gr * gs + p0 + e] = 1 + e;
        }
      for (int k = 0; k < s.k; ++k)
        for (int c = 0; c < s.n; ++c)
          B[k][c] = k + 1;
      Warp base = buildWarp(s, A, B, C, f, rng);
      Warp w = base;
      emulateMma(s, w.a, w.b, w.cd, &w.meta, f);
      const Mat want = readD(s, w.cd);

      // Junk in every lane the selector does not name changes nothing.
      std::set<int> named = ptxMetadataLanes(s, f);
      ASSERT_EQ(named.size(), groups == 4 ? 8u : 16u);
      Warp other = base;
      for (int lane = 0; lane < 32; ++lane)
        if (!named.count(lane))
          other.meta[lane] = ~other.meta[lane];
      emulateMma(s, other.a, other.b, other.cd, &other.meta, f);
      EXPECT_EQ(readD(s, other.cd), want) << s.name() << " f " << f;

      // Another valid code in a named lane moves one group's kept values:
      // exactly that row changes. With values (1, 2) at adjacent positions
      // (p, p+1) and B[k] = k + 1, the row's sum changes by 2 for (0,1) ->
      // (0,2) and (1,2) -> (1,3), by -3 for (2,3) -> (1,2), and by +-1 for
      // the 1:2 swap 0x4 <-> 0xE.
      int r = std::uniform_int_distribution<int>(0, s.m - 1)(rng);
      int gr = std::uniform_int_distribution<int>(0, groups - 1)(rng);
      auto [lane, j] = ptxMetaSlot(s, f, r, gr);
      Warp moved = base;
      uint32_t nib = (moved.meta[lane] >> (4 * j)) & 15, newNib;
      if (gs == 2) {
        newNib = nib == 0x4 ? 0xE : 0x4;
      } else {
        uint32_t p0 = nib & 3, p1 = nib >> 2;
        newNib = p1 < 3 ? (p0 | (p1 + 1) << 2) : (1 | 2 << 2);
      }
      moved.meta[lane] =
          (moved.meta[lane] & ~(15u << (4 * j))) | (newNib << (4 * j));
      emulateMma(s, moved.a, moved.b, moved.cd, &moved.meta, f);
      Mat got = readD(s, moved.cd);
      for (int row = 0; row < s.m; ++row)
        for (int c = 0; c < s.n; ++c) {
          if (row == r)
            EXPECT_NE(got[row][c], want[row][c]) << s.name() << " f " << f;
          else
            EXPECT_EQ(got[row][c], want[row][c]) << s.name() << " f " << f;
        }

      // A code ordered metadata forbids (p0 = p1 = 0, or a tf32 nibble
      // other than 0x4 / 0xE) poisons the row.
      Warp badW = base;
      badW.meta[lane] &= ~(15u << (4 * j));
      emulateMma(s, badW.a, badW.b, badW.cd, &badW.meta, f);
      EXPECT_TRUE(std::isnan(readD(s, badW.cd)[r][0])) << s.name();
    }
  }
}

TEST(MatrixEmulator, SparseMmaSkipsTheRowsTheMetadataDrops) {
  // An Inf in a B row whose A entry the metadata drops never reaches the
  // sum (the hardware does not multiply it), while a dense mma's 0 * Inf is
  // NaN.
  std::mt19937_64 rng(8);
  FragmentShape sp = shapeOf(MmaType::F16, 16, 16, true);
  FragmentShape de = shapeOf(MmaType::F16, 16, 16, false);
  Mat A = zeros(16, 16), B = zeros(16, 8), C = zeros(16, 8);
  for (int r = 0; r < 16; ++r) {
    A[r][0] = 1; // Group 0 keeps positions 0 and 1 (a stored zero at 1).
    A[r][5] = 2; // Group 1 keeps 5 (and a stored zero at 4).
  }
  for (int c = 0; c < 8; ++c) {
    B[0][c] = 3;
    B[5][c] = 1;
    B[2][c] = INFINITY; // Row 2 (group 0, position 2) is dropped.
  }
  Warp w = buildWarp(sp, A, B, C, 0, rng);
  emulateMma(sp, w.a, w.b, w.cd, &w.meta, 0);
  // 1 * 3 + 2 * 1 = 5 in every entry.
  EXPECT_EQ(readD(sp, w.cd), Mat(16, std::vector<double>(8, 5.0)));
  Warp d = buildWarp(de, A, B, C, 0, rng);
  emulateMma(de, d.a, d.b, d.cd, nullptr, 0);
  EXPECT_TRUE(std::isnan(readD(de, d.cd)[0][0]));
}

TEST(MatrixEmulator, AccumulatesInTheFragmentType) {
  // Row 0 of A is (4096, 1, ..., 1) and B's column 0 is (4096, 1, ..., 1),
  // C = 0. In f32, 4096 * 4096 = 2^24 and 2^24 + 1 rounds back to 2^24
  // (ties to even), so the sequential f32 sum stays 2^24. In f64 it is
  // 2^24 + (k - 1). (This pins the emulator's documented model; the GPU's
  // block adder rounds differently on such data.)
  std::mt19937_64 rng(1);
  for (const FragmentShape &s : {shapeOf(MmaType::F16, 16, 16, false),
                                 shapeOf(MmaType::TF32, 16, 8, false),
                                 shapeOf(MmaType::F64, 16, 16, false)}) {
    Mat A = zeros(s.m, s.k), B = zeros(s.k, s.n), C = zeros(s.m, s.n);
    for (int k = 0; k < s.k; ++k) {
      A[0][k] = k == 0 ? 4096 : 1;
      B[k][0] = k == 0 ? 4096 : 1;
    }
    Warp w = buildWarp(s, A, B, C, 0, rng);
    emulateMma(s, w.a, w.b, w.cd, nullptr, 0);
    double want = s.type == MmaType::F64 ? 16777216.0 + (s.k - 1) : 16777216.0;
    EXPECT_EQ(readD(s, w.cd)[0][0], want) << s.name();
  }
}

//===----------------------------------------------------------------------===//
// Whole programs on a grid.
//===----------------------------------------------------------------------===//

/// The patch program built by hand (im2row with duplicate inputs crushed):
/// the outputs are the patch box in row-major order, the columns every
/// input point the patch reads, once. For a sparse shape each real column
/// is paired with a zero column in random order (PIT padding), which makes
/// A 1:2 and 2:4 valid.
MatrixProgram patchProgram(const Stencil &s, const Offset &patch,
                           const FragmentShape &shape, std::mt19937_64 &rng) {
  const std::vector<Tap> &taps =
      s.fused ? s.fused->taps : s.updates[0].linear->taps;
  MatrixProgram p;
  p.dims = s.dims;
  p.grid = 0;
  p.patch = patch;
  p.shape = shape;
  for (int z = 0; z < patch[0]; ++z)
    for (int y = 0; y < patch[1]; ++y)
      for (int x = 0; x < patch[2]; ++x)
        p.outputs.push_back({z, y, x});
  std::set<Offset> inputs;
  for (const Offset &o : p.outputs)
    for (const Tap &t : taps)
      inputs.insert(
          {o[0] + t.offset[0], o[1] + t.offset[1], o[2] + t.offset[2]});
  for (const Offset &in : inputs) {
    MatrixColumn real{in, false, static_cast<int>(p.columns.size())};
    if (!shape.sparse) {
      p.columns.push_back(real);
      continue;
    }
    MatrixColumn zero{{}, true, -1};
    if (std::bernoulli_distribution(0.5)(rng))
      std::swap(real, zero);
    p.columns.push_back(real);
    p.columns.push_back(zero);
  }
  if (shape.sparse) {
    p.pattern = shape.type == MmaType::TF32 ? SparsityPattern::OneOfTwo
                                            : SparsityPattern::TwoOfFour;
    while (p.columns.size() % groupOf(shape))
      p.columns.push_back({{}, true, -1});
  }
  for (const Offset &o : p.outputs)
    for (const MatrixColumn &c : p.columns) {
      int node = -1;
      if (!c.zero)
        for (const Tap &t : taps)
          if (Offset{c.offset[0] - o[0], c.offset[1] - o[1],
                     c.offset[2] - o[2]} == t.offset)
            node = t.coeff;
      p.a.push_back(node);
    }
  return p;
}

std::vector<FragmentShape> shapesFor(ElemType t) {
  std::vector<FragmentShape> out;
  for (const FragmentShape &s : allShapes())
    if (s.type == mmaTypeFor(t))
      out.push_back(s);
  return out;
}

struct GridCase {
  const char *source;
  Sizes sizes;
  Offset patch;
  int fuse = 0; ///< Steps to fuse (0: none).
};

/// Compiles `c`, packs its program for every shape of every type, and
/// compares each covered point with the interpreter (grid-type precision)
/// bit for bit on small integers. Returns the covered count per run.
std::vector<int64_t> compareWithInterpreter(const GridCase &gc,
                                            std::vector<ElemType> types,
                                            std::mt19937_64 &rng) {
  std::vector<int64_t> counts;
  for (ElemType t : types)
    for (const FragmentShape &shape : shapesFor(t)) {
      Compiled c(gc.source);
      EXPECT_TRUE(c.module) << c.diagText;
      if (!c.module)
        return counts;
      Stencil &s = c.module->stencils[0];
      s.setElemType(t);
      if (gc.fuse)
        EXPECT_TRUE(fuseTemporally(s, gc.fuse, c.diags)) << c.diagText;
      s.matrix = patchProgram(s, gc.patch, shape, rng);
      EXPECT_TRUE(compress24(s, c.diags)) << c.diagText << shape.name();
      std::vector<double> params;
      for (const Param &p : s.params)
        params.push_back(p.defaultValue);
      Interpreter interp(s, gc.sizes, params, RefPrecision::GridType);
      std::vector<double> input(interp.numPoints());
      std::uniform_int_distribution<int> v(-8, 8);
      for (double &x : input)
        x = v(rng);
      interp.setGrid(0, input);
      interp.run(gc.fuse ? gc.fuse : 1);
      EmulatedGrid e = emulateOnGrid(s, gc.sizes, input, params);
      EXPECT_EQ(e.values.size(), input.size());
      int64_t covered = 0;
      for (int64_t i = 0; i < interp.numPoints(); ++i) {
        if (!e.covered[i])
          continue;
        ++covered;
        EXPECT_EQ(e.values[i], interp.getGrid(0)[i])
            << shape.name() << " " << elemTypeName(t).str() << " point " << i;
      }
      counts.push_back(covered);
    }
  return counts;
}

TEST(MatrixEmulator, OneDimensionalProgramMatchesInterpreter) {
  std::mt19937_64 rng(2026);
  // Weights 0.25, 0.5 and 2 are exact in every operand type, and with
  // inputs in [-8, 8] every partial sum is a multiple of 1/4 below 2^5:
  // exact in f32, and the results fit bf16's 8 significant bits.
  GridCase gc{"stencil s { grid u : f64[1]; param w : f64 = 0.5;\n"
              "  boundary u : clamp; u' = 0.25*u[-1] + w*u + 2*u[1]; }",
              Sizes{203, 1, 1}, Offset{20, 1, 1}};
  std::vector<int64_t> counts = compareWithInterpreter(
      gc, {ElemType::F64, ElemType::F32, ElemType::F16, ElemType::BF16}, rng);
  ASSERT_EQ(counts.size(), 4u + 4u + 4u + 4u);
  // Patches of 20 outputs read columns -1..20: origins run from 1 to
  // 203 - 1 - 20 = 182 in steps of 20 (1, 21, ..., 181: 10 patches), so
  // points 1..200 are covered.
  for (int64_t n : counts)
    EXPECT_EQ(n, 200);

  // One-output patches: every point with both neighbours inside, 1..201.
  gc.patch = Offset{1, 1, 1};
  for (int64_t n :
       compareWithInterpreter(gc, {ElemType::F64, ElemType::F16}, rng))
    EXPECT_EQ(n, 201);
}

TEST(MatrixEmulator, TwoDimensionalPeriodicProgramMatchesInterpreter) {
  std::mt19937_64 rng(77);
  // 4 x 8 patches (32 rows: two m16 tiles, four m8 tiles). Axis 0 is
  // periodic: origins 0, 4, 8, 12 cover all 13 rows (wrapping). Axis 1 is
  // clamped: columns -1..8, origins 1, 9, 17 (<= 30 - 1 - 8 = 21), so
  // columns 1..24 are covered: 13 * 24 = 312 points.
  GridCase gc{"stencil s { grid u : f64[2]; boundary u : periodic, clamp;\n"
              "  u' = 0.5*u + 0.25*u[-1,0] + 0.25*u[1,0] - 0.25*u[0,-1]\n"
              "       + 2*u[0,1]; }",
              Sizes{13, 30, 1}, Offset{4, 8, 1}};
  std::vector<int64_t> counts = compareWithInterpreter(
      gc, {ElemType::F64, ElemType::F32, ElemType::F16, ElemType::BF16}, rng);
  ASSERT_EQ(counts.size(), 16u);
  for (int64_t n : counts)
    EXPECT_EQ(n, 13 * 24);
}

TEST(MatrixEmulator, StagedProgramMatchesInterpreter) {
  std::mt19937_64 rng(5);
  // A clamped stage read at offsets, fused over two steps: the tensor-core
  // program is built from the update's inlined linear form (reaching 2
  // points a step where the update as written reaches 1), and covers only
  // points where it equals the interpreter, which computes the stage over
  // the domain with its own clamp (near the edge the two differ). Sums of
  // quarters of small integers are exact.
  GridCase gc{"stencil s { grid u : f64[1]; boundary u, d : clamp;\n"
              "  stage d = u[1] - u[-1];\n"
              "  u' = u + 0.25 * (d[1] - d[-1]); }",
              Sizes{100, 1, 1}, Offset{8, 1, 1}, 2};
  std::vector<int64_t> counts =
      compareWithInterpreter(gc, {ElemType::F64, ElemType::F32}, rng);
  ASSERT_EQ(counts.size(), 8u);
  // Columns -4..11 of patches of 8: origins 4, 12, ..., 84 (<= 100 - 1 -
  // 11 = 88): 11 patches, points 4..91.
  for (int64_t n : counts)
    EXPECT_EQ(n, 88);
}

TEST(MatrixEmulator, FusedProgramStaysOutOfTheBand) {
  std::mt19937_64 rng(31);
  // Three fused steps of (1/4, 1/2, 1/4): taps at -3..3, multiples of 1/64;
  // with inputs in [-8, 8] all sums are exact in f32 and tf32.
  GridCase gc{"stencil s { grid u : f64[1]; boundary u : clamp;\n"
              "  u' = 0.25*u[-1] + 0.5*u + 0.25*u[1]; }",
              Sizes{100, 1, 1}, Offset{8, 1, 1}, 3};
  std::vector<int64_t> counts =
      compareWithInterpreter(gc, {ElemType::F64, ElemType::F32}, rng);
  // Columns -3..10: origins 3, 11, ..., 83 (<= 100 - 1 - 10 = 89): 11
  // patches, points 3..90.
  ASSERT_EQ(counts.size(), 8u);
  for (int64_t n : counts)
    EXPECT_EQ(n, 88);

  // A wider patch program reaching into the band: a single output whose
  // gather is only -1..1 wide (one step's taps) would cover points 1 and
  // 98, which the fused band (3 wide) excludes.
  Compiled c(gc.source);
  ASSERT_TRUE(c.module) << c.diagText;
  Stencil &s = c.module->stencils[0];
  ASSERT_TRUE(fuseTemporally(s, 3, c.diags));
  FusedKernel fused = *s.fused;
  s.fused.reset();
  s.matrix =
      patchProgram(s, Offset{1, 1, 1}, shapeOf(MmaType::F64, 8, 4, false), rng);
  s.fused = fused;
  ASSERT_TRUE(compress24(s, c.diags)) << c.diagText;
  std::vector<double> input(100, 1.0);
  EmulatedGrid e = emulateOnGrid(s, gc.sizes, input, {});
  int covered = 0;
  for (int i = 0; i < 100; ++i) {
    covered += e.covered[i];
    if (i < 3 || i >= 97)
      EXPECT_FALSE(e.covered[i]) << i;
  }
  EXPECT_EQ(covered, 94); // Points 3..96.
}

TEST(MatrixEmulator, HalfPrecisionWithinBound) {
  // Random data and a weight f16/bf16 cannot hold (0.1): the emulator
  // rounds the weights w_j to the operand type (relative error <= u, the
  // unit roundoff: 2^-11 for f16, 2^-8 for bf16), sums exact products in
  // f32, and rounds the result to the grid type, as does the interpreter
  // (which keeps the weights in f32). So
  //   |emu - ref| <= u S + u |emu| + u |ref| + 2^-20 S <= 4 u S,
  // with S = sum_j |w_j| |x_j|.
  std::mt19937_64 rng(4);
  const char *src = "stencil s { grid u : f64[1]; param a : f32 = 0.1;\n"
                    "  boundary u : periodic;\n"
                    "  u' = u + a * (u[-1] - 2*u + u[1]); }";
  for (ElemType t : {ElemType::F16, ElemType::BF16})
    for (const FragmentShape &shape : shapesFor(t)) {
      Compiled c(src);
      ASSERT_TRUE(c.module) << c.diagText;
      Stencil &s = c.module->stencils[0];
      s.setElemType(t);
      s.matrix = patchProgram(s, Offset{12, 1, 1}, shape, rng);
      ASSERT_TRUE(compress24(s, c.diags)) << c.diagText;
      std::vector<double> params = {0.1};
      Sizes n{150, 1, 1};
      Interpreter interp(s, n, params, RefPrecision::GridType);
      std::vector<double> input(150);
      std::uniform_real_distribution<double> d(-4, 4);
      for (double &x : input)
        x = roundTo(t, d(rng));
      interp.setGrid(0, input);
      interp.run(1);
      EmulatedGrid e = emulateOnGrid(s, n, input, params);
      std::vector<double> w = evaluateGridFreeAll(
          s.graph, {static_cast<double>(static_cast<float>(0.1))});
      double u =
          t == ElemType::F16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
      int covered = 0;
      for (int i = 0; i < 150; ++i) {
        if (!e.covered[i])
          continue;
        ++covered;
        double sum = 0;
        for (const Tap &tap : s.updates[0].linear->taps)
          sum += std::fabs(w[tap.coeff]) *
                 std::fabs(input[((i + tap.offset[0]) % 150 + 150) % 150]);
        double ref = interp.getGrid(0)[i];
        EXPECT_LE(std::fabs(e.values[i] - ref), 4 * u * sum)
            << shape.name() << " point " << i;
        EXPECT_EQ(e.values[i], roundTo(t, e.values[i]));
      }
      // Periodic: every point is covered.
      EXPECT_EQ(covered, 150) << shape.name();
    }
}

TEST(MatrixEmulator, UnpackedProgramCoversNothing) {
  Compiled c("stencil s { grid u : f64[1]; boundary u : periodic;\n"
             "  u' = 0.5*u[-1] + 0.5*u[1]; }");
  ASSERT_TRUE(c.module) << c.diagText;
  Stencil &s = c.module->stencils[0];
  std::mt19937_64 rng(0);
  s.matrix =
      patchProgram(s, Offset{1, 1, 1}, shapeOf(MmaType::F64, 8, 4, false), rng);
  std::vector<double> input(10, 1.0);
  EmulatedGrid e = emulateOnGrid(s, Sizes{10, 1, 1}, input, {});
  EXPECT_EQ(std::count(e.covered.begin(), e.covered.end(), true), 0);
  ASSERT_TRUE(compress24(s, c.diags));
  e = emulateOnGrid(s, Sizes{10, 1, 1}, input, {});
  EXPECT_EQ(std::count(e.covered.begin(), e.covered.end(), true), 10);
  EXPECT_EQ(e.values, std::vector<double>(10, 1.0)); // 0.5 + 0.5.
}

} // namespace
