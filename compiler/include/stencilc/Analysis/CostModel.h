//===- CostModel.h - Roofline cost model and target selection ---*- C++ -*-===//
//
// Gu et al. ("Do we need tensor cores for stencils?") per output point of a
// t-step pass, with K the taps of one step and D the bytes of an element:
//
//   CUDA cores   C = t * C1              M = 2D     I = C / M       (eq. 8)
//   tensor cores C = (alpha / S) t * C1  M = 2D     I = C / M    (eq. 11-12)
//   rate         CUDA cores: min(P_CU, B I) / C1;
//                tensor cores: (S / alpha) min(P_TC, B I) / C1   (eq. 12, 20)
//
// where C1 = 2K flops for a linear stencil (and the operation count of the
// expression otherwise). A tensor-core candidate falls in scenario 1-4 by
// whether the CUDA cores at the same t and the tensor cores are memory (1,
// 2) or compute bound (1, 3: tensor cores memory bound).
//
// The prediction refines that bound with what the generated kernels really
// do: the CUDA-core kernel recomputes a halo of t*r points per side and
// reads its tile from shared memory; the tensor-core kernel issues the MMAs
// of its MatrixProgram (SparStencil eq. 9) and gathers B from shared memory
// (eq. 10). Each candidate's time per point is the sum of its DRAM,
// shared-memory and compute times, each weighted for the kernel kind by
// the calibration (CostWeights in Hardware.h).
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_ANALYSIS_COSTMODEL_H
#define STENCILC_ANALYSIS_COSTMODEL_H

#include "stencilc/Analysis/Hardware.h"
#include "stencilc/CodeGen/CudaCorePlan.h"
#include "stencilc/CodeGen/TensorCoreEmitter.h"
#include "stencilc/IR/Stencil.h"
#include "stencilc/Support/Diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace stencilc {

/// One way to generate a stencil: what --target, --layout and --fuse say.
struct Strategy {
  Target target = Target::CudaCore;
  MatrixLayout layout = MatrixLayout::Decompose; ///< Tensor cores only.
  int steps = 1;
  int r1 = 0, r2 = 0; ///< Morph's (r1, r2).
  /// Split-TF32 (MatrixProgram::split): tensor cores on f32 grids under
  /// precision exact or split-tf32. The policy implies it, so flags() do
  /// not name it.
  bool split = false;
  /// The tensor-core plane kernel of 3-D boxes (CudaCorePlan::tensorPlane)
  /// instead of a matrix program: one step per pass, no layout.
  bool plane = false;
  /// CUDA cores: the streaming kernel of a 2-D stencil (--stream-2d)
  /// instead of the box kernel.
  bool stream2d = false;

  /// "cuda-core t=4", "cuda-core stream-2d t=6", "sptc decompose t=7",
  /// "tc morph(4,4) t=2", "tc decompose t=2 split-tf32".
  std::string label() const;
  /// The stencilc flags that generate it (with the policy's --precision).
  std::vector<std::string> flags() const;
};

/// Whether tensor cores on grids of `type` under `policy` multiply in
/// split-TF32: f32 grids, unless the policy is tf32.
bool splitsOperands(ElemType type, Precision policy);

/// Runs the tensor-core pipeline of `strategy` on `stencil` (fusion,
/// layout, sparsity: SPIDER's strided swap for decompose and sparsity
/// conversion otherwise, then Compress24, split-TF32 where the strategy
/// says).
bool buildTensorCoreProgram(Stencil &stencil, const Strategy &strategy,
                            int arch, DiagnosticEngine &diags);

/// Gu et al.'s C (flops), M (bytes) and I = C / M per output point.
struct RooflineMetrics {
  double C = 0, M = 0, I = 0;
};
RooflineMetrics cudaCoreMetrics(double flopsPerStep, double bytes, int steps);
RooflineMetrics tensorCoreMetrics(double flopsPerStep, double bytes,
                                  int steps, double alpha, double S);
/// Eq. 10: alpha of a d-dimensional box of radius r fused over t steps.
double boxAlpha(int dims, int radius, int steps);
/// Scenario 1-4 of Gu et al. §4.1 from both intensities and ridge points.
int scenario(double iCudaCore, double ridgeCudaCore, double iTensorCore,
             double ridgeTensorCore);

struct CostCandidate {
  Strategy strategy;
  FragmentShape shape; ///< Tensor cores only.
  double K = 0;        ///< Taps (reads) of one step.
  double flopsPerStep = 0;
  RooflineMetrics metrics;
  double alpha = 1, S = 1;
  int scenario = 0;      ///< Tensor cores only.
  double roofline = 0;   ///< Gu et al.'s bound, GStencils/s.
  bool memoryBound = false;
  /// The implementation model: nanoseconds per point update each resource
  /// needs at its measured peak, the weights of the kernel kind, the
  /// largest weighted term and the prediction, 1 / (weighted sum).
  double tGlobal = 0, tShared = 0, tCompute = 0;
  /// Split-TF32 only: the MMAs per fragment tile's product (3, or 2 where
  /// A is known exact in tf32), and the time of what the split adds to
  /// the tf32 kernel, the extra MMAs and the operand conversions, in the
  /// same unit. It is weighted like tCompute, but never below 1: the
  /// calibration has not seen split kernels, and a kind whose compute
  /// weight is 0 (compute hidden behind memory in the tf32 kernel) would
  /// otherwise get the extra work for free.
  int splitMmas = 0;
  double tSplit = 0;
  std::array<double, 3> weights{1, 1, 1};
  std::string bound;
  double predicted = 0; ///< GStencils/s.
  /// The kernel the emitter would print: "cuda-core", or for tensor cores
  /// "rolling" (B kept in registers down patch rows), "uniform" (constant
  /// gather offsets), "table" (a gather table) or "plane" (the plane
  /// kernel of 3-D boxes, Strategy::plane).
  std::string kernel = "cuda-core";
  bool allowed = true;
  std::string reason; ///< Why not allowed.
  bool chosen = false;
};

struct CostModelOptions {
  HardwareDesc hw = defaultHardware();
  Precision precision = Precision::Exact;
  GpuArch arch = GpuArch::SM90;
  /// Restrictions from the command line: only these are candidates.
  std::optional<int> steps;
  std::optional<Target> target;
  std::optional<MatrixLayout> layout;
  /// stencilc --distributed: the CUDA-core plans are planCudaCore's under
  /// `distributed` (no plane kernel).
  bool distributed = false;
  /// stencilc --tensor-plane: the tensor-core plane kernel of 3-D f16/bf16
  /// boxes is a candidate (opt-in: it passes the GPU check, but the model
  /// over-predicts it and it loses at radius 2; docs/user-guide.md §6).
  bool tensorPlane = false;
  /// Bounds on the layout search that picks each tensor-core layout's
  /// depth and (r1, r2): LayoutSearchOptions' maxSteps (0: every depth
  /// with t * r <= 8) and maxR. The fuzzer lowers them so that an input
  /// takes milliseconds, not seconds, under the sanitizers.
  int searchMaxSteps = 0;
  int searchMaxR = 8;
};

/// Every candidate for `stencil` (CUDA cores at t in {1,2,3,4,6,8} with
/// t * r <= 8 that fit shared memory; each tensor-core target and layout at
/// layout search's depth, but 2:4 decompose of 16-bit grids at every depth
/// with t * r <= 8), scored, the fastest allowed one marked chosen.
/// Best prediction first. Empty only after an error is reported (nothing
/// allowed and buildable).
std::vector<CostCandidate> evaluateCandidates(const Stencil &stencil,
                                              const CostModelOptions &options,
                                              DiagnosticEngine &diags);

} // namespace stencilc

#endif // STENCILC_ANALYSIS_COSTMODEL_H
