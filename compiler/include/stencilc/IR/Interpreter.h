//===- Interpreter.h - CPU reference execution of the Stencil IR -*- C++ -*-===//
//
// The oracle for every later test: runs a stencil step by step on the CPU
// with the exact boundary semantics of docs/language.md. In Float64 mode all
// arithmetic is double; in GridType mode arithmetic runs in the compute type
// (f32 for f16, bf16 and f32) and every stored value is rounded to the grid's
// element type after each step, as the generated code does.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_IR_INTERPRETER_H
#define STENCILC_IR_INTERPRETER_H

#include "stencilc/IR/Stencil.h"

#include <array>
#include <cstdint>
#include <vector>

namespace stencilc {

enum class RefPrecision { Float64, GridType };

using Sizes = std::array<int64_t, kMaxDims>;

class Interpreter {
public:
  /// `sizes` has one entry per dimension, slowest first; unused entries are
  /// ignored. `params` holds one value per parameter; each is rounded to
  /// the parameter's declared type.
  Interpreter(const Stencil &stencil, const Sizes &sizes,
              std::vector<double> params, RefPrecision precision);

  /// Number of points of every grid.
  int64_t numPoints() const { return total; }
  /// Sets grid `i`; in GridType mode the values are rounded to its type.
  void setGrid(int i, const std::vector<double> &values);
  const std::vector<double> &getGrid(int i) const { return data[i]; }

  /// Advances every updated grid by `steps` time steps.
  void run(int64_t steps);

  /// The value a read of grid `g` at global position `q` sees, after the
  /// boundary condition is applied.
  double read(int g, const std::array<int64_t, kMaxDims> &q) const;

private:
  template <typename C> void step();

  const Stencil &stencil;
  Sizes n{1, 1, 1};
  int64_t total = 1;
  std::vector<double> params;
  RefPrecision precision;
  std::vector<std::vector<double>> data;
  std::vector<int> program; ///< Live nodes in topological order.
};

} // namespace stencilc

#endif // STENCILC_IR_INTERPRETER_H
