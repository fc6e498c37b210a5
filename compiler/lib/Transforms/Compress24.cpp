//===- Compress24.cpp - Values, metadata and the PTX register layout ------===//
//
// Compression keeps, per row and group, the nonzeros in increasing position
// (ordered metadata) and pads short groups with stored zeros at valid
// positions. Packing walks every slot of every fragment tile through the
// layout tables of MatrixEmulator.h, so the emulator reads exactly what this
// pass writes.
//
//===----------------------------------------------------------------------===//

#include "stencilc/Transforms/Compress24.h"
#include "stencilc/IR/MatrixEmulator.h"

#include <algorithm>

using namespace stencilc;

/// The metadata of a group that keeps nothing: positions 0 (and 1), a valid
/// code for both 2:4 and 1:2.
static constexpr uint8_t kEmptyNibble = 0x4;

/// Compresses A with groups of `gs` columns (4 or 2).
static CompressedMatrix compressGroups(const MatrixProgram &p, int gs,
                                       SparsityPattern pattern) {
  CompressedMatrix c;
  c.pattern = pattern;
  c.rows = p.rows();
  c.groups = (p.cols() + gs - 1) / gs;
  const int keep = gs / 2;
  const size_t cells = static_cast<size_t>(c.rows) * c.groups;
  c.values.assign(cells * keep, -1);
  c.positions.assign(cells * keep, 0);
  c.nibbles.assign(cells, kEmptyNibble);
  for (int r = 0; r < c.rows; ++r)
    for (int gr = 0; gr < c.groups; ++gr) {
      std::vector<int> nz;
      for (int q = 0; q < gs && gr * gs + q < p.cols(); ++q)
        if (p.nonzero(r, gr * gs + q) && static_cast<int>(nz.size()) < keep)
          nz.push_back(q);
      // A short group still names a valid, increasing set of positions; the
      // padding positions store zeros.
      std::vector<int> pos = nz;
      for (int q = 0; static_cast<int>(pos.size()) < keep; ++q)
        if (std::find(pos.begin(), pos.end(), q) == pos.end())
          pos.push_back(q);
      std::sort(pos.begin(), pos.end());
      size_t cell = static_cast<size_t>(r) * c.groups + gr;
      for (int e = 0; e < keep; ++e) {
        int col = gr * gs + pos[e];
        c.positions[cell * keep + e] = static_cast<uint8_t>(pos[e]);
        c.values[cell * keep + e] = col < p.cols() ? p.at(r, col) : -1;
      }
      if (gs == 4)
        c.nibbles[cell] = static_cast<uint8_t>(pos[0] | pos[1] << 2);
      else
        c.nibbles[cell] = pos[0] == 0 ? 0x4 : 0xE;
    }
  return c;
}

CompressedMatrix stencilc::compressMatrix(const MatrixProgram &p) {
  SparsityPattern pattern = p.pattern == SparsityPattern::Dense
                                ? SparsityPattern::TwoOfFour
                                : p.pattern;
  return compressGroups(p, groupSize(pattern), pattern);
}

PackedFragments stencilc::packFragments(const MatrixProgram &p) {
  PackedFragments pk;
  const FragmentShape &shape = p.shape;
  pk.shape = shape;
  if (!isSupportedShape(shape))
    return pk;
  const int M = shape.m, K = shape.k;
  pk.tilesM = (p.rows() + M - 1) / M;
  pk.tilesK = (p.cols() + K - 1) / K;
  pk.regsPerLane = aRegisters(shape);
  pk.elemsPerReg = elementsPerRegister(shape.type);
  const int tiles = pk.tilesM * pk.tilesK;
  pk.slots.assign(
      static_cast<size_t>(tiles) * 32 * pk.regsPerLane * pk.elemsPerReg, -1);

  const int gs = metadataGroupSize(shape), keep = gs / 2;
  std::optional<CompressedMatrix> cm;
  if (shape.sparse)
    cm = compressGroups(p, gs,
                        gs == 4 ? SparsityPattern::TwoOfFour
                                : SparsityPattern::OneOfTwo);

  size_t next = 0;
  for (int tm = 0; tm < pk.tilesM; ++tm)
    for (int tk = 0; tk < pk.tilesK; ++tk)
      for (int lane = 0; lane < 32; ++lane)
        for (int reg = 0; reg < pk.regsPerLane; ++reg)
          for (int e = 0; e < pk.elemsPerReg; ++e, ++next) {
            FragmentCoord c = fragmentA(shape, lane, reg, e);
            int row = tm * M + c.row;
            if (row >= p.rows())
              continue;
            if (!shape.sparse) {
              int col = tk * K + c.col;
              if (col < p.cols())
                pk.slots[next] = p.at(row, col);
              continue;
            }
            int group = tk * (K / gs) + c.col / keep;
            if (group < cm->groups)
              pk.slots[next] =
                  cm->values[(static_cast<size_t>(row) * cm->groups + group) *
                                 keep +
                             c.col % keep];
          }
  if (!shape.sparse)
    return pk;

  // SPIDER's selector packing: tile t uses register t / spr with selector
  // t % spr; different selectors read disjoint lanes.
  const int spr = selectorsPerRegister(shape);
  pk.metaRegs = (tiles + spr - 1) / spr;
  pk.metadata.assign(static_cast<size_t>(pk.metaRegs) * 32, 0);
  pk.tileMetaReg.resize(tiles);
  pk.tileSelector.resize(tiles);
  for (int tile = 0; tile < tiles; ++tile) {
    int tm = tile / pk.tilesK, tk = tile % pk.tilesK;
    int reg = tile / spr, f = tile % spr;
    pk.tileMetaReg[tile] = reg;
    pk.tileSelector[tile] = f;
    for (int lane = 0; lane < 32; ++lane) {
      if (!metadataLaneRead(shape, f, lane))
        continue;
      uint32_t word = 0;
      for (int j = 0; j < 8; ++j) {
        int row = tm * M + metadataRow(lane, j);
        int group = tk * (K / gs) + metadataGroup(shape, lane, j);
        uint32_t nib = kEmptyNibble;
        if (row < cm->rows && group < cm->groups)
          nib = cm->nibbles[static_cast<size_t>(row) * cm->groups + group];
        word |= nib << (4 * j);
      }
      pk.metadata[static_cast<size_t>(reg) * 32 + lane] = word;
    }
  }
  return pk;
}

bool stencilc::compress24(Stencil &s, DiagnosticEngine &diags, bool split) {
  if (!s.matrix) {
    diags.error(s.loc, "compress24 needs a layout pass first; stencil '" +
                           s.name + "' has no matrix program");
    return false;
  }
  MatrixProgram &p = *s.matrix;
  // A previous packing describes the old A; it is rebuilt below.
  p.compressed.reset();
  p.packed.reset();
  std::vector<FragmentShape> legal =
      legalFragments(p.shape.type, p.shape.sparse, p.arch);
  if (!isSupportedShape(p.shape) ||
      std::find(legal.begin(), legal.end(), p.shape) == legal.end()) {
    diags.error(s.loc, "compress24: stencil '" + s.name +
                           "' uses the fragment shape " + p.shape.name() +
                           ", which PTX does not offer on sm_" +
                           llvm::Twine(p.arch));
    return false;
  }
  if (p.pattern != SparsityPattern::Dense && !p.shape.sparse) {
    diags.error(s.loc, "compress24: the " + sparsityPatternName(p.pattern) +
                           " matrix program of stencil '" + s.name +
                           "' needs a sparse fragment shape, not " +
                           p.shape.name());
    return false;
  }
  if (p.pattern == SparsityPattern::Dense && p.shape.sparse) {
    diags.error(s.loc, "compress24: stencil '" + s.name +
                           "' has a dense kernel matrix but the sparse "
                           "fragment shape " +
                           p.shape.name() + "; run a sparsity pass first");
    return false;
  }
  if (split && p.shape.type != MmaType::TF32) {
    diags.error(s.loc, "compress24: split=1 splits f32 operands into tf32 "
                       "parts, but stencil '" +
                           s.name + "' multiplies in " + p.shape.name());
    return false;
  }
  p.split = split;
  std::string why = verifyMatrixProgram(p);
  if (!why.empty()) {
    diags.error(s.loc, "compress24: the matrix program of stencil '" + s.name +
                           "' is invalid: " + why);
    return false;
  }
  if (p.pattern != SparsityPattern::Dense)
    p.compressed = compressMatrix(p);
  p.packed = packFragments(p);
  return true;
}
