//===- LayoutSearch.cpp - Enumerating layouts, shapes and fusion depths ---===//

#include "stencilc/Transforms/LayoutSearch.h"
#include "stencilc/Transforms/Decompose.h"
#include "stencilc/Transforms/Flatten.h"
#include "stencilc/Transforms/LayoutMorph.h"
#include "stencilc/Transforms/PatchLayout.h"
#include "stencilc/Transforms/SparsityConversion.h"
#include "stencilc/Transforms/StridedSwap.h"
#include "stencilc/Transforms/TemporalFusion.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace stencilc;

namespace {

/// What one way of building a program needs to be redone on the chosen
/// candidate.
struct Recipe {
  MatrixLayout layout;
  int r1 = 0, r2 = 0;
  bool sparse = false, stridedSwap = false;
};

/// Builds the layout (and its sparsity) of `recipe` on `s`, which already
/// carries the fusion of the candidate. Errors go to `diags`, which the
/// search points at a scratch stream: a candidate that cannot be built is
/// simply not a candidate.
bool build(Stencil &s, const Recipe &recipe, int arch,
           DiagnosticEngine &diags) {
  bool ok = false;
  switch (recipe.layout) {
  case MatrixLayout::Flatten:
    ok = flattenStencil(s, diags, arch);
    break;
  case MatrixLayout::Decompose:
    ok = decomposeStencil(s, recipe.r1, diags, arch);
    break;
  case MatrixLayout::Morph:
    ok = morphLayout(s, recipe.r1, recipe.r2, diags, arch);
    break;
  }
  if (!ok || !recipe.sparse)
    return ok;
  return recipe.stridedSwap ? stridedSwap(s, diags)
                            : convertSparsity(s, 0, diags);
}

double peakFor(MmaType t, const LayoutSearchOptions &o) {
  switch (t) {
  case MmaType::F16:
  case MmaType::BF16:
    return o.peakF16;
  case MmaType::TF32:
    return o.peakTF32;
  case MmaType::F64:
    return o.peakF64;
  }
  return o.peakF64;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

LayoutCandidate score(const Stencil &s, const MatrixProgram &p,
                      const FragmentShape &shape, const Recipe &recipe,
                      const LayoutSearchOptions &o, int64_t points) {
  LayoutCandidate c;
  c.layout = recipe.layout;
  c.r1 = recipe.r1;
  c.r2 = recipe.r2;
  c.stridedSwap = recipe.stridedSwap;
  c.steps = p.steps;
  c.alpha = p.alpha;
  c.shape = shape;
  c.pattern = p.pattern;
  c.mPrime = p.rows();
  c.kPrime = static_cast<int>(ceilDiv(p.cols(), shape.k) * shape.k);
  c.nPrime = ceilDiv(points, c.mPrime);
  c.nMma = ceilDiv(c.mPrime, shape.m) * (c.kPrime / shape.k) *
           ceilDiv(c.nPrime, shape.n);
  int nonzeros = 0;
  for (int v : p.a)
    nonzeros += v >= 0;
  c.S = static_cast<double>(nonzeros) /
        (static_cast<double>(ceilDiv(c.mPrime, shape.m) * shape.m) * c.kPrime);
  c.padding =
      p.stats.matchPadding + p.stats.groupPadding + (c.kPrime - p.cols());
  double rate = peakFor(shape.type, o) * (shape.sparse ? 2 : 1) /
                (2.0 * shape.m * shape.n * shape.k);
  c.tCompute = c.nMma / rate;
  unsigned gridBytes = elemTypeBytes(s.grids[p.grid].type);
  unsigned opBytes = mmaTypeBytes(shape.type);
  c.globalBytes = 2.0 * points * gridBytes;
  // Eq. 10 per direction; reads and writes of shared memory both count.
  c.sharedBytes = 2.0 * c.kPrime *
                  (c.mPrime / 2.0 + static_cast<double>(c.nPrime)) * opBytes;
  c.tMemory = std::max(c.globalBytes / o.bwGlobal, c.sharedBytes / o.bwShared);
  c.gstencils = points * static_cast<double>(c.steps) /
                std::max(c.tCompute, c.tMemory) / 1e9;
  return c;
}

} // namespace

std::vector<LayoutCandidate>
stencilc::searchLayouts(const Stencil &s, const LayoutSearchOptions &o,
                        DiagnosticEngine &diags) {
  std::vector<LayoutCandidate> out;
  if (!checkArch(s, "layout-search", o.arch, diags))
    return out;
  std::array<int64_t, 3> sizes = o.sizes;
  static const int64_t benchmark[] = {10240000, 10240, 512};
  int64_t points = 1;
  for (int a = 0; a < s.dims; ++a) {
    if (sizes[a] <= 0)
      sizes[a] = benchmark[s.dims - 1];
    points *= sizes[a];
  }
  int radius = std::max(1, s.radius());
  int maxSteps = std::max(1, kMaxRadius / radius);
  if (o.maxSteps > 0)
    maxSteps = std::min(maxSteps, o.maxSteps);

  // Candidates that cannot be built are skipped silently; their reasons go
  // to a scratch engine.
  std::string scratch;
  llvm::raw_string_ostream scratchStream(scratch);
  DiagnosticEngine quiet(diags.getSourceMgr(), scratchStream);

  std::vector<Recipe> recipes;
  for (bool sparse : {false, true}) {
    recipes.push_back({MatrixLayout::Flatten, 0, 0, sparse, false});
    for (int rows : {0, 16}) {
      recipes.push_back({MatrixLayout::Decompose, rows, 0, sparse, false});
      if (sparse)
        recipes.push_back({MatrixLayout::Decompose, rows, 0, true, true});
    }
    for (int r1 = 1; r1 <= o.maxR; ++r1)
      for (int r2 = 1; r2 <= (s.dims == 1 ? 1 : o.maxR); ++r2)
        if (r1 * r2 <= 64)
          recipes.push_back({MatrixLayout::Morph, r1, r2, sparse, false});
  }

  for (int t = 1; t <= maxSteps; ++t) {
    Stencil fused = s;
    fused.matrix.reset();
    fused.layoutCandidates.clear();
    if (t > 1 && !fuseTemporally(fused, t, quiet))
      break;
    // The input patch a recipe gathers: larger ones would not fit a
    // block's registers and shared memory, and would make the general
    // matching (blossom, cubic) slow.
    for (const Recipe &recipe : recipes) {
      int64_t inputs = 1;
      for (int a = 0; a < s.dims; ++a) {
        int patch = 1;
        if (recipe.layout == MatrixLayout::Morph)
          patch = a == s.dims - 1 ? recipe.r1 : a == s.dims - 2 ? recipe.r2 : 1;
        if (recipe.layout == MatrixLayout::Decompose && a == s.dims - 1)
          patch = recipe.r1 ? recipe.r1 : 2 * radius * t + 2;
        inputs *= patch + 2 * radius * t;
      }
      if (inputs > o.maxColumns)
        continue;
      Stencil trial = fused;
      if (!build(trial, recipe, o.arch, quiet))
        continue;
      const MatrixProgram &p = *trial.matrix;
      for (const FragmentShape &shape :
           legalFragments(p.shape.type, recipe.sparse, o.arch))
        out.push_back(score(s, p, shape, recipe, o, points));
    }
  }
  if (out.empty()) {
    // An engine that already holds an error (the cost model's scratch one)
    // gets no second; either way there is no candidate to mark.
    if (!diags.hasErrors())
      diags.error(s.loc, "layout search found no tensor-core layout for "
                         "stencil '" +
                             s.name +
                             "'; it needs a linear stencil of one grid "
                             "without a constant term");
    return out;
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const LayoutCandidate &a, const LayoutCandidate &b) {
                     // Equal rates (both memory bound): fewer MMAs leave
                     // more slack.
                     if (a.gstencils != b.gstencils)
                       return a.gstencils > b.gstencils;
                     return a.tCompute < b.tCompute;
                   });
  out.front().chosen = true;
  return out;
}

bool stencilc::layoutSearch(Stencil &s, const LayoutSearchOptions &o,
                            DiagnosticEngine &diags) {
  std::vector<LayoutCandidate> candidates = searchLayouts(s, o, diags);
  if (candidates.empty())
    return false;
  const LayoutCandidate &best = candidates.front();
  Recipe recipe{best.layout, best.r1, best.r2,
                best.pattern != SparsityPattern::Dense, best.stridedSwap};
  s.matrix.reset();
  s.fused.reset();
  if (best.steps > 1 && !fuseTemporally(s, best.steps, diags))
    return false;
  if (!build(s, recipe, o.arch, diags))
    return false;
  s.matrix->shape = best.shape;
  computeMatrixStats(*s.matrix);
  s.layoutCandidates = std::move(candidates);
  return true;
}
