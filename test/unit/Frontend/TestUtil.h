//===- TestUtil.h - Compiling snippets in unit tests ------------*- C++ -*-===//

#ifndef STENCILC_TEST_UNIT_TESTUTIL_H
#define STENCILC_TEST_UNIT_TESTUTIL_H

#include "stencilc/Frontend/Compile.h"

#include "llvm/Support/MemoryBuffer.h"

#include <optional>
#include <string>

namespace stencilc::test {

/// Compiles `source` as a file named "t.st"; diagnostics land in `diagText`.
struct Compiled {
  llvm::SourceMgr sourceMgr;
  std::string diagText;
  llvm::raw_string_ostream diagStream{diagText};
  DiagnosticEngine diags{sourceMgr, diagStream};
  std::optional<Module> module;

  explicit Compiled(const std::string &source) {
    unsigned id = sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(source, "t.st"), llvm::SMLoc());
    module = compileBuffer(id, diags);
    diagStream.flush();
  }
  const Stencil &stencil() const { return module->stencils.front(); }
};

} // namespace stencilc::test

#endif
