//===- Evaluate.h - The arithmetic of one expression node -------*- C++ -*-===//
//
// One definition of what each operator computes, in a given arithmetic type,
// shared by constant folding, the CPU interpreter and coefficient
// evaluation. It matches the generated code operation for operation
// (runtime.cuh: min_, max_, sqrt_, abs_, ipow), so the interpreter in grid
// type reproduces the GPU's rounding up to FMA contraction.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_IR_EVALUATE_H
#define STENCILC_IR_EVALUATE_H

#include "stencilc/IR/Stencil.h"

#include <cmath>
#include <cstdlib>

namespace stencilc {

/// x^e by repeated multiplication, left to right; 1/x^|e| for e < 0.
template <typename C> C powInt(C x, int e) {
  int m = std::abs(e);
  if (m == 0)
    return C(1);
  C r = x;
  for (int i = 1; i < m; ++i)
    r = r * x;
  return e < 0 ? C(1) / r : r;
}

/// The value of operator `op` applied to `a` (and `b` for binary operators).
/// Const, Param and Read have no operands; callers supply their values.
template <typename C> C applyOp(Op op, C a, C b, int exponent) {
  switch (op) {
  case Op::Neg:
    return -a;
  case Op::Add:
    return a + b;
  case Op::Sub:
    return a - b;
  case Op::Mul:
    return a * b;
  case Op::Div:
    return a / b;
  case Op::Min:
    return std::fmin(a, b);
  case Op::Max:
    return std::fmax(a, b);
  case Op::Sqrt:
    return std::sqrt(a);
  case Op::Abs:
    return std::fabs(a);
  case Op::Pow:
    return powInt(a, exponent);
  case Op::Const:
  case Op::Param:
  case Op::Read:
    break;
  }
  return a;
}

} // namespace stencilc

#endif // STENCILC_IR_EVALUATE_H
