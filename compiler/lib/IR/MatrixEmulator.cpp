//===- MatrixEmulator.cpp - mma / mma.sp executed lane by lane ------------===//
//
// Decodes a warp's registers into the matrices of one mma through the
// fragment layouts of PTX.md, multiplies them in the accumulator type, and
// writes D back to the lanes; on top of that, runs a packed MatrixProgram
// over a whole grid.
//
//===----------------------------------------------------------------------===//

#include "stencilc/IR/MatrixEmulator.h"
#include "stencilc/IR/LinearForm.h"
#include "stencilc/IR/Weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace stencilc;

//===----------------------------------------------------------------------===//
// Operand encodings
//===----------------------------------------------------------------------===//

/// The binary16 bits of `h`, which must already be a binary16 value.
static uint16_t halfBitsOf(float h) {
  uint16_t sign = std::signbit(h) ? 0x8000 : 0;
  if (std::isnan(h))
    return sign | 0x7E00;
  float a = std::fabs(h);
  if (std::isinf(a))
    return sign | 0x7C00;
  if (a == 0)
    return sign;
  int e;
  std::frexp(a, &e);
  int exponent = e - 1; // a lies in [2^exponent, 2^(exponent+1)).
  if (exponent < -14)   // Subnormal: a multiple of 2^-24.
    return sign | static_cast<uint16_t>(std::lround(std::ldexp(a, 24)));
  auto mantissa = static_cast<uint16_t>(std::lround(
      (std::ldexp(static_cast<double>(a), -exponent) - 1.0) * 1024.0));
  return sign | static_cast<uint16_t>((exponent + 15) << 10) | mantissa;
}

uint16_t stencilc::encodeF16(double x) {
  return halfBitsOf(roundToHalf(static_cast<float>(x)));
}

double stencilc::decodeF16(uint16_t bits) {
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  int exponent = (bits >> 10) & 0x1F;
  int mantissa = bits & 0x3FF;
  if (exponent == 0x1F)
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0)
    return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

uint16_t stencilc::encodeBF16(double x) {
  float b = roundToBFloat16(static_cast<float>(x));
  uint32_t bits;
  std::memcpy(&bits, &b, 4);
  if (std::isnan(b)) // Keep a NaN a NaN when its payload is in the low bits.
    return static_cast<uint16_t>(((bits >> 16) & 0x8000) | 0x7FC0);
  return static_cast<uint16_t>(bits >> 16);
}

double stencilc::decodeBF16(uint16_t bits) {
  uint32_t word = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &word, 4);
  return f;
}

uint32_t stencilc::encodeTF32(double x) {
  auto f = static_cast<float>(x);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f))
    return 0x7FFFFFFFu; // The canonical NaN cvt produces.
  if (std::isinf(f))
    return bits;
  // Round the magnitude half away from zero at bit 13; a carry into the
  // exponent is the correct result (up to infinity).
  return (bits + 0x1000u) & 0xFFFFE000u;
}

double stencilc::decodeTF32(uint32_t bits) {
  uint32_t word = bits & 0xFFFFE000u;
  float f;
  std::memcpy(&f, &word, 4);
  return f;
}

void stencilc::splitTF32(double x, uint32_t &hi, uint32_t &lo) {
  auto f = static_cast<float>(x);
  hi = encodeTF32(f);
  // Exact: hi is f rounded to 11 significant bits, so f - hi has at most
  // 13 and the same exponent range (or is inf - inf = NaN).
  float rest = f - static_cast<float>(decodeTF32(hi));
  lo = encodeTF32(rest);
}

void stencilc::splitTF32Coefficient(double x, uint32_t (&parts)[3]) {
  auto f = static_cast<float>(x);
  splitTF32(f, parts[0], parts[1]);
  // Exact: f - hi - lo has at most two significant bits.
  float rest = f - static_cast<float>(decodeTF32(parts[0])) -
               static_cast<float>(decodeTF32(parts[1]));
  parts[2] = encodeTF32(rest);
}

uint64_t stencilc::encodeF64(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, 8);
  return bits;
}

double stencilc::decodeF64(uint64_t bits) {
  double x;
  std::memcpy(&x, &bits, 8);
  return x;
}

uint64_t stencilc::encodeOperand(MmaType t, double x) {
  switch (t) {
  case MmaType::F16:
    return encodeF16(x);
  case MmaType::BF16:
    return encodeBF16(x);
  case MmaType::TF32:
    return encodeTF32(x);
  case MmaType::F64:
    return encodeF64(x);
  }
  return 0;
}

double stencilc::decodeOperand(MmaType t, uint64_t bits) {
  switch (t) {
  case MmaType::F16:
    return decodeF16(static_cast<uint16_t>(bits));
  case MmaType::BF16:
    return decodeBF16(static_cast<uint16_t>(bits));
  case MmaType::TF32:
    return decodeTF32(static_cast<uint32_t>(bits));
  case MmaType::F64:
    return decodeF64(bits);
  }
  return 0;
}

double stencilc::roundToOperand(MmaType t, double x) {
  return decodeOperand(t, encodeOperand(t, x));
}

//===----------------------------------------------------------------------===//
// Fragment layouts
//===----------------------------------------------------------------------===//

bool stencilc::isSupportedShape(const FragmentShape &s) {
  if (s.n != 8)
    return false;
  switch (s.type) {
  case MmaType::F16:
  case MmaType::BF16:
    return s.m == 16 &&
           (s.sparse ? (s.k == 16 || s.k == 32) : (s.k == 8 || s.k == 16));
  case MmaType::TF32:
    return s.m == 16 &&
           (s.sparse ? (s.k == 8 || s.k == 16) : (s.k == 4 || s.k == 8));
  case MmaType::F64:
    if (s.sparse)
      return false;
    return (s.m == 8 && s.k == 4) ||
           (s.m == 16 && (s.k == 4 || s.k == 8 || s.k == 16));
  }
  return false;
}

int stencilc::elementsPerRegister(MmaType t) {
  return t == MmaType::F16 || t == MmaType::BF16 ? 2 : 1;
}

int stencilc::storedK(const FragmentShape &s) {
  return s.sparse ? s.k / 2 : s.k;
}

int stencilc::aRegisters(const FragmentShape &s) {
  return s.m * storedK(s) / (32 * elementsPerRegister(s.type));
}

int stencilc::bRegisters(const FragmentShape &s) {
  return s.k * s.n / (32 * elementsPerRegister(s.type));
}

int stencilc::accumulators(const FragmentShape &s) { return s.m * s.n / 32; }

int stencilc::metadataGroupSize(const FragmentShape &s) {
  if (!s.sparse)
    return 1;
  return s.type == MmaType::TF32 ? 2 : 4;
}

FragmentCoord stencilc::fragmentA(const FragmentShape &s, int lane, int reg,
                                  int elem) {
  int g = lane >> 2, t = lane & 3;
  if (s.sparse) {
    // PTX.md's compressed table: a register holds the kept values of one
    // group (f16/bf16: both, in the two halves) or of one pair (tf32).
    bool wide = s.k == (s.type == MmaType::TF32 ? 16 : 32);
    int row = wide ? g + 8 * (reg & 1) : g + 8 * reg;
    int group = wide ? t + 4 * (reg >> 1) : t;
    int keep = metadataGroupSize(s) / 2;
    return {row, group * keep + elem};
  }
  int i = reg * elementsPerRegister(s.type) + elem;
  switch (s.type) {
  case MmaType::F16:
  case MmaType::BF16:
    if (s.k == 8)
      return {g + 8 * (i >> 1), 2 * t + (i & 1)};
    return {g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)};
  case MmaType::TF32:
  case MmaType::F64:
    if (s.m == 8)
      return {g, t};
    if (s.k == 4)
      return {g + 8 * i, t};
    return {g + 8 * (i & 1), t + 4 * (i >> 1)};
  }
  return {};
}

FragmentCoord stencilc::fragmentB(const FragmentShape &s, int lane, int reg,
                                  int elem) {
  int g = lane >> 2, t = lane & 3;
  if (elementsPerRegister(s.type) == 2) {
    int i = 2 * reg + elem;
    return {2 * t + (i & 1) + 8 * (i >> 1), g};
  }
  return {t + 4 * reg, g};
}

FragmentCoord stencilc::fragmentC(const FragmentShape &s, int lane, int acc) {
  int g = lane >> 2, t = lane & 3;
  if (s.m == 8)
    return {g, 2 * t + acc};
  return {g + 8 * (acc >> 1), 2 * t + (acc & 1)};
}

int stencilc::selectorsPerRegister(const FragmentShape &s) {
  // Four groups per row and tile: one lane of each quad holds a whole
  // tile's metadata; eight groups: two lanes do.
  return s.k / metadataGroupSize(s) == 4 ? 4 : 2;
}

bool stencilc::metadataLaneRead(const FragmentShape &s, int selector,
                                int lane) {
  int t = lane & 3;
  if (selectorsPerRegister(s) == 4)
    return t == selector;
  return t >> 1 == selector;
}

int stencilc::metadataRow(int lane, int nibble) {
  return (lane >> 2) + 8 * (nibble >> 2);
}

int stencilc::metadataGroup(const FragmentShape &s, int lane, int nibble) {
  int second = selectorsPerRegister(s) == 2 ? (lane & 1) : 0;
  return (nibble & 3) + 4 * second;
}

//===----------------------------------------------------------------------===//
// One mma
//===----------------------------------------------------------------------===//

static uint64_t elementBits(MmaType t, uint64_t word, int elem) {
  if (elementsPerRegister(t) == 2)
    return (word >> (16 * elem)) & 0xFFFF;
  if (t == MmaType::TF32)
    return word & 0xFFFFFFFFu;
  return word;
}

void stencilc::emulateMma(const FragmentShape &shape,
                          const std::vector<uint64_t> &a,
                          const std::vector<uint64_t> &b,
                          std::vector<double> &cd,
                          const std::vector<uint32_t> *meta, int selector) {
  const int M = shape.m, N = shape.n, K = shape.k;
  const int epr = elementsPerRegister(shape.type);
  const int aRegs = aRegisters(shape), bRegs = bRegisters(shape),
            accs = accumulators(shape);
  const int sk = storedK(shape);

  std::vector<double> bMat(static_cast<size_t>(K) * N, 0.0);
  for (int lane = 0; lane < 32; ++lane)
    for (int reg = 0; reg < bRegs; ++reg)
      for (int e = 0; e < epr; ++e) {
        FragmentCoord c = fragmentB(shape, lane, reg, e);
        bMat[c.row * N + c.col] = decodeOperand(
            shape.type, elementBits(shape.type, b[lane * bRegs + reg], e));
      }
  // A as stored: dense, or compressed.
  std::vector<double> aMat(static_cast<size_t>(M) * sk, 0.0);
  for (int lane = 0; lane < 32; ++lane)
    for (int reg = 0; reg < aRegs; ++reg)
      for (int e = 0; e < epr; ++e) {
        FragmentCoord c = fragmentA(shape, lane, reg, e);
        aMat[c.row * sk + c.col] = decodeOperand(
            shape.type, elementBits(shape.type, a[lane * aRegs + reg], e));
      }

  // The products each row sums, as (k, value of A) in increasing k.
  std::vector<std::vector<std::pair<int, double>>> terms(M);
  if (!shape.sparse) {
    for (int r = 0; r < M; ++r)
      for (int k = 0; k < K; ++k)
        terms[r].push_back({k, aMat[r * sk + k]});
  } else {
    const int gs = metadataGroupSize(shape), keep = gs / 2, groups = K / gs;
    // Nibbles come only from the lanes the selector names; -1 marks a
    // (row, group) no read lane covers, which the tables never leave.
    std::vector<int> nibble(static_cast<size_t>(M) * groups, -1);
    if (meta)
      for (int lane = 0; lane < 32; ++lane) {
        if (!metadataLaneRead(shape, selector, lane))
          continue;
        uint32_t word = (*meta)[lane];
        for (int j = 0; j < 8; ++j)
          nibble[metadataRow(lane, j) * groups +
                 metadataGroup(shape, lane, j)] = (word >> (4 * j)) & 0xF;
      }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int r = 0; r < M; ++r)
      for (int gr = 0; gr < groups; ++gr) {
        int nib = nibble[r * groups + gr];
        int pos[2] = {0, 0};
        bool valid;
        if (gs == 4) {
          pos[0] = nib & 3;
          pos[1] = (nib >> 2) & 3;
          valid = nib >= 0 && pos[0] < pos[1];
        } else {
          // 1:2 reuses the 2:4 code of a pair of 16-bit halves: 0x4 names
          // halves 0-1 (element 0), 0xE halves 2-3 (element 1).
          valid = nib == 0x4 || nib == 0xE;
          pos[0] = nib == 0xE ? 1 : 0;
        }
        for (int e = 0; e < keep; ++e)
          terms[r].push_back(
              {gr * gs + pos[e], valid ? aMat[r * sk + gr * keep + e] : nan});
      }
  }

  for (int lane = 0; lane < 32; ++lane)
    for (int acc = 0; acc < accs; ++acc) {
      FragmentCoord c = fragmentC(shape, lane, acc);
      double &slot = cd[lane * accs + acc];
      if (shape.type == MmaType::F64) {
        double sum = slot;
        for (const auto &[k, v] : terms[c.row])
          sum = std::fma(v, bMat[k * N + c.col], sum);
        slot = sum;
      } else {
        auto sum = static_cast<float>(slot);
        for (const auto &[k, v] : terms[c.row]) {
          // Exact: both factors have at most 11 significant bits.
          float product =
              static_cast<float>(v) * static_cast<float>(bMat[k * N + c.col]);
          sum = sum + product;
        }
        slot = sum;
      }
    }
}

//===----------------------------------------------------------------------===//
// A program on a grid
//===----------------------------------------------------------------------===//

std::vector<uint64_t>
stencilc::packNumericA(const MatrixProgram &p,
                       const std::vector<double> &nodeValues,
                       int splitPart) {
  if (!p.packed)
    return {};
  const PackedFragments &pk = *p.packed;
  const MmaType type = pk.shape.type;
  const int tiles = pk.tilesM * pk.tilesK;
  std::vector<uint64_t> out(static_cast<size_t>(tiles) * 32 * pk.regsPerLane,
                            0);
  for (int tile = 0; tile < tiles; ++tile)
    for (int lane = 0; lane < 32; ++lane)
      for (int reg = 0; reg < pk.regsPerLane; ++reg) {
        uint64_t word = 0;
        for (int e = 0; e < pk.elemsPerReg; ++e) {
          int node = pk.slot(tile, lane, reg, e);
          double v = node >= 0 ? nodeValues[node] : 0.0;
          if (splitPart) {
            uint32_t parts[3];
            splitTF32Coefficient(v, parts);
            word |= parts[splitPart];
            continue;
          }
          word |= encodeOperand(type, v) << (16 * e);
        }
        out[(static_cast<size_t>(tile) * 32 + lane) * pk.regsPerLane + reg] =
            word;
      }
  return out;
}

bool stencilc::centresOperands(const MatrixProgram &program) {
  return program.packed && program.packed->shape.type == MmaType::TF32 &&
         !program.split;
}

std::optional<bool> stencilc::splitNeedsLowA(const Stencil &s) {
  if (!s.matrix || !s.matrix->packed)
    return false;
  bool low = false;
  for (int v : s.matrix->packed->slots) {
    if (v < 0)
      continue;
    const Node &n = s.graph[v];
    if (n.op != Op::Const)
      return std::nullopt;
    uint32_t hi, lo;
    splitTF32(n.value, hi, lo);
    low |= decodeTF32(lo) != 0;
  }
  return low;
}

EmulatedGrid stencilc::emulateOnGrid(const Stencil &s,
                                     const std::array<int64_t, 3> &sizes,
                                     const std::vector<double> &input,
                                     const std::vector<double> &params) {
  std::array<int64_t, kMaxDims> n{1, 1, 1};
  int64_t total = 1;
  for (int ax = 0; ax < s.dims; ++ax) {
    n[ax] = sizes[ax];
    total *= n[ax];
  }
  EmulatedGrid out;
  out.values.assign(total, 0.0);
  out.covered.assign(total, false);
  if (!s.matrix || !s.matrix->packed || s.matrix->rows() == 0 ||
      !isSupportedShape(s.matrix->packed->shape))
    return out;
  const MatrixProgram &p = *s.matrix;
  const PackedFragments &pk = *p.packed;
  const FragmentShape &shape = pk.shape;
  const size_t tiles = static_cast<size_t>(pk.tilesM) * pk.tilesK;
  if (pk.regsPerLane != aRegisters(shape) ||
      pk.slots.size() != tiles * 32 * pk.regsPerLane * pk.elemsPerReg ||
      (shape.sparse &&
       (pk.tileMetaReg.size() != tiles || pk.tileSelector.size() != tiles ||
        pk.metadata.size() != static_cast<size_t>(pk.metaRegs) * 32)))
    return out;
  const Grid &grid = s.grids[p.grid];
  const Update *update = s.updateOf(p.grid);
  auto kindOf = [&](int ax) {
    if (ax >= static_cast<int>(grid.boundary.size()))
      return BoundaryKind::Dirichlet;
    const AxisBoundary &b = grid.boundary[ax];
    return b.has(BoundaryKind::Fixed) ? BoundaryKind::Fixed : b.side[0].kind;
  };

  std::vector<double> rounded = params;
  for (size_t i = 0; i < rounded.size() && i < s.params.size(); ++i)
    rounded[i] = roundTo(s.params[i].type, rounded[i]);
  // The weights are rounded keeping their sum, as the generated host code
  // rounds them (IR/Weights.h): to the operand type, or for split-TF32 to
  // f32, which the hi, lo and lo2 parts then hold exactly.
  const bool split = p.split && shape.type == MmaType::TF32;
  std::vector<double> coefficients = evaluateGridFreeAll(s.graph, rounded);
  roundTapNodes(kernelTaps(s), coefficients, [&](double x) {
    return split ? roundTo(ElemType::F32, x) : roundToOperand(shape.type, x);
  });
  const std::vector<uint64_t> aRegs = packNumericA(p, coefficients);
  // Split-TF32: the lo and lo2 parts of A, and whether the kernel's host
  // code would launch the variant with the A_lo B_hi and A_lo2 B_hi
  // products (any lo part nonzero).
  std::vector<uint64_t> aLoRegs, aLo2Regs;
  bool aLo = false;
  if (split) {
    aLoRegs = packNumericA(p, coefficients, 1);
    aLo2Regs = packNumericA(p, coefficients, 2);
    for (uint64_t w : aLoRegs)
      aLo |= decodeTF32(static_cast<uint32_t>(w)) != 0;
  }

  // tf32 operands are centred (docs/language.md §6.4): B holds u - r,
  // rounded as an operand, and D gets r times its row's sum of A, the
  // rounded coefficients' sum held in f32, with one fused multiply-add.
  const bool centred = centresOperands(p);
  std::vector<float> rowSum(p.rows(), 0.0f);
  if (centred)
    for (int row = 0; row < p.rows(); ++row) {
      double sum = 0;
      for (int col = 0; col < p.cols(); ++col)
        if (p.nonzero(row, col))
          sum += coefficients[p.at(row, col)];
      rowSum[row] = static_cast<float>(sum);
    }

  // Patch origins along each axis.
  std::array<std::vector<int64_t>, kMaxDims> axisOrigins;
  for (int ax = 0; ax < kMaxDims; ++ax) {
    if (ax >= s.dims) {
      axisOrigins[ax] = {0};
      continue;
    }
    int64_t step = std::max(1, p.patch[ax]);
    if (kindOf(ax) == BoundaryKind::Periodic) {
      for (int64_t o = 0; o < n[ax]; o += step)
        axisOrigins[ax].push_back(o);
      continue;
    }
    int64_t lo = std::numeric_limits<int64_t>::min();
    int64_t hi = std::numeric_limits<int64_t>::max();
    auto fit = [&](int off) {
      lo = std::max<int64_t>(lo, -off);
      hi = std::min<int64_t>(hi, n[ax] - 1 - off);
    };
    for (const Offset &o : p.outputs)
      fit(o[ax]);
    for (const MatrixColumn &c : p.columns)
      if (!c.zero)
        fit(c.offset[ax]);
    for (int64_t o = lo; o <= hi; o += step)
      axisOrigins[ax].push_back(o);
  }
  std::vector<std::array<int64_t, kMaxDims>> origins;
  for (int64_t o0 : axisOrigins[0])
    for (int64_t o1 : axisOrigins[1])
      for (int64_t o2 : axisOrigins[2])
        origins.push_back({o0, o1, o2});

  // Index of origin + offset, wrapped on periodic axes; -1 outside.
  auto indexOf = [&](const std::array<int64_t, kMaxDims> &origin,
                     const Offset &off) -> int64_t {
    int64_t idx = 0;
    for (int ax = 0; ax < s.dims; ++ax) {
      int64_t x = origin[ax] + off[ax];
      if (kindOf(ax) == BoundaryKind::Periodic)
        x = ((x % n[ax]) + n[ax]) % n[ax];
      else if (x < 0 || x >= n[ax])
        return -1;
      idx = idx * n[ax] + x;
    }
    return idx;
  };
  auto computed = [&](int64_t idx) {
    int64_t rest = idx;
    for (int ax = s.dims - 1; ax >= 0; --ax) {
      int64_t x = rest % n[ax];
      rest /= n[ax];
      if (s.fused &&
          (x < s.fused->bandLo[ax] || x >= n[ax] - s.fused->bandHi[ax]))
        return false;
      if (update && kindOf(ax) == BoundaryKind::Fixed &&
          (x < update->reachLo[ax] || x >= n[ax] - update->reachHi[ax]))
        return false;
    }
    return true;
  };

  const int M = shape.m, N = shape.n, K = shape.k;
  const int kPadded = pk.tilesK * K;
  const int epr = elementsPerRegister(shape.type);
  const int aPer = aRegisters(shape), bPer = bRegisters(shape),
            accs = accumulators(shape);
  const size_t numPatches = origins.size();
  std::vector<uint64_t> bBits(static_cast<size_t>(kPadded) * N);
  std::vector<uint64_t> bLoBits(split ? bBits.size() : 0);
  std::vector<uint64_t> aTile(32 * aPer), bTile(32 * bPer);
  std::vector<uint64_t> aLoTile(split ? 32 * aPer : 0),
      aLo2Tile(split ? 32 * aPer : 0), bLoTile(split ? 32 * bPer : 0);
  std::vector<uint32_t> meta(32);
  std::vector<double> cd(32 * accs), cdLo(split ? 32 * accs : 0),
      cdTile(split ? 32 * accs : 0);
  for (size_t first = 0; first < numPatches; first += N) {
    // The centre of this group of patches: the value at the first one's
    // first output (the kernel takes one per block tile).
    float centre = 0.0f;
    if (centred) {
      int64_t idx = indexOf(origins[first], p.outputs[0]);
      centre = idx >= 0 ? static_cast<float>(input[idx]) : 0.0f;
    }
    // The encoded B of these patches: gather, zero for padding.
    for (int k = 0; k < kPadded; ++k)
      for (int col = 0; col < N; ++col) {
        size_t patch = first + col;
        double v = 0;
        if (patch < numPatches && k < p.cols() && !p.columns[k].zero) {
          int64_t idx = indexOf(origins[patch], p.columns[k].offset);
          v = idx >= 0 ? input[idx] : 0.0;
          if (centred)
            v = static_cast<float>(v) - centre;
        }
        if (split) {
          uint32_t hi, lo;
          splitTF32(v, hi, lo);
          bBits[k * N + col] = hi;
          bLoBits[k * N + col] = lo;
          continue;
        }
        bBits[k * N + col] = encodeOperand(shape.type, v);
      }
    for (int tm = 0; tm < pk.tilesM; ++tm) {
      std::fill(cd.begin(), cd.end(), 0.0);
      std::fill(cdLo.begin(), cdLo.end(), 0.0);
      for (int tk = 0; tk < pk.tilesK; ++tk) {
        int tile = tm * pk.tilesK + tk;
        std::copy_n(aRegs.begin() + static_cast<size_t>(tile) * 32 * aPer,
                    32 * aPer, aTile.begin());
        if (split) {
          std::copy_n(aLoRegs.begin() +
                          static_cast<size_t>(tile) * 32 * aPer,
                      32 * aPer, aLoTile.begin());
          std::copy_n(aLo2Regs.begin() +
                          static_cast<size_t>(tile) * 32 * aPer,
                      32 * aPer, aLo2Tile.begin());
        }
        for (int lane = 0; lane < 32; ++lane)
          for (int reg = 0; reg < bPer; ++reg) {
            uint64_t word = 0, low = 0;
            for (int e = 0; e < epr; ++e) {
              FragmentCoord c = fragmentB(shape, lane, reg, e);
              size_t at = (tk * K + c.row) * N + c.col;
              word |= bBits[at] << (16 * e);
              if (split)
                low |= bLoBits[at];
            }
            bTile[lane * bPer + reg] = word;
            if (split)
              bLoTile[lane * bPer + reg] = low;
          }
        int selector = 0;
        if (shape.sparse) {
          int r = pk.tileMetaReg[tile];
          for (int lane = 0; lane < 32; ++lane)
            meta[lane] = pk.metadata[static_cast<size_t>(r) * 32 + lane];
          selector = pk.tileSelector[tile];
        }
        const std::vector<uint32_t> *m = shape.sparse ? &meta : nullptr;
        if (split) {
          // The kernel's order: the small products into their own
          // accumulator; hi times hi into a zero accumulator, added to
          // the first in f32, so that each K tile's sum meets the running
          // one in a rounded addition rather than the tensor cores'
          // truncating one.
          if (aLo) {
            emulateMma(shape, aLoTile, bTile, cdLo, m, selector);
            emulateMma(shape, aLo2Tile, bTile, cdLo, m, selector);
          }
          emulateMma(shape, aTile, bLoTile, cdLo, m, selector);
          std::fill(cdTile.begin(), cdTile.end(), 0.0);
          emulateMma(shape, aTile, bTile, cdTile, m, selector);
          for (size_t i = 0; i < cd.size(); ++i)
            cd[i] = static_cast<float>(cd[i]) + static_cast<float>(cdTile[i]);
          continue;
        }
        emulateMma(shape, aTile, bTile, cd, m, selector);
      }
      if (split)
        for (size_t i = 0; i < cd.size(); ++i)
          cd[i] = static_cast<float>(cd[i]) + static_cast<float>(cdLo[i]);
      for (int lane = 0; lane < 32; ++lane)
        for (int acc = 0; acc < accs; ++acc) {
          FragmentCoord c = fragmentC(shape, lane, acc);
          int row = tm * M + c.row;
          size_t patch = first + c.col;
          if (row >= p.rows() || patch >= numPatches)
            continue;
          int64_t idx = indexOf(origins[patch], p.outputs[row]);
          if (idx < 0 || !computed(idx))
            continue;
          double d = cd[lane * accs + acc];
          if (centred)
            d = std::fmaf(centre, rowSum[row], static_cast<float>(d));
          out.values[idx] = roundTo(grid.type, d);
          out.covered[idx] = true;
        }
    }
  }
  return out;
}
