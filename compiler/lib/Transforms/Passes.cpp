//===- Passes.cpp - The table of passes and pipelines ---------------------===//

#include "stencilc/Transforms/Passes.h"
#include "stencilc/IR/IRPrinter.h"
#include "stencilc/Transforms/Compress24.h"
#include "stencilc/Transforms/Decompose.h"
#include "stencilc/Transforms/Flatten.h"
#include "stencilc/Transforms/LayoutMorph.h"
#include "stencilc/Transforms/LayoutSearch.h"
#include "stencilc/Transforms/SparsityConversion.h"
#include "stencilc/Transforms/StridedSwap.h"
#include "stencilc/Transforms/TemporalFusion.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

#include <chrono>

using namespace stencilc;

/// The `arch` option of the layout passes: an --arch's number (GpuArch.h).
static const char *const kArchHelp =
    "target: 80, 86, 89, 90, 100 or 120 (90 and later add the f64 m16n8 "
    "shapes)";

const std::vector<PassInfo> &stencilc::registeredPasses() {
  static const std::vector<PassInfo> passes = {
      {"temporal-fusion",
       "Fuse t time steps of a linear stencil into one kernel (the t-fold "
       "self-convolution of its taps)",
       {{"steps", "time steps fused", 2}},
       [](Module &m, const llvm::StringMap<int> &opts,
          DiagnosticEngine &diags) {
         for (Stencil &s : m.stencils)
           if (!fuseTemporally(s, opts.lookup("steps"), diags))
             return false;
         return true;
       }},
      {"flatten",
       "im2row: the (fused) kernel as one row of A, one patch per output",
       {{"arch", kArchHelp, 90}},
       [](Module &m, const llvm::StringMap<int> &opts,
          DiagnosticEngine &diags) {
         for (Stencil &s : m.stencils)
           if (!flattenStencil(s, diags, opts.lookup("arch")))
             return false;
         return true;
       }},
      {"decompose",
       "One banded block of A per kernel row, n outputs per patch along the "
       "fastest axis (TCStencil, SPIDER)",
       {{"rows", "outputs per patch, n (0: kx + 1 rounded up to even)", 0},
        {"arch", kArchHelp, 90}},
       [](Module &m, const llvm::StringMap<int> &opts,
          DiagnosticEngine &diags) {
         for (Stencil &s : m.stencils)
           if (!decomposeStencil(s, opts.lookup("rows"), diags,
                                 opts.lookup("arch")))
             return false;
         return true;
       }},
      {"layout-morph",
       "Flatten-and-crush: an r2 x r1 patch of outputs, A' with the "
       "staircase property (SparStencil)",
       {{"r1", "outputs per patch along the fastest axis", 4},
        {"r2", "outputs per patch along the next axis (1 in 1-D)", 4},
        {"arch", kArchHelp, 90}},
       [](Module &m, const llvm::StringMap<int> &opts,
          DiagnosticEngine &diags) {
         for (Stencil &s : m.stencils) {
           int r2 = s.dims == 1 ? 1 : opts.lookup("r2");
           if (!morphLayout(s, opts.lookup("r1"), r2, diags,
                            opts.lookup("arch")))
             return false;
         }
         return true;
       }},
      {"sparsity-conversion",
       "Conflict graph, minimal zero-column matching and PIT into 2:4 or "
       "1:2 sparsity",
       {{"pattern", "24 for 2:4, 12 for 1:2, 0 for the type's own", 0}},
       [](Module &m, const llvm::StringMap<int> &opts,
          DiagnosticEngine &diags) {
         for (Stencil &s : m.stencils)
           if (!convertSparsity(s, opts.lookup("pattern"), diags))
             return false;
         return true;
       }},
      {"strided-swap",
       "SPIDER's rule-based column swap of a decomposed A into 2:4 / 1:2",
       {{"adjacent", "1: groups j, j+1, j+n, j+n+1 (2:4 only), so the two "
                     "halves of a B register are neighbours in memory",
         0}},
       [](Module &m, const llvm::StringMap<int> &opts,
          DiagnosticEngine &diags) {
         for (Stencil &s : m.stencils)
           if (!stridedSwap(s, diags, opts.lookup("adjacent") != 0))
             return false;
         return true;
       }},
      {"compress24",
       "Pack A into the mma / mma.sp register layout: values, metadata and "
       "sparsity selectors",
       {{"split", "1: split-TF32, each tf32 product as four MMAs of hi and "
                  "lo parts",
         0}},
       [](Module &m, const llvm::StringMap<int> &opts,
          DiagnosticEngine &diags) {
         for (Stencil &s : m.stencils)
           if (!compress24(s, diags, opts.lookup("split") != 0))
             return false;
         return true;
       }},
      {"layout-search",
       "Score every fusion depth, layout, (r1, r2) and fragment shape with "
       "SparStencil eq. 6-10 and build the best",
       {{"steps", "largest fusion depth tried (0: up to radius 8)", 0},
        {"r", "largest r1 and r2 tried for layout-morph", 8},
        {"arch", "target, 80 or 90", 90}},
       [](Module &m, const llvm::StringMap<int> &opts,
          DiagnosticEngine &diags) {
         LayoutSearchOptions o;
         o.maxSteps = opts.lookup("steps");
         o.maxR = opts.lookup("r");
         o.arch = opts.lookup("arch");
         for (Stencil &s : m.stencils)
           if (!layoutSearch(s, o, diags))
             return false;
         return true;
       }},
  };
  return passes;
}

const std::vector<NamedPipeline> &stencilc::namedPipelines() {
  static const std::vector<NamedPipeline> pipelines = {
      {"tc-flatten", "flatten,compress24"},
      {"tc-decompose", "decompose,compress24"},
      {"tc-morph", "layout-morph,compress24"},
      {"sptc-morph", "layout-morph,sparsity-conversion,compress24"},
      {"sptc-decompose", "decompose,sparsity-conversion,compress24"},
      {"sptc-spider", "decompose,strided-swap,compress24"},
  };
  return pipelines;
}

namespace {
struct PipelineEntry {
  const PassInfo *pass;
  llvm::StringMap<int> options;
};
} // namespace

/// options ::= '{' IDENT '=' INT (',' IDENT '=' INT)* '}'
/// Consumes the options of `pass` from the front of `text`, if any.
static bool parseOptions(const PassInfo &pass, llvm::StringRef &text,
                         PipelineEntry &entry, DiagnosticEngine &diags) {
  for (const PassOption &o : pass.options)
    entry.options[o.name] = o.defaultValue;
  if (!text.startswith("{"))
    return true;
  size_t close = text.find('}');
  if (close == llvm::StringRef::npos) {
    diags.error(llvm::Twine("missing '}' after the options of pass '") +
                pass.flag + "'");
    return false;
  }
  llvm::SmallVector<llvm::StringRef, 4> items;
  text.substr(1, close - 1).split(items, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items) {
    auto [key, value] = item.split('=');
    key = key.trim();
    int v;
    if (!entry.options.count(key)) {
      diags.error(llvm::Twine("pass '") + pass.flag + "' has no option '" +
                  key + "'");
      return false;
    }
    if (value.trim().getAsInteger(10, v)) {
      diags.error("option '" + key + "' of pass '" + pass.flag +
                  "' takes an integer, not '" + value.trim() + "'");
      return false;
    }
    entry.options[key] = v;
  }
  text = text.substr(close + 1);
  return true;
}

/// pipeline ::= pass (',' pass)*
/// pass     ::= FLAG options? | PIPELINE-NAME
static bool parsePipeline(llvm::StringRef text, std::vector<PipelineEntry> &out,
                          DiagnosticEngine &diags) {
  while (!text.empty()) {
    size_t end = text.find_first_of(",{");
    llvm::StringRef flag = text.substr(0, end).trim();
    text = end == llvm::StringRef::npos ? "" : text.substr(end);
    const PassInfo *pass = nullptr;
    for (const PassInfo &p : registeredPasses())
      if (flag == p.flag)
        pass = &p;
    const NamedPipeline *named = nullptr;
    for (const NamedPipeline &np : namedPipelines())
      if (flag == np.name)
        named = &np;
    if (pass) {
      PipelineEntry entry{pass, {}};
      if (!parseOptions(*pass, text, entry, diags))
        return false;
      out.push_back(std::move(entry));
    } else if (named && !text.startswith("{")) {
      if (!parsePipeline(named->passes, out, diags))
        return false;
    } else if (named) {
      diags.error(
          "pipeline '" + flag +
          "' takes no options; list its passes instead: " + named->passes);
      return false;
    } else {
      std::string known;
      for (const PassInfo &p : registeredPasses())
        known += std::string(known.empty() ? "" : ", ") + p.flag;
      for (const NamedPipeline &np : namedPipelines())
        known += std::string(", ") + np.name;
      diags.error("unknown pass '" + flag + "' in --passes; known: " + known);
      return false;
    }
    if (text.startswith(","))
      text = text.drop_front();
    else if (!text.empty()) {
      diags.error("expected ',' between passes in --passes, at '" + text + "'");
      return false;
    }
  }
  return true;
}

bool stencilc::runPipeline(Module &module, llvm::StringRef pipeline,
                           const PipelineOptions &options,
                           llvm::raw_ostream &os, DiagnosticEngine &diags) {
  std::vector<PipelineEntry> entries;
  if (!parsePipeline(pipeline, entries, diags))
    return false;
  std::vector<std::pair<const char *, double>> times;
  for (const PipelineEntry &e : entries) {
    auto start = std::chrono::steady_clock::now();
    bool ok = e.pass->run(module, e.options, diags);
    times.push_back({e.pass->flag, std::chrono::duration<double>(
                                       std::chrono::steady_clock::now() - start)
                                       .count()});
    if (!ok)
      return false;
    if (options.printIRAfterAll) {
      os << "// ----- IR after " << e.pass->flag << " -----\n";
      printIR(module, os);
    }
  }
  if (options.timePasses) {
    os << "// ----- pass timing -----\n";
    for (const auto &[flag, seconds] : times)
      os << "//   " << llvm::format("%10.6f", seconds) << " s  " << flag
         << "\n";
  }
  return true;
}
