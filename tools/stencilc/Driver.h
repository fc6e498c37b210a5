//===- Driver.h - The stencilc driver, callable in process ------*- C++ -*-===//
//
// The body of the stencilc tool (stencilc.cpp), callable more than once in
// one process so that a fuzzer can feed it command lines: main.cpp is a
// thin main around it, and test/fuzz/OptionsFuzzer.cpp calls it per input.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_TOOLS_DRIVER_H
#define STENCILC_TOOLS_DRIVER_H

#include "llvm/Support/raw_ostream.h"

namespace stencilc {

/// Runs stencilc on the command line `argv` (argv[0] is the program name)
/// and returns its exit code. Every option starts from its default. With
/// `errs` null, a malformed command line exits the process as the tool
/// always has, and diagnostics go to standard error; otherwise a malformed
/// command line returns 1 and every message goes to `*errs`. --help and
/// --version exit either way.
int runStencilc(int argc, const char *const *argv,
                llvm::raw_ostream *errs = nullptr);

} // namespace stencilc

#endif // STENCILC_TOOLS_DRIVER_H
