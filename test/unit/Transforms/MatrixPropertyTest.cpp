//===- MatrixPropertyTest.cpp - Every pass chain equals the reference -----===//
//
// The safety net of DESIGN.md §2: 1000 random linear stencils (1-3 dims,
// base radius 1-4, fused up to radius 8, asymmetric shapes with holes,
// random weights, every element type and boundary) each go through every
// pass chain that applies to their type (3 dense ones, and 4 sparse ones
// unless f64), ending in a packed MatrixProgram; the CPU MMA emulator's result
// is compared with `steps` steps of the reference interpreter on every
// point the program covers.
//
// Bit-exactness is demanded whenever arithmetic makes it certain: every
// coefficient is representable in the operand type and every partial sum
// of the accumulation is representable in the accumulator (a common
// dyadic grid 2^-F with sum |c| * max|x| * 2^F below 2^24 for f32, 2^53
// for f64). Then the emulator must return exactly the interpreter's value
// rounded once to the grid type. Otherwise the documented bound applies
// (docs/transformations.md):
//   |emu - ref| <= (2 u_op + (K + 1) u_acc) * sum |c||x| + u_grid |ref|
//                  + K * 8 * 2^-25 (f16 only) + tiny,
// with u_op the operand type's unit roundoff (f16, tf32 2^-11, bf16 2^-8,
// f64 0), u_acc the accumulator's (2^-24 in f32, 2^-53 in f64), K the
// products one output sums, and the f16 term the absolute error of
// coefficients below f16's normal range (half a spacing, 2^-25, times
// |x| <= 8).
//
//===----------------------------------------------------------------------===//

#include "../Frontend/TestUtil.h"
#include "stencilc/IR/Interpreter.h"
#include "stencilc/IR/LinearForm.h"
#include "stencilc/IR/MatrixEmulator.h"
#include "stencilc/Transforms/Compress24.h"
#include "stencilc/Transforms/Decompose.h"
#include "stencilc/Transforms/Flatten.h"
#include "stencilc/Transforms/LayoutMorph.h"
#include "stencilc/Transforms/SparsityConversion.h"
#include "stencilc/Transforms/StridedSwap.h"
#include "stencilc/Transforms/TemporalFusion.h"

#include "gtest/gtest.h"

#include <cmath>
#include <map>
#include <random>
#include <set>

using namespace stencilc;
using stencilc::test::Compiled;

namespace {

struct RandomStencil {
  std::string source;
  int dims = 1;
  int steps = 1;
  ElemType type = ElemType::F32;
  std::array<int64_t, 3> sizes{1, 1, 1};
};

const char *typeNames[] = {"f16", "bf16", "f32", "f64"};
const ElemType types[] = {ElemType::F16, ElemType::BF16, ElemType::F32,
                          ElemType::F64};

/// Weights are mostly exact in every operand type (small dyadics); a share
/// are not (thirds, tenths), which exercises the bound instead.
std::string randomWeight(std::mt19937_64 &rng, bool exactOnly) {
  static const char *exact[] = {"1",     "-1",  "0.5", "-0.5",  "0.25",
                                "-0.25", "2",   "-2",  "0.125", "-0.375",
                                "0.75",  "1.5", "-3",  "0.0625"};
  static const char *inexact[] = {"0.1", "-0.3", "0.333", "1.7", "-0.05"};
  if (exactOnly || std::bernoulli_distribution(0.8)(rng))
    return exact[std::uniform_int_distribution<int>(0, 13)(rng)];
  return inexact[std::uniform_int_distribution<int>(0, 4)(rng)];
}

RandomStencil makeStencil(std::mt19937_64 &rng) {
  RandomStencil r;
  r.dims = std::uniform_int_distribution<int>(1, 3)(rng);
  int typeIndex = std::uniform_int_distribution<int>(0, 3)(rng);
  r.type = types[typeIndex];
  // Base radius 1-4 (1-2 in 3-D), fused up to radius 8 (3 in 3-D, to keep
  // the emulated work small).
  int maxR = r.dims == 3 ? 2 : 4;
  int radius = std::uniform_int_distribution<int>(1, maxR)(rng);
  int maxFused = r.dims == 3 ? 3 : 8;
  int maxSteps = std::max(1, maxFused / radius);
  r.steps = std::uniform_int_distribution<int>(1, std::min(maxSteps, 4))(rng);
  bool exactOnly = std::bernoulli_distribution(0.5)(rng);

  std::string src =
      "stencil s {\n  grid u : " + std::string(typeNames[typeIndex]) + "[" +
      std::to_string(r.dims) + "];\n  param p : f64 = 0.5;\n  boundary u : ";
  const char *kinds[] = {"periodic", "clamp", "dirichlet(1)", "fixed"};
  for (int a = 0; a < r.dims; ++a)
    src += std::string(a ? ", " : "") +
           kinds[std::uniform_int_distribution<int>(0, 3)(rng)];
  src += ";\n  u' = 0";
  // Asymmetric reach per axis and side, holes.
  std::uniform_int_distribution<int> reach(0, radius);
  Offset lo{}, hi{};
  for (int a = 0; a < r.dims; ++a) {
    lo[a] = reach(rng);
    hi[a] = reach(rng);
  }
  lo[0] = radius; // The radius is reached on at least one axis.
  double keep = std::uniform_real_distribution<double>(0.25, 1.0)(rng);
  std::bernoulli_distribution keepTap(keep);
  int taps = 0;
  for (int x = -lo[0]; x <= hi[0]; ++x)
    for (int y = r.dims > 1 ? -lo[1] : 0; y <= (r.dims > 1 ? hi[1] : 0); ++y)
      for (int z = r.dims > 2 ? -lo[2] : 0; z <= (r.dims > 2 ? hi[2] : 0);
           ++z) {
        bool anchor = x == -lo[0] && y == 0 && z == 0;
        if (!anchor && !keepTap(rng))
          continue;
        std::string read = "u[" + std::to_string(x);
        if (r.dims > 1)
          read += "," + std::to_string(y);
        if (r.dims > 2)
          read += "," + std::to_string(z);
        read += "]";
        src += " + " + randomWeight(rng, exactOnly) +
               (taps % 4 == 1 ? " * p" : "") + " * " + read;
        ++taps;
      }
  r.source = src + ";\n}\n";
  // Big enough for whole patches between the boundary bands.
  int fusedReach = radius * r.steps;
  for (int a = 0; a < r.dims; ++a) {
    // A decompose patch is up to 2 * fusedReach + 2 wide and reads as much
    // again; in 1-D and 2-D room for several patches comes on top.
    int lowest = r.dims == 3 ? 4 * fusedReach + 2 * radius + 2
                             : 6 * fusedReach + 2 * radius + 8;
    int highest = lowest + (r.dims == 3 ? 2 : 6);
    r.sizes[a] = std::uniform_int_distribution<int>(lowest, highest)(rng);
  }
  return r;
}

/// Unit roundoff of the operands and of the stored grid.
double operandRoundoff(MmaType t) {
  switch (t) {
  case MmaType::F16:
  case MmaType::TF32:
    return std::ldexp(1.0, -11);
  case MmaType::BF16:
    return std::ldexp(1.0, -8);
  case MmaType::F64:
    return 0;
  }
  return 1;
}

/// Fractional bits needed to write `v` exactly (up to 80), or -1.
int fractionalBits(double v) {
  for (int f = 0; f <= 80; ++f)
    if (std::ldexp(v, f) == std::floor(std::ldexp(v, f)))
      return f;
  return -1;
}

struct Stats {
  int runs = 0, exactRuns = 0;
  int64_t points = 0, exactPoints = 0;
  std::map<std::string, int> chains;
};

/// Runs the chain already applied to `s` through compress24 and the
/// emulator, and compares with the interpreter.
void checkAgainstReference(Stencil &s, Compiled &c, const RandomStencil &r,
                           const std::string &chain, std::mt19937_64 &rng,
                           Stats &stats) {
  ASSERT_TRUE(compress24(s, c.diags)) << c.diagText << chain;
  ASSERT_EQ(verifyMatrixProgram(*s.matrix), "") << chain;
  const MatrixProgram &p = *s.matrix;
  std::vector<double> params = {0.5};

  int64_t total = r.sizes[0] * r.sizes[1] * r.sizes[2];
  std::vector<double> input(total);
  std::uniform_int_distribution<int> data(-8, 8);
  for (double &x : input)
    x = data(rng);
  Interpreter interp(s, {r.sizes[0], r.sizes[1], r.sizes[2]}, params,
                     RefPrecision::Float64);
  interp.setGrid(0, input);
  interp.run(r.steps);
  const std::vector<double> &ref = interp.getGrid(0);
  EmulatedGrid emu = emulateOnGrid(s, r.sizes, input, params);
  ASSERT_EQ(emu.values.size(), static_cast<size_t>(total));

  // The coefficients as the fragments see them, and whether the whole
  // computation is exact.
  std::vector<double> nodes = evaluateGridFreeAll(s.graph, params);
  MmaType mt = p.shape.type;
  bool exact = true;
  int frac = 0;
  double sumAbsCoeff = 0, maxAbsCoeff = 0;
  int products = 0;
  std::map<Offset, double> taps;
  for (int i = 0; i < p.rows(); ++i)
    for (int j = 0; j < p.cols(); ++j)
      if (p.nonzero(i, j) && i == 0)
        ++products;
  for (const Tap &t : s.fused ? s.fused->taps : s.updates[0].linear->taps) {
    double v = nodes[t.coeff];
    taps[t.offset] = v;
    sumAbsCoeff += std::fabs(v);
    maxAbsCoeff = std::max(maxAbsCoeff, std::fabs(v));
    if (roundToOperand(mt, v) != v)
      exact = false;
    int f = fractionalBits(v);
    if (f < 0)
      exact = false;
    frac = std::max(frac, f);
  }
  double limit = mt == MmaType::F64 ? std::ldexp(1.0, 53) : std::ldexp(1.0, 24);
  if (std::ldexp(sumAbsCoeff * 8, frac) >= limit)
    exact = false;

  ElemType gridType = s.grids[p.grid].type;
  double uOp = operandRoundoff(mt);
  double uAcc =
      mt == MmaType::F64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  double uGrid =
      gridType == ElemType::F64 ? std::ldexp(1.0, -53) : unitRoundoff(gridType);
  int64_t covered = 0;
  for (int64_t idx = 0; idx < total; ++idx) {
    if (!emu.covered[idx])
      continue;
    ++covered;
    double want = ref[idx];
    if (exact) {
      ASSERT_EQ(emu.values[idx], roundTo(gridType, want))
          << chain << " at " << idx << "\n"
          << r.source;
      continue;
    }
    // sum |c| |x| over the fused kernel at this point (wrapping: covered
    // points never read across a non-periodic edge).
    std::array<int64_t, 3> q{idx / (r.sizes[1] * r.sizes[2]),
                             idx / r.sizes[2] % r.sizes[1], idx % r.sizes[2]};
    double mag = 0;
    for (const auto &[o, w] : taps) {
      int64_t j = 0;
      for (int a = 0; a < 3; ++a) {
        int64_t x = ((q[a] + o[a]) % r.sizes[a] + r.sizes[a]) % r.sizes[a];
        j = j * r.sizes[a] + x;
      }
      mag += std::fabs(w) * std::fabs(input[j]);
    }
    // roundWeights (docs/language.md §6.4) moves the rounding error of
    // the weights' sum, at most uOp (sum |c| + |sum c|), onto some weights,
    // each re-rounded (uOp max|c|): times the largest input, |x| <= 8.
    double moved = uOp * (2 * sumAbsCoeff + maxAbsCoeff) * 8;
    double bound =
        (2 * uOp + (products + 1) * uAcc) * mag + moved +
        uGrid * std::fabs(want) * 1.0001 + 1e-30 +
        // Operands below the f16 normal range keep an absolute
        // error of half their spacing, 2^-25 each.
        (mt == MmaType::F16 ? products * 8 * std::ldexp(1.0, -25) : 0);
    ASSERT_LE(std::fabs(emu.values[idx] - want), bound)
        << chain << " at " << idx << " emu " << emu.values[idx] << " ref "
        << want << "\n"
        << r.source;
  }
  // A chain that covers nothing would prove nothing.
  ASSERT_GT(covered, 0) << chain << "\n" << r.source;
  ++stats.runs;
  stats.points += covered;
  if (exact) {
    ++stats.exactRuns;
    stats.exactPoints += covered;
  }
  ++stats.chains[chain];
}

TEST(MatrixProperty, EveryPassChainEqualsTheInterpreter) {
  std::mt19937_64 rng(20261122);
  Stats stats;
  int runsExpected = 0;
  for (int iter = 0; iter < 1000; ++iter) {
    RandomStencil r = makeStencil(rng);
    bool sparseType = r.type != ElemType::F64;
    // Chains: 0 flatten, 1 decompose, 2 morph (dense); 3 decompose +
    // strided swap, 4 morph + sparsity conversion, 5 decompose + sparsity
    // conversion, 6 flatten + sparsity conversion (sparse types).
    int chains = sparseType ? 7 : 3;
    runsExpected += chains;
    // Every chain that applies runs on every stencil.
    for (int chain = 0; chain < chains; ++chain) {
      Compiled c(r.source);
      ASSERT_TRUE(c.module) << c.diagText << r.source;
      Stencil &s = c.module->stencils[0];
      if (r.steps > 1)
        ASSERT_TRUE(fuseTemporally(s, r.steps, c.diags)) << c.diagText;
      int arch = std::bernoulli_distribution(0.5)(rng) ? 80 : 90;
      int r1 = std::uniform_int_distribution<int>(1, r.dims == 3 ? 4 : 8)(rng);
      int r2 = r.dims == 1 ? 1 : std::uniform_int_distribution<int>(1, 4)(rng);
      std::string name;
      bool ok = true;
      switch (chain) {
      case 0:
      case 6:
        name = "flatten";
        ok = flattenStencil(s, c.diags, arch);
        break;
      case 1:
      case 5:
        name = "decompose";
        ok = decomposeStencil(s, 0, c.diags, arch);
        break;
      case 2:
      case 4:
        name = "morph";
        ok = morphLayout(s, r1, r2, c.diags, arch);
        break;
      case 3: {
        // The adjacent order on half of the 2:4 cases.
        bool adjacent = r.type != ElemType::F32 && r.type != ElemType::F64 &&
                        std::bernoulli_distribution(0.5)(rng);
        name = "decompose+strided-swap";
        ok = decomposeStencil(s, 0, c.diags, arch) &&
             stridedSwap(s, c.diags, adjacent);
        break;
      }
      }
      if (ok && (chain == 4 || chain == 5 || chain == 6)) {
        name += "+sparsity-conversion";
        ok = convertSparsity(s, 0, c.diags);
      }
      ASSERT_TRUE(ok) << c.diagText << name << "\n" << r.source;
      // Every legal fragment shape, not only the largest: the columns are
      // padded to the largest K, a multiple of the others.
      std::vector<FragmentShape> shapes = legalFragments(
          s.matrix->shape.type, s.matrix->shape.sparse, s.matrix->arch);
      ASSERT_FALSE(shapes.empty());
      s.matrix->shape = shapes[std::uniform_int_distribution<size_t>(
          0, shapes.size() - 1)(rng)];
      computeMatrixStats(*s.matrix);
      name += " " + s.matrix->shape.name();
      checkAgainstReference(s, c, r, name, rng, stats);
      if (HasFatalFailure())
        return;
    }
  }
  // The comparison happened, much of it bit-exact, over every chain and
  // shape the generator can reach.
  EXPECT_EQ(stats.runs, runsExpected);
  EXPECT_GT(stats.exactRuns, runsExpected / 3);
  EXPECT_GT(stats.points, 2000000);
  std::map<std::string, int> byChainPrefix;
  std::set<std::string> shapes;
  for (const auto &[chain, n] : stats.chains) {
    byChainPrefix[chain.substr(0, chain.find(' '))] += n;
    shapes.insert(chain.substr(chain.find(' ') + 1));
  }
  for (const char *chain :
       {"flatten", "decompose", "morph", "decompose+strided-swap",
        "morph+sparsity-conversion", "decompose+sparsity-conversion",
        "flatten+sparsity-conversion"})
    EXPECT_GT(byChainPrefix[chain], 600) << chain;
  // Every shape legalFragments offers: f16 and bf16 dense k8/k16 and
  // sparse k16/k32, tf32 dense k4/k8 and sparse k8/k16, f64 m8n8k4 and
  // m16n8k4/k8/k16.
  EXPECT_EQ(shapes.size(), 16u);
}

} // namespace
