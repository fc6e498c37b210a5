//===- Hardware.h - GPU descriptions for the cost model ---------*- C++ -*-===//
//
// What the cost model knows of a GPU: its memory bandwidths and the peak of
// every unit per type. Built-in descriptions come from datasheets
// (`--gpu=a100-40|a100-80|rtx-a6000|l40s|h100-sxm|h100-pcie|h200|b200|
// rtx-5090`), plus the lent H200 as measured (`h200-measured`); each
// --arch has one by default (GpuArch.h), sm_90 the measured H200, which
// alone the model is calibrated on. `stencil-probe` measures a GPU and
// writes a description file that `--hw=FILE` loads:
//
//   # comment
//   name = NVIDIA H200
//   bandwidth-gbs = 4260        # 1e9 bytes/s, copy (read + write)
//   tc.f16-tflops = 600
//
// One `key = value` per line; every key of kKeys must appear once.
// The weights of the implementation model (`weight.*`, the calibration of
// docs/cost-model.md) are optional; given ones replace the built-in set.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_ANALYSIS_HARDWARE_H
#define STENCILC_ANALYSIS_HARDWARE_H

#include "stencilc/IR/ElemType.h"
#include "stencilc/Support/Diagnostics.h"
#include "stencilc/Support/GpuArch.h"

#include "llvm/ADT/StringRef.h"

#include <array>
#include <map>
#include <optional>
#include <string>

namespace stencilc {

/// How the generated kernels spend time. A kernel's time per point is
///   dram * t_DRAM + shared * t_shared + compute * t_compute,
/// the resource times of the cost model (CostModel.h) weighted and added.
/// Adding, not taking the largest, is what the measurements show: the
/// kernels are latency bound and overlap little. The weights depend on the
/// unit (cuda-core, tc, sptc), the kernel kind the emitter prints
/// (cuda-core; for tensor cores rolling, uniform or table), the element
/// width (half: f16 and bf16; f32; f64) and the dimension (which the
/// calibration's hold-out check favoured, first for the CUDA-core kernels
/// and since session 10 for all). They were fitted on
/// the lent H200 by test/gpu/calibrate.py (docs/cost-model.md); a
/// description file may set them
/// (`weight.<unit>.<kernel>.<half|f32|f64>[.<1d|2d|3d>].<dram|shared|compute>`).
struct CostWeights {
  /// Keyed "unit.kernel.width" or "unit.kernel.width.Nd", e.g.
  /// "sptc.rolling.half" or "cuda-core.cuda-core.f32.3d".
  std::map<std::string, std::array<double, 3>> byKind;

  static std::string key(llvm::StringRef unit, llvm::StringRef kernel,
                         ElemType type);
  /// The weights of a kind in `dims` dimensions: the key with the
  /// dimension, else without; a kind the calibration never saw takes the
  /// mean over the kinds of the same unit, kernel and width in other
  /// dimensions, else of the same unit and width, else of the unit, else
  /// {1, 1, 1}.
  std::array<double, 3> lookup(llvm::StringRef unit, llvm::StringRef kernel,
                               ElemType type, int dims) const;
};

struct HardwareDesc {
  std::string name;
  /// Where the figures come from, for --explain: "datasheet figures,
  /// uncalibrated", "measured by stencil-probe; the weights were fitted on
  /// it" or "a description file"; the driver prefixes the option or
  /// default that chose it.
  std::string origin;
  std::string arch = "sm_90";
  int sms = 0;
  double clockMHz = 0;
  double sharedKiBPerSM = 0;
  double l2MiB = 0;
  double bandwidth = 0;       ///< DRAM, bytes/s.
  double sharedBandwidth = 0; ///< All SMs' shared memory, bytes/s.
  double cudaCoreF32 = 0, cudaCoreF64 = 0; ///< flop/s.
  /// Dense tensor cores, flop/s, by MmaType (f16, bf16, tf32, f64).
  std::array<double, 4> tensorCore{};
  /// Sparse tensor cores, logical (dense-equivalent) flop/s; f64 has none.
  std::array<double, 4> sparseTensorCore{};
  CostWeights weights;

  /// CUDA-core peak for arithmetic in `t` (f16 and bf16 compute in f32).
  double cudaCorePeak(ElemType t) const {
    return t == ElemType::F64 ? cudaCoreF64 : cudaCoreF32;
  }
};

/// The built-in description called `name`, or nullopt.
std::optional<HardwareDesc> builtinHardware(llvm::StringRef name);
/// The names builtinHardware knows, for messages and --help.
llvm::StringRef builtinHardwareNames();
/// The lent H200 as stencil-probe measured it (h200-measured), the
/// ceilings the built-in weights were fitted against: the default for
/// sm_90.
HardwareDesc defaultHardware();
/// The description the cost model uses for `arch` unless --gpu or --hw
/// name one: ArchInfo::gpu, a datasheet but for sm_90.
HardwareDesc defaultHardware(GpuArch arch);

/// Parses a description file held in buffer `bufferId` of the engine's
/// SourceMgr. Errors are located at the offending line.
std::optional<HardwareDesc> parseHardware(unsigned bufferId,
                                          DiagnosticEngine &diags);

/// The description in the file format parseHardware reads.
std::string printHardware(const HardwareDesc &hw);

} // namespace stencilc

#endif // STENCILC_ANALYSIS_HARDWARE_H
