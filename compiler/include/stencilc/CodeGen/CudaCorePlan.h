//===- CudaCorePlan.h - Tiling and fusion of the CUDA-core path -*- C++ -*-===//
//
// Chooses, for one stencil on CUDA cores, the number of time steps fused in
// one pass (temporal blocking), the output tile of a thread block and the
// shared memory it needs, within the limits of the target architecture.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_CODEGEN_CUDACOREPLAN_H
#define STENCILC_CODEGEN_CUDACOREPLAN_H

#include "stencilc/IR/Stencil.h"
#include "stencilc/Support/Diagnostics.h"
#include "stencilc/Support/GpuArch.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace stencilc {

/// The most threads a block may have, on every architecture stencilc
/// targets (each SM holds at least 1536).
constexpr int kMaxThreads = 1024;
/// The values (CudaCorePlan::values) a thread of the streaming kernel's
/// 1024 keeps in its 64 registers without spilling, as ptxas for sm_90
/// allots them: 4 rows an iteration spilled past 28 (docs/benchmarks.md,
/// session 21).
constexpr int kStreamRegisterValues = 28;
/// The same for the 2-D slab of 256 threads at two blocks an SM (128
/// registers, --stream-2d): 4 rows an iteration ran 18-40% faster than 2
/// at 61-65 values (star2d2r t = 6, star2d3r t = 4, star2d4r t = 3,
/// star-2d9p-r2 t = 6) and 8-31% slower at 73 and 85 (star2d1r and heat-2d
/// at t = 10, 12; H200, docs/benchmarks.md, session 25).
constexpr int kStream2dRegisterValues = 68;
/// The most values at which the 2-D slab runs three blocks an SM (80
/// registers a thread) where their rings fit, instead of two: at t = 2-4
/// (H200, docs/benchmarks.md, session 27), three blocks were faster in all
/// 20 cases of 22-41 values (+1% to +25%, median +12%), though ptxas
/// spills; at 49 they gained 10%, 5% and nothing (j2d9pt and star2d2r at
/// t = 4, star2d4r at t = 2), at 51 9% (star2d3r t = 3), and at 53 (two
/// rows) and 61 they lost 13-52%.
constexpr int kStream2dThreeBlockValues = 48;
/// A tile's extents as --tile writes them: "64x64", "128x26x26".
std::string tileName(const std::array<int, kMaxDims> &tile, int dims);

struct CudaCorePlan {
  int fuse = 1;               ///< Time steps per pass.
  std::array<int, kMaxDims> tile{1, 1, 1};   ///< Output points per block.
  std::array<int, kMaxDims> radius{0, 0, 0}; ///< Halo one step needs.
  int threads = 256;
  /// Points one thread computes along axis 0 in interior tiles, keeping
  /// each column's window of reads in registers.
  int strip = 1;
  /// Adjacent points along the last axis that a strip computes, 1 or 2.
  /// With 2, both columns share each window value they read, and the
  /// buffers are laid out so that the pairs of columns load and store as
  /// one aligned access each (2 needs an even tile along that axis).
  int stripCols = 1;
  /// Elements of one 16-byte global access: the box kernel loads its box
  /// and stores its tile in chunks of `vec` along the last axis where every
  /// grid's rows are 16-byte aligned (a run-time test). 1 where the tile's
  /// last extent is not a whole number of chunks, and in the streaming
  /// kernel.
  int vec = 1;
  int numUpdated = 0;
  int64_t sharedBytes = 0;
  bool fuseFromModel = false; ///< fuse chosen automatically.
  /// The streaming kernel (2.5-D blocking) instead of the box kernel: a
  /// block owns tile[0] points of axis 0 and a slab of the other axes,
  /// one thread per slab point of the box, and streams along axis 0 with
  /// every time level in flight. Axis 0 has no recomputed halo; each level
  /// keeps its last rows in registers (same column) and in a ring of
  /// `ring` slabs in shared memory (the other columns); an iteration moves
  /// every level `rows` rows on, between two barriers.
  bool stream = false;
  int rows = 1; ///< Rows of axis 0 one streaming iteration advances.
  /// The values a streaming thread keeps in registers at `rows` rows: every
  /// level's rows, the loads in flight and the update's distinct constants.
  /// Past `valueBudget` they spill (the cost model charges them).
  int values = 0;
  /// The values a streaming thread holds before 4 rows an iteration cost
  /// more than they save: kStreamRegisterValues at 64 registers (1024
  /// threads a block), kStream2dRegisterValues at 128 (the 2-D slab of 256
  /// threads, two blocks an SM).
  int valueBudget = kStreamRegisterValues;
  /// The streaming kernel sums a linear update's taps with their weights
  /// (the linear form, planWeights) instead of evaluating it as written:
  /// where it divides a sum of reads by a coefficient (streamsLinearForm).
  bool linearForm = false;
  /// Slabs per level's ring: a power of two >= 2 * (rows + radius0).
  int ring = 0;
  /// Iterations of the streaming loop unrolled into one trip: a turn of
  /// the rings (ring / rows), which makes the level registers' shifts
  /// renames, or 1 where the reads of an iteration would spill.
  int unroll = 1;
  /// The rings keep their rows in groups of `groupRows` rows (a divisor of
  /// `rows`; a column's group 8 or 16 bytes), slab after slab: an
  /// iteration reads the other columns' rows and writes its own a group an
  /// access instead of a row (where every tap off the thread's own column
  /// lies in its row: stars, not boxes; planGroupRows). A level writes
  /// its rows r0 rows late, from its registers, so that the next level's
  /// rows are whole groups. 0: a row an access.
  int groupRows = 0;
  /// The streaming loop's fast iterations (every row of every level away
  /// from the domain's edge) in a copy of their own, where the edge tests
  /// fold away: with the group ring (planGroupRows).
  bool splitFast = false;
  /// Blocks per SM whose registers the streaming kernel's launch bounds
  /// reserve: a slab of fewer threads than the plan's 1024 gets as many
  /// resident threads (1024 / threads), not the registers of one block.
  int minBlocks = 1;
  /// The plane kernel (3-D wide boxes, PlaneKernelEmitter.cpp) instead of
  /// the streaming kernel: a block owns tile[1] x tile[2] outputs of axes 1
  /// and 2 and a segment of tile[0] planes of axis 0, loads each input
  /// plane once into shared memory (with a halo of radius along axes 1 and
  /// 2), and each thread adds the plane's contribution to the 2 r0 + 1
  /// output planes it touches for `planeRows` outputs along axis 1, kept as
  /// partial sums in registers. One step per pass.
  bool plane = false;
  int planeRows = 1; ///< Outputs a thread owns along axis 1.
  /// With `plane`, on a 16-bit grid: the next plane's values wait in
  /// registers in the grid's type and convert to the computation's as they
  /// are stored to shared memory, after the current plane's sums. False
  /// where a dirichlet value outside the domain is not exact in the grid's
  /// type: the registers then hold the computation's type.
  bool planeGridRegisters = false;
  /// With `plane`: the register-queue star kernel (3-D stars,
  /// StarKernelEmitter.cpp) instead. Same launch; each thread owns
  /// `planeCols` consecutive outputs along axis 2 (one vector, a 16-byte
  /// access in f32) of one row, and keeps their columns' 2 r0 + 1 values
  /// along axis 0 in registers; only the output plane goes through shared
  /// memory, with kR1 rows above and below and whole vectors either side
  /// (starWidth). One step per pass.
  bool star = false;
  int planeCols = 1; ///< Outputs a thread owns along axis 2 (star).
  /// With `star`: 0, or the planes whose boxes are in flight by cp.async
  /// beyond the one a plane's sums need. With 0, each thread prefetches the
  /// next plane into registers and stores it to one of two shared planes
  /// of the computation's type. With D > 0, the boxes of the element type
  /// go straight from global to a ring of r0 + D + 1 shared planes, the
  /// queues read their next value from the ring, and D planes' loads are in
  /// flight while one is summed, in no thread's registers.
  int starPipeline = 0;
  /// With `starPipeline` on Hopper and newer (code for sm_90 and later,
  /// with the hidden --star-tma): the ring is filled by TMA
  /// (runtime/include/stencilc/tma_ring.cuh), a plane's box one copy
  /// issued by one thread, where the GPU, the arrays and the block allow it
  /// at run time; elsewhere by cp.async as without it. Its slots are padded
  /// to 128 bytes and its barriers follow them.
  bool starTma = false;
  /// The star kernel's vectors either side of a row: ceil(r2 / planeCols),
  /// and with `starTma` rounded up to whole 16 bytes, since a TMA box
  /// starts on a multiple of 16 bytes along axis 2.
  int starSide = 1;
  int starRing() const {
    return starPipeline ? radius[0] + starPipeline + 1 : 2;
  }
  /// The star kernel's shared rows: the tile and starSide vectors either
  /// side.
  int starWidth() const { return tile[2] + 2 * starSide * planeCols; }
  /// The tensor-core plane kernel (3-D boxes of f16/bf16 grids,
  /// TensorPlaneEmitter.cpp): 1 for mma.sync m16n8k16, 2 for mma.sp
  /// m16n8k32. A warp owns 16 columns (axis 2) by 8 `planeBlocks` rows
  /// (axis 1) of outputs (sparse), or 16 rows by 8 `planeBlocks` columns
  /// (dense).
  int tensorPlane = 0;
  int planeBlocks = 1;
  /// Its ring of plane buffers: planes p + 1 .. p + planeStages - 1 load
  /// (cp.async) while plane p is multiplied.
  int planeStages = 2;

  /// Halo of a pass along `axis`: fuse * radius.
  int halo(int axis) const { return fuse * radius[axis]; }
  /// Tile plus halo on both sides.
  int box(int axis) const { return tile[axis] + 2 * halo(axis); }
  /// Points of the box along axes 1.. (the streaming kernel's threads).
  int slab() const {
    int n = 1;
    for (int a = 1; a < kMaxDims; ++a)
      n *= box(a);
    return n;
  }

};

/// A tile and a block of the CUDA-core kernel, as --tile and --threads
/// give them.
struct CudaCoreShape {
  std::array<int, kMaxDims> tile{1, 1, 1};
  /// Threads per block; 0: the plan's (in the streaming kernel, one per
  /// point of the slab).
  int threads = 0;
};

/// The shapes stencilc --tune times at depth `fuse` after the plan's own:
/// its neighbours, one change each. In the box kernel each tile extent is
/// halved and doubled in turn, and the block takes the other thread count
/// (256 and 384 in 2-D, 256 and 512 elsewhere); in the streaming kernel
/// the segment along axis 0 is halved and doubled, and the slab halved
/// along either axis or reshaped from 32x32 to 16x64 points. Only shapes
/// that plan (shared memory, 1024 threads) are kept, without the plan's
/// own and without repeats. Empty when the stencil does not plan at
/// `fuse`. The shapes that do not plan report nothing; `diags` only lends
/// its source manager.
std::vector<CudaCoreShape> tuneShapes(const Stencil &stencil, int fuse,
                                      GpuArch arch, DiagnosticEngine &diags);

/// Whether the tensor-core plane kernel runs `stencil` on --target=tc and
/// sptc: a linear update of one f16 or bf16 grid in 3-D with a radius of
/// 1 to 4 along every axis, which may stream along axis 0.
bool tensorPlaneApplies(const Stencil &stencil);

/// Whether the streaming kernel evaluates the update of `stencil` through
/// its linear form: a linear update whose expression divides a value that
/// depends on the grid (a sum of reads over a coefficient, as in AN5D's
/// j3d27pt). Its IEEE division costs a call per point and level, across
/// which ptxas keeps every live register in local memory; the linear form
/// folds the coefficient into the weights, which the error bound of a
/// linear update covers in any order (driver.cuh, LinearBound).
bool streamsLinearForm(const Stencil &stencil);

/// Whether the streaming kernel may run `stencil` in 2-D (the hidden
/// --stream-2d): one grid, no stages, new values, t or coordinates, and
/// boundaries alike on both sides of each axis without a parameter's
/// dirichlet value, as the 3-D streaming kernel asks.
bool streamsIn2D(const Stencil &stencil);

/// Plans `stencil`. `fuse` overrides the stencil's hint when set; 0 means
/// automatic even where the source hints a depth. `frame` plans the
/// CUDA-core kernel of a tensor-core program, which computes only the tiles
/// around the tensor cores' region: always the box kernel, and in 2-D
/// smaller tiles (a frame block's latency, not its throughput, is what
/// counts). Otherwise the streaming kernel is planned where it applies.
/// Reports an error and returns nullopt when even the smallest tile does
/// not fit in shared memory. `distributed` (stencilc --distributed) keeps
/// the streaming kernel where the plane kernel would apply: only the
/// streaming and box kernels address a distributed view.
std::optional<CudaCorePlan> planCudaCore(const Stencil &stencil,
                                         std::optional<int> fuse,
                                         GpuArch arch,
                                         DiagnosticEngine &diags,
                                         bool frame = false,
                                         bool distributed = false);

} // namespace stencilc

#endif // STENCILC_CODEGEN_CUDACOREPLAN_H
