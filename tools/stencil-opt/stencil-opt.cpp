//===- stencil-opt.cpp - Run passes on a stencil and print the IR ---------===//
//
// The pass runner for tests: reads a .st file, runs the --passes pipeline and
// prints the resulting IR (as --emit=ir does), optionally after every pass.
//
//===----------------------------------------------------------------------===//

#include "stencilc/Frontend/Compile.h"
#include "stencilc/IR/IRPrinter.h"
#include "stencilc/Transforms/Passes.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

using namespace stencilc;
namespace cl = llvm::cl;

static cl::OptionCategory cat("stencil-opt");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.st>"),
                                      cl::Required, cl::cat(cat));
static cl::opt<std::string> passes("passes", cl::cat(cat),
                                   cl::desc("Pipeline, e.g. "
                                            "temporal-fusion{steps=4}"));
static cl::opt<bool> printAfterAll("print-ir-after-all", cl::cat(cat),
                                   cl::desc("Print the IR after each pass"));
static cl::opt<bool> timePasses("time-passes", cl::cat(cat),
                                cl::desc("Report the time of each pass"));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(cat);
  std::string passList = "\nPasses:\n";
  for (const PassInfo &p : registeredPasses()) {
    passList += std::string("  ") + p.flag + ": " + p.summary + "\n";
    for (const PassOption &o : p.options)
      passList += std::string("      ") + o.name + " (default " +
                  std::to_string(o.defaultValue) + "): " + o.summary + "\n";
  }
  passList += "\nNamed pipelines:\n";
  for (const NamedPipeline &np : namedPipelines())
    passList += std::string("  ") + np.name + ": " + np.passes + "\n";
  cl::ParseCommandLineOptions(argc, argv,
                              "stencil-opt: run passes on a stencil\n" +
                                  passList);
  llvm::SourceMgr sm;
  DiagnosticEngine diags(sm);
  diags.setToolName("stencil-opt");
  unsigned buf = loadSourceFile(inputFile, diags);
  if (!buf)
    return 1;
  std::optional<Module> module = compileBuffer(buf, diags);
  if (!module)
    return 1;
  PipelineOptions opts;
  opts.printIRAfterAll = printAfterAll;
  opts.timePasses = timePasses;
  if (!runPipeline(*module, passes, opts, llvm::outs(), diags))
    return 1;
  if (!printAfterAll)
    printIR(*module, llvm::outs());
  return 0;
}
