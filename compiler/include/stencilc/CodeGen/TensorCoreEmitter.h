//===- TensorCoreEmitter.h - mma / mma.sp kernels from a MatrixProgram -*- C++
//-*-===//
//
// Prints the tensor-core kernel of one stencil from its packed
// MatrixProgram (Transforms/Compress24): a thread block loads an input box
// into shared memory once, and each warp computes 8 patches at a time as
// D = A * B with `mma.sync` or `mma.sp::ordered_metadata`. A's registers
// come from the host (its entries depend on run-time parameters), the
// metadata and the gather table are compile-time tables: the PIT
// permutation of B's rows is only a different table, so it costs nothing
// at run time (SPIDER §3.2).
//
// The kernel covers whole blocks of the region where the fused kernel is
// exact and reads stay inside the grid; the CUDA-core kernel computes the
// frame around it (boundary bands, periodic wrap, partial blocks) step by
// step, and every pass shorter than the fusion depth.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_CODEGEN_TENSORCOREEMITTER_H
#define STENCILC_CODEGEN_TENSORCOREEMITTER_H

#include "stencilc/CodeGen/Emitter.h"
#include "stencilc/IR/Stencil.h"
#include "stencilc/IR/Weights.h"
#include "stencilc/Support/Diagnostics.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace stencilc {

/// The strategies stencilc can generate (`--target`).
enum class Target { CudaCore, TensorCore, SparseTensorCore };
llvm::StringRef targetName(Target t);
std::optional<Target> parseTarget(llvm::StringRef name);

/// How the tensor-core kernel of one stencil tiles the grid.
struct TensorCorePlan {
  int dims = 1;
  Offset patch{1, 1, 1};   ///< Outputs per patch (the program's patch).
  Offset patches{1, 1, 1}; ///< Patches per block; the fastest axis holds
                           ///< 8 per warp job.
  Offset tile{1, 1, 1};    ///< Outputs per block: patches * patch.
  Offset lo{}, hi{};       ///< The fused kernel's reach below / above;
                           ///< lo's fastest axis lowered to a multiple of
                           ///< vec (aligned tiles) where B's word pairs
                           ///< allow it and the box still fits.
  Offset box{1, 1, 1};     ///< Shared-memory input box: tile - patch +
                           ///< hi - lo + 1, the fastest axis rounded up
                           ///< to whole 16-byte copies.
  int read = 1;            ///< The box's fastest extent before rounding:
                           ///< what the kernel reads.
  int vec = 1;             ///< Elements per 16-byte copy.
  int threads = 128;
  int jobs = 1; ///< Warp jobs (8 patches each) per block.
  /// One buffer of the box: its elements and a zero element, rounded up
  /// to whole 16-byte copies. The kernel holds two.
  int64_t bufElems = 0;
  /// Each warp's staging area for the outputs of one job (8 patches),
  /// written out in whole 16-byte stores along the fastest axis.
  int64_t stageElems = 0;
  /// Elements per store of a staged output run (a power of two dividing
  /// vec) when the runs are 16-byte aligned.
  int chunk = 1;
  /// The kernel's dynamic shared memory: two buffers and the warps'
  /// staging areas (the gather table, if any, is static).
  int64_t sharedBytes = 0;
  /// The gather table's static shared memory (0 without one): with
  /// sharedBytes, what a block holds, within the program's architecture's
  /// limit.
  int64_t staticBytes = 0;
  /// B's gather, per element k = (K tile, register, element) of a lane's
  /// fragment. When the point lane t reads is the patch corner + `lane[t]`
  /// + `constant[k]` for every k (true of row-decomposed matrices, with or
  /// without SPIDER's swap), the kernel needs no table: each load is one
  /// instruction with a constant offset. Zero columns then read a real
  /// point of the box (times a zero of A): exact for finite inputs, but an
  /// Inf or NaN input can reach outputs it does not influence. Otherwise a
  /// table in shared memory maps (k, t) to the point, with a zero slot for
  /// zero columns.
  bool uniformGather = false;
  std::array<Offset, 4> lane{};
  std::vector<Offset> constant;
  /// 2-D decompose with one K tile per kernel row: the B fragment of
  /// kernel row b for patch row p is that of row b + 1 for patch row p - 1,
  /// so each warp walks down a column of patches, keeping the kernel's rows
  /// of B in registers and loading one new row per patch row.
  bool rolling = false;
  /// Rolling: the K tiles of one kernel row (tile tk + rollPeriod reads
  /// what tile tk reads one row lower).
  int rollPeriod = 0;
  /// Rolling, with A read per use (too large to hold beside the window):
  /// each warp computes two patch rows per pass, so that every A tile it
  /// loads feeds two mma, halving A's traffic through L1 (issue 22). The
  /// window then holds one kernel row more, the rows both patch rows read.
  bool pairRows = false;
  /// tf32 with a uniform gather: the 16-byte chunks of each box row are
  /// swizzled, chunk c stored at c ^ ((c / 8) % 4) (within each whole
  /// group of 8 chunks), so that B's scalar loads, whose lanes sit 16
  /// elements apart, meet at most two to a bank instead of five
  /// (docs/benchmarks.md, "tf32 sparse, swizzled box").
  bool swizzle = false;
  /// Rolling: three blocks' shared memory fits an SM (the tile is sized
  /// for it where it can be).
  bool threeBlocks = false;
  /// tf32 (centresOperands): the coefficient nodes of one row of A, which
  /// every row holds (each fused tap once); their rounded values' sum is
  /// what the centred outputs get back per unit of the centre.
  std::vector<int> rowNodes;
};

/// Whether the kernel holds A in registers for the whole block (it is
/// small), rather than reading each tile per use.
bool tensorCoreHoldsA(const MatrixProgram &p);

/// Plans the kernel of `stencil`, whose MatrixProgram must be packed.
/// Reports an error and returns nullopt when it cannot be generated.
std::optional<TensorCorePlan> planTensorCore(const Stencil &stencil,
                                             DiagnosticEngine &diags);

class TensorCoreEmitter {
public:
  /// `elem` is the grid's C++ element type.
  TensorCoreEmitter(const Stencil &stencil, const TensorCorePlan &plan,
                    Emitter &out, std::string elem);

  /// Constants, the gather and metadata tables, the argument struct and
  /// the __global__ kernel `<name>_tc_kernel`.
  void emitKernel();
  /// After the kernel: `sc_tc_coefficients(params, coeff)`, which
  /// evaluates A's coefficients on the host (through `emitCoefficients`,
  /// which prints `const double vN = ...;` for the given nodes and their
  /// operands) and rounds them keeping the weights' sum; and one row of
  /// A's taps (kTcRowTaps, kTcRowCoeff, kTcRowOffset).
  void emitCoefficientFunction(
      const std::function<void(const std::vector<int> &)> &emitCoefficients);
  /// Inside run(): evaluates A's coefficients through sc_tc_coefficients,
  /// packs them into the operand type and copies them to `sc_tc_a`;
  /// declares `sc_tc_args` and `sc_tc_blocks`.
  void emitHostSetup();
  /// Inside the pass loop: launches the kernel on `in` -> `out` when the
  /// pass is a full one, and sets `sc_args.skip*` so that the CUDA-core
  /// kernel leaves the covered region alone.
  void emitLaunch(const std::string &in, const std::string &out);

private:
  /// The kernel's copy of its input box into shared memory.
  void emitBoxLoad();
  /// A's coefficient nodes in the order of the host's coefficient array:
  /// the packed slots' first, then the kernel's other weights.
  struct CoefficientIndex {
    std::map<int, int> index; ///< Node -> position in the array.
    std::vector<int> nodes;
    WeightNodes weights;
  };
  CoefficientIndex coefficientIndex() const;
  std::string axes(const std::function<std::string(int)> &f,
                   const std::string &sep = ", ") const;
  /// The row-major index of coordinates `c(a)` in extents `n(a)`.
  std::string linear(const std::function<std::string(int)> &c,
                     const std::function<std::string(int)> &n) const;

  const Stencil &s;
  const MatrixProgram &p;
  const TensorCorePlan &plan;
  Emitter &out;
  const std::string elem;
  const int D;
};

} // namespace stencilc

#endif // STENCILC_CODEGEN_TENSORCOREEMITTER_H
