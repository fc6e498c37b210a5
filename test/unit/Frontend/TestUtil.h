//===- TestUtil.h - Compiling snippets in unit tests ------------*- C++ -*-===//

#ifndef STENCILC_TEST_UNIT_TESTUTIL_H
#define STENCILC_TEST_UNIT_TESTUTIL_H

#include "stencilc/Frontend/Compile.h"

#include "llvm/Support/MemoryBuffer.h"

#include <optional>
#include <string>

namespace stencilc::test {

/// A SourceMgr whose diagnostics are captured in `diagText`; sources are
/// registered as a file named "t.st", as located messages need.
struct DiagCapture {
  llvm::SourceMgr sourceMgr;
  std::string diagText;
  llvm::raw_string_ostream diagStream{diagText};
  DiagnosticEngine diags{sourceMgr, diagStream};

  /// Registers `source` and returns its buffer id.
  unsigned addSource(llvm::StringRef source) {
    return sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(source, "t.st"), llvm::SMLoc());
  }
  llvm::StringRef bufferText(unsigned id) const {
    return sourceMgr.getMemoryBuffer(id)->getBuffer();
  }
};

/// Compiles `source`; diagnostics land in `diagText`.
struct Compiled : DiagCapture {
  std::optional<Module> module;

  explicit Compiled(const std::string &source) {
    module = compileBuffer(addSource(source), diags);
    diagStream.flush();
  }
  const Stencil &stencil() const { return module->stencils.front(); }
};

} // namespace stencilc::test

#endif
