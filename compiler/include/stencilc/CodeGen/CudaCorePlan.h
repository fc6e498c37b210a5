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

#include <array>
#include <optional>
#include <string>

namespace stencilc {

enum class GpuArch { SM80, SM90 };

llvm::StringRef archName(GpuArch arch);
std::optional<GpuArch> parseArch(llvm::StringRef name);
/// Largest dynamic shared memory one block may opt in to.
int64_t maxSharedBytesPerBlock(GpuArch arch);

struct CudaCorePlan {
  int fuse = 1;               ///< Time steps per pass.
  std::array<int, kMaxDims> tile{1, 1, 1};   ///< Output points per block.
  std::array<int, kMaxDims> radius{0, 0, 0}; ///< Halo one step needs.
  int threads = 256;
  /// Points one thread computes along axis 0 in interior tiles, keeping
  /// each column's window of reads in registers.
  int strip = 1;
  int numUpdated = 0;
  int64_t sharedBytes = 0;
  bool fuseFromModel = false; ///< fuse chosen automatically.

  /// Halo of a pass along `axis`: fuse * radius.
  int halo(int axis) const { return fuse * radius[axis]; }
  /// Tile plus halo on both sides.
  int box(int axis) const { return tile[axis] + 2 * halo(axis); }

};

/// Plans `stencil`. `fuse` overrides the stencil's hint when set; 0 means
/// automatic even where the source hints a depth. Reports an error and returns nullopt when even the smallest
/// tile does not fit in shared memory.
std::optional<CudaCorePlan> planCudaCore(const Stencil &stencil,
                                         std::optional<int> fuse,
                                         GpuArch arch,
                                         DiagnosticEngine &diags);

} // namespace stencilc

#endif // STENCILC_CODEGEN_CUDACOREPLAN_H
