//===- PtxTables.h - PTX.md's fragment tables, for tests --------*- C++ -*-===//
//
// PTX.md's fragment tables transcribed independently of the library, for
// tests. Compress24Test decodes the library's packed registers through
// them, and MatrixEmulatorTest builds a warp's registers with them, so a
// slot the library puts in the wrong lane, register, half or metadata
// nibble fails against a second reading of the same document rather than
// against the library's own tables. Nothing here may call into the
// library's packing or emulator code.
//
// Notation as in PTX.md: g = lane / 4, t = lane % 4; `i` is the element
// index within a lane (reg * 2 + half for 16-bit types, reg otherwise).
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_TEST_UNIT_TRANSFORMS_PTXTABLES_H
#define STENCILC_TEST_UNIT_TRANSFORMS_PTXTABLES_H

#include "stencilc/IR/MatrixProgram.h"

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace stencilc::test {

//===----------------------------------------------------------------------===//
// The fragment shapes PTX.md lists.
//===----------------------------------------------------------------------===//

/// An m x 8 x k fragment (every shape PTX.md lists has n = 8).
inline FragmentShape shapeOf(MmaType t, int m, int k, bool sparse) {
  return FragmentShape{t, m, 8, k, sparse};
}

/// Every dense `mma.sync` shape, the sm_90 f64 ones included.
inline std::vector<FragmentShape> denseShapes() {
  return {shapeOf(MmaType::F16, 16, 8, false),
          shapeOf(MmaType::F16, 16, 16, false),
          shapeOf(MmaType::BF16, 16, 8, false),
          shapeOf(MmaType::BF16, 16, 16, false),
          shapeOf(MmaType::TF32, 16, 4, false),
          shapeOf(MmaType::TF32, 16, 8, false),
          shapeOf(MmaType::F64, 8, 4, false),
          shapeOf(MmaType::F64, 16, 4, false),
          shapeOf(MmaType::F64, 16, 8, false),
          shapeOf(MmaType::F64, 16, 16, false)};
}

/// Every sparse `mma.sp` shape; k is the logical (uncompressed) K.
inline std::vector<FragmentShape> sparseShapes() {
  return {shapeOf(MmaType::F16, 16, 16, true),
          shapeOf(MmaType::F16, 16, 32, true),
          shapeOf(MmaType::BF16, 16, 16, true),
          shapeOf(MmaType::BF16, 16, 32, true),
          shapeOf(MmaType::TF32, 16, 8, true),
          shapeOf(MmaType::TF32, 16, 16, true)};
}

/// denseShapes() followed by sparseShapes().
inline std::vector<FragmentShape> allShapes() {
  std::vector<FragmentShape> all = denseShapes();
  for (const FragmentShape &s : sparseShapes())
    all.push_back(s);
  return all;
}

/// f16 and bf16 pack two operands per 32-bit register.
inline bool isHalf(MmaType t) {
  return t == MmaType::F16 || t == MmaType::BF16;
}
/// Operands per A/B register.
inline int elemsOf(MmaType t) { return isHalf(t) ? 2 : 1; }
/// Columns per sparsity group: 2 (1:2) for tf32, 4 (2:4) otherwise.
inline int groupOf(const FragmentShape &s) {
  return s.type == MmaType::TF32 ? 2 : 4;
}

//===----------------------------------------------------------------------===//
// Operand and accumulator tables.
//===----------------------------------------------------------------------===//

struct Coord {
  int row, col;
};

/// Dense A: element i of the lane's A fragment -> (row, col).
inline Coord ptxDenseA(const FragmentShape &s, int lane, int i) {
  int g = lane / 4, t = lane % 4;
  if (isHalf(s.type)) {
    if (s.k == 8) // m16n8k8: a_i at (g+8(i>>1), 2t+(i&1))
      return {g + 8 * (i >> 1), 2 * t + (i & 1)};
    // m16n8k16: a_i at (g+8((i>>1)&1), 2t+(i&1)+8(i>>2))
    return {g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)};
  }
  if (s.m == 8) // m8n8k4 f64: (g, t)
    return {g, t};
  if (s.k == 4) // tf32 / f64 m16n8k4: a_i at (g+8i, t)
    return {g + 8 * i, t};
  // tf32 / f64 m16n8k8 and f64 m16n8k16: a_i at (g+8(i&1), t+4(i>>1))
  return {g + 8 * (i & 1), t + 4 * (i >> 1)};
}

/// Sparse A register `reg`: (row, group), per PTX.md's compressed table.
/// The register holds the group's kept values (2 halves for f16/bf16, 1
/// value for tf32) in increasing position.
inline Coord ptxSparseA(const FragmentShape &s, int lane, int reg) {
  int g = lane / 4, t = lane % 4;
  if (isHalf(s.type)) {
    if (s.k == 16) // reg0 = (row g, group t); reg1 = (row g+8, group t)
      return {reg == 0 ? g : g + 8, t};
    // k32: reg r = (row g+8(r&1), group t+4(r>>1))
    return {g + 8 * (reg & 1), t + 4 * (reg >> 1)};
  }
  if (s.k == 8) // a0 = (g, pair t); a1 = (g+8, pair t)
    return {reg == 0 ? g : g + 8, t};
  // k16: a_i = (row g+8(i&1), pair t+4(i>>1))
  return {g + 8 * (reg & 1), t + 4 * (reg >> 1)};
}

/// Element i of the lane's A fragment -> (row, col). For sparse shapes the
/// column is one of the compressed A (m x k/2): kept value e of group c
/// sits at column c * keep + e, and a register holds one group's values.
inline Coord ptxA(const FragmentShape &s, int lane, int i) {
  if (!s.sparse)
    return ptxDenseA(s, lane, i);
  int e = elemsOf(s.type); // = groupOf(s) / 2 values kept per group
  Coord c = ptxSparseA(s, lane, i / e);
  return {c.row, c.col * e + i % e};
}

/// B: element i of the lane's B fragment -> (row, col) of the logical
/// k x 8 B.
inline Coord ptxB(const FragmentShape &s, int lane, int i) {
  int g = lane / 4, t = lane % 4;
  if (isHalf(s.type)) {
    if (s.k == 8) // m16n8k8: b_i at (2t+i, g)
      return {2 * t + i, g};
    if (s.k == 16) // m16n8k16 (and sparse k16): (2t+(i&1)+8(i>>1), g)
      return {2 * t + (i & 1) + 8 * (i >> 1), g};
    // sparse k32: reg r, half h is row 2t+h+8r.
    return {2 * t + (i % 2) + 8 * (i / 2), g};
  }
  // tf32 / f64: k4 (t, g); k8: (t+4i, g); k16: b_i is row t+4i.
  return {t + 4 * i, g};
}

/// C and D: accumulator i of the lane -> (row, col).
inline Coord ptxC(const FragmentShape &s, int lane, int i) {
  int g = lane / 4, t = lane % 4;
  if (s.m == 8) // m8n8k4 f64: 2 values at (g, 2t+i)
    return {g, 2 * t + i};
  return {g + 8 * (i >> 1), 2 * t + (i & 1)};
}

//===----------------------------------------------------------------------===//
// The metadata selector table.
//===----------------------------------------------------------------------===//

/// The lane and nibble that hold the metadata of (row, group) for selector
/// `f`. With 4 groups per row (f16/bf16 k16, tf32 k8) lane 4g+f holds rows
/// g and g+8, nibble j = row g+8(j>>2), group j&3; with 8 (f16/bf16 k32,
/// tf32 k16) lane 4g+2f holds groups 0-3 and lane 4g+2f+1 groups 4-7.
inline std::pair<int, int> ptxMetaSlot(const FragmentShape &s, int f, int row,
                                       int group) {
  int g = row % 8, j = 4 * (row / 8) + group % 4;
  if (s.k / groupOf(s) == 4) // lanes 4g+f
    return {4 * g + f, j};
  return {4 * g + 2 * f + group / 4, j}; // lanes 4g+2f (+1 for groups 4-7)
}

/// Lanes whose metadata selector `f` reads.
inline std::set<int> ptxMetadataLanes(const FragmentShape &s, int f) {
  std::set<int> lanes;
  for (int row = 0; row < s.m; ++row)
    for (int group = 0; group < s.k / groupOf(s); ++group)
      lanes.insert(ptxMetaSlot(s, f, row, group).first);
  return lanes;
}

/// The metadata of one tile as selector `f` reads it from the 32 lanes of
/// a metadata register: rows x groups nibbles, row-major.
inline std::vector<int> ptxReadMetadata(const FragmentShape &s, int f,
                                        const std::vector<uint32_t> &lanes) {
  int groups = s.k / groupOf(s);
  std::vector<int> out(s.m * groups, -1);
  for (int row = 0; row < s.m; ++row)
    for (int group = 0; group < groups; ++group) {
      auto [lane, j] = ptxMetaSlot(s, f, row, group);
      out[row * groups + group] = (lanes[lane] >> (4 * j)) & 15;
    }
  return out;
}

} // namespace stencilc::test

#endif // STENCILC_TEST_UNIT_TRANSFORMS_PTXTABLES_H
