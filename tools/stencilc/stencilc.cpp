//===- stencilc.cpp - The stencilc compiler driver ------------------------===//
//
// Reads one .st file and writes what --emit asks for. Output files appear
// only when compilation succeeded: they are written to temporary files and
// renamed into place at the end; the depfile of -MD goes with them. With
// --write-if-changed an output whose content is unchanged is not rewritten,
// so build systems see no new timestamp. Exit codes: 0 success; 1 an error
// in the input or on the command line.
//
//===----------------------------------------------------------------------===//

#include "stencilc/CodeGen/CudaEmitter.h"
#include "stencilc/Frontend/Compile.h"
#include "stencilc/IR/IRPrinter.h"
#include "stencilc/Support/AtomicWrite.h"
#include "stencilc/Support/Diagnostics.h"
#include "stencilc/Support/Version.h"
#include "stencilc/Transforms/LayoutSearch.h"
#include "stencilc/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

using namespace stencilc;
namespace cl = llvm::cl;

namespace {

enum class EmitKind { AST, IR, Matrix, Cuda };

cl::OptionCategory outputCat("Output");
cl::OptionCategory codegenCat("Code generation");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.st>"),
                               cl::Required, cl::cat(outputCat));

cl::opt<std::string> outputFile(
    "o", cl::value_desc("file"), cl::cat(outputCat),
    cl::desc("Write to <file>; '-' is standard output. For --emit=cuda the "
             "header goes beside it with extension .h (default: the "
             "input's name with .cu, in the current directory); for ast and "
             "ir the default is standard output"));

cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to produce"), cl::init(EmitKind::Cuda),
    cl::cat(outputCat),
    cl::values(clEnumValN(EmitKind::AST, "ast", "the syntax tree"),
               clEnumValN(EmitKind::IR, "ir",
                          "the Stencil IR, with linear forms"),
               clEnumValN(EmitKind::Matrix, "matrix",
                          "the MatrixProgram of the tensor-core passes "
                          "(--passes, default tc-morph)"),
               clEnumValN(EmitKind::Cuda, "cuda",
                          "CUDA C++ source and header (default)")));

cl::opt<bool> emitMain(
    "emit-main", cl::cat(outputCat),
    cl::desc("Add a standalone main(): random input, --check against a "
             "float64 CPU reference, and a GStencils/s report"));

cl::opt<bool> depfileOpt(
    "MD", cl::cat(outputCat),
    cl::desc("Also write a Make/Ninja depfile: the outputs depend on the "
             "input (default name: the output's with extension .d)"));

cl::opt<std::string> depfileName(
    "MF", cl::value_desc("file"), cl::cat(outputCat),
    cl::desc("Write the depfile of -MD to <file>"));

cl::opt<bool> writeIfChanged(
    "write-if-changed", cl::cat(outputCat),
    cl::desc("Leave an output file untouched, timestamp included, when its "
             "content would not change"));

cl::opt<std::string> archOpt("arch", cl::init("sm_90"),
                             cl::value_desc("sm_80|sm_90"),
                             cl::cat(codegenCat),
                             cl::desc("GPU architecture to generate for "
                                      "(default sm_90; sm_80 code also runs "
                                      "on sm_90)"));

cl::opt<std::string> fuseOpt(
    "fuse", cl::init(""), cl::value_desc("N|auto"), cl::cat(codegenCat),
    cl::desc("Time steps fused into one pass (temporal blocking), 1 to 64; "
             "overrides the source's 'hint fuse'. auto: chosen by the "
             "compiler"));

cl::opt<std::string> typeOpt(
    "type", cl::init(""), cl::value_desc("f16|bf16|f32|f64"),
    cl::cat(codegenCat),
    cl::desc("Element type of every grid, overriding the source"));

cl::opt<std::string> targetOpt(
    "target", cl::init("cuda-core"), cl::value_desc("cuda-core|tc|sptc"),
    cl::cat(codegenCat),
    cl::desc("Execution strategy: CUDA cores with temporal blocking "
             "(default), dense tensor cores (mma.sync) or sparse tensor "
             "cores (mma.sp); tc and sptc need a linear stencil of one "
             "grid"));

cl::opt<std::string> layoutOpt(
    "layout", cl::init(""), cl::value_desc("decompose|morph|flatten"),
    cl::cat(codegenCat),
    cl::desc("Matrix layout of --target=tc|sptc (default decompose); with "
             "--fuse=auto, morph's (r1, r2) come from layout search"));

cl::OptionCategory passCat("Passes");

cl::opt<std::string> passesOpt(
    "passes", cl::init(""), cl::value_desc("pipeline"), cl::cat(passCat),
    cl::desc("Run passes on the IR, e.g. temporal-fusion{steps=4},"
             "sptc-morph (see stencil-opt --help for the passes and named "
             "pipelines); with --emit=ir or --emit=matrix"));

cl::opt<bool> printIRAfterAll("print-ir-after-all", cl::cat(passCat),
                              cl::desc("Print the IR after each pass, to "
                                       "standard error"));

cl::opt<bool> timePasses("time-passes", cl::cat(passCat),
                         cl::desc("Report the time of each pass, to "
                                  "standard error"));

void printVersion(llvm::raw_ostream &os) {
  os << "stencilc " << getVersion() << "\n  LLVM " << getLLVMVersion()
     << "\n  targets: " << getSupportedArchs() << "\n";
}

/// The path with its extension replaced by `ext` (".h").
std::string withExtension(llvm::StringRef path, llvm::StringRef ext) {
  llvm::SmallString<256> p(path);
  llvm::sys::path::replace_extension(p, ext);
  return std::string(p);
}

/// `path` escaped for a Make rule, as GCC writes it: spaces and '#' take a
/// backslash, '$' doubles.
std::string escapeForMake(llvm::StringRef path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#' || c == '\t')
      out += '\\';
    else if (c == '$')
      out += '$';
    out += c;
  }
  return out;
}

/// The depfile text: every target depends on the input.
std::string makeDepfile(const std::vector<std::string> &targets,
                        llvm::StringRef input) {
  std::string text;
  for (const std::string &t : targets) {
    if (!text.empty())
      text += ' ';
    text += escapeForMake(t);
  }
  text += ':';
  if (input != "-")
    text += " " + escapeForMake(input);
  text += '\n';
  return text;
}

/// Whether the file at `path` holds exactly `text`.
bool hasContent(const std::string &path, llvm::StringRef text) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  return buf && (*buf)->getBuffer() == text;
}

/// Writes every (path, text) pair, or none; with --write-if-changed, files
/// that already hold their text are left alone.
bool writeAll(std::vector<std::pair<std::string, std::string>> files,
              DiagnosticEngine &diags) {
  if (writeIfChanged)
    llvm::erase_if(files, [](const std::pair<std::string, std::string> &f) {
      return !llvm::sys::fs::is_directory(f.first) &&
             hasContent(f.first, f.second);
    });
  return writeFilesAtomically(
      files, [&](const llvm::Twine &msg) { diags.error(msg); });
}

/// Runs the tensor-core pipeline of `target` on every stencil: fusion
/// (`fuse`, the source's hint, or layout search's depth when automatic),
/// the layout, sparsity (SPIDER's strided swap for decompose, sparsity
/// conversion otherwise) and Compress24.
bool buildTensorCorePrograms(Module &module, Target target,
                             MatrixLayout layout, std::optional<int> fuse,
                             int arch, DiagnosticEngine &diags) {
  bool sparse = target == Target::SparseTensorCore;
  for (Stencil &s : module.stencils) {
    std::optional<int> steps = fuse;
    if (!steps && s.hints.fuse)
      steps = *s.hints.fuse;
    int r1 = 4, r2 = s.dims == 1 ? 1 : 4;
    if (!steps || *steps == 0) {
      // The best candidate of this layout and sparsity.
      LayoutSearchOptions o;
      o.arch = arch;
      std::vector<LayoutCandidate> all = searchLayouts(s, o, diags);
      if (all.empty())
        return false;
      steps = 1;
      for (const LayoutCandidate &c : all)
        if (c.layout == layout && c.shape.sparse == sparse &&
            (!sparse || layout != MatrixLayout::Decompose || c.stridedSwap) &&
            (layout != MatrixLayout::Decompose || c.r1 == 0)) {
          steps = c.steps;
          if (layout == MatrixLayout::Morph) {
            r1 = c.r1;
            r2 = c.r2;
          }
          break;
        }
    }
    std::string pipeline;
    if (*steps > 1)
      pipeline = "temporal-fusion{steps=" + std::to_string(*steps) + "},";
    std::string archOpt = "arch=" + std::to_string(arch);
    switch (layout) {
    case MatrixLayout::Decompose:
      pipeline += "decompose{" + archOpt + "}";
      // 2:4: SPIDER's pairs of pairs, ordered so each B register's halves
      // are neighbours (one load); tf32 keeps SPIDER's 1:2 order.
      if (sparse)
        pipeline += s.elemType == ElemType::F32 ? ",strided-swap"
                                                : ",strided-swap{adjacent=1}";
      break;
    case MatrixLayout::Morph:
      pipeline += "layout-morph{r1=" + std::to_string(r1) +
                  ",r2=" + std::to_string(r2) + "," + archOpt + "}";
      pipeline += sparse ? ",sparsity-conversion" : "";
      break;
    case MatrixLayout::Flatten:
      pipeline += "flatten{" + archOpt + "}";
      pipeline += sparse ? ",sparsity-conversion" : "";
      break;
    }
    pipeline += ",compress24";
    Module one;
    one.stencils.push_back(std::move(s));
    bool ok = runPipeline(one, pipeline, PipelineOptions(), llvm::errs(),
                          diags);
    s = std::move(one.stencils.front());
    if (!ok)
      return false;
  }
  return true;
}

int compile(DiagnosticEngine &diags) {
  std::optional<GpuArch> arch = parseArch(archOpt);
  if (!arch) {
    diags.error("unsupported --arch '" + archOpt +
                "'; expected sm_80 or sm_90");
    return 1;
  }
  if (fuseOpt.getNumOccurrences() && fuseOpt.empty()) {
    diags.error("--fuse needs a value: an integer from 1 to 64, or auto");
    return 1;
  }
  if (typeOpt.getNumOccurrences() && typeOpt.empty()) {
    diags.error("--type needs a value: f16, bf16, f32 or f64");
    return 1;
  }
  // Unset: the source's hint decides; 0: automatic, overriding the hint.
  std::optional<int> fuse;
  if (fuseOpt == "auto") {
    fuse = 0;
  } else if (!fuseOpt.empty()) {
    int n = 0;
    if (llvm::StringRef(fuseOpt).getAsInteger(10, n) || n < 1 || n > 64) {
      diags.error("--fuse takes an integer from 1 to 64, or auto, not '" +
                  fuseOpt + "'");
      return 1;
    }
    fuse = n;
  }
  std::optional<ElemType> typeOverride;
  if (!typeOpt.empty()) {
    typeOverride = parseElemType(typeOpt);
    if (!typeOverride) {
      diags.error("unknown --type '" + typeOpt +
                  "'; expected f16, bf16, f32 or f64");
      return 1;
    }
  }

  std::optional<Target> target = parseTarget(targetOpt);
  if (!target) {
    diags.error("unknown --target '" + targetOpt +
                "'; expected cuda-core, tc or sptc");
    return 1;
  }
  std::optional<MatrixLayout> layout;
  if (layoutOpt == "decompose" || layoutOpt.empty())
    layout = MatrixLayout::Decompose;
  else if (layoutOpt == "morph")
    layout = MatrixLayout::Morph;
  else if (layoutOpt == "flatten")
    layout = MatrixLayout::Flatten;
  if (!layout) {
    diags.error("unknown --layout '" + layoutOpt +
                "'; expected decompose, morph or flatten");
    return 1;
  }
  if (!layoutOpt.empty() && *target == Target::CudaCore) {
    diags.error("--layout chooses the matrix layout of the tensor cores; add "
                "--target=tc or --target=sptc");
    return 1;
  }
  if (*target != Target::CudaCore && emitKind != EmitKind::Cuda) {
    diags.error("--target=" + targetOpt + " generates CUDA; use it without "
                "--emit, or see its matrices with --emit=matrix --passes=...");
    return 1;
  }

  if (depfileName.getNumOccurrences() && !depfileOpt) {
    diags.error("-MF names the depfile of -MD; add -MD");
    return 1;
  }
  if (depfileOpt && depfileName.getNumOccurrences() && depfileName.empty()) {
    diags.error("-MF needs a file name");
    return 1;
  }

  // The CUDA backend does not consume pass results yet: it would silently
  // ignore them, and the AST comes before any pass.
  if (!passesOpt.empty() && emitKind != EmitKind::IR &&
      emitKind != EmitKind::Matrix) {
    diags.error("--passes needs --emit=ir or --emit=matrix: the CUDA-core "
                "backend does not use the results of passes yet");
    return 1;
  }
  std::string pipeline = passesOpt;
  if (emitKind == EmitKind::Matrix && pipeline.empty()) {
    if (fuse && *fuse == 0) {
      diags.error("--emit=matrix takes --fuse=N, not auto: the tensor-core "
                  "fusion depth is not chosen automatically yet");
      return 1;
    }
    pipeline = "tc-morph";
    if (fuse && *fuse > 1)
      pipeline = "temporal-fusion{steps=" + std::to_string(*fuse) + "}," +
                 pipeline;
  }

  unsigned buffer = loadSourceFile(inputFile, diags);
  if (!buffer)
    return 1;

  std::string text;
  llvm::raw_string_ostream os(text);
  std::string outPath = outputFile;
  std::vector<std::pair<std::string, std::string>> files;
  if (emitKind == EmitKind::AST) {
    std::optional<ast::Module> module = parseBuffer(buffer, diags);
    if (!module)
      return 1;
    ast::print(*module, os);
  } else {
    std::optional<Module> module = compileBuffer(buffer, diags);
    if (!module)
      return 1;
    if (typeOverride)
      for (Stencil &s : module->stencils)
        s.setElemType(*typeOverride);
    if (!pipeline.empty()) {
      PipelineOptions popts;
      popts.printIRAfterAll = printIRAfterAll;
      popts.timePasses = timePasses;
      if (!runPipeline(*module, pipeline, popts, llvm::errs(), diags))
        return 1;
    }
    if (*target != Target::CudaCore &&
        !buildTensorCorePrograms(*module, *target, *layout, fuse,
                                 *arch == GpuArch::SM80 ? 80 : 90, diags))
      return 1;
    if (emitKind == EmitKind::IR) {
      printIR(*module, os);
    } else if (emitKind == EmitKind::Matrix) {
      for (const Stencil &s : module->stencils) {
        if (!s.matrix) {
          diags.error(s.loc, "--emit=matrix: the pipeline '" + pipeline +
                                 "' built no MatrixProgram for stencil '" +
                                 s.name +
                                 "'; add flatten, decompose or layout-morph");
          return 1;
        }
        os << "stencil " << s.name << "\n";
        printMatrixProgram(s, os);
      }
    } else {
      if (outPath.empty())
        outPath = withExtension(llvm::sys::path::filename(
                                    inputFile == "-" ? std::string("stdin.st") : std::string(inputFile)),
                                ".cu");
      CudaOptions opts;
      opts.arch = *arch;
      opts.fuse = fuse;
      opts.emitMain = emitMain;
      opts.target = *target;
      opts.sourceName = std::string(llvm::sys::path::filename(inputFile));
      std::string headerPath = outPath == "-" ? "-" : withExtension(outPath, ".h");
      opts.headerName = outPath == "-"
                            ? withExtension(opts.sourceName, ".h")
                            : std::string(llvm::sys::path::filename(headerPath));
      std::optional<CudaOutput> cuda = emitCuda(*module, opts, diags);
      if (!cuda)
        return 1;
      if (outPath == "-") {
        os << cuda->header << cuda->source;
      } else {
        files.push_back({headerPath, cuda->header});
        files.push_back({outPath, cuda->source});
      }
    }
  }
  os.flush();
  if (outPath.empty() || outPath == "-") {
    if (depfileOpt) {
      diags.error("-MD needs output files; it cannot be used when writing "
                  "to standard output");
      return 1;
    }
    llvm::outs() << text;
    return 0;
  }
  if (files.empty())
    files.push_back({outPath, text});
  if (depfileOpt) {
    // Targets in the order a user reads them: the -o file first.
    std::vector<std::string> targets;
    for (auto it = files.rbegin(); it != files.rend(); ++it)
      targets.push_back(it->first);
    std::string depPath =
        depfileName.empty() ? withExtension(outPath, ".d") : depfileName;
    files.push_back({depPath, makeDepfile(targets, inputFile)});
  }
  return writeAll(std::move(files), diags) ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions({&outputCat, &codegenCat, &passCat});
  cl::SetVersionPrinter(printVersion);
  cl::ParseCommandLineOptions(
      argc, argv,
      "stencilc: compile a stencil (.st) to CUDA C++\n\n"
      "  stencilc heat.st -o heat.cu      writes heat.cu and heat.h\n"
      "  stencilc heat.st --emit=ir       prints the Stencil IR\n"
      "  stencilc heat.st --emit=matrix --passes=temporal-fusion{steps=7},"
      "sptc-spider\n"
      "                                   prints the tensor-core "
      "MatrixProgram\n"
      "  stencilc heat.st -o heat.cu -MD --write-if-changed\n"
      "                                   also writes the depfile heat.d, and "
      "leaves\n"
      "                                   unchanged outputs untouched\n\n"
      "Exit status: 0 on success, 1 on any error in the input or the "
      "options; on error no output file is written.\n");
  llvm::SourceMgr sourceMgr;
  DiagnosticEngine diags(sourceMgr);
  int rc = compile(diags);
  return rc != 0 || diags.hasErrors() ? 1 : 0;
}
