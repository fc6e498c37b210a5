//===- Interpreter.h - CPU reference execution of the Stencil IR -*- C++
//-*-===//
//
// The oracle for every later test: runs a stencil step by step on the CPU
// with the exact boundary semantics of docs/language.md. In Float64 mode all
// arithmetic is double; in GridType mode arithmetic runs in the compute type
// (f32 unless a grid is f64) and every stored value is rounded to the grid's
// element type after each step, as the generated code does. A step computes
// its stages and updates in source order, each over the whole domain, from
// the grids' old values, the stages before it and the new values of the
// grids updated before it: the definition the kernels' inlined forms meet.
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

  /// Advances every updated grid by `steps` time steps. The step index t
  /// is 0 in the first of them, as in a call of the generated run().
  void run(int64_t steps);

  /// The value a read of grid `g` at global position `q` sees, after the
  /// boundary condition is applied.
  double read(int g, const std::array<int64_t, kMaxDims> &q) const;

private:
  template <typename C> void step();
  /// A read of `values`, a field with `boundary`, at q; `dirichlet` holds
  /// the field's dirichlet values, two per axis (low, high).
  double readField(const std::vector<AxisBoundary> &boundary,
                   const std::vector<double> &dirichlet,
                   const std::vector<double> &values,
                   const std::array<int64_t, kMaxDims> &q) const;
  std::vector<double> dirichletValues(const Field &f) const;

  const Stencil &stencil;
  Sizes n{1, 1, 1};
  int64_t total = 1;
  std::vector<double> params;
  RefPrecision precision;
  std::vector<std::vector<double>> data;
  /// Per step item (Stencil::order): its live nodes in topological order.
  std::vector<std::vector<int>> programs;
  /// Dirichlet values of each grid and each stage, from the parameters.
  std::vector<std::vector<double>> gridDirichlet, stageDirichlet;
  int64_t stepIndex = 0;
};

} // namespace stencilc

#endif // STENCILC_IR_INTERPRETER_H
