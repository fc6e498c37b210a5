//===- InterpreterPropertyTest.cpp - The interpreter on random stencils ---===//
//
// Random linear stencils, compiled from .st text, run by the Interpreter and
// by the naive reference of RandomStencil.h, which knows only the taps the
// generator meant to write and the boundary rules of the language.
//
//===----------------------------------------------------------------------===//

#include "../Frontend/TestUtil.h"
#include "RandomStencil.h"
#include "stencilc/IR/Interpreter.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace stencilc;
using namespace stencilc::test;

namespace {

double maxNorm(const std::vector<double> &v) {
  double m = 0;
  for (double x : v)
    m = std::max(m, std::fabs(x));
  return m;
}

double maxDiff(const std::vector<double> &a, const std::vector<double> &b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i)
    m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

/// Runs `s` in the Interpreter and returns every grid after `steps`.
std::vector<std::vector<double>> interpret(const Stencil &st,
                                           const RefStencil &s, int steps,
                                           RefPrecision prec) {
  Interpreter in(st, s.n, s.paramValues(), prec);
  EXPECT_EQ(in.numPoints(), s.points());
  for (size_t g = 0; g < s.grids.size(); ++g)
    in.setGrid(st.findGrid(s.grids[g].name), s.init[g]);
  in.run(steps);
  std::vector<std::vector<double>> out;
  for (size_t g = 0; g < s.grids.size(); ++g)
    out.push_back(in.getGrid(st.findGrid(s.grids[g].name)));
  return out;
}

TEST(InterpreterProperty, RandomLinearStencilsMatchNaiveReference) {
  std::mt19937_64 rng(0x57e9c11c0ffeeULL);
  StencilGen gen(rng);
  const int kCases = 4000;
  int exactCases = 0, failures = 0;
  // Coverage of the generator, so that a silent change cannot make the
  // property vacuous.
  std::map<BoundaryKind, int> kinds;
  int sizeOne = 0, smallerThanRadius = 0, multiGrid = 0, shorthand = 0,
      lets = 0, allFrozen = 0, dims[4] = {0, 0, 0, 0}, radii[5] = {0};
  for (int i = 0; i < kCases && failures < 5; ++i) {
    GenOptions opt;
    opt.exact = i % 2 == 0;
    RefStencil s = gen.make(opt);
    SCOPED_TRACE("case " + std::to_string(i) + " sizes " +
                 std::to_string(s.n[0]) + "x" + std::to_string(s.n[1]) + "x" +
                 std::to_string(s.n[2]) + " steps " +
                 std::to_string(s.steps) + "\n" + s.source);
    Compiled c(s.source);
    ASSERT_TRUE(c.module) << c.diagText;
    const Stencil &st = c.stencil();
    ASSERT_EQ(st.dims, s.dims);
    ASSERT_EQ(st.grids.size(), s.grids.size());

    auto got = interpret(st, s, s.steps, RefPrecision::Float64);
    auto want = naiveRun(s, s.init, s.steps);
    bool ok = true;
    for (size_t g = 0; g < s.grids.size(); ++g) {
      ASSERT_EQ(got[g].size(), want[g].size());
      if (s.exact) {
        // Dyadic weights and integer data: every operation is exact, in any
        // summation order, so the results must agree bit for bit.
        for (size_t k = 0; k < want[g].size(); ++k)
          if (!(got[g][k] == want[g][k])) {
            ADD_FAILURE() << "grid " << s.grids[g].name << " point " << k
                          << ": got " << got[g][k] << ", want "
                          << want[g][k];
            ok = false;
            break;
          }
      } else {
        double err = maxDiff(got[g], want[g]);
        double tol = 1e-12 * std::max(1.0, maxNorm(want[g]));
        if (!(err <= tol)) {
          ADD_FAILURE() << "grid " << s.grids[g].name << ": max error "
                        << err << " > " << tol;
          ok = false;
        }
      }
    }
    failures += !ok;
    exactCases += s.exact;

    for (const RefGrid &g : s.grids)
      for (const RefAxis &a : g.axes)
        ++kinds[a.kind];
    for (int a = 0; a < s.dims; ++a) {
      sizeOne += s.n[a] == 1;
      smallerThanRadius += s.n[a] < s.radius;
    }
    multiGrid += s.grids.size() > 1;
    shorthand += s.usedShorthand;
    lets += s.usedLet;
    ++dims[s.dims];
    ++radii[s.radius];
    // A fixed axis narrower than the band: nothing may change.
    for (const RefUpdate &u : s.updates)
      for (int a = 0; a < s.dims; ++a)
        if (s.grids[u.grid].axes[a].kind == BoundaryKind::Fixed &&
            s.n[a] == 1 &&
            std::any_of(u.taps.begin(), u.taps.end(),
                        [&](const RefTap &t) { return t.off[a] != 0; })) {
          ++allFrozen;
          EXPECT_EQ(got[u.grid], s.init[u.grid]);
        }
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GE(exactCases, kCases / 2);
  for (BoundaryKind k : {BoundaryKind::Dirichlet, BoundaryKind::Periodic,
                         BoundaryKind::Clamp, BoundaryKind::Fixed})
    EXPECT_GT(kinds[k], 100) << boundaryKindName(k).str();
  EXPECT_GT(sizeOne, 100);
  EXPECT_GT(smallerThanRadius, 50);
  EXPECT_GT(multiGrid, 300);
  EXPECT_GT(shorthand, 100);
  EXPECT_GT(lets, 100);
  EXPECT_GT(allFrozen, 10);
  for (int d = 1; d <= 3; ++d)
    EXPECT_GT(dims[d], 200);
  for (int r = 1; r <= 4; ++r)
    EXPECT_GT(radii[r], 150);
}

/// The reference itself, against cases worked out by hand, so that a wrong
/// reference cannot agree with a wrong interpreter unnoticed.
TEST(InterpreterProperty, NaiveReferenceOnHandWorkedCases) {
  RefStencil s;
  s.dims = 2;
  s.n = {2, 3, 1};
  RefGrid g;
  g.name = "u";
  g.updated = true;
  // Axis 0 dirichlet(7), axis 1 periodic.
  g.axes = {{BoundaryKind::Dirichlet, 7}, {BoundaryKind::Periodic, 0}};
  s.grids = {g};
  std::vector<std::vector<double>> d = {{1, 2, 3, 4, 5, 6}};
  EXPECT_EQ(naiveRead(s, d, 0, {0, -1, 0}), 3);  // wraps to (0,2)
  EXPECT_EQ(naiveRead(s, d, 0, {1, 4, 0}), 5);   // wraps to (1,1)
  EXPECT_EQ(naiveRead(s, d, 0, {-1, 1, 0}), 7);  // dirichlet
  EXPECT_EQ(naiveRead(s, d, 0, {2, -9, 0}), 7);  // dirichlet wins
  s.grids[0].axes = {{BoundaryKind::Clamp, 0}, {BoundaryKind::Dirichlet, -1}};
  EXPECT_EQ(naiveRead(s, d, 0, {5, 2, 0}), 6);   // clamps to (1,2)
  EXPECT_EQ(naiveRead(s, d, 0, {5, 3, 0}), -1);
  s.grids[0].axes = {{BoundaryKind::Dirichlet, 8}, {BoundaryKind::Dirichlet, 9}};
  EXPECT_EQ(naiveRead(s, d, 0, {-1, -1, 0}), 8); // the lowest axis wins
  // fixed along axis 1 with reach 1 below and 0 above: column 0 is frozen.
  s.grids[0].axes = {{BoundaryKind::Clamp, 0}, {BoundaryKind::Fixed, 0}};
  RefUpdate u;
  u.taps = {{0, {0, -1, 0}, 1.0}, {0, {0, 0, 0}, 10.0}};
  s.updates = {u};
  auto out = naiveStep(s, d);
  EXPECT_EQ(out[0], (std::vector<double>{1, 1 + 20, 2 + 30, 4, 4 + 50,
                                         5 + 60}));
}

/// GridType mode against Float64 mode.
///
/// Bound. Let x_k be the Float64 result after k steps (taken as exact: its
/// own error is covered by the u64 term below) and y_k the GridType one,
/// e_k = max |y_k - x_k| over all grids and points. A step evaluates
/// z = sum_j w_j r_j + c in f32, where a read r_j is a stored value or a
/// dirichlet constant (cast to f32), w_j a weight cast to f32, and then
/// rounds z to the storage type t:
///  * storage before the first step: e_0 <= u_t max|x_0| + eta_t;
///  * the f32 evaluation: every term passes through at most m = taps + 4
///    roundings (weight and boundary-value casts, a product, a division, and
///    the additions of a sum of taps + 1 summands in any tree), so
///    |fl32(z~) - z~| <= gamma_m(u32) A with A = sum|w_j| X_k + |c| and
///    X_k = max(max|x_k| + e_k, max|dirichlet value|) a bound of the reads;
///    gamma_m(u) = m u / (1 - m u);
///  * exact propagation of the old error: |z~ - z| <= sum|w_j| e_k;
///  * the Float64 reference's own rounding: gamma_m(u64) A;
///  * rounding to t: u_t |fl32(z~)| + eta_t <= u_t (1 + gamma_m) A + eta_t,
///    with eta_t half the smallest subnormal spacing of t (f16: 2^-25).
///  A frozen (fixed) point keeps its error, at most e_k. Hence
///    e_{k+1} <= max(e_k, max_u [W_u e_k + (gamma_m(u32) + gamma_m(u64)
///               + u_t (1 + gamma_m(u32))) A_u + eta_t]),
///  where W_u = sum over the update's taps of |w_j|.
TEST(InterpreterProperty, GridTypeStaysWithinDerivedBoundOfFloat64) {
  std::mt19937_64 rng(0xb0a4dULL);
  StencilGen gen(rng);
  const int kCasesPerType = 400;
  for (ElemType t : {ElemType::F32, ElemType::F16, ElemType::BF16}) {
    int differing = 0, failures = 0;
    for (int i = 0; i < kCasesPerType && failures < 3; ++i) {
      bool differs = false;
      GenOptions opt;
      opt.exact = false;
      opt.types = {t};
      RefStencil s = gen.make(opt);
      SCOPED_TRACE(elemTypeName(t).str() + " case " + std::to_string(i) +
                   "\n" + s.source);
      Compiled c(s.source);
      ASSERT_TRUE(c.module) << c.diagText;
      const Stencil &st = c.stencil();
      ASSERT_EQ(st.elemType, t);

      Interpreter ref(st, s.n, {}, RefPrecision::Float64);
      Interpreter low(st, s.n, {}, RefPrecision::GridType);
      double x0 = 0, bmax = 0;
      std::vector<int> gridIndex;
      for (size_t g = 0; g < s.grids.size(); ++g) {
        int gi = st.findGrid(s.grids[g].name);
        gridIndex.push_back(gi);
        ref.setGrid(gi, s.init[g]);
        low.setGrid(gi, s.init[g]);
        x0 = std::max(x0, maxNorm(s.init[g]));
        for (const RefAxis &a : s.grids[g].axes)
          bmax = std::max(bmax, std::fabs(a.value));
      }
      double ut = unitRoundoff(t), u32 = std::ldexp(1.0, -24),
             u64 = std::ldexp(1.0, -53);
      double eta = t == ElemType::F16    ? std::ldexp(1.0, -25)
                   : t == ElemType::BF16 ? std::ldexp(1.0, -134)
                                         : std::ldexp(1.0, -150);
      auto gamma = [](int m, double u) { return m * u / (1 - m * u); };
      double e = ut * x0 + eta;
      bool ok = true;
      for (int k = 0; k <= s.steps && ok; ++k) {
        if (k > 0) {
          // Bound of the reads before this step, from the old values.
          double xk = 0;
          for (size_t g = 0; g < s.grids.size(); ++g)
            xk = std::max(xk, maxNorm(ref.getGrid(gridIndex[g])));
          double X = std::max(xk + e, bmax);
          double next = e;
          for (const RefUpdate &u : s.updates) {
            double W = 0;
            for (const RefTap &tp : u.taps)
              W += std::fabs(tp.w);
            double A = W * X + std::fabs(u.constant);
            int m = u.numRoundings;
            next = std::max(next, W * e +
                                      (gamma(m, u32) + gamma(m, u64) +
                                       ut * (1 + gamma(m, u32))) *
                                          A +
                                      eta);
          }
          e = next;
          ref.run(1);
          low.run(1);
        }
        for (size_t g = 0; g < s.grids.size(); ++g) {
          const std::vector<double> &y = low.getGrid(gridIndex[g]);
          const std::vector<double> &x = ref.getGrid(gridIndex[g]);
          for (size_t p = 0; p < y.size(); ++p) {
            if (roundTo(t, y[p]) != y[p]) {
              ADD_FAILURE() << "step " << k << " grid " << g << " point "
                            << p << ": " << y[p] << " is not an "
                            << elemTypeName(t).str();
              ok = false;
              break;
            }
          }
          double err = maxDiff(y, x);
          differs = differs || err > 0;
          if (!(err <= e)) {
            ADD_FAILURE() << "step " << k << " grid " << g << ": error "
                          << err << " exceeds the bound " << e;
            ok = false;
          }
        }
      }
      failures += !ok;
      differing += differs;
    }
    EXPECT_EQ(failures, 0) << elemTypeName(t).str();
    // GridType mode must actually round: most cases differ from Float64.
    EXPECT_GT(differing, kCasesPerType / 2) << elemTypeName(t).str();
  }
}

/// With f64 grids GridType mode computes in double in the same order as
/// Float64 mode: the results are identical.
TEST(InterpreterProperty, GridTypeWithF64GridsIsFloat64) {
  std::mt19937_64 rng(64);
  StencilGen gen(rng);
  for (int i = 0; i < 100; ++i) {
    GenOptions opt;
    opt.types = {ElemType::F64};
    RefStencil s = gen.make(opt);
    SCOPED_TRACE(s.source);
    Compiled c(s.source);
    ASSERT_TRUE(c.module) << c.diagText;
    auto a = interpret(c.stencil(), s, s.steps, RefPrecision::Float64);
    auto b = interpret(c.stencil(), s, s.steps, RefPrecision::GridType);
    for (size_t g = 0; g < a.size(); ++g)
      ASSERT_EQ(0, std::memcmp(a[g].data(), b[g].data(),
                               a[g].size() * sizeof(double)));
  }
}

/// Running k steps at once equals k runs of one step.
TEST(InterpreterProperty, RunIsRepeatedSingleSteps) {
  std::mt19937_64 rng(7);
  StencilGen gen(rng);
  for (int i = 0; i < 100; ++i) {
    RefStencil s = gen.make(GenOptions{});
    SCOPED_TRACE(s.source);
    Compiled c(s.source);
    ASSERT_TRUE(c.module) << c.diagText;
    for (RefPrecision prec : {RefPrecision::Float64, RefPrecision::GridType}) {
      auto all = interpret(c.stencil(), s, s.steps, prec);
      Interpreter in(c.stencil(), s.n, {}, prec);
      for (size_t g = 0; g < s.grids.size(); ++g)
        in.setGrid(c.stencil().findGrid(s.grids[g].name), s.init[g]);
      for (int k = 0; k < s.steps; ++k)
        in.run(1);
      for (size_t g = 0; g < s.grids.size(); ++g)
        EXPECT_EQ(in.getGrid(c.stencil().findGrid(s.grids[g].name)), all[g]);
    }
  }
}

} // namespace
