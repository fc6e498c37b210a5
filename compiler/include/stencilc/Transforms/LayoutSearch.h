//===- LayoutSearch.h - Enumerating layouts, shapes and fusion depths -*- C++
//-*-===//
//
// SparStencil §3.3's layout exploration, widened to every layout stencilc
// has: for each fusion depth t (t * r <= 8), each layout (flatten,
// decompose with and without SPIDER's strided swap, layout-morph over
// (r1, r2) in [1, 8]^2 with r1 * r2 <= 64) and each legal fragment shape,
// dense and sparse, it builds the MatrixProgram, runs sparsity conversion
// where the shape is sparse, and scores it with SparStencil eq. 6-10:
//
//   N_MMA    = ceil(m'/M) ceil(k'/K) ceil(n'/N)                   (eq. 9)
//   T_comp   = N_MMA / (MMA rate of the shape)                     (eq. 7)
//   T_mem    = max((data_R + data_W) / bw_G,
//                  (data_transR + data_transW) / bw_S)            (eq. 8)
//   data_trans = k' (m'/2 + n') elements per direction             (eq. 10)
//   T        = max(T_comp, T_mem)                                  (eq. 6)
//
// The hardware numbers default to the H200 datasheet (PTX.md). The cost
// model (Analysis/CostModel) uses this search only to pick each layout's
// depth and (r1, r2), then predicts every candidate with the measured GPU
// description; feeding that description here too would change which
// candidates exist, so it waits for a new calibration run.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_TRANSFORMS_LAYOUTSEARCH_H
#define STENCILC_TRANSFORMS_LAYOUTSEARCH_H

#include "stencilc/IR/Stencil.h"
#include "stencilc/Support/Diagnostics.h"

#include <array>

namespace stencilc {

struct LayoutSearchOptions {
  /// Largest fusion depth tried; 0: every t with t * r <= 8.
  int maxSteps = 0;
  /// Largest r1 and r2 tried for layout-morph.
  int maxR = 8;
  /// Candidates whose input patch (an upper bound on k') exceeds this are
  /// not built: their A would not fit a warp's registers and shared
  /// memory, and the general matching is cubic in it.
  int64_t maxColumns = 1024;
  int arch = 90;
  /// Grid points per axis; 0 entries: DESIGN.md §8's benchmark size for
  /// the stencil's dimension (10,240,000; 10240^2; 512^3).
  std::array<int64_t, 3> sizes{0, 0, 0};
  /// Global and shared-memory bandwidth, bytes per second.
  double bwGlobal = 4.8e12;
  double bwShared = 33e12;
  /// Dense tensor-core peaks, flop/s, per operand type (sparse shapes run
  /// at twice these on the logical A).
  double peakF16 = 989e12, peakTF32 = 495e12, peakF64 = 67e12;
};

/// Scores every candidate, best (lowest T per time step) first, and marks
/// the best one chosen. An empty result comes with an error reported.
std::vector<LayoutCandidate> searchLayouts(const Stencil &stencil,
                                           const LayoutSearchOptions &options,
                                           DiagnosticEngine &diags);

/// The pass: records the candidates on the stencil and rebuilds the best
/// one (fusion, layout and sparsity) in place.
bool layoutSearch(Stencil &stencil, const LayoutSearchOptions &options,
                  DiagnosticEngine &diags);

} // namespace stencilc

#endif // STENCILC_TRANSFORMS_LAYOUTSEARCH_H
