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

#include "stencilc/Analysis/CostModel.h"
#include "stencilc/Analysis/Explain.h"
#include "stencilc/CodeGen/CudaEmitter.h"
#include "stencilc/Frontend/Compile.h"
#include "stencilc/Frontend/Values.h"
#include "stencilc/IR/IRPrinter.h"
#include "stencilc/IR/MatrixEmulator.h"
#include "stencilc/Support/AtomicWrite.h"
#include "stencilc/Support/Diagnostics.h"
#include "stencilc/Support/Version.h"
#include "stencilc/Transforms/LayoutSearch.h"
#include "stencilc/Transforms/Passes.h"

#include "Driver.h"
#include "Tune.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
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

cl::opt<bool> distributedOpt(
    "distributed", cl::cat(codegenCat),
    cl::desc("Also generate run_distributed: the stencil over the ranks of "
             "MPI, one GPU each, with halos through NCCL or MPI (needs MPI "
             "to build; CUDA cores only). With --emit-main, a driver for "
             "mpirun"));

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

cl::opt<std::string> archOpt(
    "arch", cl::init("sm_90"),
    cl::value_desc("sm_80|sm_86|sm_89|sm_90|sm_100|sm_120"),
    cl::cat(codegenCat),
    cl::desc("GPU architecture to generate for (default sm_90). The code "
             "also builds for a newer one whose blocks may hold its shared "
             "memory (sm_80 code for sm_90 and sm_100 always); it sets the "
             "cost model's GPU unless --gpu or --hw does"));

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
    "target", cl::init("auto"), cl::value_desc("auto|cuda-core|tc|sptc"),
    cl::cat(codegenCat),
    cl::desc("Execution strategy: auto (default) lets the cost model "
             "choose; cuda-core: CUDA cores with temporal blocking; tc: "
             "dense tensor cores (mma.sync); sptc: sparse tensor cores "
             "(mma.sp). tc and sptc need a linear stencil of one grid"));

cl::opt<std::string> tileOpt(
    "tile", cl::init(""), cl::value_desc("N|NxN|NxNxN"), cl::cat(codegenCat),
    cl::desc("The CUDA-core kernel's output tile per thread block, one "
             "extent per axis, slowest axis first, e.g. 32x128 (default: "
             "the plan's, which the generated file states). With "
             "--target=auto the cost model then chooses among CUDA-core "
             "depths only"));

cl::opt<std::string> threadsOpt(
    "threads", cl::init(""), cl::value_desc("N"), cl::cat(codegenCat),
    cl::desc("Threads per block of the CUDA-core box kernel, a multiple of "
             "32 from 32 to 1024 (default: the plan's; the 3-D streaming "
             "kernel has one per point of its slab, set by --tile)"));

cl::opt<std::string> layoutOpt(
    "layout", cl::init(""), cl::value_desc("decompose|morph|flatten"),
    cl::cat(codegenCat),
    cl::desc("Matrix layout of the tensor cores (default: the cost model's "
             "choice with --target=auto, decompose otherwise)"));

cl::opt<std::string> morphOpt(
    "morph", cl::init(""), cl::value_desc("R1,R2"), cl::cat(codegenCat),
    cl::desc("layout-morph's (r1, r2), 1 to 8 each, with --layout=morph "
             "(default: layout search's with --fuse=auto, else 4,4)"));

cl::OptionCategory modelCat("Cost model");

cl::opt<std::string> precisionOpt(
    "precision", cl::init(""), cl::value_desc("exact|split-tf32|tf32"),
    cl::cat(modelCat),
    cl::desc("Precision policy, overriding the source's 'hint precision': "
             "exact (default) keeps f32 grids at f32 accuracy, on CUDA "
             "cores or split-TF32 tensor cores; split-tf32 asks for the "
             "tensor cores; tf32 lets tensor cores round f32 operands to "
             "tf32"));

cl::opt<std::string> gpuOpt(
    "gpu", cl::init(""),
    cl::value_desc("a100-40|a100-80|rtx-a6000|l40s|h100-sxm|h100-pcie|h200|"
                   "h200-measured|b200|rtx-5090"),
    cl::cat(modelCat),
    cl::desc("The built-in GPU description the cost model uses: datasheets, "
             "or the lent H200 as stencil-probe measured it, which the model "
             "is calibrated against (default: --arch's, h200-measured for "
             "sm_90, a100-80, rtx-a6000, l40s, b200 and rtx-5090 for sm_80, "
             "sm_86, sm_89, sm_100 and sm_120)"));

cl::opt<std::string> hwOpt(
    "hw", cl::init(""), cl::value_desc("file"), cl::cat(modelCat),
    cl::desc("A GPU description file, as stencil-probe writes it"));

cl::opt<std::string> explainOpt(
    "explain", cl::ValueOptional, cl::init(""), cl::value_desc("file.svg|file.tsv"),
    cl::cat(modelCat),
    cl::desc("Print the cost model's candidates and choice for every "
             "stencil; with a file name, also write the roofline as SVG "
             "(or, for a .tsv name, the table as tab-separated values). "
             "Without -o nothing else is written"));

cl::opt<bool> tensorPlaneOpt(
    "tensor-plane", cl::init(true),
    cl::desc("Run 3-D boxes of f16/bf16 grids on tensor cores with the "
             "tensor-core plane kernel (default; --tensor-plane=false keeps "
             "the matrix program)"),
    cl::cat(codegenCat));

cl::opt<bool> tuneOpt(
    "tune", cl::cat(modelCat),
    cl::desc("Measure instead of predicting: build and run every candidate "
             "the precision policy allows on this machine's GPU (nvcc "
             "needed), showing progress, and generate the fastest"));

cl::opt<std::string> tuneSizeOpt(
    "tune-size", cl::init(""), cl::value_desc("N|NxN|NxNxN"),
    cl::cat(modelCat),
    cl::desc("Grid size --tune times on (default: 10240000, 10240x10240 or "
             "512x512x512 by dimension)"));

cl::opt<std::string> nvccOpt(
    "nvcc", cl::init(""), cl::value_desc("path"), cl::cat(modelCat),
    cl::desc("The nvcc --tune uses (default: $STENCILC_NVCC, else nvcc on "
             "PATH)"));

// Bounds on the cost model's layout search, for the options fuzzer
// (test/fuzz/OptionsFuzzer.cpp), which keeps each input fast under the
// sanitizers with them; not for users, so hidden.
cl::opt<int> searchMaxSteps(
    "layout-search-max-steps", cl::init(0), cl::Hidden,
    cl::desc("Largest fusion depth the cost model's layout search tries "
             "(0: every depth with t * r <= 8)"));
cl::opt<int> searchMaxR(
    "layout-search-max-r", cl::init(8), cl::Hidden,
    cl::desc("Largest layout-morph r1 and r2 the cost model's layout search "
             "tries"));

// The star kernel's cp.async pipeline depth, for the GPU experiments that
// set its default (docs/benchmarks.md); hidden.
cl::opt<int> starPipelineOpt(
    "star-pipeline", cl::init(-1), cl::Hidden,
    cl::desc("Planes the 3-D star kernel keeps in flight by cp.async, 0 to "
             "4 (0: the register-prefetch kernel; default: the plan's)"));

// Whether the star kernel's ring is filled by TMA on Hopper, for the GPU
// experiments that compare it with cp.async; hidden.
cl::opt<bool> starTmaOpt(
    "star-tma", cl::Hidden,
    cl::desc("Fill the 3-D star kernel's ring of planes by TMA where the "
             "target has it (sm_90 and later; a ring needs f16, bf16 or "
             "--star-pipeline; default: off, cp.async)"));

// The rows of a group in the streaming kernel's rings, for the GPU
// experiments that compare layouts; hidden.
cl::opt<int> groupRowsOpt(
    "group-rows", cl::init(-1), cl::Hidden,
    cl::desc("Rows of a group in the streaming kernel's rings, read and "
             "written a group an access: 2 or 4 where a group is 8 or 16 "
             "bytes and every tap off a thread's column lies in its row, 0 "
             "a row an access (default: the plan's)"));

// The streaming loop's fast iterations in a copy of their own, for the GPU
// experiments; hidden.
cl::opt<bool> splitFastOpt(
    "split-fast", cl::Hidden,
    cl::desc("Give the streaming loop's fast iterations a copy of their "
             "own (default: with the group ring)"));

// The dense tensor-core plane kernel's blocks a warp, for the GPU
// experiments; hidden.
cl::opt<int> planeBlocksOpt(
    "plane-blocks", cl::init(0), cl::Hidden,
    cl::desc("m16n8 blocks a warp owns in the dense tensor-core plane "
             "kernel: 1, 2 or 4 (default: the plan's, 2)"));

// The streaming kernel for 2-D stencils: a candidate of the cost model for
// f32 grids (docs/cost-model.md, session 26); the flag fixes it, in any
// type.
cl::opt<bool> stream2dOpt(
    "stream-2d",
    cl::desc("Run a 2-D stencil of one grid on the streaming kernel (CUDA "
             "cores, rows of 256 threads streaming along axis 0) instead of "
             "the box kernel; the cost model weighs both for f32 grids"));

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

/// Writes every (path, text) pair, or none; refuses an output that is the
/// input or another output (Support/AtomicWrite.h). With --write-if-changed,
/// files that already hold their text are left alone.
bool writeAll(std::vector<std::pair<std::string, std::string>> files,
              DiagnosticEngine &diags) {
  std::vector<std::string> paths;
  for (const auto &f : files)
    paths.push_back(f.first);
  auto error = [&](const llvm::Twine &msg) { diags.error(msg); };
  if (!checkOutputsDistinct({inputFile}, paths, error))
    return false;
  if (writeIfChanged)
    llvm::erase_if(files, [](const std::pair<std::string, std::string> &f) {
      return !llvm::sys::fs::is_directory(f.first) &&
             hasContent(f.first, f.second);
    });
  return writeFilesAtomically(files, error);
}

/// "R1,R2" of --morph, each from 1 to 8.
std::optional<std::pair<int, int>> parseMorph(llvm::StringRef text) {
  auto [a, b] = text.split(',');
  int r1 = 0, r2 = 0;
  if (a.getAsInteger(10, r1) || b.getAsInteger(10, r2) || r1 < 1 || r1 > 8 ||
      r2 < 1 || r2 > 8)
    return std::nullopt;
  return std::make_pair(r1, r2);
}

/// The extents of --tile: one to three integers from 1 to 65536, joined
/// by 'x'.
std::optional<std::vector<int>> parseTile(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, kMaxDims + 1> parts;
  text.split(parts, 'x');
  if (parts.size() > static_cast<size_t>(kMaxDims))
    return std::nullopt;
  std::vector<int> tile;
  for (llvm::StringRef part : parts) {
    int n = 0;
    if (part.getAsInteger(10, n) || n < 1 || n > 65536)
      return std::nullopt;
    tile.push_back(n);
  }
  return tile;
}

/// The comment lines the generated file carries for a stencil.
std::vector<std::string> choiceNotes(const Stencil &s, const Strategy &st,
                                     const CostCandidate *chosen,
                                     Precision policy,
                                     const HardwareDesc &hw) {
  std::vector<std::string> notes;
  std::string rule =
      s.elemType == ElemType::F32
          ? (policy == Precision::Exact
                 ? "f32 grids keep f32 accuracy: CUDA cores, or tensor "
                   "cores in split-TF32"
             : policy == Precision::SplitTF32
                 ? "f32 grids keep f32 accuracy on tensor cores in "
                   "split-TF32"
                 : "f32 grids may use tf32 tensor-core operands")
      : s.elemType == ElemType::F64
          ? "f64 grids use f64 arithmetic (CUDA cores or DMMA)"
          : "tensor cores multiply in the grid type, accumulate in f32";
  notes.push_back("Precision policy: " + precisionName(policy).str() + ": " +
                  rule + ".");
  if (st.split && s.matrix && s.matrix->split) {
    std::optional<bool> low = splitNeedsLowA(s);
    notes.push_back(
        std::string("Split-TF32: every f32 operand x is hi + lo, hi = "
                    "tf32(x), lo = tf32(x - hi); a product takes ") +
        (!low  ? "three tf32 MMAs, A_lo*B_hi + A_hi*B_lo + A_hi*B_hi (two "
                 "where the host finds every coefficient exact in tf32)"
         : *low ? "three tf32 MMAs, A_lo*B_hi + A_hi*B_lo + A_hi*B_hi"
                : "two tf32 MMAs, A_hi*B_lo + A_hi*B_hi (every coefficient "
                  "is exact in tf32)") +
        "; about 2^-22 relative error per product.");
  }
  if (chosen)
    notes.push_back(fmt::format(
        "Strategy: {}, chosen by the cost model for {}: {:.0f} GStencils/s "
        "predicted, bound by {} (stencilc --explain shows every "
        "candidate).",
        st.label(), hw.name, chosen->predicted, chosen->bound));
  else
    notes.push_back("Strategy: " + st.label() + ", as requested.");
  return notes;
}

/// What the command line asks of the strategy; unset parts are the cost
/// model's to choose.
struct StrategyRequest {
  std::optional<Target> target;
  std::optional<MatrixLayout> layout;
  std::optional<std::pair<int, int>> morph;
  std::optional<int> fuse; ///< 0: automatic, overriding the source's hint.
  std::optional<Precision> precision;
  /// --tile's extents and --threads: the CUDA-core kernel's shape.
  std::optional<std::vector<int>> tile;
  std::optional<int> threads;
  /// --distributed: CUDA cores only.
  bool distributed = false;
};

/// Times `candidates` of `s` on the GPU (--tune), with progress on
/// standard error under `title`.
std::optional<TuneResult> runTune(const Stencil &s,
                                  const std::vector<TuneCandidate> &candidates,
                                  Precision policy, GpuArch arch,
                                  const llvm::Twine &title,
                                  DiagnosticEngine &diags) {
  TuneOptions o;
  o.stencilc = llvm::sys::fs::getMainExecutable(
      "stencilc", reinterpret_cast<void *>(&runTune));
  o.input = inputFile;
  o.commonFlags = {"--type=" + elemTypeName(s.elemType).str(),
                   "--arch=" + archName(arch).str(),
                   "--precision=" + precisionName(policy).str()};
  // The hidden experiment's flag plans every candidate as it plans the
  // output. (--stream-2d is each candidate's own: Strategy::flags.)
  if (starPipelineOpt >= 0)
    o.commonFlags.push_back("--star-pipeline=" +
                            std::to_string(starPipelineOpt.getValue()));
  if (starTmaOpt.getNumOccurrences())
    o.commonFlags.push_back(std::string("--star-tma=") +
                            (starTmaOpt ? "true" : "false"));
  if (groupRowsOpt >= 0)
    o.commonFlags.push_back("--group-rows=" +
                            std::to_string(groupRowsOpt.getValue()));
  if (splitFastOpt.getNumOccurrences())
    o.commonFlags.push_back(std::string("--split-fast=") +
                            (splitFastOpt ? "true" : "false"));
  if (planeBlocksOpt > 0)
    o.commonFlags.push_back("--plane-blocks=" +
                            std::to_string(planeBlocksOpt.getValue()));

  o.nvcc = nvccOpt;
  o.arch = archName(arch).str();
  static const char *const sizes[] = {"10240000", "10240x10240",
                                      "512x512x512"};
  o.size = tuneSizeOpt.empty() ? std::string(sizes[s.dims - 1])
                              : std::string(tuneSizeOpt);
  o.progress = &llvm::errs();
  llvm::errs() << "tuning stencil '" << s.name << "': " << title << "\n";
  return tune(candidates, o, diags);
}

/// Runs `candidates` on the GPU (--tune) and returns the index of the
/// fastest with its rate, or nullopt after an error.
std::optional<std::pair<size_t, double>>
tuneCandidates(const Stencil &s, const std::vector<CostCandidate> &cands,
               Precision policy, GpuArch arch, DiagnosticEngine &diags) {
  std::vector<TuneCandidate> tc;
  std::vector<size_t> index;
  for (size_t i = 0; i < cands.size(); ++i)
    if (cands[i].allowed) {
      tc.push_back({cands[i].strategy.label(), cands[i].strategy.flags()});
      index.push_back(i);
    }
  std::optional<TuneResult> r =
      runTune(s, tc, policy, arch,
              llvm::Twine(tc.size()) + " candidates", diags);
  if (!r)
    return std::nullopt;
  return std::make_pair(index[r->best], r->measured[r->best].gstencils);
}

/// How --tune's progress and the generated file name a tile shape:
/// "tile 64x128", or "tile 64x64, 384 threads" where it sets the block.
std::string shapeLabel(const CudaCoreShape &shape, int dims) {
  std::string label = "tile " + tileName(shape.tile, dims);
  if (shape.threads)
    label += ", " + std::to_string(shape.threads) + " threads";
  return label;
}

/// The second round of --tune where CUDA cores won the first: the plan's
/// neighbouring tile shapes (tuneShapes) at the winning depth, against
/// `planRate`, the plan's own shape's rate in the first round. Returns the
/// faster shape, nullopt where the plan's own stays, or an error.
std::optional<std::optional<CudaCoreShape>>
tuneTileShapes(const Stencil &s, const Strategy &st, double planRate,
               Precision policy, GpuArch arch, DiagnosticEngine &diags) {
  Stencil planned = s;
  planned.hints.stream2d = planned.hints.stream2d || st.stream2d;
  std::vector<CudaCoreShape> shapes =
      tuneShapes(planned, st.steps, arch, diags);
  if (shapes.empty())
    return std::optional<CudaCoreShape>();
  std::vector<TuneCandidate> tc;
  for (const CudaCoreShape &shape : shapes) {
    TuneCandidate c{st.label() + " " + shapeLabel(shape, s.dims), st.flags()};
    c.flags.push_back("--tile=" + tileName(shape.tile, s.dims));
    if (shape.threads)
      c.flags.push_back("--threads=" + std::to_string(shape.threads));
    tc.push_back(std::move(c));
  }
  std::optional<TuneResult> r = runTune(
      s, tc, policy, arch,
      llvm::Twine(tc.size()) + " tile shapes of " + st.label() +
          " beside the plan's (" + fmt::format("{:.1f}", planRate) +
          " GStencils/s)",
      diags);
  if (!r)
    return std::nullopt;
  if (r->measured[r->best].gstencils <= planRate) {
    llvm::errs() << "tuning: the plan's tile stays (" << st.label() << ", "
                 << fmt::format("{:.1f}", planRate) << " GStencils/s)\n";
    return std::optional<CudaCoreShape>();
  }
  return std::optional<CudaCoreShape>(shapes[r->best]);
}

/// Settles the strategy of `s` (asking the cost model for whatever the
/// request leaves open), builds its MatrixProgram for tensor cores or
/// fixes its fusion depth for CUDA cores, and returns the comment lines the
/// generated file carries. With `explain`, prints the candidates there and
/// adds the roofline SVG to `svgs`.
std::optional<std::vector<std::string>>
chooseStrategy(Stencil &s, const StrategyRequest &req, const HardwareDesc &hw,
               GpuArch arch, llvm::raw_ostream *explain,
               std::vector<std::pair<std::string, std::string>> *svgs,
               DiagnosticEngine &diags) {
  CostModelOptions mo;
  mo.hw = hw;
  mo.arch = arch;
  mo.precision = req.precision ? *req.precision
                                : s.hints.precision.value_or(Precision::Exact);
  // Split-TF32 splits f32 operands; sema checked the hint against the
  // declared type, --type may have changed it since.
  if (mo.precision == Precision::SplitTF32 && s.elemType != ElemType::F32) {
    if (req.precision)
      diags.error(s.loc, "--precision=split-tf32 is for f32 grids; the "
                         "grids of stencil '" +
                             s.name + "' are " + elemTypeName(s.elemType) +
                             " (use exact)");
    else
      diags.error(s.hints.precisionLoc,
                  "hint precision = split_tf32 is for f32 grids; --type=" +
                      typeOpt + " makes the grids of stencil '" + s.name +
                      "' " + elemTypeName(s.elemType) +
                      " (add --precision=exact)");
    return std::nullopt;
  }
  mo.target = req.target;
  mo.searchMaxSteps = std::max(0, searchMaxSteps.getValue());
  mo.searchMaxR = std::clamp(searchMaxR.getValue(), 1, 8);
  bool tensor = req.target && *req.target != Target::CudaCore;
  // An explicit tensor-core target without --layout means decompose (the
  // layout the model may choose only under --target=auto), so that
  // --explain's choice is what gets generated.
  mo.layout = req.layout;
  if (tensor && !mo.layout)
    mo.layout = MatrixLayout::Decompose;
  if (req.tile || req.threads) {
    if (req.tile && req.tile->size() != static_cast<size_t>(s.dims)) {
      diags.error(s.loc, "--tile=" + tileOpt + " gives " +
                             llvm::Twine(req.tile->size()) +
                             (req.tile->size() == 1 ? " extent" : " extents") +
                             ", but stencil '" + s.name + "' is " +
                             llvm::Twine(s.dims) +
                             "-D; give one per axis, slowest first");
      return std::nullopt;
    }
    if (req.tile) {
      std::array<int, kMaxDims> tile{1, 1, 1};
      llvm::copy(*req.tile, tile.begin());
      s.hints.tile = tile;
    }
    s.hints.threads = req.threads;
    // The shape is the CUDA-core kernel's; the model only picks its depth.
    mo.target = Target::CudaCore;
  }
  // run_distributed runs the CUDA-core kernel alone, over grids of one
  // element type (its buffers and messages are of that type).
  if (req.distributed && s.mixedTypes()) {
    diags.error(s.loc, "--distributed needs one element type for all grids "
                       "of stencil '" +
                           s.name +
                           "'; declare them alike, or run it with run() on "
                           "one GPU");
    return std::nullopt;
  }
  if (req.distributed)
    mo.target = Target::CudaCore;
  mo.distributed = req.distributed;
  if (stream2dOpt) {
    if (!streamsIn2D(s)) {
      diags.error(s.loc, "--stream-2d streams a 2-D stencil of one grid, "
                         "without stages, new values, t or coordinates and "
                         "with each axis's boundary alike on both sides; "
                         "stencil '" +
                             s.name + "' is not");
      return std::nullopt;
    }
    if ((req.target && *req.target != Target::CudaCore) || req.distributed) {
      diags.error(s.loc, llvm::Twine("--stream-2d runs on one GPU's CUDA "
                                     "cores; drop ") +
                             (req.distributed ? "--distributed"
                                              : "--target=" + targetOpt));
      return std::nullopt;
    }
    s.hints.stream2d = true;
    mo.target = Target::CudaCore;
  }
  if (starPipelineOpt >= 0)
    s.hints.starPipeline = starPipelineOpt;
  if (starTmaOpt.getNumOccurrences())
    s.hints.starTma = starTmaOpt.getValue();
  if (groupRowsOpt >= 0)
    s.hints.groupRows = groupRowsOpt.getValue();
  if (splitFastOpt.getNumOccurrences())
    s.hints.splitFast = splitFastOpt.getValue();
  if (planeBlocksOpt > 0)
    s.hints.planeBlocks = planeBlocksOpt.getValue();

  std::optional<int> steps = req.fuse ? req.fuse : s.hints.fuse;
  if (steps && *steps > 0)
    mo.steps = steps;
  // 3-D boxes of f16 and bf16 grids run on the tensor-core plane kernel
  // (CodeGen/TensorPlaneEmitter.cpp) at one step per pass, unless a layout
  // or a deeper fusion asks for the matrix program.
  mo.tensorPlane = tensorPlaneOpt;
  const bool tensorPlane = tensorPlaneOpt && tensor && mo.target &&
                           tensorPlaneApplies(s) &&
                           !req.layout && !req.morph &&
                           (!steps || *steps <= 1) && !req.distributed;
  if (tensorPlane) {
    // The model weighs the plane kernel alone, as it is generated.
    mo.steps = 1;
    mo.layout.reset();
  }
  if (mo.target == Target::CudaCore && s.elemType == ElemType::F32 &&
      mo.precision == Precision::SplitTF32) {
    std::string what = req.target    ? "--target=cuda-core"
                       : req.tile    ? "--tile"
                       : req.threads ? "--threads"
                                     : "--distributed";
    diags.error(s.loc, what + " runs stencil '" + s.name +
                           "' on CUDA cores, but precision split-tf32 asks "
                           "for split-TF32 tensor cores; use "
                           "--precision=exact to allow both");
    return std::nullopt;
  }
  // Everything fixed: the model only has to speak when asked.
  bool fixed = req.target && mo.steps &&
               (!tensor || req.layout.value_or(MatrixLayout::Decompose) !=
                               MatrixLayout::Morph ||
                req.morph);
  std::vector<CostCandidate> candidates;
  const CostCandidate *chosen = nullptr;
  std::optional<CudaCoreShape> tunedShape;
  bool patchRequested = false;
  Strategy st;
  if (!fixed || explain || tuneOpt) {
    candidates = evaluateCandidates(s, mo, diags);
    if (candidates.empty())
      return std::nullopt;
    for (const CostCandidate &c : candidates)
      if (c.chosen)
        chosen = &c;
    if (tuneOpt) {
      std::optional<std::pair<size_t, double>> best =
          tuneCandidates(s, candidates, mo.precision, arch, diags);
      if (!best)
        return std::nullopt;
      for (CostCandidate &c : candidates)
        c.chosen = false;
      candidates[best->first].chosen = true;
      chosen = &candidates[best->first];
      if (chosen->strategy.target == Target::CudaCore) {
        std::optional<std::optional<CudaCoreShape>> shape =
            tuneTileShapes(s, chosen->strategy, best->second, mo.precision,
                           arch, diags);
        if (!shape)
          return std::nullopt;
        tunedShape = *shape;
      }
    }
    st = chosen->strategy;
    if (explain)
      printExplanation(s, candidates, mo, *explain);
    if (svgs)
      svgs->push_back(
          {s.name, llvm::StringRef(explainOpt).endswith(".tsv")
                       ? explanationTsv(s, candidates)
                       : renderRooflineSvg(s, candidates, mo)});
  }
  if (fixed && !tuneOpt) {
    st = Strategy();
    st.target = *req.target;
    st.steps = *mo.steps;
    st.plane = tensorPlane;
    st.split = st.target != Target::CudaCore &&
               splitsOperands(s.elemType, mo.precision);
    chosen = nullptr;
  }
  // The plane kernel: asked for (tc or sptc without --layout on a 3-D box),
  // or the cost model's choice.
  if ((tensorPlane || st.plane) && st.target != Target::CudaCore) {
    s.matrix.reset();
    s.hints.fuse = 1;
    // One step a pass is the kernel's; labelled automatic unless asked for.
    s.hints.fuseByModel = !steps || *steps == 0;
    s.hints.tensorPlane = st.target == Target::SparseTensorCore ? 2 : 1;
    st.steps = 1;
  } else if (st.target != Target::CudaCore) {
    if (req.layout && fixed && !tuneOpt)
      st.layout = *req.layout;
    if (st.layout == MatrixLayout::Morph && req.morph) {
      // The model's depth with the requested patch: its prediction was for
      // another (r1, r2), so the note does not quote it.
      if (chosen && (st.r1 != req.morph->first || st.r2 != req.morph->second)) {
        chosen = nullptr;
        patchRequested = true;
      }
      st.r1 = req.morph->first;
      st.r2 = req.morph->second;
    } else if (fixed && !tuneOpt) {
      st.r1 = 4;
      st.r2 = s.dims == 1 ? 1 : 4;
    }
    if (!buildTensorCoreProgram(s, st, archNumber(arch), diags))
      return std::nullopt;
  } else {
    s.matrix.reset();
    s.hints.fuse = st.steps;
    if (st.stream2d)
      s.hints.stream2d = true;
    s.hints.fuseByModel = chosen != nullptr && !mo.steps;
    if (tunedShape) {
      s.hints.tile = tunedShape->tile;
      if (tunedShape->threads)
        s.hints.threads = tunedShape->threads;
    }
  }
  std::vector<std::string> notes =
      choiceNotes(s, st, tuneOpt ? nullptr : chosen, mo.precision, hw);
  if (tuneOpt)
    notes.back() = "Strategy: " + st.label() +
                   (tunedShape ? " " + shapeLabel(*tunedShape, s.dims)
                               : std::string()) +
                   ", the fastest measured by stencilc --tune.";
  else if (patchRequested)
    notes.back() = "Strategy: " + st.label() +
                   ": (r1, r2) as requested, the rest chosen by the cost "
                   "model.";
  return notes;
}

int compile(DiagnosticEngine &diags) {
  std::optional<GpuArch> arch = parseArch(archOpt);
  if (!arch) {
    diags.error("unsupported --arch '" + archOpt + "'; expected " +
                archNames());
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

  // Unset: the cost model chooses.
  std::optional<Target> target;
  if (targetOpt != "auto") {
    target = parseTarget(targetOpt);
    if (!target) {
      diags.error("unknown --target '" + targetOpt +
                  "'; expected auto, cuda-core, tc or sptc");
      return 1;
    }
  }
  std::optional<MatrixLayout> layout;
  if (layoutOpt == "decompose")
    layout = MatrixLayout::Decompose;
  else if (layoutOpt == "morph")
    layout = MatrixLayout::Morph;
  else if (layoutOpt == "flatten")
    layout = MatrixLayout::Flatten;
  if (!layout && !layoutOpt.empty()) {
    diags.error("unknown --layout '" + layoutOpt +
                "'; expected decompose, morph or flatten");
    return 1;
  }
  if (layout && target == Target::CudaCore) {
    diags.error("--layout chooses the matrix layout of the tensor cores; it "
                "does not apply to --target=cuda-core");
    return 1;
  }
  std::optional<std::pair<int, int>> morph;
  if (morphOpt.getNumOccurrences()) {
    morph = parseMorph(morphOpt);
    if (!morph) {
      diags.error("--morph takes R1,R2 with each from 1 to 8, not '" +
                  morphOpt + "'");
      return 1;
    }
    if (layout != MatrixLayout::Morph) {
      diags.error("--morph sets layout-morph's (r1, r2); add --layout=morph");
      return 1;
    }
  }
  if (target && *target != Target::CudaCore && emitKind != EmitKind::Cuda) {
    diags.error("--target=" + targetOpt + " generates CUDA; use it without "
                "--emit, or see its matrices with --emit=matrix --passes=...");
    return 1;
  }
  std::optional<Precision> precision;
  if (precisionOpt.getNumOccurrences()) {
    precision = parsePrecision(precisionOpt);
    if (!precision) {
      diags.error("unknown --precision '" + precisionOpt +
                  "'; expected exact, split-tf32 or tf32");
      return 1;
    }
  }
  if (gpuOpt.getNumOccurrences() && hwOpt.getNumOccurrences()) {
    diags.error("--gpu and --hw both describe the GPU; give one");
    return 1;
  }
  // --explain says which description the model used, and why.
  HardwareDesc hw = defaultHardware(*arch);
  hw.origin = "built-in " + archInfo(*arch).gpu.str() +
              ", the default for --arch=" + archName(*arch).str() + ": " +
              hw.origin;
  if (gpuOpt.getNumOccurrences()) {
    std::optional<HardwareDesc> builtin = builtinHardware(gpuOpt);
    if (!builtin) {
      diags.error("unknown --gpu '" + gpuOpt + "'; expected " +
                  builtinHardwareNames());
      return 1;
    }
    hw = *builtin;
    hw.origin = "--gpu=" + gpuOpt + ": " + hw.origin;
  }
  if (hwOpt.getNumOccurrences()) {
    unsigned hwBuffer = loadSourceFile(hwOpt, diags);
    if (!hwBuffer)
      return 1;
    std::optional<HardwareDesc> parsed = parseHardware(hwBuffer, diags);
    if (!parsed)
      return 1;
    hw = *parsed;
    // The file's name, not its path: --explain's output stays the same
    // wherever the file lies.
    hw.origin =
        "--hw=" + llvm::sys::path::filename(hwOpt).str() + ": " + hw.origin;
  }
  std::optional<std::vector<int>> tile;
  if (tileOpt.getNumOccurrences()) {
    tile = parseTile(tileOpt);
    if (!tile) {
      diags.error("--tile takes one extent per axis, slowest first, each "
                  "from 1 to 65536 and joined by 'x' (64x64), not '" +
                  tileOpt + "'");
      return 1;
    }
  }
  if (starPipelineOpt.getNumOccurrences() &&
      (starPipelineOpt < 0 || starPipelineOpt > 4)) {
    diags.error("--star-pipeline takes 0 to 4 planes, not " +
                llvm::Twine(starPipelineOpt.getValue()));
    return 1;
  }
  if (planeBlocksOpt.getNumOccurrences() && planeBlocksOpt != 1 &&
      planeBlocksOpt != 2 && planeBlocksOpt != 4) {
    diags.error("--plane-blocks takes 1, 2 or 4 blocks, not " +
                llvm::Twine(planeBlocksOpt.getValue()));
    return 1;
  }
  std::optional<int> threads;
  if (threadsOpt.getNumOccurrences()) {
    int n = 0;
    if (llvm::StringRef(threadsOpt).getAsInteger(10, n) || n < 32 ||
        n > kMaxThreads || n % 32 != 0) {
      diags.error("--threads takes a multiple of 32 from 32 to 1024, not '" +
                  threadsOpt + "'");
      return 1;
    }
    threads = n;
  }
  if ((tile || threads) && target && *target != Target::CudaCore) {
    diags.error(std::string(tile ? "--tile" : "--threads") +
                " shapes the CUDA-core kernel; it does not apply to "
                "--target=" + targetOpt);
    return 1;
  }
  if ((tile || threads) && tuneOpt) {
    diags.error(std::string(tile ? "--tile" : "--threads") +
                " fixes what --tune measures; give one or the other");
    return 1;
  }
  if ((tile || threads) && emitKind != EmitKind::Cuda) {
    diags.error(std::string(tile ? "--tile" : "--threads") +
                " shapes the generated CUDA kernel; use it without --emit");
    return 1;
  }
  if (distributedOpt && emitKind != EmitKind::Cuda) {
    diags.error("--distributed generates CUDA; use it without --emit");
    return 1;
  }
  if (distributedOpt && target && *target != Target::CudaCore) {
    diags.error("--distributed runs the CUDA-core kernel on each rank; "
                "--target=" +
                targetOpt +
                " is not distributed (use --target=cuda-core or auto)");
    return 1;
  }
  if (tuneOpt && emitKind != EmitKind::Cuda) {
    diags.error("--tune chooses how CUDA is generated; use it without "
                "--emit");
    return 1;
  }
  if (tuneOpt && inputFile == "-") {
    diags.error("--tune compiles each candidate from the input file again; "
                "it cannot read standard input");
    return 1;
  }
  if ((tuneSizeOpt.getNumOccurrences() || nvccOpt.getNumOccurrences()) &&
      !tuneOpt) {
    diags.error(std::string(tuneSizeOpt.getNumOccurrences() ? "--tune-size"
                                                            : "--nvcc") +
                " only applies to --tune; add --tune");
    return 1;
  }
  bool explain = explainOpt.getNumOccurrences() > 0;
  if (explain && emitKind != EmitKind::Cuda) {
    diags.error("--explain shows how the CUDA strategy is chosen; use it "
                "without --emit");
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

  StrategyRequest request{target,    layout, morph,   fuse,
                          precision, tile,   threads, distributedOpt};

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
    if (typeOverride) {
      for (Stencil &s : module->stencils)
        s.setElemType(*typeOverride);
      if (!checkValuesFit(*module, diags, "--type=" + typeOpt))
        return 1;
    }
    if (!pipeline.empty()) {
      PipelineOptions popts;
      popts.printIRAfterAll = printIRAfterAll;
      popts.timePasses = timePasses;
      if (!runPipeline(*module, pipeline, popts, llvm::errs(), diags))
        return 1;
    }
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
      CudaOptions opts;
      opts.arch = *arch;
      opts.emitMain = emitMain;
      opts.distributed = distributedOpt;
      std::string explanation;
      llvm::raw_string_ostream explainStream(explanation);
      std::vector<std::pair<std::string, std::string>> svgs;
      if (tuneOpt && module->stencils.size() != 1) {
        diags.error("--tune measures one stencil per file; this file has " +
                    llvm::Twine(module->stencils.size()));
        return 1;
      }
      for (Stencil &s : module->stencils) {
        std::optional<std::vector<std::string>> notes = chooseStrategy(
            s, request, hw, *arch, explain ? &explainStream : nullptr,
            explain && !explainOpt.empty() ? &svgs : nullptr, diags);
        if (!notes)
          return 1;
        opts.notes[s.name] = std::move(*notes);
      }
      explainStream.flush();
      llvm::outs() << explanation;
      for (const auto &[name, svg] : svgs)
        files.push_back(
            {svgs.size() == 1
                 ? std::string(explainOpt)
                 : withExtension(explainOpt, "") + "-" + name +
                       llvm::sys::path::extension(explainOpt).str(),
             svg});
      if (explain && outputFile.empty()) {
        // A question about the choice: only the drawings are written.
        if (depfileOpt) {
          diags.error("-MD needs output files; with --explain, give -o");
          return 1;
        }
        return writeAll(std::move(files), diags) ? 0 : 1;
      }
      if (outPath.empty())
        outPath = withExtension(
            llvm::sys::path::filename(inputFile == "-"
                                          ? std::string("stdin.st")
                                          : std::string(inputFile)),
            ".cu");
      opts.sourceName = std::string(llvm::sys::path::filename(inputFile));
      // A stream (-, /dev/stdout, a pipe) takes the header and the source
      // one after the other; it has no "beside it" for a .h.
      bool stream = isStreamPath(outPath);
      std::string headerPath = stream ? "-" : withExtension(outPath, ".h");
      opts.headerName = stream
                            ? withExtension(opts.sourceName, ".h")
                            : std::string(llvm::sys::path::filename(headerPath));
      std::optional<CudaOutput> cuda = emitCuda(*module, opts, diags);
      if (!cuda)
        return 1;
      if (stream) {
        os << cuda->header << cuda->source;
      } else {
        files.push_back({headerPath, cuda->header});
        files.push_back({outPath, cuda->source});
      }
    }
  }
  os.flush();
  if (depfileOpt && (outPath.empty() || isStreamPath(outPath))) {
    diags.error("-MD needs output files; it cannot be used when writing "
                "to standard output or another stream");
    return 1;
  }
  if (outPath.empty() || outPath == "-") {
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

int stencilc::runStencilc(int argc, const char *const *argv,
                          llvm::raw_ostream *errs) {
  // A second run in the same process starts from the defaults.
  cl::ResetAllOptionOccurrences();
  cl::HideUnrelatedOptions({&outputCat, &codegenCat, &modelCat, &passCat});
  cl::SetVersionPrinter(printVersion);
  if (!cl::ParseCommandLineOptions(
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
          "options; on error no output file is written.\n",
          errs))
    return 1;
  llvm::SourceMgr sourceMgr;
  DiagnosticEngine diags(sourceMgr, errs ? *errs : llvm::errs());
  int rc = compile(diags);
  return rc != 0 || diags.hasErrors() ? 1 : 0;
}
