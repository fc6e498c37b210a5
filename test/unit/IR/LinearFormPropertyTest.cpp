//===- LinearFormPropertyTest.cpp - Taps agree with evaluation ------------===//
//
// For random linear stencils, some with parameters in their coefficients:
// the linear form Sema attaches lists exactly the reads the source wrote,
// with the coefficients the source meant, and applying its taps
// (evaluateGridFree) to random data reproduces one Interpreter step.
//
//===----------------------------------------------------------------------===//

#include "../Frontend/TestUtil.h"
#include "RandomStencil.h"
#include "stencilc/IR/Interpreter.h"
#include "stencilc/IR/LinearForm.h"

#include "gtest/gtest.h"

using namespace stencilc;
using namespace stencilc::test;

namespace {

TEST(LinearFormProperty, TapsAppliedToDataEqualOneInterpreterStep) {
  std::mt19937_64 rng(0x11ea5f0a3ULL);
  StencilGen gen(rng);
  const int kCases = 1500;
  int withParams = 0, withConstant = 0, failures = 0;
  for (int i = 0; i < kCases && failures < 5; ++i) {
    GenOptions opt;
    opt.withParams = i % 4 != 0;
    RefStencil s = gen.make(opt);
    SCOPED_TRACE("case " + std::to_string(i) + "\n" + s.source);
    Compiled c(s.source);
    ASSERT_TRUE(c.module) << c.diagText;
    const Stencil &st = c.stencil();
    std::vector<double> params = s.paramValues();
    ASSERT_EQ(st.params.size(), params.size());
    ASSERT_TRUE(st.isLinear());
    withParams += !params.empty();

    // The taps are the reads the source wrote, with the meant coefficients.
    ASSERT_EQ(st.updates.size(), s.updates.size());
    RefStencil fromForm = s; // the same stencil, taps read off the IR
    for (size_t k = 0; k < s.updates.size(); ++k) {
      const RefUpdate &want = s.updates[k];
      const Update &u = st.updates[k];
      ASSERT_EQ(u.grid, st.findGrid(s.grids[want.grid].name));
      ASSERT_TRUE(u.linear);
      const LinearForm &lf = *u.linear;
      std::map<Key, double> wantTaps;
      for (const RefTap &t : want.taps)
        wantTaps[{st.findGrid(s.grids[t.grid].name), t.off}] = t.w;
      std::map<Key, double> gotTaps;
      for (size_t j = 0; j < lf.taps.size(); ++j) {
        const Tap &t = lf.taps[j];
        ASSERT_TRUE(st.graph.isGridFree(t.coeff));
        gotTaps[{t.grid, t.offset}] =
            evaluateGridFree(st.graph, t.coeff, params);
        if (j > 0) // sorted by (grid, offset), no duplicates
          EXPECT_TRUE(std::make_pair(lf.taps[j - 1].grid,
                                     lf.taps[j - 1].offset) <
                      std::make_pair(t.grid, t.offset));
      }
      ASSERT_EQ(gotTaps.size(), wantTaps.size());
      for (const auto &[key, w] : wantTaps) {
        ASSERT_TRUE(gotTaps.count(key)) << "missing tap";
        EXPECT_NEAR(gotTaps[key], w, 1e-12 * std::max(1.0, std::fabs(w)));
      }
      double constant =
          lf.constant >= 0 ? evaluateGridFree(st.graph, lf.constant, params)
                           : 0.0;
      EXPECT_NEAR(constant, want.constant,
                  1e-12 * std::max(1.0, std::fabs(want.constant)));
      withConstant += lf.constant >= 0;

      fromForm.updates[k].taps.clear();
      for (const Tap &t : lf.taps) {
        // RefStencil grid indices follow the source's declaration order.
        int g = -1;
        for (size_t q = 0; q < s.grids.size(); ++q)
          if (st.findGrid(s.grids[q].name) == t.grid)
            g = static_cast<int>(q);
        fromForm.updates[k].taps.push_back(
            RefTap{g, t.offset, evaluateGridFree(st.graph, t.coeff, params)});
      }
      fromForm.updates[k].constant = constant;
    }

    // One step of the taps, by the naive executor, against the Interpreter.
    Interpreter in(st, s.n, params, RefPrecision::Float64);
    for (size_t g = 0; g < s.grids.size(); ++g)
      in.setGrid(st.findGrid(s.grids[g].name), s.init[g]);
    in.run(1);
    auto want = naiveStep(fromForm, s.init);
    bool ok = true;
    for (size_t g = 0; g < s.grids.size(); ++g) {
      const std::vector<double> &got = in.getGrid(st.findGrid(s.grids[g].name));
      double err = 0, norm = 0;
      for (size_t p = 0; p < got.size(); ++p) {
        err = std::max(err, std::fabs(got[p] - want[g][p]));
        norm = std::max(norm, std::fabs(want[g][p]));
      }
      if (!(err <= 1e-12 * std::max(1.0, norm))) {
        ADD_FAILURE() << "grid " << s.grids[g].name << ": error " << err;
        ok = false;
      }
    }
    failures += !ok;
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(withParams, kCases / 2);
  EXPECT_GT(withConstant, kCases / 10);
}

/// Forms that are not affine have no linear form; affine ones with
/// grid-free nonlinear coefficients do.
TEST(LinearFormProperty, AffineOnlyInTheGridReads) {
  struct Case {
    const char *update;
    bool linear;
  } cases[] = {
      {"u * u", false},
      {"u[1] / u", false},
      {"min(u, 1)", false},
      {"abs(u[-1])", false},
      {"sqrt(u)", false},
      {"pow(u, 2)", false},
      {"pow(u, 1)", true}, // pow(x, 1) is x
      {"pow(u, 0) * u", true},
      {"sqrt(a) * u[1] + pow(a, -2) * u", true},
      {"min(a, 2) * (u - u[1]) / max(a, 0.5)", true},
      {"-(a * u) / 4 + 1", true},
      {"(u + 1) * (a + 1)", true},
      {"(u + 1) * (u - 1)", false},
      {"1 / (a * u)", false},
  };
  for (const Case &k : cases) {
    Compiled c(std::string("stencil s { grid u : f64[1]; param a : f64 = 2;"
                           " boundary u : clamp; u' = ") +
               k.update + "; }");
    ASSERT_TRUE(c.module) << k.update << c.diagText;
    EXPECT_EQ(c.stencil().updates[0].linear.has_value(), k.linear) << k.update;
    if (!k.linear)
      continue;
    // The form reproduces the expression at a few values of u, computed
    // here by hand with the generic evaluator of the interpreter.
    const Stencil &st = c.stencil();
    Interpreter in(st, {3, 1, 1}, {2.0}, RefPrecision::Float64);
    std::vector<double> d = {0.5, -1.25, 3};
    in.setGrid(0, d);
    in.run(1);
    const LinearForm &lf = *st.updates[0].linear;
    for (int p = 0; p < 3; ++p) {
      double v = lf.constant >= 0
                     ? evaluateGridFree(st.graph, lf.constant, {2.0})
                     : 0.0;
      for (const Tap &t : lf.taps)
        v += evaluateGridFree(st.graph, t.coeff, {2.0}) *
             d[std::clamp(p + t.offset[0], 0, 2)];
      EXPECT_NEAR(in.getGrid(0)[p], v, 1e-12) << k.update << " at " << p;
    }
  }
}

} // namespace
