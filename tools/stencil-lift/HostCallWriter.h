//===- HostCallWriter.h - The C++ that replaces a lifted nest ---*- C++ -*-===//
//
// With --rewrite, each lifted nest is replaced by one block that runs the
// generated stencil on the GPU and leaves the host arrays as the loop would
// have: it copies each grid to a dense device array, calls the stencil's
// run() (device pointers, extents, steps, Params), and copies the points the
// loop computes back, row by row, into host arrays of any row pitch. A swap
// loop leaves the last step in one buffer and the one before it in the
// other, and the block does the same (it runs steps - 1 steps, copies, runs
// the last step, copies again), then swaps as often as the loop would have.
//
//===----------------------------------------------------------------------===//

#ifndef STENCIL_LIFT_HOSTCALLWRITER_H
#define STENCIL_LIFT_HOSTCALLWRITER_H

#include "LiftedStencil.h"

#include <string>

namespace stencil_lift {

/// Prints the replacement block of a nest and the includes it needs.
class HostCallWriter {
public:
  /// `stName` names the .st file in comments.
  explicit HostCallWriter(std::string stName) : stName(std::move(stName)) {}

  /// The block that replaces the pragma and the time loop; it starts at
  /// the beginning of the pragma's line and ends where the loop ended.
  std::string replacement(const LiftedStencil &s) const;
  /// The lines inserted after the source's last #include.
  static std::string includes(const std::string &header);

private:
  std::string stName;
};

} // namespace stencil_lift

#endif // STENCIL_LIFT_HOSTCALLWRITER_H
