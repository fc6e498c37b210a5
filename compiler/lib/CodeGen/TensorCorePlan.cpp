//===- TensorCorePlan.cpp - Tiles, jobs and registers of a tc kernel ------===//
//
// The plan of the tensor-core kernel of a packed MatrixProgram: the patches
// a warp computes, the box a block loads, whether B's gather is uniform,
// the rolling period and whether A stays in registers
// (TensorCoreEmitter.cpp emits the kernel, TensorCoreHostEmitter.cpp its
// host side).
//
//===----------------------------------------------------------------------===//

#include "stencilc/CodeGen/TensorCoreEmitter.h"
#include "stencilc/CodeGen/SplitTF32Emitter.h"
#include "stencilc/IR/IRPrinter.h"
#include "stencilc/IR/MatrixEmulator.h"
#include "stencilc/IR/Weights.h"
#include "stencilc/Support/GpuArch.h"

#include <algorithm>
#include <map>

using namespace stencilc;
llvm::StringRef stencilc::targetName(Target t) {
  switch (t) {
  case Target::CudaCore:
    return "cuda-core";
  case Target::TensorCore:
    return "tc";
  case Target::SparseTensorCore:
    return "sptc";
  }
  return "?";
}

std::optional<Target> stencilc::parseTarget(llvm::StringRef name) {
  if (name == "cuda-core")
    return Target::CudaCore;
  if (name == "tc")
    return Target::TensorCore;
  if (name == "sptc")
    return Target::SparseTensorCore;
  return std::nullopt;
}

namespace {

/// The smallest and largest gather offset of the program's real columns.
void columnRange(const MatrixProgram &p, Offset &lo, Offset &hi) {
  bool first = true;
  for (const MatrixColumn &c : p.columns) {
    if (c.zero)
      continue;
    for (int a = 0; a < kMaxDims; ++a) {
      lo[a] = first ? c.offset[a] : std::min(lo[a], c.offset[a]);
      hi[a] = first ? c.offset[a] : std::max(hi[a], c.offset[a]);
    }
    first = false;
  }
}

/// Bytes of the gather table in (static) shared memory; none when the
/// gather is uniform.
int64_t lutBytes(const TensorCorePlan &plan, const MatrixProgram &p) {
  if (plan.uniformGather)
    return 0;
  const PackedFragments &pk = *p.packed;
  return static_cast<int64_t>(pk.tilesK) * bRegisters(pk.shape) *
         elementsPerRegister(pk.shape.type) * 4 * 2;
}

/// Decides whether B's gather is uniform across lanes (see TensorCorePlan)
/// and, if so, widens the box to cover what zero columns read.
void planGather(const MatrixProgram &p, TensorCorePlan &plan) {
  const FragmentShape &f = p.packed->shape;
  const int E = elementsPerRegister(f.type), bRegs = bRegisters(f);
  const int count = p.packed->tilesK * bRegs * E;
  // The input point of element k for lane quad t, or none (zero column).
  std::vector<std::array<std::optional<Offset>, 4>> at(count);
  for (int k = 0; k < count; ++k) {
    int tk = k / (bRegs * E), r = k / E % bRegs, e = k % E;
    for (int t = 0; t < 4; ++t) {
      int row = tk * f.k + fragmentB(f, t, r, e).row;
      if (row < p.cols() && !p.columns[row].zero)
        at[k][t] = p.columns[row].offset;
    }
  }
  auto minus = [](const Offset &a, const Offset &b) {
    return Offset{a[0] - b[0], a[1] - b[1], a[2] - b[2]};
  };
  auto plus = [](const Offset &a, const Offset &b) {
    return Offset{a[0] + b[0], a[1] + b[1], a[2] + b[2]};
  };
  int full = -1;
  for (int k = 0; k < count && full < 0; ++k)
    if (at[k][0] && at[k][1] && at[k][2] && at[k][3])
      full = k;
  if (full < 0)
    return;
  std::array<Offset, 4> lane;
  for (int t = 0; t < 4; ++t)
    lane[t] = minus(*at[full][t], *at[full][0]);
  std::vector<Offset> constant(count);
  for (int k = 0; k < count; ++k) {
    std::optional<Offset> c;
    for (int t = 0; t < 4; ++t) {
      if (!at[k][t])
        continue;
      Offset ck = minus(*at[k][t], lane[t]);
      if (c && *c != ck)
        return; // Lanes disagree: the table it is.
      c = ck;
    }
    // A register of zero columns reads what its predecessor read.
    constant[k] = c ? *c : constant[k ? k - 1 : full];
  }
  // An element of zero columns paired in a register with a real one reads
  // the input beside it along the fastest axis, so that the pair stays two
  // adjacent inputs, one word.
  auto none = [&](int k) {
    return !at[k][0] && !at[k][1] && !at[k][2] && !at[k][3];
  };
  const int fast = plan.dims - 1;
  for (int k = 0; k < count && E == 2; ++k) {
    int mate = k % 2 ? k - 1 : k + 1;
    if (none(k) && !none(mate)) {
      constant[k] = constant[mate];
      constant[k][fast] += k % 2 ? 1 : -1;
    }
  }
  for (int k = 0; k < count; ++k)
    for (int t = 0; t < 4; ++t) {
      Offset q = plus(constant[k], lane[t]);
      for (int a = 0; a < plan.dims; ++a) {
        plan.lo[a] = std::min(plan.lo[a], q[a]);
        plan.hi[a] = std::max(plan.hi[a], q[a]);
      }
    }
  plan.uniformGather = true;
  plan.lane = lane;
  plan.constant = std::move(constant);
}

/// The K tiles per kernel row with which the kernel can keep B's kernel
/// rows in registers while walking down patch rows (see
/// TensorCorePlan::rolling), or 0: K tile tk + P must read exactly what
/// tile tk reads, one row lower. The window of every K tile's B registers
/// (hi and lo for split-TF32) must fit in 128 registers.
int rollPeriod(const MatrixProgram &p, const TensorCorePlan &plan) {
  const PackedFragments &pk = *p.packed;
  if (!plan.uniformGather || p.layout != MatrixLayout::Decompose ||
      plan.dims != 2 || pk.tilesM != 1 || pk.tilesK < 2 ||
      pk.tilesK * bRegisters(pk.shape) * (p.split ? 2 : 1) > 128)
    return 0;
  const int per = bRegisters(pk.shape) * elementsPerRegister(pk.shape.type);
  for (int period = 1; 2 * period <= pk.tilesK; ++period) {
    if (pk.tilesK % period)
      continue;
    bool rolls = true;
    for (int tk = 0; tk + period < pk.tilesK && rolls; ++tk)
      for (int j = 0; j < per && rolls; ++j) {
        const Offset &now = plan.constant[tk * per + j];
        const Offset &next = plan.constant[(tk + period) * per + j];
        rolls = next[0] == now[0] + 1 && next[1] == now[1];
      }
    if (rolls)
      return period;
  }
  return 0;
}

/// The shared-memory wavefronts of one warp's B loads of a patch (every
/// element of the fragment, one scalar load each), with the box's rows
/// plain or swizzled as the kernel's tcSwizzle does: a load takes as many
/// as the most distinct words that meet in one of the 32 banks. Lane (g,
/// t) reads patch g, whose corner sits g patches along the fastest axis.
int64_t bWavefronts(const TensorCorePlan &plan, bool swizzled) {
  const int fast = plan.dims - 1;
  const int64_t whole = plan.box[fast] / 32 * 32;
  auto place = [&](int64_t x) {
    return swizzled && x < whole ? x ^ (x >> 3 & 0xC) : x;
  };
  int64_t total = 0;
  for (const Offset &c : plan.constant) {
    std::map<int64_t, std::vector<int64_t>> banks;
    int most = 0;
    for (int lane = 0; lane < 32; ++lane) {
      const int g = lane >> 2, t = lane & 3;
      int64_t row = 0;
      for (int a = 0; a < fast; ++a)
        row = row * plan.box[a + 1] + plan.lane[t][a] + c[a] - plan.lo[a];
      const int64_t word = row * plan.box[fast] +
                           place(g * plan.patch[fast] + plan.lane[t][fast] +
                                 c[fast] - plan.lo[fast]);
      std::vector<int64_t> &bank = banks[word % 32];
      if (std::find(bank.begin(), bank.end(), word) == bank.end())
        bank.push_back(word);
      most = std::max(most, static_cast<int>(bank.size()));
    }
    total += most;
  }
  return total;
}

} // namespace

/// Whether the kernel holds A in registers for the whole block (it is
/// small), rather than reading each tile per use (coalesced, and cached:
/// every block reads the same words).
bool stencilc::tensorCoreHoldsA(const MatrixProgram &p) {
  const PackedFragments &pk = *p.packed;
  return pk.tilesM * pk.tilesK * aRegisters(pk.shape) *
             (pk.shape.type == MmaType::F64 ? 2 : 1) * (p.split ? 2 : 1) <=
         64;
}


std::optional<TensorCorePlan>
stencilc::planTensorCore(const Stencil &s, DiagnosticEngine &diags) {
  if (!s.matrix || !s.matrix->packed) {
    diags.error(s.loc, "internal error: stencil '" + s.name +
                           "' has no packed matrix program for the "
                           "tensor-core backend");
    return std::nullopt;
  }
  const MatrixProgram &p = *s.matrix;
  if (!isSupportedShape(p.packed->shape)) {
    diags.error(s.loc, "internal error: no tensor-core code for the shape " +
                           p.packed->shape.name());
    return std::nullopt;
  }
  // A holds the coefficients in the operand type, which has the range of
  // the element type (tf32 that of f32), narrower than the compute type for
  // f16: a coefficient the CUDA cores would compute with can overflow here
  // (docs/language.md §4.7).
  for (int v : p.packed->slots) {
    if (v < 0 || s.graph[v].op != Op::Const ||
        isFiniteIn(s.elemType, s.graph[v].value))
      continue;
    const Node &n = s.graph[v];
    diags.error(n.loc.isValid() ? n.loc : s.loc,
                "coefficient " + formatNumber(n.value) + " of stencil '" +
                    s.name + "' is not finite in " + elemTypeName(s.elemType) +
                    ", the operand type of its tensor cores (largest finite "
                    "value " +
                    largestFiniteText(s.elemType) +
                    "); use --target=cuda-core");
    return std::nullopt;
  }
  TensorCorePlan plan;
  plan.dims = s.dims;
  if (centresOperands(p)) {
    // Every output sums the same fused taps, each once, so that one sum
    // of A's row serves every row.
    for (int row = 0; row < p.rows(); ++row) {
      std::vector<int> nodes;
      for (int col = 0; col < p.cols(); ++col)
        if (p.nonzero(row, col))
          nodes.push_back(p.at(row, col));
      std::sort(nodes.begin(), nodes.end());
      if (row == 0) {
        plan.rowNodes = std::move(nodes);
        continue;
      }
      if (nodes != plan.rowNodes) {
        diags.error(s.loc, "internal error: the rows of stencil '" + s.name +
                               "''s tensor-core matrix sum different "
                               "coefficients");
        return std::nullopt;
      }
    }
  }
  int D = s.dims, fast = D - 1;
  columnRange(p, plan.lo, plan.hi);
  planGather(p, plan);
  for (int a = 0; a < D; ++a)
    plan.patch[a] = p.patch[a];
  // About 64 outputs along the fastest axis (256 in 1-D), 16 along the
  // next, 4 along the slowest of 3-D: enough jobs for four warps, a box
  // small enough to share.
  int fastWant = D == 1 ? 256 : 64;
  // In 1-D the fastest axis is the only source of warp jobs: at least one
  // per warp.
  plan.patches[fast] =
      8 * std::max(D == 1 ? 4 : 1, fastWant / (8 * plan.patch[fast]));
  if (D >= 2)
    plan.patches[fast - 1] = std::max(1, 16 / plan.patch[fast - 1]);
  if (D == 3)
    plan.patches[0] = std::max(1, 4 / plan.patch[0]);
  plan.rollPeriod = rollPeriod(p, plan);
  plan.rolling = plan.rollPeriod > 0;
  if (plan.rolling) {
    // One column of 8 patches, up to 32 patch rows per warp: the 15-odd
    // rows of warm-up amortize over ~30 jobs, and the box is only 1/8 halo
    // wide.
    plan.patches[fast] = 8;
    plan.patches[0] = 128;
  }
  unsigned elemBytes = elemTypeBytes(s.grids[p.grid].type);
  plan.vec = static_cast<int>(16 / elemBytes);
  // The box starts a whole number of 16-byte copies before the tile, so
  // that tiles (and the runs of outputs they store) start 16-byte aligned
  // too; except where that would move 16-bit pairs that load as one word
  // (planGather) off even offsets.
  const int reach = plan.lo[fast];
  {
    int aligned = plan.lo[fast] - ((plan.lo[fast] % plan.vec) + plan.vec) %
                                      plan.vec;
    bool words = plan.uniformGather &&
                 elementsPerRegister(p.packed->shape.type) == 2;
    if (!words || (plan.lo[fast] - aligned) % 2 == 0)
      plan.lo[fast] = aligned;
  }
  int outputs = 1;
  for (int a = 0; a < D; ++a)
    outputs *= plan.patch[a];
  plan.stageElems = 8 * outputs;
  // The widest chunk, at most 16 bytes, that keeps all 32 lanes busy;
  // 16 bytes where none does.
  plan.chunk = plan.vec;
  while (plan.chunk > 1 && plan.stageElems / plan.chunk % 32 != 0)
    plan.chunk /= 2;
  if (plan.stageElems / plan.chunk % 32 != 0)
    plan.chunk = plan.vec;
  // Tile, box and shared memory of the current patches; returns the box's
  // elements.
  auto size = [&] {
    int64_t boxElems = 1;
    for (int a = 0; a < D; ++a) {
      plan.tile[a] = plan.patches[a] * plan.patch[a];
      // lo and hi are the reach of a whole patch from its origin; the last
      // patch of the tile starts at tile - patch. Not one element more: the
      // covered region guarantees only these reads stay inside the grid.
      plan.box[a] =
          plan.tile[a] - plan.patch[a] + plan.hi[a] - plan.lo[a] + 1;
      // Rows of whole 16-byte copies. The copies past `read` stay in the
      // grid's row when its extent is a multiple of vec, the only case
      // the kernel copies that way; they are never read.
      if (a == fast) {
        plan.read = static_cast<int>(plan.box[a]);
        plan.box[a] = (plan.box[a] + plan.vec - 1) / plan.vec * plan.vec;
      }
      boxElems *= plan.box[a];
    }
    plan.bufElems = (boxElems + plan.vec) / plan.vec * plan.vec;
    plan.sharedBytes =
        (2 * plan.bufElems + plan.threads / 32 * plan.stageElems) * elemBytes;
    return boxElems;
  };
  // The program's target sets what one block may hold; the passes take
  // only the numbers of known architectures (checkArch), and should another
  // get here, the smallest shared memory of any is the safe guess.
  const GpuArch arch = archFromNumber(p.arch).value_or(GpuArch::SM86);
  // At most 48 KiB for a buffer and the gather table (the kernel holds two
  // buffers, in dynamic shared memory), and less where two of them and the
  // warps' staging areas would not fit a block: on sm_86, sm_89 and sm_120
  // (99 KiB) with large patches of 8-byte elements. The staging areas do
  // not depend on the tile.
  const int64_t bufferLimit = std::min<int64_t>(
      48 * 1024, (maxSharedBytesPerBlock(arch) -
                  plan.threads / 32 * plan.stageElems * elemBytes) /
                     2);
  for (;;) {
    // And gather offsets that fit 16 bits with 0xFFFF left for zero
    // columns.
    int64_t boxElems = size();
    int64_t bufferBytes = plan.bufElems * elemBytes + lutBytes(plan, p);
    if (boxElems < 0xFFFF && bufferBytes <= bufferLimit)
      break;
    int shrink = -1;
    for (int a = 0; a < fast; ++a)
      if (plan.patches[a] > 1)
        shrink = a;
    if (shrink < 0 && plan.patches[fast] > 8)
      shrink = fast;
    if (shrink < 0 && plan.lo[fast] != reach) {
      // The alignment's extra columns do not fit: unaligned stores it is.
      plan.lo[fast] = reach;
      continue;
    }
    if (shrink < 0) {
      diags.error(s.loc, "the tensor-core tile of stencil '" + s.name +
                             "' needs " + llvm::Twine(bufferBytes) +
                             " bytes of shared memory per buffer, more than "
                             "the " +
                             llvm::Twine(bufferLimit) + " allowed on " +
                             archName(arch) +
                             "; use a smaller patch or fusion depth");
      return std::nullopt;
    }
    plan.patches[shrink] = shrink == fast
                               ? std::max(8, plan.patches[fast] / 2 / 8 * 8)
                               : plan.patches[shrink] / 2;
  }
  if (plan.rolling) {
    // Three blocks per SM where the shared memory allows (each SM has
    // 228 KiB on sm_90 and sm_100, 164 KiB on sm_80, 100 KiB on sm_86,
    // sm_89 and sm_120, less 1 KiB per block): the rolling kernel is
    // latency-bound at two (docs/benchmarks.md, session 6). Whole runs of
    // patch rows per warp, at least 8 each.
    const int64_t perBlock =
        sharedBytesPerSM(arch) / 3 - kReservedSharedPerBlock;
    const int warps = plan.threads / 32;
    for (size(); plan.sharedBytes > perBlock && plan.patches[0] > 8 * warps;
         size())
      plan.patches[0] -= warps;
    plan.threeBlocks = plan.sharedBytes <= perBlock;
  }
  // Each warp needs whole, equal runs of patch rows.
  if (plan.rolling && plan.patches[0] % (plan.threads / 32))
    plan.rolling = false;
  // A read per use costs more L1 traffic than B (docs/benchmarks.md, "tf32
  // sparse, A reuse"): two patch rows per pass, where the window of one
  // more kernel row still fits 128 registers and the runs are even.
  if (plan.rolling && !tensorCoreHoldsA(p)) {
    const PackedFragments &pk = *p.packed;
    plan.pairRows = (pk.tilesK + plan.rollPeriod) * bRegisters(pk.shape) *
                            (p.split ? 2 : 1) <=
                        128 &&
                    plan.patches[0] / (plan.threads / 32) % 2 == 0;
  }
  // The rolling tf32 kernel's B lanes may read a multiple of 16 elements
  // apart, meeting up to five to a bank (docs/benchmarks.md, "tf32
  // sparse, swizzled box"): swizzle where that takes fewer wavefronts.
  // 16-bit kernels load pairs as words and keep the plain layout, as do
  // the other kernels, whose whole traffic was not counted.
  plan.swizzle = plan.rolling && plan.uniformGather &&
                 p.packed->shape.type == MmaType::TF32 &&
                 plan.box[fast] % 4 == 0 &&
                 bWavefronts(plan, true) < bWavefronts(plan, false);
  plan.jobs = plan.patches[fast] / 8;
  for (int a = 0; a < fast; ++a)
    plan.jobs *= plan.patches[a];
  plan.staticBytes = lutBytes(plan, p);
  return plan;
}
