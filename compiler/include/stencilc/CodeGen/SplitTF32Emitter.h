//===- SplitTF32Emitter.h - Split-TF32 parts of the mma kernel --*- C++ -*-===//
//
// What TensorCoreEmitter prints differently for a split-TF32 program
// (MatrixProgram::split, docs/language.md §6.4): every f32 operand x is
// held as two tf32 registers, hi = tf32(x) and lo = tf32(x - hi), and a
// product of fragment tiles takes three MMAs,
//
//   accLo += A_lo B_hi    (only where some lo part of A is nonzero)
//   accLo += A_hi B_lo
//   acc   += A_hi B_hi,
//
// with acc + accLo added once per output before the store: the small
// products sum among themselves before they meet the large ones. The
// dropped term A_lo B_lo is below 2^-22 of the product.
//
// - B stays f32 in shared memory and is split in registers when a lane
//   builds its fragment (stencilc::rt::tc::splitTF32): no second copy of
//   the box, and the rolling kernel keeps hi and lo rows in its ring.
// - A's lo parts travel beside its hi parts in the same packing ([tile]
//   [register][lane], then the same again), and share the metadata and
//   selectors of a sparse program.
// - The kernel is a template on kTcALo, whether it issues A_lo B_hi. When
//   every coefficient of A is a constant, the compiler knows and only that
//   instantiation exists; otherwise the host finds out from the parameters
//   (any nonzero lo part) and picks one at launch.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_CODEGEN_SPLITTF32EMITTER_H
#define STENCILC_CODEGEN_SPLITTF32EMITTER_H

#include "stencilc/CodeGen/Emitter.h"
#include "stencilc/IR/Stencil.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace stencilc {

class SplitTF32Emitter {
public:
  /// `stencil.matrix` must be a packed split-TF32 program.
  SplitTF32Emitter(const Stencil &stencil, Emitter &out);

  /// Whether the kernel runs A_lo B_hi, when known at compile time.
  std::optional<bool> lowA() const { return low; }

  /// A comment line for the kernel's header: the MMAs per product.
  std::string summary() const;

  /// Register r of a lane's B fragment from the f32 `value`: its hi part
  /// into `hi[r]`, its lo part into `lo[r]`.
  void loadB(const std::string &hi, const std::string &lo, int r,
             const std::string &value);

  /// One product of fragment tiles for M tile `tm`. `call(acc, a, b)`
  /// prints the mma of the shape (with its metadata, if sparse);
  /// `aHi` names A's hi registers, `aLo` and `aLo2` its lo and lo2
  /// registers, or, where `aLoWords` is set, the addresses of the lane's
  /// words (loadWords). The small products (A_lo B_hi and A_lo2 B_hi where
  /// kTcALo, then A_hi B_lo) go into accLo; A_hi B_hi into a zero
  /// accumulator of
  /// `accumulatorsPerTile` values, which is then added to acc in f32: the
  /// tensor cores truncate where they add into C, and a running C of the
  /// size of the result would lose up to an ulp of it per K tile, always
  /// towards zero. The accumulators are acc<accSuffix> and
  /// accLo<accSuffix>.
  void mmas(const std::function<std::string(const std::string &,
                                            const std::string &,
                                            const std::string &)> &call,
            int tm, const std::string &aHi, const std::string &aLo,
            const std::string &aLo2, bool aLoWords, const std::string &b,
            const std::string &bLo, int accumulatorsPerTile,
            const std::string &accSuffix = "");

  /// Before the outputs are staged: acc += accLo, per accumulator (of
  /// acc<accSuffix> and accLo<accSuffix>).
  void foldAccumulators(int accumulatorsPerTile,
                        const std::string &accSuffix = "");

  /// Inside the host's packing loop of one A register (tf32): the f32
  /// coefficient `sc_c(0)` split into `sc_w` (hi) and `sc_wl` (lo), and
  /// `sc_tc_lo` raised where lo is nonzero (if the host decides).
  void packHostWord();

  /// The kernel instantiation for 16-byte stores `stores` ("true" or
  /// "false") and the lo product `lo`.
  std::string kernel(const std::string &stores, const std::string &lo) const;
  /// The instantiations the host may launch: kTcALo as known at compile
  /// time, or both.
  std::vector<std::string> kernels(const std::string &stores) const;
  /// The launch inside emitLaunch: picks the instantiation from the
  /// output's alignment and `sc_tc_lo`, then launches it.
  void launch(const std::string &aligned);

private:
  const Stencil &s;
  Emitter &out;
  std::optional<bool> low;
};

} // namespace stencilc

#endif // STENCILC_CODEGEN_SPLITTF32EMITTER_H
