//===- CudaEmitter.h - CUDA C++ from the Stencil IR -------------*- C++ -*-===//
//
// Prints, for every stencil of a module, a host entry point and the
// temporally blocked CUDA-core kernel it launches, plus a header declaring
// the entry points. With emitMain, it adds a standalone driver whose float64
// host reference is printed from the same IR.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_CODEGEN_CUDAEMITTER_H
#define STENCILC_CODEGEN_CUDAEMITTER_H

#include "stencilc/CodeGen/CudaCorePlan.h"
#include "stencilc/CodeGen/TensorCoreEmitter.h"
#include "stencilc/IR/Stencil.h"
#include "stencilc/Support/Diagnostics.h"

#include <optional>
#include <string>

namespace stencilc {

struct CudaOptions {
  GpuArch arch = GpuArch::SM90;
  /// Overrides the source's hint when set; 0 asks for the automatic depth.
  std::optional<int> fuse;
  bool emitMain = false;
  /// CudaCore, or a tensor-core target: then every stencil carries a
  /// packed MatrixProgram and its kernel covers the interior, the CUDA-core
  /// kernel the frame and short passes.
  Target target = Target::CudaCore;
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
