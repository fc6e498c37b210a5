//===- Compile.cpp - From a file name to the Stencil IR -------------------===//

#include "stencilc/Frontend/Compile.h"
#include "stencilc/Frontend/Parser.h"
#include "stencilc/Frontend/Sema.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace stencilc;

unsigned stencilc::loadSourceFile(llvm::StringRef path,
                                  DiagnosticEngine &diags) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf =
      llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buf) {
    diags.error(path + ": cannot read file: " + buf.getError().message());
    return 0;
  }
  return diags.getSourceMgr().AddNewSourceBuffer(std::move(*buf),
                                                 llvm::SMLoc());
}

std::optional<ast::Module> stencilc::parseBuffer(unsigned bufferId,
                                                 DiagnosticEngine &diags) {
  const llvm::MemoryBuffer *buf =
      diags.getSourceMgr().getMemoryBuffer(bufferId);
  unsigned before = diags.errorCount();
  Parser parser(buf->getBuffer(), diags);
  ast::Module module = parser.parseModule();
  if (diags.errorCount() != before)
    return std::nullopt;
  return module;
}

std::optional<Module> stencilc::compileBuffer(unsigned bufferId,
                                              DiagnosticEngine &diags) {
  std::optional<ast::Module> ast = parseBuffer(bufferId, diags);
  if (!ast)
    return std::nullopt;
  return lowerToIR(*ast, diags);
}
