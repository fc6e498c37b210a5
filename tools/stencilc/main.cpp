//===- main.cpp - The stencilc tool ---------------------------------------===//
//
// A thin main around the driver (Driver.h), which lives in a library of its
// own so that the options fuzzer can run it in process.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "llvm/Support/InitLLVM.h"

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  return stencilc::runStencilc(argc, argv);
}
