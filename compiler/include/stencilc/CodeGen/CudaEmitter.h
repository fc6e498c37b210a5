//===- CudaEmitter.h - CUDA C++ from the Stencil IR -------------*- C++ -*-===//
//
// Prints, for every stencil of a module, a host entry point and the
// temporally blocked CUDA-core kernel it launches, plus a header declaring
// the entry points. A stencil that carries a packed MatrixProgram also gets
// its tensor-core kernel, which covers the interior; the CUDA-core kernel
// then computes the frame and the short passes. With emitMain, it adds a standalone driver whose float64
// host reference is printed from the same IR.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_CODEGEN_CUDAEMITTER_H
#define STENCILC_CODEGEN_CUDAEMITTER_H

#include "stencilc/CodeGen/CudaCorePlan.h"
#include "stencilc/CodeGen/TensorCoreEmitter.h"
#include "stencilc/IR/Stencil.h"
#include "stencilc/Support/Diagnostics.h"

#include <map>
#include <optional>
#include <vector>
#include <string>

namespace stencilc {

struct CudaOptions {
  GpuArch arch = GpuArch::SM90;
  /// Overrides the source's hint when set; 0 asks for the automatic depth.
  std::optional<int> fuse;
  bool emitMain = false;
  /// Also emit run_distributed (and, with emitMain, a driver for mpirun):
  /// the kernels then address their grids through a view
  /// (DistributedEmitter.h).
  bool distributed = false;
  /// Lines printed as comments above each stencil's code, by stencil
  /// name: the driver's record of how the strategy was chosen and under
  /// which precision policy.
  std::map<std::string, std::vector<std::string>> notes;
  std::string sourceName = "input.st"; ///< For the banner.
  std::string headerName = "out.h";    ///< What the .cu includes.
};

struct CudaOutput {
  std::string header;
  std::string source;
};

/// Emits the module. Returns nullopt after reporting an error.
std::optional<CudaOutput> emitCuda(const Module &module,
                                   const CudaOptions &options,
                                   DiagnosticEngine &diags);

} // namespace stencilc

#endif // STENCILC_CODEGEN_CUDAEMITTER_H
