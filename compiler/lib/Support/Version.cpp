//===- Version.cpp - Version strings --------------------------------------===//

#include "stencilc/Support/Version.h"
#include "stencilc/Support/GpuArch.h"

const char *stencilc::getVersion() { return STENCILC_VERSION; }
const char *stencilc::getLLVMVersion() { return STENCILC_LLVM_VERSION_STRING; }
std::string stencilc::getSupportedArchs() { return archNames(", ", ", "); }
