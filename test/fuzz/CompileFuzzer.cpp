//===- CompileFuzzer.cpp - libFuzzer target for the whole compiler --------===//
//
// Feeds arbitrary bytes through the lexer, parser and sema and, when they
// are accepted, through every back end: the cost model with its --explain
// text, TSV and roofline SVG, the tensor-core pipeline of the requested
// target and layout (dense tc and sparse sptc; flatten, decompose and
// layout-morph at any (r1, r2)), a named pass pipeline with the MatrixProgram
// printer, and the CUDA writer, which prints source and header into
// strings. Any crash, sanitizer report or hang is a bug: stencilc must
// answer every input with output or a located diagnostic.
//
// The first kHeaderBytes bytes choose the configuration, the way the
// driver's options would (see Config); the rest is the .st source. The
// strategy is settled as tools/stencilc/stencilc.cpp's chooseStrategy
// settles it.
//
//===----------------------------------------------------------------------===//

#include "stencilc/Analysis/CostModel.h"
#include "stencilc/Analysis/Explain.h"
#include "stencilc/CodeGen/CudaEmitter.h"
#include "stencilc/Frontend/Compile.h"
#include "stencilc/IR/IRPrinter.h"
#include "stencilc/Transforms/Passes.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <string>

using namespace stencilc;

namespace {

constexpr size_t kHeaderBytes = 3;

/// What the header bytes ask for: the driver's --target, --layout, --type,
/// --arch, --fuse, --morph, --precision, --gpu and --emit-main, and a pass
/// pipeline for --emit=matrix.
///
///   byte 0: bits 0-1 target (auto, cuda-core, tc, sptc); bits 2-3 layout
///           (the default, decompose, morph, flatten); bits 4-6 --type
///           (none, f16, bf16, f32, f64, none...); bit 7 sm_80 for sm_90
///   byte 1: bits 0-2 --fuse (the source's hint, 1, 2, 3, 4, 6, 8, auto);
///           bits 3-4 --gpu (the default, a100-40, h100-sxm, h200);
///           bit 5 --explain; bits 6-7 a named pipeline to also run (none,
///           or one of them)
///   byte 2: bits 0-2 r1 - 1; bits 3-5 r2 - 1, as --morph=R1,R2 with
///           layout morph (all six bits set: no --morph); bit 6
///           --precision=tf32; bit 7 --emit-main
struct Config {
  std::optional<Target> target;
  std::optional<MatrixLayout> layout;
  std::optional<ElemType> type;
  GpuArch arch = GpuArch::SM90;
  std::optional<int> fuse; ///< 0: auto.
  int gpu = 0;
  bool explain = false;
  int pipeline = 0;
  std::pair<int, int> morph{4, 4};
  bool morphGiven = false;
  Precision precision = Precision::Exact;
  bool emitMain = false;
};

Config decode(const uint8_t *h) {
  Config c;
  static const std::optional<Target> targets[] = {
      std::nullopt, Target::CudaCore, Target::TensorCore,
      Target::SparseTensorCore};
  c.target = targets[h[0] & 3];
  static const std::optional<MatrixLayout> layouts[] = {
      std::nullopt, MatrixLayout::Decompose, MatrixLayout::Morph,
      MatrixLayout::Flatten};
  c.layout = layouts[(h[0] >> 2) & 3];
  // As the driver refuses --layout with --target=cuda-core.
  if (c.target == Target::CudaCore)
    c.layout.reset();
  static const std::optional<ElemType> types[] = {
      std::nullopt,   ElemType::F16,  ElemType::BF16, ElemType::F32,
      ElemType::F64,  std::nullopt,   std::nullopt,   std::nullopt};
  c.type = types[(h[0] >> 4) & 7];
  c.arch = h[0] & 0x80 ? GpuArch::SM80 : GpuArch::SM90;
  static const std::optional<int> fuses[] = {std::nullopt, 1, 2, 3, 4, 6, 8,
                                             0};
  c.fuse = fuses[h[1] & 7];
  c.gpu = (h[1] >> 3) & 3;
  c.explain = h[1] & 0x20;
  c.pipeline = (h[1] >> 6) & 3;
  c.morph = {1 + (h[2] & 7), 1 + ((h[2] >> 3) & 7)};
  c.morphGiven = c.layout == MatrixLayout::Morph && (h[2] & 0x3f) != 0x3f;
  c.precision = h[2] & 0x40 ? Precision::TF32 : Precision::Exact;
  c.emitMain = h[2] & 0x80;
  return c;
}

/// The GPU description of --gpu: the architecture's default, or the n-th
/// built-in.
HardwareDesc hardware(int n, GpuArch arch) {
  static const char *const names[] = {"a100-40", "h100-sxm", "h200"};
  if (n == 0)
    return defaultHardware(arch);
  std::optional<HardwareDesc> hw = builtinHardware(names[n - 1]);
  return hw ? *hw : defaultHardware(arch);
}

/// chooseStrategy of the driver, without --tile, --threads and --tune:
/// scores the candidates where the driver would (printing the explanation,
/// its TSV and its SVG into `os` with c.explain), settles the strategy and
/// builds the MatrixProgram or fixes the CUDA-core depth. False after an
/// error was reported.
bool settleStrategy(Stencil &s, const Config &c, llvm::raw_ostream &os,
                    DiagnosticEngine &diags) {
  CostModelOptions mo;
  mo.hw = hardware(c.gpu, c.arch);
  mo.arch = c.arch;
  mo.precision = c.precision;
  mo.target = c.target;
  bool tensor = c.target && *c.target != Target::CudaCore;
  mo.layout = c.layout;
  if (tensor && !mo.layout)
    mo.layout = MatrixLayout::Decompose;
  std::optional<int> steps = c.fuse ? c.fuse : s.hints.fuse;
  if (steps && *steps > 0)
    mo.steps = steps;
  bool fixed = c.target && mo.steps &&
               (!tensor || c.layout.value_or(MatrixLayout::Decompose) !=
                               MatrixLayout::Morph ||
                c.morphGiven);
  // The layout search, not the rest of the model, is what takes time: a
  // smaller one keeps an input at milliseconds under the sanitizers.
  mo.searchMaxSteps = 2;
  mo.searchMaxR = 3;
  Strategy st;
  const CostCandidate *chosen = nullptr;
  if (!fixed || c.explain) {
    std::vector<CostCandidate> candidates = evaluateCandidates(s, mo, diags);
    if (candidates.empty())
      return false;
    for (const CostCandidate &cand : candidates)
      if (cand.chosen)
        chosen = &cand;
    // evaluateCandidates marks one chosen or reports an error.
    if (!chosen)
      __builtin_trap();
    if (c.explain) {
      printExplanation(s, candidates, mo, os);
      os << explanationTsv(s, candidates)
         << renderRooflineSvg(s, candidates, mo);
    }
    st = chosen->strategy;
  }
  if (fixed) {
    st = Strategy();
    st.target = *c.target;
    st.steps = *mo.steps;
    // f32 tensor cores under exact are split-TF32, as in the driver.
    st.split = st.target != Target::CudaCore &&
               splitsOperands(s.elemType, mo.precision);
  }
  if (st.target != Target::CudaCore) {
    if (c.layout && fixed)
      st.layout = *c.layout;
    if (st.layout == MatrixLayout::Morph && c.morphGiven) {
      st.r1 = c.morph.first;
      st.r2 = c.morph.second;
    } else if (fixed) {
      st.r1 = 4;
      st.r2 = s.dims == 1 ? 1 : 4;
    }
    return buildTensorCoreProgram(s, st, archNumber(c.arch), diags);
  }
  s.matrix.reset();
  s.hints.fuse = st.steps;
  s.hints.fuseByModel = chosen != nullptr && !mo.steps;
  return true;
}

/// Runs the c.pipeline-th named pipeline (fused over --fuse steps) and
/// prints the IR and every MatrixProgram, as --emit=matrix does.
void runNamedPipeline(unsigned buffer, const Config &c, llvm::raw_ostream &os,
                      DiagnosticEngine &diags) {
  std::optional<Module> module = compileBuffer(buffer, diags);
  if (!module)
    return;
  if (c.type)
    for (Stencil &s : module->stencils)
      s.setElemType(*c.type);
  const std::vector<NamedPipeline> &named = namedPipelines();
  std::string pipeline = named[(c.pipeline * 2 + (c.fuse.value_or(0) & 1)) %
                               named.size()]
                             .name;
  if (c.fuse && *c.fuse > 1)
    pipeline = "temporal-fusion{steps=" + std::to_string(*c.fuse) + "}," +
               pipeline;
  if (!runPipeline(*module, pipeline, PipelineOptions(), os, diags))
    return;
  printIR(*module, os);
  for (const Stencil &s : module->stencils)
    if (s.matrix)
      printMatrixProgram(s, os);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < kHeaderBytes)
    return 0;
  Config c = decode(data);
  llvm::SourceMgr sourceMgr;
  std::string sink;
  llvm::raw_string_ostream os(sink);
  DiagnosticEngine diags(sourceMgr, os);
  unsigned id = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data) + kHeaderBytes,
                          size - kHeaderBytes),
          "fuzz.st"),
      llvm::SMLoc());
  std::optional<Module> module = compileBuffer(id, diags);
  if (!module)
    return 0;
  printIR(*module, os);
  if (c.pipeline)
    runNamedPipeline(id, c, os, diags);
  if (c.type)
    for (Stencil &s : module->stencils)
      s.setElemType(*c.type);
  CudaOptions opts;
  opts.arch = c.arch;
  opts.emitMain = c.emitMain;
  for (Stencil &s : module->stencils)
    if (!settleStrategy(s, c, os, diags))
      return 0;
  std::optional<CudaOutput> cuda = emitCuda(*module, opts, diags);
  // The writer answers with both files or with an error.
  if (!cuda && !diags.hasErrors())
    __builtin_trap();
  return 0;
}
