//===- Passes.cpp - The table of passes and pipelines ---------------------===//

#include "stencilc/Transforms/Passes.h"
#include "stencilc/IR/IRPrinter.h"
#include "stencilc/Transforms/TemporalFusion.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

#include <chrono>

using namespace stencilc;

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
  };
  return passes;
}

namespace {
struct PipelineEntry {
  const PassInfo *pass;
  llvm::StringMap<int> options;
};
} // namespace

/// pipeline ::= pass (',' pass)*
/// pass     ::= FLAG ('{' IDENT '=' INT (',' IDENT '=' INT)* '}')?
static bool parsePipeline(llvm::StringRef text,
                          std::vector<PipelineEntry> &out,
                          DiagnosticEngine &diags) {
  while (!text.empty()) {
    size_t end = text.find_first_of(",{");
    llvm::StringRef flag = text.substr(0, end).trim();
    text = end == llvm::StringRef::npos ? "" : text.substr(end);
    const PassInfo *pass = nullptr;
    for (const PassInfo &p : registeredPasses())
      if (flag == p.flag)
        pass = &p;
    if (!pass) {
      std::string known;
      for (const PassInfo &p : registeredPasses())
        known += std::string(known.empty() ? "" : ", ") + p.flag;
      diags.error("unknown pass '" + flag + "' in --passes; known: " + known);
      return false;
    }
    PipelineEntry entry{pass, {}};
    for (const PassOption &o : pass->options)
      entry.options[o.name] = o.defaultValue;
    if (text.startswith("{")) {
      size_t close = text.find('}');
      if (close == llvm::StringRef::npos) {
        diags.error("missing '}' after the options of pass '" + flag + "'");
        return false;
      }
      llvm::SmallVector<llvm::StringRef, 4> items;
      text.substr(1, close - 1).split(items, ',', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef item : items) {
        auto [key, value] = item.split('=');
        key = key.trim();
        int v;
        if (!entry.options.count(key)) {
          diags.error("pass '" + flag + "' has no option '" + key + "'");
          return false;
        }
        if (value.trim().getAsInteger(10, v)) {
          diags.error("option '" + key + "' of pass '" + flag +
                      "' takes an integer, not '" + value.trim() + "'");
          return false;
        }
        entry.options[key] = v;
      }
      text = text.substr(close + 1);
    }
    out.push_back(std::move(entry));
    if (text.startswith(","))
      text = text.drop_front();
    else if (!text.empty()) {
      diags.error("expected ',' between passes in --passes, at '" + text +
                  "'");
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
    times.push_back({e.pass->flag,
                     std::chrono::duration<double>(
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
