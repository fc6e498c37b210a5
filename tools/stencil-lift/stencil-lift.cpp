//===- stencil-lift.cpp - Lift stencil loops out of C/C++ -----------------===//
//
// The driver of the libTooling front end: parses one C or C++ source with
// clang (compiler options after `--`), lifts every loop nest marked
// `#pragma stencil` into a .st file, and with --rewrite (or
// --rewrite-output) replaces each nest by a call of the stencil's generated
// run(). Output appears only when every nest lifted: files are written to
// temporaries and renamed into place at the end, and the source is never
// half rewritten. Exit codes: 0 success; 1 an error in the input or on the
// command line.
//
//===----------------------------------------------------------------------===//

#include "LiftAction.h"
#include "stencilc/Support/AtomicWrite.h"

#include "clang/Basic/FileManager.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <utility>
#include <vector>

using namespace stencil_lift;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory liftCat("stencil-lift");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.cpp>"),
                               cl::Required, cl::cat(liftCat));

cl::opt<std::string>
    outputFile("o", cl::value_desc("file"), cl::cat(liftCat),
               cl::desc("Write the .st file to <file>; '-' is standard output "
                        "(default: the input's name with .st, in the current "
                        "directory)"));

cl::opt<bool> rewriteOpt(
    "rewrite", cl::cat(liftCat),
    cl::desc("Replace each marked nest in the input file by a call of the "
             "generated run()"));

cl::opt<std::string> rewriteOutput(
    "rewrite-output", cl::value_desc("file"), cl::cat(liftCat),
    cl::desc("Rewrite as --rewrite does, but write the result to <file> and "
             "leave the input as it is"));

cl::opt<std::string> headerOpt(
    "header", cl::value_desc("file"), cl::cat(liftCat),
    cl::desc("The header the rewritten source includes (default: the .st "
             "file's name with .h, as 'stencilc x.st -o x.cu' writes it)"));

void printVersion(llvm::raw_ostream &os) {
  os << "stencil-lift " << STENCIL_LIFT_VERSION << "\n  Clang "
     << LLVM_VERSION_STRING << "\n";
}

void toolError(const llvm::Twine &msg) {
  llvm::errs() << "stencil-lift: error: " << msg << "\n";
}

std::string withExtension(llvm::StringRef path, llvm::StringRef ext) {
  llvm::SmallString<256> p(path);
  llvm::sys::path::replace_extension(p, ext);
  return std::string(p);
}

/// Writes every (path, text) pair, or none (Support/AtomicWrite.h).
bool writeAll(const std::vector<std::pair<std::string, std::string>> &files) {
  return stencilc::writeFilesAtomically(files, toolError);
}

int lift(const std::vector<std::string> &compilerArgs) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> input =
      llvm::MemoryBuffer::getFile(inputFile);
  if (!input) {
    toolError(inputFile + ": cannot read file: " + input.getError().message());
    return 1;
  }
  std::string stPath =
      outputFile.empty()
          ? withExtension(llvm::sys::path::filename(inputFile), ".st")
          : std::string(outputFile);
  LiftOptions options;
  options.sourceName = std::string(llvm::sys::path::filename(inputFile));
  options.stName = stPath == "-"
                       ? withExtension(options.sourceName, ".st")
                       : std::string(llvm::sys::path::filename(stPath));
  options.header = headerOpt.empty() ? withExtension(options.stName, ".h")
                                     : std::string(headerOpt);
  std::string rewritePath = !rewriteOutput.empty() ? std::string(rewriteOutput)
                            : rewriteOpt           ? std::string(inputFile)
                                                   : "";
  // Neither output may be the source, nor the other output: compared by
  // file identity, before anything is parsed. The rewrite alone may
  // replace the source, which is what --rewrite asks for.
  std::vector<std::string> outputPaths = {stPath};
  if (!rewritePath.empty() &&
      stencilc::fileIdentity(rewritePath) != stencilc::fileIdentity(inputFile))
    outputPaths.push_back(rewritePath);
  if (!stencilc::checkOutputsDistinct({inputFile}, outputPaths, toolError))
    return 1;

  // The tool lives outside the clang tree: parse as the clang it links,
  // with that clang's compiler headers.
  std::vector<std::string> args = {STENCIL_LIFT_CLANG, "-fsyntax-only",
                                   "-resource-dir=" STENCIL_LIFT_RESOURCE_DIR};
  args.insert(args.end(), compilerArgs.begin(), compilerArgs.end());
  args.push_back(inputFile);
  LiftOutput output;
  llvm::IntrusiveRefCntPtr<clang::FileManager> files(
      new clang::FileManager(clang::FileSystemOptions()));
  clang::tooling::ToolInvocation invocation(
      args, std::make_unique<LiftAction>(options, output), files.get());
  bool parsed = invocation.run();
  if (parsed && output.pragmas == 0) {
    toolError(inputFile + ": no loop nest is marked '#pragma stencil'");
    return 1;
  }
  if (!parsed || !output.lifted)
    return 1;

  std::vector<std::pair<std::string, std::string>> outputs;
  if (stPath != "-")
    outputs.push_back({stPath, output.stencilText});
  if (!rewritePath.empty())
    outputs.push_back({rewritePath, output.rewritten});
  if (!writeAll(outputs))
    return 1;
  if (stPath == "-")
    llvm::outs() << output.stencilText;
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Everything after `--` goes to clang.
  std::vector<std::string> compilerArgs;
  int toolArgc = argc;
  for (int i = 1; i < argc; ++i)
    if (llvm::StringRef(argv[i]) == "--") {
      toolArgc = i;
      compilerArgs.assign(argv + i + 1, argv + argc);
      break;
    }
  cl::HideUnrelatedOptions(liftCat);
  cl::SetVersionPrinter(printVersion);
  cl::ParseCommandLineOptions(
      toolArgc, argv,
      "stencil-lift: lift '#pragma stencil' loop nests out of C/C++ into a "
      ".st stencil\n\n"
      "  stencil-lift heat.cpp -o heat.st            writes the stencils\n"
      "  stencil-lift heat.cpp -o heat.st --rewrite  also replaces the "
      "nests by calls\n"
      "                                              of heat.h's run()\n"
      "  stencil-lift heat.cpp -o heat.st -- -Iinclude -DN=64\n"
      "                                              passes options to "
      "clang\n\n"
      "Then: stencilc heat.st -o heat.cu, and build heat.cu with the "
      "rewritten source.\n"
      "Exit status: 0 on success, 1 on any error; on error no file is "
      "written or changed.\n");
  return lift(compilerArgs);
}
