//===- TemporalFusionTest.cpp - Fused kernels equal t steps ---------------===//

#include "../Frontend/TestUtil.h"
#include "stencilc/IR/Interpreter.h"
#include "stencilc/IR/LinearForm.h"
#include "stencilc/Transforms/TemporalFusion.h"

#include "gtest/gtest.h"

#include <cmath>
#include <map>
#include <random>

using namespace stencilc;
using stencilc::test::Compiled;

namespace {

struct Case {
  std::string source;
  int dims = 1;
  std::vector<bool> periodic;
  std::map<Offset, double> taps; ///< One step, as the source means it.
  std::vector<double> params;
};

/// A random linear stencil of one grid: 1-3 dims, radius 1-3, sparse and
/// asymmetric shapes, some coefficients through parameters (f64, so their
/// values are exact), a random boundary per axis.
Case randomCase(std::mt19937_64 &rng) {
  Case c;
  std::uniform_int_distribution<int> dimsDist(1, 3), radiusDist(1, 3);
  std::uniform_real_distribution<double> weight(-0.5, 0.5);
  c.dims = dimsDist(rng);
  int r = radiusDist(rng);
  if (c.dims == 3)
    r = std::min(r, 2);
  std::string src = "stencil s {\n  grid u : f64[" + std::to_string(c.dims) +
                    "];\n  param p : f64 = 0.375;\n  param q : f64 = -1.25;\n"
                    "  boundary u : ";
  const char *kinds[] = {"periodic", "clamp", "dirichlet(0.5)", "fixed"};
  for (int a = 0; a < c.dims; ++a) {
    int k = std::uniform_int_distribution<int>(0, 3)(rng);
    c.periodic.push_back(k == 0);
    src += std::string(a ? ", " : "") + kinds[k];
  }
  src += ";\n  u' = 0";
  int side = 2 * r + 1, count = 1;
  for (int a = 0; a < c.dims; ++a)
    count *= side;
  std::bernoulli_distribution keep(0.35);
  c.params = {0.375, -1.25};
  for (int i = 0; i < count; ++i) {
    Offset o{0, 0, 0};
    int rest = i;
    for (int a = c.dims - 1; a >= 0; --a) {
      o[a] = rest % side - r;
      rest /= side;
    }
    bool centre = o == Offset{0, 0, 0};
    if (!centre && !keep(rng))
      continue;
    double w = std::round(weight(rng) * 64) / 64;
    if (w == 0)
      w = 1.0 / 64;
    std::string read = "u[";
    for (int a = 0; a < c.dims; ++a)
      read += (a ? "," : "") + std::to_string(o[a]);
    read += "]";
    int form = std::uniform_int_distribution<int>(0, 3)(rng);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", w);
    if (form == 0) {
      src += " + p * " + std::string(buf) + " * " + read;
      w *= 0.375;
    } else if (form == 1) {
      src += " + " + std::string(buf) + " * " + read + " / q";
      w /= -1.25;
    } else {
      src += " + " + std::string(buf) + " * " + read;
    }
    c.taps[o] += w;
  }
  c.source = src + ";\n}\n";
  return c;
}

std::map<Offset, double> convolve(const std::map<Offset, double> &a,
                                  const std::map<Offset, double> &b) {
  std::map<Offset, double> out;
  for (const auto &[p, x] : a)
    for (const auto &[q, y] : b)
      out[{p[0] + q[0], p[1] + q[1], p[2] + q[2]}] += x * y;
  return out;
}

TEST(TemporalFusion, FusedKernelEqualsStepsAwayFromTheBand) {
  std::mt19937_64 rng(20261121);
  int compared = 0, periodicAll = 0;
  for (int iter = 0; iter < 300; ++iter) {
    Case c = randomCase(rng);
    Compiled comp(c.source);
    ASSERT_TRUE(comp.module) << comp.diagText << c.source;
    Stencil &s = comp.module->stencils[0];
    int steps = std::uniform_int_distribution<int>(1, 4)(rng);
    ASSERT_TRUE(fuseTemporally(s, steps, comp.diags)) << comp.diagText;
    const FusedKernel &f = *s.fused;

    // The taps are the numeric t-fold self-convolution.
    std::map<Offset, double> want = c.taps;
    for (int k = 1; k < steps; ++k)
      want = convolve(want, c.taps);
    std::vector<double> values = evaluateGridFreeAll(s.graph, c.params);
    std::map<Offset, double> got;
    for (const Tap &t : f.taps) {
      got[t.offset] = values[t.coeff];
      // The one-node evaluator agrees with the sweep.
      if (t.offset == f.taps.front().offset)
        EXPECT_EQ(evaluateGridFree(s.graph, t.coeff, c.params), got[t.offset]);
    }
    for (const auto &[o, w] : want)
      if (w != 0)
        EXPECT_NEAR(got[o], w, 1e-12) << c.source;
    EXPECT_LE(f.taps.size(), want.size());
    EXPECT_DOUBLE_EQ(f.alpha, static_cast<double>(f.taps.size()) /
                                  (steps * static_cast<double>(
                                               s.updates[0].linear->taps.size())));
    for (int a = 0; a < c.dims; ++a) {
      EXPECT_EQ(f.bandLo[a], c.periodic[a] ? 0 : steps * s.updates[0].reachLo[a]);
      EXPECT_EQ(f.bandHi[a], c.periodic[a] ? 0 : steps * s.updates[0].reachHi[a]);
    }

    // Applied once, it equals `steps` interpreter steps outside the band.
    Sizes n{1, 1, 1};
    for (int a = 0; a < c.dims; ++a)
      n[a] = std::uniform_int_distribution<int>(c.dims == 3 ? 6 : 9,
                                                c.dims == 3 ? 12 : 40)(rng);
    Interpreter interp(s, n, c.params, RefPrecision::Float64);
    std::vector<double> init(interp.numPoints());
    std::uniform_real_distribution<double> data(-1, 1);
    for (double &x : init)
      x = data(rng);
    interp.setGrid(0, init);
    interp.run(steps);
    const std::vector<double> &ref = interp.getGrid(0);
    bool allPeriodic = true;
    for (int a = 0; a < c.dims; ++a)
      allPeriodic &= c.periodic[a];
    periodicAll += allPeriodic;
    for (int64_t idx = 0; idx < interp.numPoints(); ++idx) {
      std::array<int64_t, kMaxDims> p{0, 0, 0};
      int64_t rest = idx;
      for (int a = c.dims - 1; a >= 0; --a) {
        p[a] = rest % n[a];
        rest /= n[a];
      }
      bool inBand = false;
      for (int a = 0; a < c.dims; ++a)
        inBand |= p[a] < f.bandLo[a] || p[a] >= n[a] - f.bandHi[a];
      if (inBand)
        continue;
      double sum = 0;
      for (const auto &[o, w] : got) {
        int64_t j = 0;
        for (int a = 0; a < c.dims; ++a) {
          int64_t x = ((p[a] + o[a]) % n[a] + n[a]) % n[a];
          j = j * n[a] + x;
        }
        sum += w * init[j];
      }
      ASSERT_NEAR(sum, ref[idx], 1e-11) << c.source << " steps " << steps;
      ++compared;
    }
  }
  // The comparison really happened, on periodic grids too.
  EXPECT_GT(compared, 10000);
  EXPECT_GT(periodicAll, 5);
}

TEST(TemporalFusion, RejectsWhatItCannotFuse) {
  for (const char *src :
       {"stencil s { grid u : f32[1]; boundary u : clamp; u' = u * u[1]; }",
        "stencil s { grid u : f32[1]; boundary u : clamp; u' = u[1] + 1; }",
        "stencil s { grid u, k : f32[1]; boundary u, k : clamp;\n"
        "  u' = u[1] + k[1]; }",
        "stencil s { grid u, v : f32[1]; boundary u, v : clamp;\n"
        "  u' = u[1]; v' = v[-1]; }"}) {
    Compiled c(src);
    ASSERT_TRUE(c.module) << c.diagText;
    EXPECT_FALSE(fuseTemporally(c.module->stencils[0], 2, c.diags)) << src;
    EXPECT_NE(c.diagText.find("error: temporal fusion"), std::string::npos)
        << c.diagText;
  }
}

} // namespace
