//===- RandomStencil.h - Random linear stencils and a naive reference -*- C++ -*-===//
//
// A generator of random linear stencils as .st source text, together with
// the taps it meant to write (grid, offset, weight) and a naive reference
// executor of those taps. The reference is written from the boundary rules
// of the language (dirichlet / periodic / clamp / fixed) and shares no code
// with the Interpreter, LinearForm or Sema: it never looks at the IR.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_TEST_UNIT_IR_RANDOMSTENCIL_H
#define STENCILC_TEST_UNIT_IR_RANDOMSTENCIL_H

#include "stencilc/IR/ElemType.h"
#include "stencilc/IR/Stencil.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace stencilc::test {

using Pos = std::array<int64_t, kMaxDims>;
using Key = std::pair<int, Offset>; ///< (grid, offset)

struct RefAxis {
  BoundaryKind kind = BoundaryKind::Dirichlet;
  double value = 0;
};

struct RefGrid {
  std::string name;
  bool updated = false;
  std::vector<RefAxis> axes;
};

/// One read written in the source. `w` is the coefficient the source means
/// (a parameter expression evaluated in double where there are parameters).
struct RefTap {
  int grid = 0;
  Offset off{0, 0, 0};
  double w = 0;
};

struct RefUpdate {
  int grid = 0;
  std::vector<RefTap> taps; ///< Distinct (grid, offset) keys.
  double constant = 0;
  int numRoundings = 0; ///< Longest chain of roundings of one term (see
                        ///< the GridType test).
};

struct RefParam {
  std::string name;
  ElemType type = ElemType::F64;
  double value = 0; ///< Already representable in `type`.
};

struct RefStencil {
  int dims = 1;
  int radius = 1;
  ElemType type = ElemType::F64;
  std::vector<RefGrid> grids;
  std::vector<RefParam> params;
  std::vector<RefUpdate> updates;
  Pos n{1, 1, 1};
  int steps = 1;
  bool exact = false; ///< Dyadic weights, small-integer data: exact in double.
  bool usedShorthand = false;
  bool usedLet = false;
  std::vector<std::vector<double>> init; ///< Initial data per grid.
  std::string source;

  int64_t points() const {
    int64_t p = 1;
    for (int a = 0; a < dims; ++a)
      p *= n[a];
    return p;
  }
  std::vector<double> paramValues() const {
    std::vector<double> v;
    for (const RefParam &p : params)
      v.push_back(p.value);
    return v;
  }
};

//===----------------------------------------------------------------------===//
// Naive reference
//===----------------------------------------------------------------------===//

/// The point the language says a read of grid `g` at `q` sees, or the
/// dirichlet value. Written from the rules, with loops instead of modulo.
inline double naiveRead(const RefStencil &s,
                        const std::vector<std::vector<double>> &data, int g,
                        Pos q) {
  const RefGrid &grid = s.grids[g];
  // Dirichlet: the lowest axis that is left (and is dirichlet) decides.
  for (int a = 0; a < s.dims; ++a) {
    bool outside = q[a] < 0 || q[a] > s.n[a] - 1;
    if (outside && grid.axes[a].kind == BoundaryKind::Dirichlet)
      return grid.axes[a].value;
  }
  for (int a = 0; a < s.dims; ++a) {
    if (grid.axes[a].kind == BoundaryKind::Periodic) {
      while (q[a] < 0)
        q[a] += s.n[a];
      while (q[a] >= s.n[a])
        q[a] -= s.n[a];
    } else { // clamp, and the reads of a fixed grid
      if (q[a] < 0)
        q[a] = 0;
      if (q[a] > s.n[a] - 1)
        q[a] = s.n[a] - 1;
    }
  }
  // Row-major, axis 0 slowest.
  int64_t idx = 0, stride = 1;
  for (int a = s.dims - 1; a >= 0; --a) {
    idx += q[a] * stride;
    stride *= s.n[a];
  }
  return data[g][idx];
}

/// One time step of every update, all from the old values.
inline std::vector<std::vector<double>>
naiveStep(const RefStencil &s, const std::vector<std::vector<double>> &data) {
  std::vector<std::vector<double>> out = data;
  for (const RefUpdate &u : s.updates) {
    // Width of the frozen band of a fixed axis: how far the update reaches.
    std::array<int64_t, kMaxDims> lo{0, 0, 0}, hi{0, 0, 0};
    for (const RefTap &t : u.taps)
      for (int a = 0; a < s.dims; ++a) {
        lo[a] = std::max<int64_t>(lo[a], -t.off[a]);
        hi[a] = std::max<int64_t>(hi[a], t.off[a]);
      }
    const RefGrid &grid = s.grids[u.grid];
    Pos p{0, 0, 0};
    int64_t idx = 0;
    for (int64_t i0 = 0; i0 < (s.dims > 0 ? s.n[0] : 1); ++i0)
      for (int64_t i1 = 0; i1 < (s.dims > 1 ? s.n[1] : 1); ++i1)
        for (int64_t i2 = 0; i2 < (s.dims > 2 ? s.n[2] : 1); ++i2, ++idx) {
          p = {i0, i1, i2};
          bool frozen = false;
          for (int a = 0; a < s.dims; ++a)
            if (grid.axes[a].kind == BoundaryKind::Fixed &&
                (p[a] < lo[a] || p[a] + hi[a] > s.n[a] - 1))
              frozen = true;
          if (frozen)
            continue; // keeps data[u.grid][idx]
          double acc = u.constant;
          for (const RefTap &t : u.taps) {
            Pos q = p;
            for (int a = 0; a < s.dims; ++a)
              q[a] += t.off[a];
            acc += t.w * naiveRead(s, data, t.grid, q);
          }
          out[u.grid][idx] = acc;
        }
  }
  return out;
}

inline std::vector<std::vector<double>>
naiveRun(const RefStencil &s, std::vector<std::vector<double>> data,
         int steps) {
  for (int k = 0; k < steps; ++k)
    data = naiveStep(s, data);
  return data;
}

//===----------------------------------------------------------------------===//
// Generator
//===----------------------------------------------------------------------===//

/// Shortest text that reads back as exactly `v`.
inline std::string num(double v) {
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v)
      return buf;
  }
  return buf;
}

struct GenOptions {
  bool exact = false;       ///< Dyadic weights and integer data.
  bool withParams = false;  ///< Parameter expressions in coefficients.
  std::vector<ElemType> types{ElemType::F16, ElemType::BF16, ElemType::F32,
                              ElemType::F64};
  int maxGrids = 3;
  int maxSteps = 5;
};

class StencilGen {
public:
  explicit StencilGen(std::mt19937_64 &rng) : rng(rng) {}

  int uni(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  }
  double unif(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  }
  bool coin(double p) { return std::bernoulli_distribution(p)(rng); }
  template <typename T> const T &pick(const std::vector<T> &v) {
    return v[uni(0, static_cast<int>(v.size()) - 1)];
  }

  RefStencil make(const GenOptions &opt) {
    RefStencil s;
    s.exact = opt.exact;
    s.dims = uni(1, 3);
    s.radius = uni(1, 4);
    s.type = pick(opt.types);
    s.steps = uni(1, opt.maxSteps);
    makeSizes(s);
    int numGrids = uni(1, opt.maxGrids);
    static const char *const kNames[] = {"u", "v", "w"};
    for (int g = 0; g < numGrids; ++g) {
      RefGrid grid;
      grid.name = kNames[g];
      grid.updated = g == 0 || coin(0.5);
      s.grids.push_back(grid);
    }
    for (RefGrid &g : s.grids)
      for (int a = 0; a < s.dims; ++a)
        g.axes.push_back(randomAxis(g.updated, opt.exact));
    if (opt.withParams)
      makeParams(s);

    std::string body;
    for (int g = 0; g < numGrids; ++g)
      if (s.grids[g].updated)
        body += makeUpdate(s, g, opt);

    // Declarations: grids (sometimes in one list), params, boundaries.
    std::string src = "stencil s" + std::to_string(counter++) + " {\n";
    std::string ty = elemTypeName(s.type).str();
    std::string dimText = "[" + std::to_string(s.dims) + "]";
    if (coin(0.5)) {
      src += "  grid ";
      for (int g = 0; g < numGrids; ++g)
        src += (g ? ", " : "") + s.grids[g].name;
      src += " : " + ty + dimText + ";\n";
    } else {
      for (int g = 0; g < numGrids; ++g)
        src += "  grid " + s.grids[g].name + " : " + ty + dimText + ";\n";
    }
    for (const RefParam &p : s.params)
      src += "  param " + p.name + " : " + elemTypeName(p.type).str() +
             " = " + num(p.value) + ";\n";
    for (const RefGrid &g : s.grids) {
      bool same = std::all_of(g.axes.begin(), g.axes.end(),
                              [&](const RefAxis &x) {
                                return x.kind == g.axes[0].kind &&
                                       x.value == g.axes[0].value;
                              });
      src += "  boundary " + g.name + " : ";
      int count = same && coin(0.6) ? 1 : s.dims;
      for (int a = 0; a < count; ++a)
        src += (a ? ", " : "") + axisText(g.axes[a]);
      src += ";\n";
    }
    s.source = src + body + "}\n";

    if (opt.exact)
      s.steps = std::min(s.steps, exactStepsCap(s));
    // Initial data.
    for (int g = 0; g < numGrids; ++g) {
      std::vector<double> d(s.points());
      for (double &x : d)
        x = opt.exact ? uni(-8, 8) : unif(-1, 1);
      s.init.push_back(d);
    }
    return s;
  }

  /// Smallest m with x * 2^m an integer (x is a dyadic fraction).
  static int denomBits(double x) {
    int m = 0;
    while (x != std::floor(x) && m < 60) {
      x *= 2;
      ++m;
    }
    return m;
  }

  /// The most steps for which every value, and every partial sum of any
  /// order, is a multiple of 2^-(D*steps) below 2^(52-D*steps) in
  /// magnitude, so that double arithmetic is exact: D is the largest
  /// denominator exponent of a weight, constant or boundary value and B
  /// bounds the magnitudes, B' = max(B, sum|w| * B + |c|) per step.
  static int exactStepsCap(const RefStencil &s) {
    int D = 0;
    double B = 8; // |data| <= 8
    for (const RefGrid &g : s.grids)
      for (const RefAxis &a : g.axes) {
        D = std::max(D, denomBits(a.value));
        B = std::max(B, std::fabs(a.value));
      }
    for (const RefUpdate &u : s.updates) {
      D = std::max(D, denomBits(u.constant));
      for (const RefTap &t : u.taps)
        D = std::max(D, denomBits(t.w));
    }
    int steps = 0;
    while (steps < 5) {
      double next = B;
      for (const RefUpdate &u : s.updates) {
        double L = 0;
        for (const RefTap &t : u.taps)
          L += std::fabs(t.w);
        // Partial sums are bounded by sum |w| B + |c| as well.
        next = std::max(next, L * B + std::fabs(u.constant));
      }
      if (std::log2(next) + D * (steps + 1) >= 52)
        break;
      B = next;
      ++steps;
    }
    return std::max(steps, 1);
  }

private:
  void makeSizes(RefStencil &s) {
    int r = s.radius;
    for (int a = 0; a < s.dims; ++a) {
      int cap = s.dims == 3 ? 7 : s.dims == 2 ? 12 : 24;
      std::vector<int> choices = {1, 1, 2, std::max(1, r - 1), r, r + 1,
                                  2 * r, 2 * r + 1, 2 * r + 3};
      int v = coin(0.7) ? pick(choices) : uni(1, cap);
      s.n[a] = std::min(v, cap);
    }
  }

  RefAxis randomAxis(bool updated, bool exact) {
    RefAxis b;
    int k = uni(0, updated ? 3 : 2);
    b.kind = k == 0   ? BoundaryKind::Dirichlet
             : k == 1 ? BoundaryKind::Periodic
             : k == 2 ? BoundaryKind::Clamp
                      : BoundaryKind::Fixed;
    if (b.kind == BoundaryKind::Dirichlet)
      b.value = exact ? uni(-8, 8) / double(1 << uni(0, 2)) : unif(-1, 1);
    return b;
  }

  std::string axisText(const RefAxis &b) {
    switch (b.kind) {
    case BoundaryKind::Dirichlet: {
      double v = b.value;
      // Sometimes as a constant expression: v = k / 4 is exact.
      if (coin(0.3) && v * 4 == std::floor(v * 4))
        return "dirichlet(" + num(v * 4) + " / 4)";
      return "dirichlet(" + num(v) + ")";
    }
    case BoundaryKind::Periodic:
      return "periodic";
    case BoundaryKind::Clamp:
      return "clamp";
    case BoundaryKind::Fixed:
      return "fixed";
    }
    return "?";
  }

  void makeParams(RefStencil &s) {
    static const char *const kNames[] = {"a", "b", "c"};
    int count = uni(1, 3);
    for (int i = 0; i < count; ++i) {
      RefParam p;
      p.name = kNames[i];
      p.type = pick(std::vector<ElemType>{ElemType::F16, ElemType::BF16,
                                          ElemType::F32, ElemType::F64});
      // Positive and away from zero so that it can divide and sqrt.
      p.value = roundTo(p.type, unif(0.25, 2.0));
      s.params.push_back(p);
    }
  }

  /// A nonzero weight: k / 2^m in exact mode, else uniform, scaled by
  /// `scale` so the update does not blow up over several steps.
  double weight(bool exact, double scale) {
    if (exact) {
      int k = 0;
      while (k == 0)
        k = uni(-4, 4);
      return k / double(1 << uni(0, 3));
    }
    double w = 0;
    while (w == 0)
      w = unif(-1, 1) * scale;
    return w;
  }

  /// The text of a read of `g` at `off`.
  std::string readText(const RefStencil &s, int g, const Offset &off) {
    bool centre = off[0] == 0 && off[1] == 0 && off[2] == 0;
    const std::string &name = s.grids[g].name;
    if (centre && coin(0.5))
      return name;
    std::string t = name + "[";
    for (int a = 0; a < s.dims; ++a)
      t += (a ? ", " : "") + std::to_string(off[a]);
    return t + "]";
  }

  struct Term {
    bool neg = false;
    std::string body; ///< A product with a non-negative value (or a
                      ///< parameter expression of any sign when !numeric).
  };

  /// A coefficient that involves parameters: text and value.
  std::pair<std::string, double> paramCoeff(const RefStencil &s) {
    const RefParam &p = pick(s.params);
    const RefParam &q = pick(s.params);
    double a = p.value, b = q.value;
    int k = uni(1, 3);
    switch (uni(0, 9)) {
    case 0:
      return {p.name, a};
    case 1:
      return {p.name + " * " + q.name, a * b};
    case 2:
      return {"(" + p.name + " - " + std::to_string(k) + ")", a - k};
    case 3:
      return {std::to_string(k) + " / " + q.name, k / b};
    case 4:
      return {"pow(" + p.name + ", 2)", a * a};
    case 5:
      return {"sqrt(" + p.name + ")", std::sqrt(a)};
    case 6:
      return {"abs(" + p.name + " - 1)", std::fabs(a - 1)};
    case 7:
      return {"min(" + p.name + ", " + q.name + ")", std::fmin(a, b)};
    case 8:
      return {"max(" + p.name + ", 0.75)", std::fmax(a, 0.75)};
    default:
      return {"(-" + p.name + ")", -a};
    }
  }

  Term numericTerm(const std::string &read, double w, bool exact) {
    Term t;
    t.neg = w < 0;
    double m = std::fabs(w);
    // Power-of-two denominator D with m * D = K integer.
    int D = 0;
    if (exact)
      for (int d : {1, 2, 4, 8})
        if (m * d == std::floor(m * d)) {
          D = d;
          break;
        }
    int style = uni(0, 4);
    if (m == 1 && style < 2)
      t.body = read;
    else if (style == 0 || style == 1)
      t.body = num(m) + " * " + read;
    else if (style == 2)
      t.body = read + " * " + num(m);
    else if (D > 1 && style == 3)
      t.body = num(m * D) + " * " + read + " / " + std::to_string(D);
    else if (D > 1)
      t.body = "(" + num(m * D) + " / " + std::to_string(D) + ") * " + read;
    else
      t.body = num(m) + " * " + read;
    return t;
  }

  static std::string join(const std::vector<Term> &terms) {
    std::string out;
    for (size_t i = 0; i < terms.size(); ++i) {
      if (i == 0)
        out += terms[i].neg ? "-" + terms[i].body : terms[i].body;
      else
        out += (terms[i].neg ? " - " : " + ") + terms[i].body;
    }
    return out;
  }

  /// Adds the taps of a box or star shorthand and returns its text.
  std::string shorthand(RefStencil &s, int g, std::map<Key, double> &taps,
                        bool exact, double &weightSum) {
    bool box = coin(0.5);
    int maxR = box ? (s.dims == 3 ? 2 : s.dims == 2 ? 3 : 4) : 4;
    int r = uni(1, std::min(maxR, s.radius));
    std::vector<Offset> shape;
    if (box) {
      int side = 2 * r + 1;
      int count = 1;
      for (int a = 0; a < s.dims; ++a)
        count *= side;
      for (int i = 0; i < count; ++i) {
        Offset off{0, 0, 0};
        int rest = i;
        for (int a = s.dims - 1; a >= 0; --a) {
          off[a] = rest % side - r;
          rest /= side;
        }
        shape.push_back(off);
      }
    } else {
      shape.push_back({0, 0, 0});
      for (int a = 0; a < s.dims; ++a)
        for (int k = -r; k <= r; ++k)
          if (k) {
            Offset off{0, 0, 0};
            off[a] = k;
            shape.push_back(off);
          }
    }
    std::string name = s.grids[g].name;
    std::string text = (box ? "box(" : "star(") + name + ", " +
                       std::to_string(r);
    std::vector<double> w(shape.size(), 1.0);
    int form = uni(0, 3); // 0: no weights, 1: scalar, 2: per point table,
                          // 3: per distance table (star only)
    if (form == 0 && shape.size() > 9)
      form = 2;
    if (form == 1) {
      double c = exact ? 1.0 / (1 << uni(2, 4)) * (coin(0.5) ? 1 : -1)
                       : weight(false, 1.0 / shape.size());
      std::fill(w.begin(), w.end(), c);
      text += ", " + num(c);
    } else if (form == 2 || (form == 3 && box)) {
      // Sparse: most entries are holes (0), at most 8 are not.
      int nonzero = std::min<int>(uni(1, 8), shape.size());
      std::fill(w.begin(), w.end(), 0.0);
      for (int i = 0; i < nonzero; ++i)
        w[uni(0, shape.size() - 1)] = weight(exact, 1.0 / 8);
      text += ", [";
      for (size_t i = 0; i < w.size(); ++i)
        text += (i ? ", " : "") + num(w[i]);
      text += "]";
    } else if (form == 3) {
      std::vector<double> byDist(r + 1);
      for (double &x : byDist)
        x = coin(0.25) ? 0.0 : weight(exact, 1.0 / (2 * s.dims * r + 1));
      for (size_t i = 0; i < shape.size(); ++i) {
        int dist = 0;
        for (int a = 0; a < s.dims; ++a)
          dist += std::abs(shape[i][a]);
        w[i] = byDist[dist];
      }
      text += ", [";
      for (size_t i = 0; i < byDist.size(); ++i)
        text += (i ? ", " : "") + num(byDist[i]);
      text += "]";
    }
    text += ")";
    for (size_t i = 0; i < shape.size(); ++i)
      if (w[i] != 0) { // a zero weight is a hole: no read at all
        taps[{g, shape[i]}] = w[i];
        weightSum += std::fabs(w[i]);
      }
    s.usedShorthand = true;
    return text;
  }

  std::string makeUpdate(RefStencil &s, int g, const GenOptions &opt) {
    RefUpdate u;
    u.grid = g;
    std::map<Key, double> taps;
    std::map<Key, std::string> coeffText; // parameter coefficients
    std::vector<std::string> parts;       // top-level summands
    std::string lets;
    double weightSum = 0;
    int numGrids = static_cast<int>(s.grids.size());

    if (coin(0.25)) {
      int sg = uni(0, numGrids - 1);
      parts.push_back(shorthand(s, sg, taps, opt.exact, weightSum));
    }

    // Explicit taps: a random sparse subset of the box of the radius, one
    // of them at distance `radius` along some axis.
    int side = 2 * s.radius + 1;
    int boxSize = 1;
    for (int a = 0; a < s.dims; ++a)
      boxSize *= side;
    bool oneSided = coin(0.25); // upwind-like: offsets >= 0 on every axis
    int want = taps.empty() ? uni(1, std::min(10, boxSize)) : uni(0, 4);
    std::vector<Key> explicitKeys;
    for (int tries = 0; tries < 200 && (int)explicitKeys.size() < want;
         ++tries) {
      int gg = coin(0.7) ? g : uni(0, numGrids - 1);
      Offset off{0, 0, 0};
      for (int a = 0; a < s.dims; ++a)
        off[a] = uni(oneSided ? 0 : -s.radius, s.radius);
      if (explicitKeys.empty() && tries == 0) {
        int a = uni(0, s.dims - 1);
        off[a] = oneSided || coin(0.5) ? s.radius : -s.radius;
      }
      Key k{gg, off};
      if (taps.count(k))
        continue;
      explicitKeys.push_back(k);
      taps[k] = 0; // placeholder
    }
    double scale = 1.0 / std::max<size_t>(1, explicitKeys.size());
    std::vector<Term> terms;
    for (const Key &k : explicitKeys) {
      std::string rd = readText(s, k.first, k.second);
      if (opt.withParams && coin(0.5)) {
        auto [text, value] = paramCoeff(s);
        taps[k] = value;
        Term t;
        t.body = coin(0.5) ? "(" + text + ") * " + rd
                           : rd + " * " + text;
        terms.push_back(t);
        weightSum += std::fabs(value);
      } else {
        double w = weight(opt.exact, scale);
        taps[k] = w;
        terms.push_back(numericTerm(rd, w, opt.exact));
        weightSum += std::fabs(w);
      }
    }
    std::shuffle(terms.begin(), terms.end(), rng);

    // Group some of the terms: into a let, or under a common factor.
    size_t i = 0;
    while (i < terms.size()) {
      size_t len = std::min<size_t>(terms.size() - i, uni(1, 4));
      std::vector<Term> chunk(terms.begin() + i, terms.begin() + i + len);
      i += len;
      int how = uni(0, 5);
      if (how == 0 && len > 0) {
        std::string name =
            "t" + std::to_string(g) + "_" + std::to_string(letCounter++);
        lets += "  let " + name + " = " + join(chunk) + ";\n";
        parts.push_back(name);
        s.usedLet = true;
      } else if (how == 1) {
        parts.push_back("(" + join(chunk) + ")");
      } else {
        parts.push_back(join(chunk));
      }
    }

    // An affine constant, sometimes a parameter.
    if (coin(0.3)) {
      if (opt.withParams && coin(0.5)) {
        const RefParam &p = pick(s.params);
        u.constant = p.value;
        parts.push_back(p.name);
      } else {
        u.constant =
            opt.exact ? uni(-4, 4) / 2.0 : unif(-0.5, 0.5);
        parts.push_back("(" + num(u.constant) + ")");
      }
    }
    std::shuffle(parts.begin(), parts.end(), rng);
    std::string expr;
    for (size_t j = 0; j < parts.size(); ++j)
      expr += (j ? " + " : "") + parts[j];

    for (const auto &[k, w] : taps)
      u.taps.push_back(RefTap{k.first, k.second, w});
    // Per term: weight literal, a possible division, the product; then at
    // most one addition per tap and one for the constant.
    u.numRoundings = static_cast<int>(taps.size()) + 4;
    s.updates.push_back(u);
    return lets + "  " + s.grids[g].name + "' = " + expr + ";\n";
  }

  std::mt19937_64 &rng;
  int counter = 0;
  int letCounter = 0;
};

} // namespace stencilc::test

#endif // STENCILC_TEST_UNIT_IR_RANDOMSTENCIL_H
