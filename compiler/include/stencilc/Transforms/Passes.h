//===- Passes.h - The table of passes and pipelines -------------*- C++ -*-===//
//
// One table lists every pass: its flag, a summary and its options with
// defaults. A pipeline is a comma-separated list of passes, each with
// optional {key=value,...} options: "temporal-fusion{steps=4}".
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_TRANSFORMS_PASSES_H
#define STENCILC_TRANSFORMS_PASSES_H

#include "stencilc/IR/Stencil.h"
#include "stencilc/Support/Diagnostics.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>
#include <vector>

namespace stencilc {

struct PassOption {
  const char *name;
  const char *summary;
  int defaultValue;
};

struct PassInfo {
  const char *flag;
  const char *summary;
  std::vector<PassOption> options;
  /// Runs the pass on every stencil; false after reporting an error.
  std::function<bool(Module &, const llvm::StringMap<int> &,
                     DiagnosticEngine &)>
      run;
};

/// Every pass, in the order `--help` lists them.
const std::vector<PassInfo> &registeredPasses();

/// A name for a list of passes, usable wherever a pass is.
struct NamedPipeline {
  const char *name;
  const char *passes;
};
const std::vector<NamedPipeline> &namedPipelines();

struct PipelineOptions {
  bool printIRAfterAll = false;
  bool timePasses = false;
};

/// Parses and runs `pipeline` on `module`. IR after each pass and the timing
/// report go to `os`. Returns false after reporting an error (a malformed
/// pipeline, an unknown pass or option, or a failing pass).
bool runPipeline(Module &module, llvm::StringRef pipeline,
                 const PipelineOptions &options, llvm::raw_ostream &os,
                 DiagnosticEngine &diags);

} // namespace stencilc

#endif // STENCILC_TRANSFORMS_PASSES_H
