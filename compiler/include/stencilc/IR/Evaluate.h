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

/// The value of operator `op` applied to `a` (and `b`, `c` where it takes
/// them). Conditions are 1 (true) or 0 (false). Const, Param, the reads,
/// Step and Coord have no operands; callers supply their values. Round
/// (the GPU's storage of a value) is the identity here: the interpreter
/// rounds stored values itself (Interpreter.cpp) and the float64
/// reference keeps them unrounded.
template <typename C> C applyOp(Op op, C a, C b, C c, int exponent) {
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
  // The functions of the C library for C, which CUDA's of the same type
  // approximate within the bounds of docs/language.md §5.
  case Op::Exp:
    return std::exp(a);
  case Op::Log:
    return std::log(a);
  case Op::Sin:
    return std::sin(a);
  case Op::Cos:
    return std::cos(a);
  case Op::Tanh:
    return std::tanh(a);
  case Op::Floor:
    return std::floor(a);
  case Op::PowF:
    return std::pow(a, b);
  case Op::Fma:
    return std::fma(a, b, c);
  case Op::Lt:
    return C(a < b);
  case Op::Le:
    return C(a <= b);
  case Op::Gt:
    return C(a > b);
  case Op::Ge:
    return C(a >= b);
  case Op::Eq:
    return C(a == b);
  case Op::Ne:
    return C(a != b);
  case Op::And:
    return C(a != 0 && b != 0);
  case Op::Or:
    return C(a != 0 || b != 0);
  case Op::Not:
    return C(a == 0);
  case Op::Select:
    return a != 0 ? b : c;
  case Op::Round:
  case Op::Const:
  case Op::Param:
  case Op::Read:
  case Op::StageRead:
  case Op::NewRead:
  case Op::Step:
  case Op::Coord:
    break;
  }
  return a;
}

/// applyOp for node `n`, with its operands' values.
template <typename C> C applyOp(const Node &n, C a, C b, C c) {
  return applyOp(n.op, a, b, c, n.exponent);
}

} // namespace stencilc

#endif // STENCILC_IR_EVALUATE_H
