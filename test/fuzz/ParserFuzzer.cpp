//===- ParserFuzzer.cpp - libFuzzer target for the front end --------------===//
//
// Feeds arbitrary bytes through the lexer, parser, sema and, when they are
// accepted, the IR printer and the CUDA emitter. Any crash, sanitizer report
// or hang is a bug: stencilc must answer every input with output or a
// located diagnostic.
//
//===----------------------------------------------------------------------===//

#include "stencilc/CodeGen/CudaEmitter.h"
#include "stencilc/Frontend/Compile.h"
#include "stencilc/IR/IRPrinter.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>

using namespace stencilc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::SourceMgr sourceMgr;
  std::string sink;
  llvm::raw_string_ostream os(sink);
  DiagnosticEngine diags(sourceMgr, os);
  unsigned id = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.st"),
      llvm::SMLoc());
  std::optional<Module> module = compileBuffer(id, diags);
  if (!module)
    return 0;
  printIR(*module, os);
  CudaOptions opts;
  opts.emitMain = true;
  emitCuda(*module, opts, diags);
  return 0;
}
