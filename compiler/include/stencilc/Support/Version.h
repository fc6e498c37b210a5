//===- Version.h - Version strings ------------------------------*- C++ -*-===//

#ifndef STENCILC_SUPPORT_VERSION_H
#define STENCILC_SUPPORT_VERSION_H

#include <string>

namespace stencilc {
/// The stencilc release, e.g. "0.1.0".
const char *getVersion();
/// The LLVM release stencilc was built against.
const char *getLLVMVersion();
/// The GPU architectures the CUDA backend targets, e.g. "sm_80, sm_86,
/// sm_89, sm_90, sm_100, sm_120".
std::string getSupportedArchs();
} // namespace stencilc

#endif // STENCILC_SUPPORT_VERSION_H
