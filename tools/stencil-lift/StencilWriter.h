//===- StencilWriter.h - Prints lifted nests as a .st file ------*- C++ -*-===//
//
// One .st file per C++ source, one stencil per marked nest, in source order.
// Grids come in the order the nest first mentions them (a write counts for
// the array it is computed from), which is also the order of the device
// pointers in the generated run().
//
//===----------------------------------------------------------------------===//

#ifndef STENCIL_LIFT_STENCILWRITER_H
#define STENCIL_LIFT_STENCILWRITER_H

#include "LiftedStencil.h"

#include <string>
#include <vector>

namespace stencil_lift {

/// Prints LiftedStencils in the language of docs/language.md.
class StencilWriter {
public:
  /// `source` names the C++ file in the header comment.
  explicit StencilWriter(std::string source) : source(std::move(source)) {}

  std::string write(const std::vector<LiftedStencil> &stencils) const;

private:
  void writeStencil(const LiftedStencil &s, std::string &out) const;

  std::string source;
};

} // namespace stencil_lift

#endif // STENCIL_LIFT_STENCILWRITER_H
