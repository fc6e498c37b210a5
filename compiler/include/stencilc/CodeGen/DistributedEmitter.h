//===- DistributedEmitter.h - run_distributed -------------------*- C++ -*-===//
//
// stencilc --distributed: one stencil on many GPUs, one MPI rank each
// (docs/architecture.md, "Distributed runs"). Each rank runs the CUDA-core
// kernel of run() over its block of the global grid, with run()'s tiles in
// global coordinates and every boundary rule against the global extents,
// so a point takes the same operations in the same order as in run(). Only
// the kernel's global memory differs: a buffer of the rank's block and its
// ghosts, described at run time by stencilc::dist::View
// (runtime/include/stencilc/distributed.cuh).
//
// GridAddress gives the CUDA-core emitter each global index and range test
// it prints, for the whole grid (run() alone) or for the view; the kernels
// of a --distributed file take the view in both run() and run_distributed,
// and those of any other file stay as they were. DistributedEmitter prints
// run_distributed, its declaration and the driver's entry to it, around
// what the CUDA-core emitter lends it through DistributedHooks.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_CODEGEN_DISTRIBUTEDEMITTER_H
#define STENCILC_CODEGEN_DISTRIBUTEDEMITTER_H

#include "stencilc/CodeGen/CudaCorePlan.h"
#include "stencilc/CodeGen/Emitter.h"
#include "stencilc/IR/Stencil.h"

#include <functional>
#include <string>

namespace stencilc {

/// The text of a kernel's global indices and range tests. Coordinates are
/// global; "buffer coordinates" are what the index multiplies out: the
/// same along an axis of run()'s whole grid, shifted by the view's origin
/// (and wrapped, on periodic axes) in a distributed kernel.
class GridAddress {
public:
  GridAddress(int dims, bool distributed) : D(dims), dist(distributed) {}
  bool distributed() const { return dist; }
  /// The extent that axis a's buffer coordinates multiply by.
  std::string extent(int a) const;
  /// The buffer coordinate of global coordinate `g` that is already in
  /// range (a point the launch stores).
  std::string shifted(int a, const std::string &g) const;
  /// The buffer coordinate of global position `pos`, wrapped on a periodic
  /// axis.
  std::string coord(int a, bool periodic, const std::string &pos) const;
  /// Whether buffer coordinate q holds a value of the grid; with `width`,
  /// whether q .. q + width - 1 all do.
  std::string holds(int a, bool periodic, const std::string &q,
                    const std::string &width = "") const;
  /// Whether the launch stores global coordinate g (already >= 0).
  std::string stores(int a, const std::string &g) const;
  /// Global rows of axis 0 whose values the buffer holds unwrapped: from
  /// rowLo() to rowHi(), and the offset of global row r in it.
  std::string rowLo(bool periodic) const;
  std::string rowHi(bool periodic) const;
  std::string row(const std::string &r) const;
  /// The first and the end of the rows of axis 0 the launch stores.
  std::string storeLo() const;
  std::string storeHi() const;

private:
  const int D;
  const bool dist;
};

/// What DistributedEmitter borrows from the CUDA-core emitter.
struct DistributedHooks {
  /// Declares and fills `Args sc_args` from `params` (and the weights the
  /// host rounds), with extent a taken from `extent(a)`.
  std::function<void(const std::function<std::string(int)> &extent)> args;
  /// The kernels' shared-memory attributes.
  std::function<void()> attributes;
  /// Launches the pass `sc_args` describes on `blocks` thread blocks on
  /// `stream`.
  std::function<void(const std::string &blocks, const std::string &stream)>
      launch;
};

class DistributedEmitter {
public:
  DistributedEmitter(const Stencil &s, const CudaCorePlan &plan,
                     const std::string &elem, Emitter &out)
      : s(s), plan(plan), elem(elem), out(out) {}
  /// The declaration of run_distributed in the header.
  void emitDeclaration();
  /// Its definition, in the stencil's namespace after run().
  void emitDefinition(const DistributedHooks &hooks);
  /// A block's tile: o1.., and sc_rest, the tile index along axis 0, from
  /// the view (replaces run()'s decoding of blockIdx.x).
  void emitTileOrigins();
  /// The driver's static entry to run_distributed in Problem.
  void emitDriverEntry();
  /// vread_<grid>: a read of read-only `grid` at global q through its
  /// boundary rules (`dirichlet` prints its dirichlet returns), then the
  /// view; the parts of a tile outside the buffer read 0.
  void emitViewRead(const Grid &grid, const std::function<void()> &dirichlet);

private:
  std::string signature(bool internalNames) const;
  const Stencil &s;
  const CudaCorePlan &plan;
  const std::string elem;
  Emitter &out;
};

/// Embeds runtime/include/stencilc/distributed.h, which run_distributed's
/// declarations need, in the generated header: the calling code then
/// needs MPI's headers only.
void embedDistributedHeader(Emitter &out);
/// Embeds distributed.cuh, or with `driver` distributed_driver.cuh, in the
/// generated source.
void embedDistributedRuntime(Emitter &out, bool driver);

} // namespace stencilc

#endif // STENCILC_CODEGEN_DISTRIBUTEDEMITTER_H
