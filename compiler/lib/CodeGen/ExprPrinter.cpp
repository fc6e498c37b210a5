//===- ExprPrinter.cpp - C++ text of one expression node ------------------===//

#include "stencilc/CodeGen/ExprPrinter.h"
#include "stencilc/IR/IRPrinter.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace stencilc;

std::string stencilc::cppElemType(ElemType t) {
  switch (t) {
  case ElemType::F16:
    return "__half";
  case ElemType::BF16:
    return "__nv_bfloat16";
  case ElemType::F32:
    return "float";
  case ElemType::F64:
    return "double";
  }
  return "float";
}

/// The host type of a parameter field: f64 stays double, the rest float.
std::string stencilc::paramFieldType(ElemType t) {
  return t == ElemType::F64 ? "double" : "float";
}

/// Makes a C++ floating literal of a number printed with %g: "2" is an int.
std::string stencilc::ensureFraction(std::string s) {
  if (s.find_first_of(".eE") == std::string::npos)
    s += ".0";
  return s;
}

/// A decimal literal that reads back to exactly `v` in the given type
/// (float when `asFloat`, else double): the fewest digits that round-trip,
/// so subnormals and -0.0 keep their value. Nullopt when `v` is not finite
/// in that type; C++ has no literal for infinity or NaN, and Sema rejects
/// such values (Frontend/Values.h), so that is an internal error.
std::optional<std::string> stencilc::literalText(double v, bool asFloat) {
  if (!std::isfinite(v))
    return std::nullopt;
  if (!asFloat)
    return ensureFraction(formatNumber(v));
  float f = static_cast<float>(v);
  if (!std::isfinite(f))
    return std::nullopt;
  char buf[64];
  for (int prec = 1; prec <= 9; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, static_cast<double>(f));
    if (std::strtof(buf, nullptr) == f)
      break;
  }
  return ensureFraction(buf) + "f";
}

/// `base + d` written the way a person would.
std::string stencilc::plus(const std::string &base, int d) {
  if (d == 0)
    return base;
  return base + (d > 0 ? " + " : " - ") + std::to_string(std::abs(d));
}

std::string stencilc::nodeExpression(const Stencil &s, const Node &n,
                                     const ExprContext &ctx) {
  const auto &v = ctx.name;
  auto call = [&](const std::string &fn) {
    std::string text = "stencilc::rt::" + fn + "(";
    int k = 0;
    for (int operand : {n.lhs, n.rhs, n.third})
      if (operand >= 0)
        text += (k++ ? ", " : "") + v(operand);
    return text + ")";
  };
  switch (n.op) {
  case Op::Const:
    if (n.logical)
      return n.value != 0 ? "true" : "false";
    return ctx.literal(n.value);
  case Op::Param:
    return (ctx.forDevice ? "a.p_" : "p_") + s.params[n.index].name;
  case Op::Read:
  case Op::StageRead:
  case Op::NewRead:
  case Op::Step:
  case Op::Coord:
    return ctx.leaf(n);
  case Op::Neg:
    return "-" + v(n.lhs);
  case Op::Add:
    return v(n.lhs) + " + " + v(n.rhs);
  case Op::Sub:
    return v(n.lhs) + " - " + v(n.rhs);
  case Op::Mul:
    return v(n.lhs) + " * " + v(n.rhs);
  case Op::Div:
    return v(n.lhs) + " / " + v(n.rhs);
  case Op::Pow:
    return "stencilc::rt::ipow<" + std::to_string(n.exponent) + ">(" +
           v(n.lhs) + ")";
  case Op::PowF:
    return call("powr_");
  case Op::Round:
    // The GPU stores a new value in its grid's type before a later update
    // reads it.
    return "stencilc::rt::roundVia<" + cppElemType(s.grids[n.index].type) +
           ">(" + v(n.lhs) + ")";
  default:
    // min_, max_, sqrt_, abs_, exp_, ..., lt_, ..., select_: one helper per
    // operator, named after it.
    return call(opName(n.op).str() + "_");
  }
}
