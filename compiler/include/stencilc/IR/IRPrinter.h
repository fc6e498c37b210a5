//===- IRPrinter.h - Stable text of the Stencil IR --------------*- C++ -*-===//

#ifndef STENCILC_IR_IRPRINTER_H
#define STENCILC_IR_IRPRINTER_H

#include "stencilc/IR/Stencil.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace stencilc {

/// Prints the module in the `--emit=ir` format: declarations, the live
/// expression nodes in SSA form (%N = op ...), each update's root, and the
/// linear form where there is one. The text depends only on the IR.
void printIR(const Module &module, llvm::raw_ostream &os);
void printIR(const Stencil &stencil, llvm::raw_ostream &os);

/// Prints the stencil's MatrixProgram (the `--emit=matrix` text): layout,
/// fragment shape, the statistics (S, alpha, padding, MMA count, bytes),
/// the scatter and gather tables, A as a picture, and the metadata and
/// register packing once Compress24 ran. Prints nothing without one.
void printMatrixProgram(const Stencil &stencil, llvm::raw_ostream &os);

/// A number with the fewest digits that read back to the same double.
std::string formatNumber(double v);
/// A grid-free node as an infix expression over constants and parameters.
std::string formatCoefficient(const Stencil &stencil, int node);

} // namespace stencilc

#endif // STENCILC_IR_IRPRINTER_H
