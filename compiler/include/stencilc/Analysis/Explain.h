//===- Explain.h - The cost model's decision, for people --------*- C++ -*-===//
//
// `stencilc --explain` prints, per stencil, every candidate the cost model
// scored: its prediction, what bounds it, Gu et al.'s scenario, I, alpha
// and S, whether the precision policy allows it, and the choice.
// `--explain=FILE.svg` also draws the roofline of the GPU description with
// the candidates on it.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_ANALYSIS_EXPLAIN_H
#define STENCILC_ANALYSIS_EXPLAIN_H

#include "stencilc/Analysis/CostModel.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace stencilc {

void printExplanation(const Stencil &stencil,
                      const std::vector<CostCandidate> &candidates,
                      const CostModelOptions &options, llvm::raw_ostream &os);

/// The table of printExplanation as tab-separated values with a header
/// row, plus the model's resource times (ns per point update), the weights
/// of the kernel kind and the kernel kind: for scripts, such as
/// test/gpu/calibrate.py.
std::string explanationTsv(const Stencil &stencil,
                           const std::vector<CostCandidate> &candidates);

/// A self-contained SVG: log-log axes of arithmetic intensity (flop/byte)
/// against flop/s, the DRAM slope and the compute ceilings of the stencil's
/// type, and one marker per candidate at its intensity and predicted
/// throughput (the choice filled, disallowed ones hollow).
std::string renderRooflineSvg(const Stencil &stencil,
                              const std::vector<CostCandidate> &candidates,
                              const CostModelOptions &options);

} // namespace stencilc

#endif // STENCILC_ANALYSIS_EXPLAIN_H
