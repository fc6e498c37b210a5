//===- Version.cpp - Version strings --------------------------------------===//

#include "stencilc/Support/Version.h"

const char *stencilc::getVersion() { return STENCILC_VERSION; }
const char *stencilc::getLLVMVersion() { return STENCILC_LLVM_VERSION_STRING; }
const char *stencilc::getSupportedArchs() { return "sm_80, sm_90"; }
