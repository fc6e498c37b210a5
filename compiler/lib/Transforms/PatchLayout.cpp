//===- PatchLayout.cpp - The box-patch construction of the layouts --------===//

#include "stencilc/Transforms/PatchLayout.h"
#include "stencilc/Support/GpuArch.h"

#include <algorithm>

using namespace stencilc;

std::optional<LayoutKernel> stencilc::layoutKernel(const Stencil &s,
                                                   llvm::StringRef pass,
                                                   DiagnosticEngine &diags) {
  LayoutKernel k;
  if (s.fused) {
    k.grid = s.fused->grid;
    k.steps = s.fused->steps;
    k.alpha = s.fused->alpha;
    for (const Tap &t : s.fused->taps)
      k.taps[t.offset] = t.coeff;
  } else {
    if (s.updates.size() != 1 || !s.updates[0].linear ||
        s.updates[0].linear->constant >= 0) {
      diags.error(s.loc, pass +
                             " needs a linear stencil of one grid without "
                             "a constant term; stencil '" +
                             s.name + "' is not");
      return std::nullopt;
    }
    const Update &u = s.updates[0];
    k.grid = u.grid;
    for (const Tap &t : u.linear->taps) {
      if (t.grid != u.grid) {
        diags.error(s.loc, pass + " of stencil '" + s.name +
                               "' cannot multiply reads of grid '" +
                               s.grids[t.grid].name +
                               "', which the update does not advance");
        return std::nullopt;
      }
      k.taps[t.offset] = t.coeff;
    }
  }
  if (k.taps.empty()) {
    diags.error(s.loc,
                pass + " of stencil '" + s.name + "' has no taps to multiply");
    return std::nullopt;
  }
  k.lo = k.hi = k.taps.begin()->first;
  for (const auto &[o, c] : k.taps)
    for (int a = 0; a < kMaxDims; ++a) {
      k.lo[a] = std::min(k.lo[a], o[a]);
      k.hi[a] = std::max(k.hi[a], o[a]);
    }
  return k;
}

std::vector<MatrixColumn> stencilc::inputBoxColumns(int dims,
                                                    const LayoutKernel &k,
                                                    const Offset &patch) {
  Offset lo{}, size{1, 1, 1};
  for (int a = 0; a < dims; ++a) {
    lo[a] = k.lo[a];
    size[a] = patch[a] + k.extent(a) - 1;
  }
  std::vector<MatrixColumn> cols;
  for (int i0 = 0; i0 < size[0]; ++i0)
    for (int i1 = 0; i1 < size[1]; ++i1)
      for (int i2 = 0; i2 < size[2]; ++i2) {
        MatrixColumn c;
        c.offset = {lo[0] + i0, lo[1] + i1, lo[2] + i2};
        c.origin = static_cast<int>(cols.size());
        cols.push_back(c);
      }
  return cols;
}

MatrixProgram
stencilc::buildPatchProgram(const Stencil &s, const LayoutKernel &k,
                            MatrixLayout layout, const Offset &patch,
                            std::vector<MatrixColumn> columns, int arch) {
  MatrixProgram p;
  p.layout = layout;
  p.dims = s.dims;
  p.grid = k.grid;
  p.patch = {1, 1, 1};
  for (int a = 0; a < s.dims; ++a)
    p.patch[a] = patch[a];
  for (int i0 = 0; i0 < p.patch[0]; ++i0)
    for (int i1 = 0; i1 < p.patch[1]; ++i1)
      for (int i2 = 0; i2 < p.patch[2]; ++i2)
        p.outputs.push_back({i0, i1, i2});
  p.columns = std::move(columns);
  p.a.assign(p.outputs.size() * p.columns.size(), -1);
  for (size_t i = 0; i < p.outputs.size(); ++i)
    for (size_t j = 0; j < p.columns.size(); ++j) {
      if (p.columns[j].zero)
        continue;
      Offset d;
      for (int a = 0; a < kMaxDims; ++a)
        d[a] = p.columns[j].offset[a] - p.outputs[i][a];
      auto it = k.taps.find(d);
      if (it != k.taps.end())
        p.a[i * p.columns.size() + j] = it->second;
    }
  p.steps = k.steps;
  p.alpha = k.alpha;
  p.arch = arch;
  p.shape =
      legalFragments(mmaTypeFor(s.grids[k.grid].type), false, p.arch).front();
  computeMatrixStats(p);
  return p;
}

bool stencilc::checkArch(const Stencil &s, llvm::StringRef pass, int arch,
                         DiagnosticEngine &diags) {
  if (archFromNumber(arch))
    return true;
  diags.error(s.loc, pass + " targets " + archNames() + ": arch=" +
                         archNumbers() + ", not arch=" + llvm::Twine(arch));
  return false;
}
