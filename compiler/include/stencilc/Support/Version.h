//===- Version.h - Version strings ------------------------------*- C++ -*-===//

#ifndef STENCILC_SUPPORT_VERSION_H
#define STENCILC_SUPPORT_VERSION_H

namespace stencilc {
/// The stencilc release, e.g. "0.1.0".
const char *getVersion();
/// The LLVM release stencilc was built against.
const char *getLLVMVersion();
/// The GPU architectures the CUDA backend targets, e.g. "sm_80, sm_90".
const char *getSupportedArchs();
} // namespace stencilc

#endif // STENCILC_SUPPORT_VERSION_H
