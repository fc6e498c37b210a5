//===- GpuArch.h - The GPU architectures stencilc generates for -*- C++ -*-===//
//
// One row per architecture that --arch accepts: the limits of its compute
// capability that the generated kernels are planned against, and the GPU
// description the cost model assumes for it unless told otherwise. Every
// architecture gets the same kernel families: mma.sync, mma.sp, cp.async
// and ldmatrix exist on all of them (sm_80 and later), so only the plans'
// sizes differ, and the f64 m16n8k{4,8,16} MMA shapes, which need sm_90 or
// later (legalFragments).
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_SUPPORT_GPUARCH_H
#define STENCILC_SUPPORT_GPUARCH_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stencilc {

/// Oldest first, as allArchs() lists them.
enum class GpuArch { SM80, SM86, SM89, SM90, SM100, SM120 };

/// What stencilc knows of one compute capability.
struct ArchInfo {
  GpuArch arch;
  llvm::StringRef name; ///< "sm_86", as --arch and nvcc spell it.
  /// The compute capability times 10 (86): __CUDA_ARCH__ / 10, and the
  /// `arch` of a MatrixProgram and of the passes' options.
  int number;
  /// The most shared memory one block may opt in to, in bytes; a launch
  /// that asks for more fails.
  int64_t sharedPerBlock;
  int64_t sharedPerSM; ///< Bytes: what resident blocks share.
  int threadsPerSM;    ///< Resident threads.
  int blocksPerSM;     ///< Resident blocks.
  int registersPerSM;  ///< 32-bit registers.
  /// The built-in GPU description (--gpu) the cost model uses by default.
  llvm::StringRef gpu;
};

/// Every architecture, oldest first.
llvm::ArrayRef<ArchInfo> allArchs();
const ArchInfo &archInfo(GpuArch arch);
llvm::StringRef archName(GpuArch arch);
/// The compute capability times 10: 80, 86, 89, 90, 100, 120.
int archNumber(GpuArch arch);
std::optional<GpuArch> parseArch(llvm::StringRef name);
/// The architecture whose archNumber is `number`, or nullopt.
std::optional<GpuArch> archFromNumber(int number);
/// Every architecture's name, joined for messages and --help:
/// "sm_80, sm_86, sm_89, sm_90, sm_100 or sm_120" with the defaults.
std::string archNames(llvm::StringRef separator = ", ",
                      llvm::StringRef last = " or ");
/// Every architecture's number, as the passes' `arch` option takes them:
/// "80, 86, 89, 90, 100 or 120".
std::string archNumbers();

/// Largest dynamic shared memory one block may opt in to.
int64_t maxSharedBytesPerBlock(GpuArch arch);
/// Shared memory of one SM, which the resident blocks divide.
int64_t sharedBytesPerSM(GpuArch arch);

/// Bytes of an SM's shared memory that the driver reserves for each
/// resident block, beside what the block asks for.
constexpr int64_t kReservedSharedPerBlock = 1024;

/// The architectures that run code generated for `arch` whose blocks take
/// up to `sharedBytes` bytes of shared memory, oldest first: `arch` (whose
/// limit the plans respect) and every newer one whose blocks may hold that
/// much. Newer ones run every instruction the
/// kernels use (those of sm_80, and on sm_90 the f64 m16n8 MMAs, which
/// sm_100 and sm_120 have too); an older one may lack them, and a block
/// that asks for more shared memory than the GPU has fails at launch.
std::vector<GpuArch> archsRunning(GpuArch arch, int64_t sharedBytes);

} // namespace stencilc

#endif // STENCILC_SUPPORT_GPUARCH_H
