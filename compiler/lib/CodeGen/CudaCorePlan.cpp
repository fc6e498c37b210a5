//===- CudaCorePlan.cpp - Tiling and fusion of the CUDA-core path ---------===//

#include "stencilc/CodeGen/CudaCorePlan.h"
#include "stencilc/IR/ElemType.h"
#include "stencilc/IR/LinearForm.h"
#include "stencilc/IR/Weights.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>
#include <set>
#include <utility>

using namespace stencilc;

/// The automatic fusion depth: a fused halo t*r of about 8 points in 1-D and
/// 2-D and 2 in 3-D, where the recomputed halo is a large share of the tile.
/// Read off the fusion sweep of docs/benchmarks.md (H200, f32). stencilc
/// itself always passes the cost model's depth (Analysis/CostModel); this
/// remains the depth for callers that plan without the model.
static int autoFuse(const Stencil &s) {
  int r = s.maxUpdatedRadius();
  if (r == 0)
    return 1;
  return std::max(1, (s.dims == 3 ? 2 : 8) / r);
}

std::string stencilc::tileName(const std::array<int, kMaxDims> &tile,
                               int dims) {
  std::string name;
  for (int a = 0; a < dims; ++a)
    name += (a ? "x" : "") + std::to_string(tile[a]);
  return name;
}

/// Reports that the tile the user gave does not fit: "the tile T of
/// stencil 'S' at t=N needs <needs>; choose a smaller --tile or a lower
/// --fuse".
static void tileDoesNotFit(const Stencil &s, const CudaCorePlan &p,
                           const llvm::Twine &needs, DiagnosticEngine &diags) {
  diags.error(s.loc, "the tile " + tileName(p.tile, s.dims) + " of stencil '" +
                         s.name + "' at t=" + llvm::Twine(p.fuse) + " needs " +
                         needs + "; choose a smaller --tile or a lower --fuse");
}

static int64_t sharedBytes(const CudaCorePlan &p, const Stencil &s) {
  int64_t elems = 1;
  for (int a = 0; a < s.dims; ++a)
    elems *= p.box(a);
  // Strips of two columns space the buffers by an odd stride and shift
  // them by up to one element when the last axis's radius is odd.
  int64_t spare = p.stripCols > 1 ? p.radius[s.dims - 1] % 2 : 0;
  std::optional<ElemType> shared;
  bool mixed = false;
  for (const Grid &g : s.grids)
    if (g.updated) {
      mixed |= shared && *shared != g.type;
      shared = g.type;
    }
  if (!mixed)
    return (2 * p.numUpdated * (elems + spare) + spare) *
           elemTypeBytes(s.elemType);
  // Updated grids of different types: each grid's buffers in its own type,
  // from a 16-byte boundary (CudaEmitter's kOff_NAME).
  int64_t bytes = 0;
  for (const Grid &g : s.grids)
    if (g.updated)
      bytes += ((2 * (elems + spare) + spare) * elemTypeBytes(g.type) + 15) /
               16 * 16;
  return bytes;
}

/// The streaming loop's unroll. One turn of the rings per trip made the
/// level registers' shifts renames: +31% on heat-3d f32 t = 3, +28% on
/// box-3d27p f32 t = 2 (H200, docs/benchmarks.md). But an unrolled trip
/// lets nvcc hoist the next iteration's shared-memory reads, and where an
/// iteration reads many values, 64 registers (1024 threads) no longer
/// hold them: box-3d27p f64 t = 1 spilled 184 bytes and ran 102
/// GStencils/s against 125 without the unroll (session 9). The estimate:
/// the rows an iteration reads (rows + 2 * radius0), times the distinct
/// columns its taps read, times the registers of a value. Measured on
/// either side of the bound: 108 (box-3d27p f64, 4 rows) lost 18% with
/// the unroll, 72 (box-3d27p f64, 2 rows) gained 18%, 60 (heat-3d f64)
/// gained 4%.
static int streamUnroll(const Stencil &s, const CudaCorePlan &p) {
  constexpr int kUnrollRegisters = 96;
  std::set<std::pair<int, int>> columns;
  for (const Offset &o : s.updatedReads())
    columns.insert({o[1], o[2]});
  int words = s.compType == ElemType::F64 ? 2 : 1;
  int estimate = (p.rows + 2 * p.radius[0]) *
                 static_cast<int>(columns.size()) * words;
  return estimate <= kUnrollRegisters ? p.ring / p.rows : 1;
}

/// The rows of a group in the streaming kernel's rings
/// (CudaCorePlan::groupRows): a divisor of the iteration's rows whose
/// group is one 8- or 16-byte access, where every tap off the thread's
/// own column lies in its row (offset 0 along axis 0), since the other
/// columns are read a group of rows at a time; else 0. The hidden
/// --group-rows sets it (0: off).
///
/// The rule: groups of 2 rows at 4 rows an iteration, computing in f32,
/// in a kernel of at most two blocks an SM, with the fast iterations in
/// their own copy (splitFast). Measured on an H200 (docs/benchmarks.md,
/// session 28), the `auto` programs against rows, same call: heat-2d 961
/// -> 1050 GStencils/s, star2d2r 737 -> 804, star2d3r 593 -> 687, star2d4r
/// 430 -> 490, star-2d13p 553 -> 659, j2d9pt 798 -> 847, heat-3d 488 ->
/// 495, in f16 479 -> 583; 13 of 16 faster (+1% to +22%), star2d1r and
/// heat-periodic 1% slower, stream-2d-walls 7% (not explained). Groups of
/// 4 rows took more registers and lost where they spilled (heat-3d t = 3:
/// 359); at three blocks an SM (80 registers) every variant lost 6-12%
/// (heat-2d t = 4: 1074 -> 1013), and at 2 rows an iteration too
/// (star3d1r t = 4: 469 -> 452); without the fast copy the groups lost
/// (heat-2d t = 6: 906). The linear form with weights of parameters,
/// the kernel's arguments in registers, keeps rows: stream-divide (3-D,
/// 64 registers, t = 3) spilled 40 bytes where it had spilled 8, and fell
/// from 434 to 347 (the constant weights of j2d5pt, j2d9pt and
/// star-2d9p-r2 gained 4-6%).
static int planGroupRows(const Stencil &s, const CudaCorePlan &p) {
  bool argumentWeights = false;
  if (p.linearForm)
    for (const Update &u : s.updates)
      argumentWeights |= weightsAtRunTime(s, u.linear->taps);
  const bool rule = p.rows == 4 && p.minBlocks <= 2 &&
                    s.compType == ElemType::F32 && !argumentWeights;
  const int want = s.hints.groupRows.value_or(rule ? 2 : 0);
  if (want < 2 || p.rows % want != 0)
    return 0;
  const int bytes = want * elemTypeBytes(s.compType);
  if (bytes != 8 && bytes != 16)
    return 0;
  for (const Offset &o : s.updatedReads())
    if ((o[1] != 0 || o[2] != 0) && o[0] != 0)
      return 0;
  return want;
}

bool stencilc::streamsLinearForm(const Stencil &s) {
  if (!s.isLinear())
    return false;
  std::vector<bool> live = s.graph.reachable(s.roots());
  for (size_t i = 0; i < live.size(); ++i)
    if (live[i] && s.graph[i].op == Op::Div &&
        !s.graph.isGridFree(static_cast<int>(i)))
      return true;
  return false;
}

/// The values a thread of the streaming kernel keeps in registers at
/// `rows` rows an iteration: every level's rows (rows + 2 * radius0 each),
/// the loads in flight (2 * rows), and the update's distinct constants
/// (the weights' values, where the kernel sums the linear form), which
/// ptxas keeps in registers for the unrolled rows: all of them at 4 rows,
/// fewer at 2 (a quarter of them a row). Measured on an H100 (session 22):
/// box3d1r's 27 weights at 2 rows and t = 2 spilled 8 bytes, where all 27
/// would have put it 11 values past the registers.
static int streamValues(const Stencil &s, const CudaCorePlan &p, int rows) {
  std::set<double> constants;
  if (p.linearForm) {
    // Weights of parameters come from the kernel's arguments, not
    // registers; the others are literals.
    std::vector<double> values =
        evaluateGridFreeAll(s.graph, std::vector<double>(s.params.size(), 0));
    for (const Update &u : s.updates)
      if (!weightsAtRunTime(s, u.linear->taps))
        for (const Tap &tap : u.linear->taps)
          constants.insert(values[tap.coeff]);
  } else {
    std::vector<bool> live = s.graph.reachable(s.roots());
    for (size_t i = 0; i < live.size(); ++i)
      if (live[i] && s.graph[i].op == Op::Const && !s.graph[i].logical)
        constants.insert(s.graph[i].value);
  }
  const int kept = (static_cast<int>(constants.size()) * rows + 3) / 4;
  return p.fuse * (rows + 2 * p.radius[0]) + 2 * rows + kept;
}

/// Sets the rows of one streaming iteration and the rings: 4 planes
/// between barriers where the rings fit in shared memory (the sweep's
/// best) and the registers hold them, else 2, else 1. False where not even
/// 1 fits.
///
/// The registers: 1024 threads get 64 each, and 4 rows spilled where
/// streamValues passed 28. Measured on an H100 (docs/benchmarks.md,
/// session 21; 7 shapes, f32 and f16, t = 2 and 3): at 28 or less 4 rows
/// were 3-15% faster than 2 (heat-3d t = 3 at 28: +3%), above it 2 rows
/// were faster by 2-30% (star3d1r t = 3 at 33: +14%, +24% in f16), but for
/// the stars of radius 2 and 3 at t = 3 (45, 57), within 1-6% either way.
/// f64 keeps 4 rows where the rings fit, its spills left to the unroll's
/// bound (streamUnroll): box-3d27p f64 at t = 1 ran 135 GStencils/s at 4
/// rows without the unroll, 124 at 2 rows with it (session 21, call G).
static bool fitRings(CudaCorePlan &p, const Stencil &s, GpuArch arch) {
  for (int rows : {4, 2, 1}) {
    if (rows == 4 && s.compType != ElemType::F64 &&
        streamValues(s, p, rows) > p.valueBudget)
      continue;
    p.rows = rows;
    p.values = streamValues(s, p, rows);
    p.ring = 1;
    while (p.ring < 2 * (p.rows + p.radius[0]))
      p.ring *= 2;
    // The rings hold the computation's type (f32 for f16 and bf16 grids).
    p.sharedBytes = static_cast<int64_t>(p.fuse) * p.ring * p.slab() *
                    elemTypeBytes(s.compType);
    if (p.sharedBytes <= maxSharedBytesPerBlock(arch))
      return true;
  }
  return false;
}

/// Whether a stencil may stream along axis 0 (the streaming and the plane
/// kernel): one grid in 3-D. Stages, new values, t and the coordinates run
/// in the box kernel; so do a dirichlet value of parameters and sides that
/// differ.
static bool streamableShape(const Stencil &s) {
  if (s.grids.size() != 1 || s.hasStages() || s.usesStepOrPoint() ||
      !s.stages.empty())
    return false;
  for (const AxisBoundary &b : s.grids[0].boundary)
    if (!b.uniform() || b.side[0].node >= 0)
      return false;
  return true;
}

static bool streamable(const Stencil &s) {
  return s.dims == 3 && streamableShape(s);
}

bool stencilc::streamsIn2D(const Stencil &s) {
  return s.dims == 2 && streamableShape(s);
}

/// What rings that fitRings could not fit need, for an error: "rings of
/// N bytes of shared memory at one row an iteration, more than the M a
/// block may have on ARCH".
static std::string ringsTooLarge(const CudaCorePlan &p, GpuArch arch) {
  return ("rings of " + llvm::Twine(p.sharedBytes) +
          " bytes of shared memory at one row an iteration, more than the " +
          llvm::Twine(maxSharedBytesPerBlock(arch)) + " a block may have on " +
          archName(arch))
      .str();
}

/// The streaming plan, where it applies: one grid in 3-D, and a slab whose
/// halo leaves most threads computing outputs. In 2-D the box kernel's
/// strips were faster on every benchmark shape (docs/benchmarks.md, the
/// streaming kernel's sweep), so 2-D keeps it; the kernel itself is written
/// for 2-D and 3-D alike.
///
/// A tile the user gave (--tile) changes the slab, not the choice of
/// kernel, which the rules make with their own slab. Its slab may not
/// exceed a block's 1024 threads (an error, and `failed` set); with no
/// more points than the rules' slab, its rings fit where theirs do. In 2-D
/// (--stream-2d) a slab may be wider than the rules' 256, and rings that
/// do not fit are an error too.
static std::optional<CudaCorePlan> planStream(const Stencil &s,
                                              CudaCorePlan p, GpuArch arch,
                                              DiagnosticEngine &diags,
                                              bool &failed) {
  const bool flat = s.hints.stream2d && streamsIn2D(s);
  if (!streamable(s) && !flat)
    return std::nullopt;
  p.stream = true;
  p.linearForm = streamsLinearForm(s);
  p.strip = 1;
  // 32 x 32 threads, the most a block may have: the fastest of 32 x 16 and
  // 32 x 32 threads in the sweep.
  p.tile = {128, 32 - 2 * p.halo(1), 32 - 2 * p.halo(2)};
  if (flat) {
    // 2-D (--stream-2d, experiments): a row of 256 threads, segments of
    // 512 rows, two blocks an SM, so 128 registers a thread and more
    // values before the rows halve. The fastest setting of session 25's
    // sweep (docs/benchmarks.md): 8-22% over the box kernel on 2-D stars
    // of radius 1 to 3, behind it on star2d4r and the boxes.
    p.tile = {512, 256 - 2 * p.halo(1), 1};
    p.valueBudget = kStream2dRegisterValues;
  }
  // Where the rules' slab does not stream, --stream-2d says so rather
  // than leave the stencil to the box kernel.
  for (int a = 1; a < s.dims; ++a)
    if (p.tile[a] < 8) {
      if (flat) {
        diags.error(s.loc, "--stream-2d: at t=" + llvm::Twine(p.fuse) +
                               " stencil '" + s.name + "' has a halo of " +
                               llvm::Twine(p.halo(1)) +
                               " per side, which leaves fewer than 8 outputs "
                               "to a row of 256 threads; lower the fusion "
                               "depth (--fuse)");
        failed = true;
      }
      return std::nullopt;
    }
  if (!fitRings(p, s, arch)) {
    if (flat) {
      diags.error(s.loc, "--stream-2d: at t=" + llvm::Twine(p.fuse) +
                             " stencil '" + s.name + "' needs " +
                             ringsTooLarge(p, arch) +
                             "; lower the fusion depth (--fuse)");
      failed = true;
    }
    return std::nullopt;
  }
  if (s.hints.threads) {
    diags.error(s.loc, "--threads sets the box kernel's block, but stencil '" +
                           s.name + "' streams along axis 0 with one thread "
                           "per point of its slab; size the slab with "
                           "--tile instead");
    failed = true;
    return std::nullopt;
  }
  if (s.hints.tile) {
    p.tile = *s.hints.tile;
    if (p.slab() > kMaxThreads) {
      tileDoesNotFit(s, p,
                     "a slab of " + llvm::Twine(p.box(1)) + "x" +
                         llvm::Twine(p.box(2)) + " = " +
                         llvm::Twine(p.slab()) +
                         " threads (one per point of the tile and its halo "
                         "along axes 1 and 2), more than the " +
                         llvm::Twine(kMaxThreads) + " a block may have",
                     diags);
      failed = true;
      return std::nullopt;
    }
    // A 2-D slab past 512 threads gets one block an SM and fewer than 128
    // registers a thread: the 3-D slab's budget.
    if (flat)
      p.valueBudget = p.slab() <= kMaxThreads / 2 ? kStream2dRegisterValues
                                                  : kStreamRegisterValues;
    if (!fitRings(p, s, arch)) {
      // Only a 2-D slab can outgrow the rules' rings: the rules' 3-D slab
      // is the largest a block may have.
      assert(flat && "a slab of at most 1024 points fits where 32x32 does");
      tileDoesNotFit(s, p, ringsTooLarge(p, arch), diags);
      failed = true;
      return std::nullopt;
    }
  }
  p.threads = p.slab();
  p.minBlocks = std::max(1, (flat ? kMaxThreads / 2 : kMaxThreads) / p.threads);
  // The rules' 2-D slab runs three blocks an SM where their rings fit and
  // few values compete for the 80 registers that leaves
  // (kStream2dThreeBlockValues): the kernel waits on latency, and the
  // third block's warps hide it (heat-2d t = 4: 914 -> 1073 GStencils/s).
  // Measured at t = 2 to 4; one step a pass keeps two.
  if (flat && !s.hints.tile && p.minBlocks == 2 && p.fuse >= 2 &&
      p.values <= kStream2dThreeBlockValues &&
      3 * (p.sharedBytes + kReservedSharedPerBlock) <= sharedBytesPerSM(arch))
    p.minBlocks = 3;
  p.unroll = streamUnroll(s, p);
  p.groupRows = planGroupRows(s, p);
  p.splitFast = s.hints.splitFast.value_or(p.groupRows > 0);
  return p;
}

/// What every kernel that walks planes along axis 0 keeps of `base` (the
/// plane, star and tensor-core plane kernels): one step per pass.
static CudaCorePlan planeBase(const CudaCorePlan &base) {
  CudaCorePlan p;
  p.fuse = 1;
  p.fuseFromModel = base.fuseFromModel;
  p.numUpdated = base.numUpdated;
  p.radius = base.radius;
  p.plane = true;
  return p;
}

/// The plan the plane-walking kernels share (the plane kernel, the star
/// kernel): one step per pass, 128 planes a segment by 32 x 32 outputs of
/// axes 1 and 2, each thread owning 4 outputs along axis 1 (f64: 2, on a
/// 16-row tile), 256 threads. A warp spans 32 outputs of the contiguous
/// axis, so its loads and shared-memory reads are whole lines.
static CudaCorePlan planeWalk(const Stencil &s, const CudaCorePlan &base) {
  CudaCorePlan p = planeBase(base);
  p.planeRows = 4;
  p.tile = {128, 32, 32};
  if (s.elemType == ElemType::F64) {
    p.planeRows = 2;
    p.tile[1] = 16;
  }
  p.threads = p.tile[1] / p.planeRows * p.tile[2];
  return p;
}

/// Whether the linear update is a full box of radius `r` along every axis
/// whose taps each have their own weight (no two share a coefficient).
static bool ownWeightBox(const Stencil &s, int r) {
  const std::vector<Tap> &taps = s.updates.front().linear->taps;
  size_t box = 1;
  for (int a = 0; a < s.dims; ++a) {
    if (s.updatedRadius(a) != r)
      return false;
    box *= 2 * r + 1;
  }
  std::set<int> coeffs;
  for (const Tap &tap : taps)
    coeffs.insert(tap.coeff);
  return taps.size() == box && coeffs.size() == box;
}

/// Whether a 16-bit grid's dirichlet value outside the domain is one its
/// type cannot hold (0.1, or a value from a parameter; 0 and 0.5 it
/// holds). A kernel that keeps values in the grid's type on their way to
/// shared memory (the star kernel's ring, the plane kernel's prefetch)
/// would round it, where the reads of the other kernels give it exactly.
static bool inexactOutside(const Stencil &s) {
  if (s.elemType == s.compType)
    return false;
  const Grid &grid = s.grids[s.updates.front().grid];
  for (int a = 0; a < s.dims; ++a)
    for (const BoundarySide &side : grid.boundary[a].side)
      if (side.kind == BoundaryKind::Dirichlet &&
          (side.node >= 0 || roundTo(s.elemType, side.value) != side.value))
        return true;
  return false;
}

/// The plane kernel, where it pays: a linear 3-D update of one grid with a
/// radius of 2 to 4 along every axis (or a radius-1 box whose taps each
/// have their own weight, ownWeightBox), at one step per pass, on the shapes
/// the rules choose (not a --tile), in every element type (f16 and bf16
/// planes convert once as they load and are summed in f32). Wide boxes are
/// bound by their FMAs, and the streaming kernel's four rows of every tap
/// unrolled spilled at any register count (docs/benchmarks.md, "Why the wide
/// 3-D boxes are slow on CUDA cores"); high-order stars read 2 r + 1 planes per
/// output there and reached 15-26% of the DRAM roofline (issue 24), where the
/// plane kernel reads each plane once. The cost model weighs it at t = 1
/// against the streaming kernel at t >= 2 (star3d2r keeps t = 2). `base` holds
/// the depth and the radii; the plane kernel takes the streaming kernel's
/// stencils (streamable).
static std::optional<CudaCorePlan> planPlane(const Stencil &s,
                                             const CudaCorePlan &base) {
  if (!streamable(s) || base.fuse != 1 || s.hints.tile || s.hints.threads ||
      !s.isLinear())
    return std::nullopt;
  // Radius 2 to 4, the shapes ptxas was checked on: at radius 8 the sums
  // alone (4 x 17) would pass the 128 registers, and the radius-8 box's
  // source stays refused by its size (test/CodeGen/source-size-bound.st).
  // Radius 1 where every axis has it, for a full box whose 27 taps each
  // have their own weight: there the streaming kernel multiplies every tap
  // too, and ran at 110-118 GStencils/s (j3d27pt, t = 1 and 2, H200) where
  // the plane kernel ran at 197 (docs/benchmarks.md, session 19). A box
  // of shared weights (box-3d27p: 1/27) is the streaming kernel's, which
  // sums before it multiplies (254 against the plane kernel's 189).
  const bool box1 = ownWeightBox(s, 1);
  for (int a = 0; a < s.dims; ++a)
    if ((base.radius[a] < 2 && !box1) || base.radius[a] > 4)
      return std::nullopt;
  // Each thread's 4 outputs along axis 1 share each value it reads (4 + 2 r
  // rows for 4 outputs), with 2 r0 + 1 partial sums of each: 20 to 36
  // accumulators for r = 2 .. 4. Segments of 128 planes spend (128 + 2 r0)
  // / 128 of the FMAs on the planes before and after the segment. f64 sums
  // take two registers each: 4 rows spilled at 128 registers from r = 2
  // (and at 255 from r = 3, sm_90), 2 rows fit.
  CudaCorePlan p = planeWalk(s, base);
  // Registers for two blocks of 256 threads an SM (128 a thread). ptxas
  // for sm_90 builds f64 literals in registers: box3d4r f64 spilled 232
  // bytes at 128 and fits in 252 at one block an SM (8 warps, each with
  // 18 independent sums).
  p.minBlocks = s.elemType == ElemType::F64 && s.maxUpdatedRadius() >= 4 ? 1 : 2;
  // The shared planes hold the computation's type, as the star kernel's do:
  // a 16-bit value converts once, not at each of its reads, and a dirichlet
  // value keeps its exact value. It converts as it is stored, after the
  // plane's sums, so that no instruction waits on the next plane's loads
  // before them: f16 box3d2r 115 -> 130 GStencils/s, box3d3r 59 -> 64 (f32
  // 131, 65; H200, docs/benchmarks.md, session 25). Converted as it
  // loaded, ptxas placed the conversions before the sums. Where the
  // registers would round a dirichlet value, they hold the computation's.
  p.planeGridRegisters = s.elemType != s.compType && !inexactOutside(s);
  p.sharedBytes =
      2 * static_cast<int64_t>(p.box(1)) * p.box(2) * elemTypeBytes(s.compType);
  return p;
}

/// The register-queue star kernel (issue 24), where it applies: a linear
/// 3-D update of one grid whose taps lie on the three axes (a star), with
/// a radius of 1 to 4 along every axis, at one step per pass, on the
/// shapes the rules choose (not a --tile), in every element type (f16, bf16:
/// summed in f32). The plane kernel keeps 2 r0 + 1 partial sums per output and
/// moves them every plane; a star needs only its column's 2 r0 + 1 values along
/// axis 0, which the queue keeps in registers and shifts by renaming, and each
/// point of the output plane is read from shared memory by the 2 (r1 + r2)
/// in-plane taps.
static std::optional<CudaCorePlan>
planStar(const Stencil &s, const CudaCorePlan &base, GpuArch arch) {
  if (!streamable(s) || base.fuse != 1 || s.hints.tile || s.hints.threads ||
      !s.isLinear())
    return std::nullopt;
  for (int a = 0; a < s.dims; ++a)
    if (base.radius[a] < 1 || base.radius[a] > 4)
      return std::nullopt;
  for (const Tap &tap : s.updates.front().linear->taps) {
    int axes = 0;
    for (int a = 0; a < s.dims; ++a)
      axes += tap.offset[a] != 0;
    if (axes > 1)
      return std::nullopt;
  }
  CudaCorePlan p = planeWalk(s, base);
  p.star = true;
  // Each thread owns one vector of 4 outputs along axis 2 (2 in f64: 16
  // bytes) of one row: its column loads, shared-memory stores and output
  // stores are whole vectors, and its in-plane taps read 2 r1 + 2 vectors
  // for 4 outputs. The kernel of four rows of scalars (session 17) issued
  // 67 instructions an output for star3d2r (ncu, H200), about half of them
  // 64-bit addressing, and stopped at 54% of the DRAM roofline.
  p.planeRows = 1;
  p.planeCols = s.elemType == ElemType::F64 ? 2 : 4;
  // f32 tiles of 16 rows of 64 outputs (16 threads a row), the other types
  // 32 x 32: the same box at radius 2 (20 x 72 = 36 x 40 points) in rows
  // twice as long. Measured on an H200 at 512^3 in two calls
  // (docs/benchmarks.md, session 24, calls 2 and 4) against 32 x 32,
  // star3d1r-4r f32 291/308/287/244 -> 307/317/293/250 GStencils/s at one
  // step (+2-5%), and again in session 27: 296/311/290/247 ->
  // 310/320/296/251; f16 lost 2-5% and keeps 32 x 32.
  p.tile = s.elemType == ElemType::F32 ? std::array<int, 3>{32, 16, 64}
                                       : std::array<int, 3>{32, 32, 32};
  p.threads = p.tile[1] * p.tile[2] / p.planeCols;
  if (p.threads > 256) {
    p.tile[1] = 256 * p.planeCols / p.tile[2];
    p.threads = 256;
  }
  // Segments of 32 planes, not planeWalk's 128: 4,096 blocks at 512^3
  // instead of 1,024 (2.6 waves of 396 on an H200), so the last wave's idle
  // SMs cost less than the 2 r0 halo planes each segment reads again (12-25%
  // more column reads at r = 2 .. 4). Measured on an H200
  // (docs/benchmarks.md, session 17): star3d1r-4r 239/222/178/163 ->
  // 270/254/194/176 GStencils/s at 512^3; 16 planes gained on r = 1, 2
  // and lost on r = 3, 4.
  p.tile[0] = 32;
  // Three blocks of 256 threads an SM (80 registers a thread): the kernel
  // waits on DRAM latency more than on issue, so warps in flight beat
  // registers. Measured on an H200 at 512^3, f32 (docs/benchmarks.md,
  // session 18), three blocks against two: star3d1r 295 / 249, star3d3r
  // 290 / 241, star3d4r 247 / 236 GStencils/s, though ptxas spills 16, 12
  // and 44 bytes at three (and nothing at two); star3d2r fits three
  // without spilling. f64 queues take twice the registers, and f64 stays
  // at two blocks beyond r0 = 2 (not measured at three).
  p.minBlocks =
      s.elemType == ElemType::F64 && base.radius[0] != 2 ? 2 : 3;
  // The cp.async ring holds the grid's own type, so a 16-bit grid's
  // dirichlet value outside the domain must be exact in it (0, 0.5; not
  // 0.1, nor a value from a parameter), or the grid keeps the register
  // prefetch, whose shared planes hold the computation's type (f16 and
  // bf16 convert once as they load), as the reads of the other kernels
  // give it.
  // Two planes in flight for 16-bit grids; f32 and f64 keep the register
  // prefetch. Measured on an H200 at 512^3, one step a pass, against the
  // register prefetch in the same call (docs/benchmarks.md, session 24):
  // f16 star3d1r-4r 286/272/235/211 -> 410/376/325/243 GStencils/s (bf16
  // alike), the shared planes holding half the bytes; f32 moved by -5% to
  // +4% at one to three planes (star3d2r 308 -> 292 at two).
  const bool half = s.elemType == ElemType::F16 || s.elemType == ElemType::BF16;
  p.starPipeline =
      inexactOutside(s) ? 0 : s.hints.starPipeline.value_or(half ? 2 : 0);
  // On Hopper the ring may be filled by TMA (the hidden --star-tma): one
  // instruction a plane, issued by one thread, instead of a cp.async per
  // vector and thread. Off by default: it moved nothing beyond the noise.
  // Measured on an H200 at 512^3 against cp.async in the same call
  // (docs/benchmarks.md, session 27), f16 star3d2r-4r 379/327/246 ->
  // 382/318/240 GStencils/s (its boxes start on 16 bytes, so a 16-bit
  // row's sides grow from 4 elements to 8), f32 at two planes 295/280/249
  // -> 298/278/249: the kernel waits on L2 and latency, not on issuing its
  // loads.
  p.starTma = p.starPipeline > 0 && archNumber(arch) >= 90 &&
              s.hints.starTma.value_or(false);
  const int elemBytes = elemTypeBytes(p.starPipeline ? s.elemType : s.compType);
  p.starSide = (p.radius[2] + p.planeCols - 1) / p.planeCols;
  if (p.starTma) {
    const int unit = std::max(1, 16 / (p.planeCols * elemBytes));
    p.starSide = (p.starSide + unit - 1) / unit * unit;
  }
  const int64_t plane = int64_t(p.box(1)) * p.starWidth() * elemBytes;
  p.sharedBytes = p.starTma ? p.starRing() * ((plane + 127) / 128 * 128 + 8)
                            : int64_t(p.starRing()) * plane;
  return p;
}

bool stencilc::tensorPlaneApplies(const Stencil &s) {
  if (!streamable(s) || !s.isLinear() ||
      (s.elemType != ElemType::F16 && s.elemType != ElemType::BF16))
    return false;
  size_t box = 1;
  for (int a = 0; a < 3; ++a) {
    if (s.updatedRadius(a) < 1 || s.updatedRadius(a) > 4)
      return false;
    box *= 2 * s.updatedRadius(a) + 1;
  }
  // Full boxes: a star would multiply mostly zeros.
  return s.updates.front().linear->taps.size() == box;
}

/// The tensor-core plane kernel (TensorPlaneEmitter.cpp), 8 warps over a
/// tile of 64 columns (axis 2) and segments of 128 planes.
///
/// Sparse (mma.sp m16n8k32, the weights as A): each warp owns 16 columns
/// and 8 planeBlocks rows, so the tile has 16 planeBlocks rows. It keeps 4
/// f32 per m16n8 block for each of the 2 r0 + 1 output planes in flight:
/// 3 blocks at radius 1 (36 sums), 2 beyond (40 to 72), within the 128
/// registers of two blocks an SM (ptxas for sm_90 spilled 16 bytes at
/// radius 1 with 4 blocks, 44 at radius 2 with 3).
///
/// Dense (mma.sync m16n8k16, the grid as A and the weights as B): each warp
/// owns 16 rows and 8 planeBlocks columns, planeBlocks m16n8 blocks side by
/// side, whose A fragments share their halves of 8 columns, and reads the
/// B fragments of each (dz, dy) from a table in shared memory once for
/// them. planeBlocks is 2 (--plane-blocks sets it): measured on an H200
/// (docs/benchmarks.md, session 29) at 512^3 in f16, 2 blocks ran 206 /
/// 154 / 115 / 89 GStencils/s at radius 1 / 2 / 3 / 4, 1 block 200 (B in
/// registers) / 154 / 110 / 75 and 4 blocks 149 / 122 at radius 1 / 2 (4 f32
/// sums a block for each of the 2 r0 + 1 planes: 48 and 80 registers);
/// keeping B in registers (2 words a lane per (dz, dy)) won nothing at
/// radius 1 and spilled at radius 2.
static std::optional<CudaCorePlan>
planTensorPlane(const Stencil &s, const CudaCorePlan &base, GpuArch arch) {
  CudaCorePlan p = planeBase(base);
  p.tensorPlane = s.hints.tensorPlane;
  const bool sparse = p.tensorPlane == 2;
  const int64_t entries = (2 * p.radius[0] + 1) * (2 * p.radius[1] + 1);
  // --plane-blocks takes 1, 2 or 4 (stencilc.cpp).
  p.planeBlocks =
      sparse ? (base.radius[0] <= 1 ? 3 : 2) : s.hints.planeBlocks.value_or(2);
  // Dense: 8 / planeBlocks warps along axis 2, so planeBlocks along axis 1.
  p.tile = {128, 16 * p.planeBlocks, 64};
  p.threads = 256;
  p.minBlocks = 2;
  // The compressed (sparse) A of every (dz, dy), 32 lanes of 4 words, or
  // the dense B, 32 lanes of 2 words; a ring of plane buffers of rows of
  // 64 + 16 columns at a pitch of an odd number of 16-byte chunks (ldmatrix
  // and 4-byte reads without bank conflicts); per warp, a staging tile of
  // its outputs (sparse: 8 planeBlocks rows of 16 at a pitch of 24; dense:
  // 16 rows of 8 planeBlocks at a pitch of 8 planeBlocks + 8), so that
  // stores are whole 32-byte sectors. As many buffers, up to 4, as leave two
  // blocks an SM: loads of three planes in flight a block cover the DRAM
  // latency that one plane's products (about 1 us) do not.
  const int64_t table = entries * 32 * (sparse ? 4 : 2) * 4;
  const int64_t rows = p.tile[1] + 2 * p.radius[1];
  const int64_t pitch = 88;
  const int64_t staging = sparse ? 8 * (8 * p.planeBlocks) * 24 * 2
                                 : 8 * 16 * (8 * p.planeBlocks + 8) * 2;
  auto bytes = [&](int stages) {
    return table + stages * rows * pitch * 2 + staging;
  };
  p.planeStages = 2;
  for (int stages = 4; stages > 2 && p.planeStages == 2; --stages)
    if (2 * (bytes(stages) + kReservedSharedPerBlock) <= sharedBytesPerSM(arch))
      p.planeStages = stages;
  p.sharedBytes = bytes(p.planeStages);
  if (p.sharedBytes > maxSharedBytesPerBlock(arch))
    return std::nullopt;
  return p;
}

std::optional<CudaCorePlan> stencilc::planCudaCore(const Stencil &s,
                                                   std::optional<int> fuse,
                                                   GpuArch arch,
                                                   DiagnosticEngine &diags,
                                                   bool frame,
                                                   bool distributed) {
  CudaCorePlan p;
  bool byModel = false;
  if (!fuse) {
    fuse = s.hints.fuse;
    byModel = s.hints.fuseByModel;
  }
  // A depth the cost model chose is kept: it is only labelled automatic.
  p.fuseFromModel = !fuse || *fuse == 0 || byModel;
  p.fuse = !fuse || *fuse == 0 ? autoFuse(s) : *fuse;
  // A fused pass recomputes the halo of an updated grid past a periodic
  // edge as the image of the points across it. A grid that does not wrap
  // along that axis reads differently there than at the points the halo
  // stands for, so such stencils get one step per pass. (An updated grid
  // that does not wrap computes nothing past the edge: other grids may.)
  // A step that reads stages or new values at offsets computes them past a
  // periodic edge as the images of the points across it too, even at one
  // step per pass: there every grid and stage must wrap alike.
  bool staged = false;
  std::vector<bool> live = s.graph.reachable(s.writtenRoots());
  for (size_t i = 0; i < live.size(); ++i) {
    const Node &n = s.graph[i];
    staged |= live[i] && (n.op == Op::StageRead || n.op == Op::NewRead) &&
              n.offset != Offset{0, 0, 0};
  }
  for (int a = 0; a < s.dims && staged; ++a) {
    const Field *wraps = nullptr, *other = nullptr;
    for (const Grid &g : s.grids)
      (g.boundary[a].periodic() ? wraps : other) = &g;
    for (const Stage &st : s.stages)
      (st.boundary[a].periodic() ? wraps : other) = &st;
    if (!wraps || !other)
      continue;
    diags.error(s.loc, "stencil '" + s.name +
                           "' reads stages or new values, "
                           "so its grids and stages must agree on wrapping: '" +
                           wraps->name + "' is periodic along axis " +
                           llvm::Twine(a) + " and '" + other->name +
                           "' is not");
    return std::nullopt;
  }
  for (int a = 0; a < s.dims && p.fuse > 1; ++a) {
    const Grid *wraps = nullptr, *other = nullptr;
    for (const Grid &g : s.grids)
      if (!g.boundary[a].periodic())
        other = &g;
      else if (g.updated)
        wraps = &g;
    if (!wraps || !other)
      continue;
    if (p.fuseFromModel) {
      p.fuse = 1;
      break;
    }
    diags.error(s.loc, "temporal fusion of stencil '" + s.name +
                           "' needs its grids to agree on wrapping: '" +
                           wraps->name + "' is periodic along axis " +
                           llvm::Twine(a) + " and '" + other->name +
                           "' is not; use --fuse=1");
    return std::nullopt;
  }
  for (const Grid &g : s.grids)
    p.numUpdated += g.updated;
  for (int a = 0; a < s.dims; ++a)
    p.radius[a] = s.updatedRadius(a);
  if (!frame && !distributed && s.hints.tensorPlane && tensorPlaneApplies(s))
    if (std::optional<CudaCorePlan> tp = planTensorPlane(s, p, arch))
      return tp;
  if (!frame) {
    if (std::optional<CudaCorePlan> sp =
            distributed ? std::nullopt : planStar(s, p, arch))
      return sp;
    if (std::optional<CudaCorePlan> pp =
            distributed ? std::nullopt : planPlane(s, p))
      return pp;
    bool failed = false;
    if (std::optional<CudaCorePlan> sp = planStream(s, p, arch, diags, failed))
      return sp;
    if (failed)
      return std::nullopt;
  }
  // Default tiles. In 2-D, 64x64 beat 32x128, 64x128, 32x256, 16x256,
  // 64x32, 96x64, 128x64 and 128x32 (256 or 512 threads) on all four 2-D
  // benchmark shapes (H200, docs/benchmarks.md): less halo per output than
  // 32x128, and each row still whole 128-byte lines in f32.
  static const std::array<int, kMaxDims> kTiles[kMaxDims] = {
      {2048, 1, 1}, {64, 64, 1}, {16, 8, 32}};
  // Strips run along the slowest axis; in 1-D that axis is contiguous and
  // strided strips would conflict on shared-memory banks.
  static const int kStrips[kMaxDims] = {1, 8, 4};
  p.tile = kTiles[s.dims - 1];
  p.strip = kStrips[s.dims - 1];
  // In 2-D a strip also spans two columns: each value loaded serves both,
  // and pairs of columns move as one 8-byte (f32) access. This halves the
  // loads and the per-strip indexing for every tap an output needs; the
  // 2-D kernels are bound by instruction issue and shared-memory
  // wavefronts (docs/architecture.md). Tiles stay even along axis 1: the
  // shrinking below halves from 64 down to 4. Not in a tensor-core
  // program's frame, whose time is a block's latency: there two columns
  // per thread took box-2d9p (f16 sptc, t = 7) from 2621 to 2555
  // GStencils/s (docs/benchmarks.md, session 7).
  if (s.dims == 2 && !frame)
    p.stripCols = 2;
  // Each step spreads its strips over the block's threads in rounds, with
  // a barrier after the step. At radius 3 the first steps' regions exceed
  // 256 strips by a little (315 at t = 2: a second round of 59) and each
  // strip is long (49 taps for box-2d49p), so 384 threads beat 256:
  // box-2d49p f32 t = 2 286 -> 297 GStencils/s, t = 3 300 -> 302,
  // star-2d13p t = 4 445 -> 460 (H200, docs/benchmarks.md, session 8). At
  // radius 1, 256 stay the fastest (heat-2d t = 8: 960 against 942 with
  // 320 and 917 with 384). Not everywhere: star-2d13p f32 at t = 3 ran 503
  // with 256 and 476 with 384 (its automatic depth is 4).
  if (s.dims == 2 && !frame && s.maxUpdatedRadius() >= 3)
    p.threads = 384;
  // A tensor-core program's frame is one wave of edge tiles, timed by a
  // block's latency: 32x32 tiles of 128 threads took box-2d9p's frame (f16,
  // t = 7, 10240^2) from 75 to 62 us; 16x16 tiles also took 62 us
  // (docs/benchmarks.md, session 6).
  if (frame && s.dims == 2) {
    p.tile = {32, 32, 1};
    p.threads = 128;
  }
  int64_t limit = maxSharedBytesPerBlock(arch);
  // A tile and block the user gave replace the rules' (not in a frame,
  // whose tiles the tensor-core kernel's region sets). Strips shorten to
  // the tile, and nothing shrinks: a tile that does not fit is an error.
  const bool given = !frame && s.hints.tile;
  if (given) {
    p.tile = *s.hints.tile;
    p.strip = std::min(p.strip, p.tile[0]);
  }
  if (!frame && s.hints.threads)
    p.threads = *s.hints.threads;
  if (given && sharedBytes(p, s) > limit) {
    tileDoesNotFit(s, p,
                   llvm::Twine(sharedBytes(p, s)) +
                       " bytes of shared memory per block, more than the " +
                       llvm::Twine(limit) + " available on " + archName(arch),
                   diags);
    return std::nullopt;
  }
  // Halve the largest tile extent that may still shrink until the buffers
  // fit. Axis 0 keeps room for one strip.
  auto floor = [&](int a) { return a == 0 ? std::max(4, p.strip) : 4; };
  while (sharedBytes(p, s) > limit) {
    int axis = -1;
    for (int a = 0; a < s.dims; ++a)
      if (p.tile[a] > floor(a) && (axis < 0 || p.tile[a] > p.tile[axis]))
        axis = a;
    if (axis < 0) {
      diags.error(s.loc, "fusing " + llvm::Twine(p.fuse) +
                             " steps of stencil '" + s.name + "' needs " +
                             llvm::Twine(sharedBytes(p, s)) +
                             " bytes of shared memory per block even with "
                             "the smallest tile, more than the " +
                             llvm::Twine(limit) + " available on " +
                             archName(arch) +
                             "; lower the fusion depth (--fuse or hint "
                             "fuse)");
      return std::nullopt;
    }
    p.tile[axis] /= 2;
  }
  if (p.tile[s.dims - 1] % 2 != 0)
    p.stripCols = 1;
  // 16-byte loads and stores: a quarter of the f32 accesses, each with the
  // index arithmetic of one element. Not where the updated grids' types
  // differ, whose chunks would differ in elements.
  int vec = 16 / elemTypeBytes(s.elemType);
  bool sameType = true;
  for (const Grid &g : s.grids)
    sameType &= !g.updated || g.type == s.elemType;
  if (p.tile[s.dims - 1] % vec == 0 && sameType)
    p.vec = vec;
  p.sharedBytes = sharedBytes(p, s);
  return p;
}

std::vector<CudaCoreShape> stencilc::tuneShapes(const Stencil &stencil,
                                               int fuse, GpuArch arch,
                                               DiagnosticEngine &diags) {
  std::string ignored;
  llvm::raw_string_ostream sink(ignored);
  DiagnosticEngine quiet(diags.getSourceMgr(), sink);
  Stencil s = stencil;
  s.hints.tile.reset();
  s.hints.threads.reset();
  std::optional<CudaCorePlan> base = planCudaCore(s, fuse, arch, quiet);
  if (!base)
    return {};
  const int D = s.dims;
  std::vector<CudaCoreShape> shapes;
  auto same = [&](const CudaCoreShape &a, const CudaCoreShape &b) {
    return a.threads == b.threads &&
           std::equal(a.tile.begin(), a.tile.begin() + D, b.tile.begin());
  };
  const CudaCoreShape own{base->tile, 0};
  auto add = [&](CudaCoreShape c) {
    for (int a = 0; a < D; ++a)
      if (c.tile[a] < 1)
        return;
    if (same(c, own) || llvm::any_of(shapes, [&](const CudaCoreShape &o) {
          return same(c, o);
        }))
      return;
    s.hints.tile = c.tile;
    s.hints.threads.reset();
    if (c.threads)
      s.hints.threads = c.threads;
    if (planCudaCore(s, fuse, arch, quiet))
      shapes.push_back(c);
  };
  // The plane kernel's tile is fixed: a --tile plans the streaming kernel.
  if (base->plane)
    return shapes;
  if (base->stream) {
    // Segment lengths and slabs are the streaming sweep's axes
    // (docs/benchmarks.md). None of these beat the plan's shape on heat-3d
    // f32 in session 10; the 16x64 slab gained 0.8% on box-3d27p f32.
    for (int segment : {base->tile[0] / 2, base->tile[0] * 2}) {
      CudaCoreShape c = own;
      c.tile[0] = segment;
      add(c);
    }
    const int b1 = base->box(1), b2 = base->box(2);
    if (D == 2) {
      // A row of half and of twice the plan's threads (--stream-2d).
      for (int s1 : {b1 / 2, b1 * 2}) {
        CudaCoreShape c = own;
        c.tile[1] = s1 - 2 * base->halo(1);
        add(c);
      }
      return shapes;
    }
    for (auto [s1, s2] : {std::pair{b1 / 2, b2}, std::pair{b1, b2 / 2},
                          std::pair{b1 / 2, b2 * 2}}) {
      CudaCoreShape c = own;
      c.tile[1] = s1 - 2 * base->halo(1);
      c.tile[2] = s2 - 2 * base->halo(2);
      add(c);
    }
    return shapes;
  }
  for (int a = 0; a < D; ++a) {
    if (own.tile[a] >= 8) {
      CudaCoreShape c = own;
      c.tile[a] /= 2;
      add(c);
    }
    CudaCoreShape c = own;
    c.tile[a] *= 2;
    add(c);
  }
  CudaCoreShape c = own;
  c.threads = base->threads == 256 ? (D == 2 ? 384 : 512) : 256;
  add(c);
  return shapes;
}
