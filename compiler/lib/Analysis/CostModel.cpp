//===- CostModel.cpp - Roofline cost model and target selection -----------===//

#include "stencilc/Analysis/CostModel.h"
#include "stencilc/IR/MatrixEmulator.h"
#include "stencilc/Transforms/LayoutSearch.h"
#include "stencilc/Transforms/Passes.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

using namespace stencilc;

static const char *layoutWord(MatrixLayout l) {
  switch (l) {
  case MatrixLayout::Decompose:
    return "decompose";
  case MatrixLayout::Morph:
    return "morph";
  case MatrixLayout::Flatten:
    return "flatten";
  }
  return "decompose";
}

std::string Strategy::label() const {
  std::string s = targetName(target).str();
  if (target == Target::CudaCore && stream2d) {
    s += " stream-2d";
  } else if (target != Target::CudaCore && plane) {
    s += " plane";
  } else if (target != Target::CudaCore) {
    s += std::string(" ") + layoutWord(layout);
    if (layout == MatrixLayout::Morph)
      s += fmt::format("({},{})", r1, r2);
  }
  s += fmt::format(" t={}", steps);
  if (split && target != Target::CudaCore)
    s += " split-tf32";
  return s;
}

bool stencilc::splitsOperands(ElemType type, Precision policy) {
  return type == ElemType::F32 && policy != Precision::TF32;
}

std::vector<std::string> Strategy::flags() const {
  std::vector<std::string> f{"--target=" + targetName(target).str()};
  if (plane)
    f.push_back("--tensor-plane");
  else if (target == Target::CudaCore && stream2d)
    f.push_back("--stream-2d");
  else if (target != Target::CudaCore)
    f.push_back(std::string("--layout=") + layoutWord(layout));
  f.push_back("--fuse=" + std::to_string(steps));
  if (target != Target::CudaCore && layout == MatrixLayout::Morph)
    f.push_back(fmt::format("--morph={},{}", r1, r2));
  return f;
}

bool stencilc::buildTensorCoreProgram(Stencil &s, const Strategy &st,
                                      int arch, DiagnosticEngine &diags) {
  int radius = std::max(1, s.radius());
  if (radius * st.steps > kMaxRadius) {
    diags.error(s.loc, "fusing " + llvm::Twine(st.steps) + " steps of "
                           "stencil '" + s.name + "' reaches radius " +
                           llvm::Twine(radius * st.steps) +
                           "; tensor-core layouts take a fused radius up "
                           "to " + llvm::Twine(kMaxRadius) +
                           " (lower --fuse)");
    return false;
  }
  bool sparse = st.target == Target::SparseTensorCore;
  std::string pipeline;
  if (st.steps > 1)
    pipeline = "temporal-fusion{steps=" + std::to_string(st.steps) + "},";
  std::string archOpt = "arch=" + std::to_string(arch);
  switch (st.layout) {
  case MatrixLayout::Decompose:
    // 16-bit 2:4 with a fused kernel at most 15 wide: 16 outputs a patch,
    // so each kernel row's block is 32 columns, one m16n8k32 K tile, and
    // every row of A is an output. SPIDER's kx + 1 rows do the same MMAs
    // per point but split K tiles across kernel rows (narrow kernels) or
    // straddle them (kx = 9 to 13), which rules out the rolling kernel.
    if (sparse && s.elemType != ElemType::F32 && 2 * radius * st.steps < 15)
      pipeline += "decompose{rows=16," + archOpt + "}";
    else
      pipeline += "decompose{" + archOpt + "}";
    // 2:4: SPIDER's pairs of pairs, ordered so each B register's halves
    // are neighbours (one load); tf32 keeps SPIDER's 1:2 order.
    if (sparse)
      pipeline += s.elemType == ElemType::F32 ? ",strided-swap"
                                              : ",strided-swap{adjacent=1}";
    break;
  case MatrixLayout::Morph:
    pipeline += "layout-morph{r1=" + std::to_string(st.r1) +
                ",r2=" + std::to_string(st.r2) + "," + archOpt + "}";
    pipeline += sparse ? ",sparsity-conversion" : "";
    break;
  case MatrixLayout::Flatten:
    pipeline += "flatten{" + archOpt + "}";
    pipeline += sparse ? ",sparsity-conversion" : "";
    break;
  }
  pipeline += st.split ? ",compress24{split=1}" : ",compress24";
  Module one;
  one.stencils.push_back(std::move(s));
  bool ok = runPipeline(one, pipeline, PipelineOptions(), llvm::errs(), diags);
  s = std::move(one.stencils.front());
  return ok;
}

RooflineMetrics stencilc::cudaCoreMetrics(double flopsPerStep, double bytes,
                                          int steps) {
  RooflineMetrics m;
  m.C = steps * flopsPerStep;
  m.M = bytes;
  m.I = m.C / m.M;
  return m;
}

RooflineMetrics stencilc::tensorCoreMetrics(double flopsPerStep,
                                            double bytes, int steps,
                                            double alpha, double S) {
  RooflineMetrics m;
  m.C = alpha / S * steps * flopsPerStep;
  m.M = bytes;
  m.I = m.C / m.M;
  return m;
}

double stencilc::boxAlpha(int dims, int radius, int steps) {
  return std::pow(2.0 * radius * steps + 1, dims) /
         (steps * std::pow(2.0 * radius + 1, dims));
}

int stencilc::scenario(double iCu, double ridgeCu, double iTc,
                       double ridgeTc) {
  bool cuMemory = iCu < ridgeCu, tcMemory = iTc < ridgeTc;
  if (cuMemory)
    return tcMemory ? 1 : 2;
  return tcMemory ? 3 : 4;
}

namespace {

/// The largest fused halo (depth x radius) the automatic depth considers
/// for the CUDA-core kernels.
constexpr int kMaxCudaCoreHalo = 12;

/// The streaming kernel's instructions a point and level for each value
/// past its registers (CudaCorePlan::values).
constexpr double kSpillInstructions = 4;
/// How much faster the 2-D streaming kernel issues at three blocks an SM
/// than at two (CudaCorePlan.cpp, planStream; set below).
constexpr double kThreeBlockIssueGain = 1.12;

/// Flops of one step per point: 2 per tap of a linear update (Gu et al.'s
/// C = 2K), one per operation of any other expression.
double flopsPerStep(const Stencil &s) {
  double flops = 0;
  for (const Update &u : s.updates) {
    if (u.linear) {
      flops += 2.0 * u.linear->taps.size();
      continue;
    }
    std::vector<bool> live = s.graph.reachable({u.root});
    for (size_t i = 0; i < live.size(); ++i) {
      if (!live[i] || s.graph.isGridFree(static_cast<int>(i)))
        continue;
      const Node &n = s.graph[static_cast<int>(i)];
      if (n.op == Op::Pow)
        flops += std::max(1, std::abs(n.exponent) - 1);
      else if (n.op != Op::Read && n.op != Op::Const && n.op != Op::Param)
        flops += 1;
    }
  }
  return std::max(flops, 1.0);
}

/// The distinct grid reads of one step; with `dropAxis0`, reads that differ
/// only along axis 0 count once (the CUDA-core kernel's strips keep that
/// window in registers); with `offColumnOnly`, reads of the point's own
/// column are left out, and the count may be 0 (the streaming kernel keeps
/// them in registers).
double distinctReads(const Stencil &s, bool dropAxis0,
                     bool offColumnOnly = false) {
  std::set<std::pair<int, std::array<int, kMaxDims>>> reads;
  std::vector<bool> live = s.graph.reachable(s.roots());
  for (size_t i = 0; i < live.size(); ++i) {
    const Node &n = s.graph[static_cast<int>(i)];
    if (!live[i] || n.op != Op::Read)
      continue;
    std::array<int, kMaxDims> off{};
    bool ownColumn = true;
    for (int a = dropAxis0 ? 1 : 0; a < s.dims; ++a) {
      off[a] = n.offset[a];
      ownColumn &= a == 0 || n.offset[a] == 0;
    }
    if (!offColumnOnly || !ownColumn)
      reads.insert({n.index, off});
  }
  if (offColumnOnly)
    return static_cast<double>(reads.size());
  return std::max<double>(1, reads.size());
}

/// Bytes per point of one unfused step: every updated grid is read and
/// written, every other grid the update reads is read.
double bytesPerStep(const Stencil &s) {
  std::vector<bool> read(s.grids.size());
  std::vector<bool> live = s.graph.reachable(s.roots());
  for (size_t i = 0; i < live.size(); ++i)
    if (live[i] && s.graph[static_cast<int>(i)].op == Op::Read)
      read[s.graph[static_cast<int>(i)].index] = true;
  double elems = 0;
  for (size_t g = 0; g < s.grids.size(); ++g)
    elems += s.grids[g].updated ? 2 : read[g] ? 1 : 0;
  return elems * elemTypeBytes(s.elemType);
}

int mmaIndex(MmaType t) { return static_cast<int>(t); }

struct Context {
  const Stencil &s;
  const CostModelOptions &o;
  DiagnosticEngine &quiet; ///< Reasons a candidate cannot be built.
  double flops1, bytes1, taps;
  int dimIndex;
};

void fillRoofline(CostCandidate &c, const Context &x, double peak) {
  const HardwareDesc &hw = x.o.hw;
  c.K = x.taps;
  c.flopsPerStep = x.flops1;
  int t = c.strategy.steps;
  if (c.strategy.target == Target::CudaCore) {
    c.metrics = cudaCoreMetrics(x.flops1, x.bytes1, t);
    c.roofline = std::min(peak, hw.bandwidth * c.metrics.I) / x.flops1 / 1e9;
    c.memoryBound = hw.bandwidth * c.metrics.I < peak;
    return;
  }
  c.metrics = tensorCoreMetrics(x.flops1, x.bytes1, t, c.alpha, c.S);
  c.roofline = c.S / c.alpha *
               std::min(peak, hw.bandwidth * c.metrics.I) / x.flops1 / 1e9;
  c.memoryBound = hw.bandwidth * c.metrics.I < peak;
  double peakCu = hw.cudaCorePeak(x.s.elemType);
  c.scenario = scenario(cudaCoreMetrics(x.flops1, x.bytes1, t).I,
                        peakCu / hw.bandwidth, c.metrics.I,
                        peak / hw.bandwidth);
}

/// The prediction from the resource times and the kernel kind's weights:
/// the weighted times add up (CostWeights), and the largest weighted term
/// names the bound.
void finish(CostCandidate &c, const std::array<double, 3> &w) {
  double terms[] = {w[0] * c.tGlobal, w[1] * c.tShared,
                    w[2] * c.tCompute + std::max(w[2], 1.0) * c.tSplit};
  double total = terms[0] + terms[1] + terms[2];
  int worst = static_cast<int>(std::max_element(terms, terms + 3) - terms);
  c.bound = worst == 0   ? "DRAM"
            : worst == 1 ? "shared memory"
            : c.strategy.target == Target::CudaCore ? "CUDA cores"
                                                    : "tensor cores";
  c.weights = w;
  c.predicted = total > 0 ? 1 / total : 0;
}

/// The plane kernel (CudaCorePlan::plane), one step per pass. A segment of
/// kT0 output planes sums kT0 + 2 r0 input planes, each in full, so the
/// work is rho = (kT0 + 2 r0) / kT0 times the useful work. Bound by
/// instruction issue: per output and plane summed, its FMAs (one
/// instruction per tap), its shared-memory reads ((kRY + 2 r1)(2 r2 + 1)
/// per kRY outputs) and the 2 r0 + 1 moves of its partial sums; per plane
/// and thread, the plane's load and store (about 8 instructions per
/// element) and the loop and barrier (about 10), shared by kRY outputs.
/// Each instruction costs an FFMA's two flops. The global traffic is one
/// read of the plane boxes and one write.
std::optional<CostCandidate> planeCandidate(CostCandidate &c,
                                            const Context &x,
                                            const CudaCorePlan &p) {
  const Stencil &s = x.s;
  const HardwareDesc &hw = x.o.hw;
  c.kernel = "plane";
  double outputs = 1, box = 1;
  for (int a = 0; a < s.dims; ++a) {
    outputs *= p.tile[a];
    box *= p.box(a);
  }
  const double rho = static_cast<double>(p.box(0)) / p.tile[0];
  const double rows = p.planeRows;
  const double elem = elemTypeBytes(s.elemType);
  const double taps = static_cast<double>(s.updates.front().linear->taps.size());
  const double planeElems = static_cast<double>(p.box(1)) * p.box(2);
  const double loadsPerThread = std::ceil(planeElems / p.threads);
  // The values of the thread's rows of a plane that some tap reads (nvcc
  // drops the others' loads): (kRY + 2 r1)(2 r2 + 1) for a box, the
  // centre column and the kRY rows' own for a star.
  std::set<std::pair<int, int>> read;
  for (const Tap &tap : s.updates.front().linear->taps)
    for (int i = 0; i < p.planeRows; ++i)
      read.insert({tap.offset[1] + i, tap.offset[2]});
  const double sharedReads = rho * static_cast<double>(read.size()) / rows;
  const double sharedWrites = rho * planeElems / (p.tile[1] * p.tile[2]);
  c.tGlobal = elem * (box / outputs + 1) / hw.bandwidth * 1e9;
  // The shared planes hold the computation's type (f32 for f16 grids).
  c.tShared = elemTypeBytes(s.compType) * (sharedReads + sharedWrites) /
              hw.sharedBandwidth * 1e9;
  double perOutput = rho * (taps + (2 * p.radius[0] + 1)) + sharedReads +
                     rho * (8 * loadsPerThread + 10) / rows;
  c.tCompute = 2 * perOutput / hw.cudaCorePeak(s.elemType) * 1e9;
  // Not yet calibrated: the other kernels' mean weights put box3d4r above
  // its roofline, so the counts stand unweighted until a description
  // weighs the plane kernel itself.
  std::string key = CostWeights::key("cuda-core", c.kernel, s.elemType);
  bool weighed = hw.weights.byKind.count(key) ||
                 hw.weights.byKind.count(key + "." + std::to_string(s.dims) +
                                         "d");
  finish(c, weighed ? hw.weights.lookup("cuda-core", c.kernel, s.elemType,
                                        s.dims)
                    : std::array<double, 3>{1, 1, 1});
  return c;
}

/// The register-queue star kernel (CudaCorePlan::star), one step per pass.
/// A segment of kT0 output planes reads kT0 + 2 r0 columns (rho =
/// (kT0 + 2 r0) / kT0) and writes kT0; each plane's in-plane halo (kR1
/// rows of the tile's columns above and below, kSide vectors of V =
/// planeCols either side of its rows) is read again from L2 (the
/// neighbouring tiles' interiors), counted at kL2Ratio times the DRAM
/// bandwidth. Shared memory: each output plane is written once with its
/// halo, and each thread reads 2 r1 row vectors and 2 kSide side vectors
/// for its V outputs. Instruction issue per output: the FMAs (one a tap),
/// and per plane and thread, shared by its V outputs: the column's vector
/// load and each halo vector's (about 9 instructions each with their
/// addressing and tests), their shared-memory stores (one each), the
/// shared-memory reads, the vector store (4) and the loop, barrier and
/// uniform bookkeeping (25); the queue shifts by renaming and costs
/// nothing. Each instruction costs an FFMA's two flops. This counts the
/// inner tiles' path from the SASS (sm_90): about 30 instructions an output
/// for star3d2r, where ncu measured 46 over the whole grid
/// (docs/benchmarks.md, session 18). Not bound by bandwidth either: f16
/// moves half the bytes in the same time (session 19). The counts do not
/// capture that; the fitted weights do (cuda-core.star.half.3d weighs DRAM
/// 1.9, f32 1.2: CalibratedWeights.inc, fitted in session 20 on the 3-D
/// suite, docs/cost-model.md).
///
/// The next plane's loads are in flight while the current one is summed,
/// so the times overlap; where a description does not weigh the kind, the
/// binding term counts in full and the other two at a quarter
/// (kStarOverlap).
std::optional<CostCandidate> starCandidate(CostCandidate &c, const Context &x,
                                           const CudaCorePlan &p) {
  const Stencil &s = x.s;
  const HardwareDesc &hw = x.o.hw;
  c.kernel = "star";
  constexpr double kL2Ratio = 2.5, kStarOverlap = 0.25;
  const double rho = static_cast<double>(p.box(0)) / p.tile[0];
  const double vec = p.planeCols;
  const double side = std::ceil(p.radius[2] / vec);
  const double elem = elemTypeBytes(s.elemType);
  const double taps =
      static_cast<double>(s.updates.front().linear->taps.size());
  const double tile = static_cast<double>(p.tile[1]) * p.tile[2];
  const double haloVectors =
      2.0 * p.radius[1] * p.tile[2] / vec + 2 * side * p.tile[1];
  const double haloLoads = std::ceil(haloVectors / p.threads);
  const double dram = elem * (rho + 1);
  const double l2 = elem * rho * haloVectors * vec / tile;
  c.tGlobal = (dram + l2 / kL2Ratio) / hw.bandwidth * 1e9;
  const double sharedReads = rho * (2.0 * p.radius[1] + 2 * side);
  const double sharedWrites = rho * (tile + haloVectors * vec) / tile;
  // The shared planes hold the computation's type (f32 for f16 grids).
  c.tShared = elemTypeBytes(s.compType) * (sharedReads + sharedWrites) /
              hw.sharedBandwidth * 1e9;
  const double perPlane = 9 * (1 + haloLoads) + (1 + haloLoads) +
                          (2.0 * p.radius[1] + 2 * side) + 4 + 25;
  const double perOutput = rho * taps + rho * perPlane / vec;
  c.tCompute = 2 * perOutput / hw.cudaCorePeak(s.compType) * 1e9;
  std::string key = CostWeights::key("cuda-core", c.kernel, s.elemType);
  bool weighed =
      hw.weights.byKind.count(key) ||
      hw.weights.byKind.count(key + "." + std::to_string(s.dims) + "d");
  std::array<double, 3> w{kStarOverlap, kStarOverlap, kStarOverlap};
  const double terms[] = {c.tGlobal, c.tShared, c.tCompute};
  w[std::max_element(terms, terms + 3) - terms] = 1;
  finish(c, weighed
                ? hw.weights.lookup("cuda-core", c.kernel, s.elemType, s.dims)
                : w);
  return c;
}

/// The CUDA-core kernel at depth t: each block loads its tile plus a halo
/// of t*r, computes a region that shrinks by r per step (the recomputed
/// halo makes the work rho times the useful work), and reads shared memory
/// once per distinct read of a point (once per column along a strip). The
/// streaming kernel has no halo work along axis 0 and reads only the taps
/// off the thread's own column from shared memory.
std::optional<CostCandidate> cudaCoreCandidate(const Context &x, int t) {
  const Stencil &s = x.s;
  const HardwareDesc &hw = x.o.hw;
  std::optional<CudaCorePlan> p = planCudaCore(s, t, x.o.arch, x.quiet,
                                                 /*frame=*/false,
                                                 x.o.distributed);
  if (!p)
    return std::nullopt;
  CostCandidate c;
  c.strategy.target = Target::CudaCore;
  c.strategy.steps = t;
  c.strategy.stream2d = p->stream && s.dims == 2;
  fillRoofline(c, x, hw.cudaCorePeak(s.elemType));
  if (p->star)
    return starCandidate(c, x, *p);
  if (p->plane)
    return planeCandidate(c, x, *p);
  double outputs = 1, box = 1, work = 0;
  for (int a = 0; a < s.dims; ++a) {
    outputs *= p->tile[a];
    box *= p->box(a);
  }
  // The streaming kernel recomputes no halo along axis 0, and reads its
  // own column from registers.
  // Its warps span the slab's last axis, so lanes outside a level's region
  // along that axis still take their warp's issue slots.
  int first = p->stream ? 1 : 0;
  for (int k = 1; k <= t; ++k) {
    double region = 1;
    for (int a = first; a < s.dims; ++a)
      region *= p->stream && a == s.dims - 1
                    ? p->box(a)
                    : p->tile[a] + 2.0 * p->radius[a] * (t - k);
    work += region;
  }
  for (int a = 0; a < first; ++a)
    work *= p->tile[a];
  double rho = work / (t * outputs);
  double elem = elemTypeBytes(s.elemType);
  // The global traffic of the unfused step, with reads over the box.
  double reads = x.bytes1 / elem - p->numUpdated;
  double global = elem * (reads * box / outputs + p->numUpdated) / t;
  double sharedReads = p->stream ? distinctReads(s, false, true)
                                 : distinctReads(s, p->strip > 1);
  double shared = elem * rho * (sharedReads + p->numUpdated);
  if (p->stream)
    c.kernel = "stream";
  c.tGlobal = global / hw.bandwidth * 1e9;
  c.tShared = shared / hw.sharedBandwidth * 1e9;
  c.tCompute = x.flops1 * rho / hw.cudaCorePeak(s.elemType) * 1e9;
  if (p->stream) {
    // ncu found the streaming kernel bound by instruction issue, so its
    // compute term counts instructions per point update (each costing
    // an FFMA's two flops): per point and level the arithmetic, the ring
    // loads and store and two register moves; per row and pass a load and
    // a store with their addressing (about 20); per iteration the loop,
    // the barrier and each level's bookkeeping (about 30 + 10 per level),
    // shared by `rows` rows. The weights absorb the constants' error.
    // The arithmetic of a linear update is a multiply-add a tap; of any
    // other, an instruction a flop. Values past the registers
    // (CudaCorePlan::values) spill: about 4 instructions a point and level
    // for each. Both chosen on the timed streaming candidates of the 3-D
    // suite (docs/cost-model.md, session 22), in f32 and f16; f64, whose
    // weights predate them and whose rows the registers do not decide,
    // keeps an instruction a flop and no spill term.
    const bool wide = s.compType == ElemType::F64;
    const double arithmetic = s.isLinear() && !wide ? x.flops1 / 2 : x.flops1;
    double perPoint = rho * (arithmetic + sharedReads + 1 + 2);
    if (!wide)
      perPoint +=
          rho * kSpillInstructions * std::max(0, p->values - p->valueBudget);
    double perRow = 20.0 / t;
    double perIteration = (30.0 + 10.0 * t) / (p->rows * t);
    c.tCompute = 2 * (perPoint + perRow + perIteration) /
                 hw.cudaCorePeak(s.elemType) * 1e9;
    // Rings that leave fewer blocks an SM than the plan launches for
    // (2-D rows at t = 8: 128 KiB a block, one block an SM) leave fewer
    // warps to issue: star2d1r ran 714 GStencils/s at t = 8 against 1063
    // at t = 6 (docs/benchmarks.md, session 26).
    const int64_t perBlock = p->sharedBytes + kReservedSharedPerBlock;
    const int64_t resident = std::max<int64_t>(
        1,
        std::min<int64_t>(p->minBlocks, sharedBytesPerSM(x.o.arch) / perBlock));
    c.tCompute *= static_cast<double>(p->minBlocks) / resident;
    // The rules' 2-D slab (256 threads) at three blocks an SM
    // (CudaCorePlan.cpp, planStream) issues faster than at the two the
    // weights were fitted on: the median of 20 timed pairs at t = 2-4
    // (H200, docs/benchmarks.md, session 27; +1% to +25%). A --tile slab
    // of another size was not timed so.
    if (s.dims == 2 && p->threads == 256 && resident == 3)
      c.tCompute /= kThreeBlockIssueGain;
  }
  finish(c, hw.weights.lookup("cuda-core", c.kernel, s.elemType, s.dims));
  return c;
}

/// The tensor-core kernel: the MMAs of the program per point (SparStencil
/// eq. 9), B gathered from shared memory (eq. 10), one read and one write
/// of the grid.
std::optional<CostCandidate> tensorCoreCandidate(const Context &x,
                                                 const Strategy &st) {
  const HardwareDesc &hw = x.o.hw;
  Stencil built = x.s;
  int arch = archNumber(x.o.arch);
  if (!buildTensorCoreProgram(built, st, arch, x.quiet))
    return std::nullopt;
  const MatrixProgram &p = *built.matrix;
  const MatrixStats &stats = p.stats;
  std::optional<TensorCorePlan> plan = planTensorCore(built, x.quiet);
  if (!plan)
    return std::nullopt;
  CostCandidate c;
  c.strategy = st;
  c.kernel = plan->rolling          ? "rolling"
             : plan->uniformGather ? "uniform"
                                   : "table";
  c.shape = p.shape;
  c.alpha = stats.alpha;
  c.S = stats.S;
  bool sparse = st.target == Target::SparseTensorCore;
  double peak = sparse ? hw.sparseTensorCore[mmaIndex(p.shape.type)]
                       : hw.tensorCore[mmaIndex(p.shape.type)];
  if (peak <= 0)
    return std::nullopt;
  // Split-TF32: a product of tiles takes 4 MMAs, 2 where A is known to be
  // exact in tf32 (a parameter's value is not known: 4), so its roof is a
  // quarter (a half) of tf32's.
  if (p.split)
    c.splitMmas = splitNeedsLowA(built).value_or(true) ? 4 : 2;
  fillRoofline(c, x, peak / std::max(1, c.splitMmas));
  int t = st.steps;
  double mmaFlops = 2.0 * p.shape.m * p.shape.n * p.shape.k;
  c.tCompute = stats.mmaPerPoint * mmaFlops / peak / t * 1e9;
  c.tGlobal = x.bytes1 / t / hw.bandwidth * 1e9;
  // The B elements a lane's fragments take per output point: k'/m', once
  // per patch row in the rolling kernel.
  double bElems = static_cast<double>(stats.paddedColumns) / stats.rows;
  if (c.kernel == "rolling")
    bElems /= p.packed->tilesK;
  if (p.split) {
    // What the split adds to the tf32 kernel: the extra MMAs at the tf32
    // rate; and the kernel splits every B element it loads (cvt, sub,
    // cvt) and adds the second accumulator to the first once per output,
    // each an instruction at the CUDA cores' issue rate (two flops of an
    // FFMA).
    double convert = (3 * bElems + 1) * 2 / hw.cudaCorePeak(ElemType::F32);
    c.tSplit = (c.splitMmas - 1) * c.tCompute + convert / t * 1e9;
  }
  // Shared memory by load instructions, not bytes: a patch of m' outputs
  // gathers its k' B elements; a gather table costs a second load per
  // element, uniform 16-bit gathers load pairs as one word, and the rolling
  // kernel loads each kernel row once per patch row instead of once per K
  // tile. One 4-byte load per lane is the unit of sharedBandwidth.
  double loads = bElems;
  if (c.kernel == "table")
    loads *= 2;
  else if (mmaTypeBytes(p.shape.type) == 2)
    loads *= 0.5;
  c.tShared = loads * 4 / t / hw.sharedBandwidth * 1e9;
  finish(c, hw.weights.lookup(targetName(st.target), c.kernel,
                              x.s.elemType, x.s.dims));
  return c;
}

/// The tensor-core plane kernel of 3-D boxes (TensorPlaneEmitter.cpp), one
/// step per pass. Per m16n8 block (128 outputs) of each input plane, one
/// mma.sp m16n8k32 (sparse) or mma.sync m16n8k16 (dense) per (dz, dy):
/// (2 r0 + 1) (2 r1 + 1) / 128 MMAs per output, at the unit's rate, times
/// rho = (kT0 + 2 r0) / kT0 for the planes around a segment. Shared memory
/// by bytes, the plane's box written once, and per warp and plane: sparse,
/// per (dz, dy) one compressed A (512 bytes) for its planeBlocks blocks and
/// per (dy, block) one ldmatrix.x4 of B (512 bytes) for the 2 r0 + 1 MMAs;
/// dense, per dy planeBlocks + 1 halves of the windows (256 bytes each) and
/// per (dz, dy) one B (256 bytes) for the planeBlocks blocks. The global
/// traffic is the plane kernel's: the boxes read, the tile written.
std::optional<CostCandidate> tensorPlaneCandidate(const Context &x,
                                                  Target target) {
  const Stencil &s = x.s;
  const HardwareDesc &hw = x.o.hw;
  Stencil copy = s;
  copy.hints.tensorPlane = target == Target::SparseTensorCore ? 2 : 1;
  std::optional<CudaCorePlan> p =
      planCudaCore(copy, 1, x.o.arch, x.quiet, false, x.o.distributed);
  if (!p || !p->tensorPlane)
    return std::nullopt;
  const bool sparse = target == Target::SparseTensorCore;
  const MmaType type =
      s.elemType == ElemType::BF16 ? MmaType::BF16 : MmaType::F16;
  const double peak = sparse ? hw.sparseTensorCore[mmaIndex(type)]
                             : hw.tensorCore[mmaIndex(type)];
  if (peak <= 0)
    return std::nullopt;
  CostCandidate c;
  c.strategy.target = target;
  c.strategy.plane = true;
  c.strategy.steps = 1;
  c.kernel = "plane";
  c.shape.type = type;
  c.shape.k = sparse ? 32 : 16;
  c.shape.sparse = sparse;
  fillRoofline(c, x, peak);
  const double q = 2 * p->radius[0] + 1, dy = 2 * p->radius[1] + 1;
  const double rho = static_cast<double>(p->box(0)) / p->tile[0];
  const double nb = p->planeBlocks;
  // Logical flops of the products: a window of k32 (sparse) or k16 (dense)
  // for 16 x 8 outputs per (dz, dy).
  c.tCompute =
      rho * q * dy * (2.0 * 16 * 8 * (sparse ? 32 : 16)) / 128 / peak * 1e9;
  const double aBytes =
      sparse ? 512.0 * q * dy / (128 * nb) : 256.0 * dy * (nb + 1) / (128 * nb);
  const double bBytes = sparse ? 512.0 * dy / 128 : 256.0 * q * dy / (128 * nb);
  const double planeBytes = 2.0 * (p->tile[1] + 2 * p->radius[1]) *
                            (p->tile[2] + 16) / (p->tile[1] * p->tile[2]);
  c.tShared = rho * (aBytes + bBytes + planeBytes) / hw.sharedBandwidth * 1e9;
  double outputs = 1, box = 1;
  for (int a = 0; a < s.dims; ++a) {
    outputs *= p->tile[a];
    box *= p->box(a);
  }
  c.tGlobal =
      elemTypeBytes(s.elemType) * (box / outputs + 1) / hw.bandwidth * 1e9;
  // Not calibrated: weights 1 until a description weighs the kind.
  std::string key =
      CostWeights::key(targetName(target).str(), c.kernel, s.elemType);
  bool weighed =
      hw.weights.byKind.count(key) ||
      hw.weights.byKind.count(key + "." + std::to_string(s.dims) + "d");
  finish(c, weighed ? hw.weights.lookup(targetName(target), c.kernel,
                                        s.elemType, s.dims)
                    : std::array<double, 3>{1, 1, 1});
  return c;
}

/// The precision policy's verdict on `c`. Tensor cores on f32 grids are
/// built in the policy's arithmetic (split-TF32, or tf32 when asked for),
/// so only split-tf32's demand for tensor cores rules anything out.
void applyPolicy(CostCandidate &c, const Stencil &s, Precision policy) {
  if (c.strategy.target != Target::CudaCore || s.elemType != ElemType::F32 ||
      policy != Precision::SplitTF32)
    return;
  c.allowed = false;
  c.reason = "precision split-tf32 runs the products of f32 grids on "
             "tensor cores in split-TF32, and only linear stencils of one "
             "grid have them (--precision=exact also allows CUDA cores)";
}

} // namespace

std::vector<CostCandidate>
stencilc::evaluateCandidates(const Stencil &s, const CostModelOptions &o,
                             DiagnosticEngine &diags) {
  std::string scratch;
  llvm::raw_string_ostream scratchStream(scratch);
  DiagnosticEngine quiet(diags.getSourceMgr(), scratchStream);
  Context x{s, o, quiet, flopsPerStep(s), bytesPerStep(s), 0,
            std::max(0, s.dims - 1)};
  x.taps = distinctReads(s, false);
  std::vector<CostCandidate> out;

  int radius = s.maxUpdatedRadius();
  if ((!o.target || *o.target == Target::CudaCore) && !o.layout) {
    std::vector<int> depths{1, 2, 3, 4, 6, 8};
    if (o.steps)
      depths = {*o.steps};
    // The CUDA-core kernels take any depth; the automatic ones stop at a
    // fused halo of 12 points, a bound on the search (at radius 3 the
    // fastest depths measured on the H200 were 2 to 4 and t = 8 the
    // slowest: docs/benchmarks.md, session 8). While the bound was
    // kMaxRadius, 8, the tensor-core fusion's, radius 3 never got past
    // t = 2.
    // A 2-D f32 stencil that streams is also a candidate of the
    // streaming kernel (--stream-2d) at each depth, unless the command
    // line fixes the kernel: --stream-2d itself; a box kernel's --tile or
    // --threads; --target=cuda-core with a depth, which generates the box
    // kernel (the choice is then no one's to make). Not under
    // --distributed, whose kernel is the box kernel. Not for 16-bit grids,
    // where it ran 10-23% behind the box kernel's best on each of the six
    // shapes timed, nor f64, not timed (docs/cost-model.md, session 26).
    std::optional<Stencil> streamed;
    if (streamsIn2D(s) && s.elemType == ElemType::F32 && !s.hints.stream2d &&
        !s.hints.tile && !s.hints.threads && !o.distributed &&
        !(o.target && o.steps)) {
      streamed = s;
      streamed->hints.stream2d = true;
    }
    for (int t : depths) {
      if (!o.steps && radius * t > kMaxCudaCoreHalo)
        continue;
      if (radius == 0 && t > 1 && !o.steps)
        continue;
      if (std::optional<CostCandidate> c = cudaCoreCandidate(x, t))
        out.push_back(*c);
      if (!streamed)
        continue;
      const Context y{*streamed, o,      quiet,     x.flops1,
                      x.bytes1,  x.taps, x.dimIndex};
      if (std::optional<CostCandidate> c = cudaCoreCandidate(y, t))
        if (c->strategy.stream2d)
          out.push_back(*c);
    }
  }

  // Tensor cores: each target and layout at layout search's depth (and
  // morph's (r1, r2)), unless --fuse fixes the depth.
  bool linear = s.isLinear() && s.updates.size() == 1;
  std::vector<LayoutCandidate> searched;
  int arch = archNumber(o.arch);
  if (linear && (!o.target || *o.target != Target::CudaCore)) {
    LayoutSearchOptions lo;
    lo.arch = arch;
    lo.maxSteps = o.searchMaxSteps;
    lo.maxR = o.searchMaxR;
    // Split-TF32 takes up to three tf32 MMAs per product: a third of the
    // rate, for the depth and patch each layout is tried at.
    if (splitsOperands(s.elemType, o.precision))
      lo.peakTF32 /= 3;
    searched = searchLayouts(s, lo, quiet);
  }
  // The plane kernel of 3-D boxes, where it applies. An explicit tc or sptc
  // without --layout gets it alone, as stencilc generates it then.
  const bool plane = o.tensorPlane && linear && tensorPlaneApplies(s) &&
                     !o.layout &&
                     (!o.steps || *o.steps == 1) && !o.distributed;
  for (Target target : {Target::TensorCore, Target::SparseTensorCore}) {
    if (!linear || (o.target && *o.target != target))
      continue;
    if (plane)
      if (std::optional<CostCandidate> c = tensorPlaneCandidate(x, target))
        out.push_back(*c);
    if (plane && o.target)
      continue;
    for (MatrixLayout layout : {MatrixLayout::Decompose, MatrixLayout::Morph,
                                MatrixLayout::Flatten}) {
      if (o.layout && *o.layout != layout)
        continue;
      Strategy st;
      st.target = target;
      st.layout = layout;
      st.split = splitsOperands(s.elemType, o.precision);
      st.steps = o.steps ? *o.steps : 0;
      st.r1 = 4;
      st.r2 = s.dims == 1 ? 1 : 4;
      // 16-bit 2:4 decompose at every depth its fused radius allows:
      // layout search scores the plain decompose layout, while
      // buildTensorCoreProgram builds the 16-row one up to a fused width of
      // 15 and the plain one past it, so the searched depth can be the
      // worst one (box2d2r: t = 4, 191 predicted and 196 measured on an
      // H200, where t = 3 is predicted 1272 and measured 1286). The other
      // layouts are built as they were searched.
      const bool everyDepth =
          target == Target::SparseTensorCore && elemTypeBytes(s.elemType) == 2;
      if (layout == MatrixLayout::Decompose && everyDepth && !o.steps) {
        int radius = std::max(1, s.radius());
        int deepest = kMaxRadius / radius;
        if (o.searchMaxSteps > 0)
          deepest = std::min(deepest, o.searchMaxSteps);
        for (int t = 1; t <= deepest; ++t) {
          st.steps = t;
          if (std::optional<CostCandidate> c = tensorCoreCandidate(x, st))
            out.push_back(*c);
        }
        continue;
      }
      bool sparse = target == Target::SparseTensorCore;
      for (const LayoutCandidate &lc : searched) {
        if (lc.layout != layout || lc.shape.sparse != sparse ||
            (sparse && layout == MatrixLayout::Decompose && !lc.stridedSwap) ||
            (layout == MatrixLayout::Decompose && lc.r1 != 0) ||
            (o.steps && lc.steps != *o.steps))
          continue;
        st.steps = lc.steps;
        if (layout == MatrixLayout::Morph) {
          st.r1 = lc.r1;
          st.r2 = lc.r2;
        }
        break;
      }
      if (st.steps == 0)
        st.steps = 1;
      if (std::optional<CostCandidate> c = tensorCoreCandidate(x, st))
        out.push_back(*c);
    }
  }
  for (CostCandidate &c : out)
    applyPolicy(c, s, o.precision);
  std::stable_sort(out.begin(), out.end(),
                   [](const CostCandidate &a, const CostCandidate &b) {
                     return a.predicted > b.predicted;
                   });
  for (CostCandidate &c : out)
    if (c.allowed) {
      c.chosen = true;
      return out;
    }
  if (!out.empty()) {
    diags.error(s.loc, "every strategy for stencil '" + s.name +
                           "' breaks the precision policy: " +
                           out.front().reason);
    return {};
  }
  // Nothing could be built: build the requested one again, reporting why.
  unsigned before = diags.errorCount();
  if (!o.target || *o.target == Target::CudaCore) {
    planCudaCore(s, o.steps ? *o.steps : 1, o.arch, diags, /*frame=*/false,
                 o.distributed);
  } else {
    Strategy st;
    st.target = *o.target;
    st.split = splitsOperands(s.elemType, o.precision);
    st.layout = o.layout ? *o.layout : MatrixLayout::Decompose;
    st.steps = o.steps ? *o.steps : 1;
    st.r1 = 4;
    st.r2 = s.dims == 1 ? 1 : 4;
    Stencil copy = s;
    // A program that builds can still be refused by the kernel's plan
    // (shared memory, or a coefficient its operand type cannot hold):
    // tensorCoreCandidate asked it quietly.
    if (buildTensorCoreProgram(copy, st, arch, diags))
      planTensorCore(copy, diags);
  }
  if (diags.errorCount() == before)
    diags.error(s.loc, "internal error: no strategy could be built for "
                       "stencil '" + s.name + "', and none said why");
  return {};
}
