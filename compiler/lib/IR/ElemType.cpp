//===- ElemType.cpp - Element types and their rounding --------------------===//

#include "stencilc/IR/ElemType.h"

#include "llvm/ADT/StringSwitch.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

using namespace stencilc;

llvm::StringRef stencilc::elemTypeName(ElemType t) {
  switch (t) {
  case ElemType::F16:
    return "f16";
  case ElemType::BF16:
    return "bf16";
  case ElemType::F32:
    return "f32";
  case ElemType::F64:
    return "f64";
  }
  return "?";
}

std::optional<ElemType> stencilc::parseElemType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ElemType>>(name)
      .Case("f16", ElemType::F16)
      .Case("bf16", ElemType::BF16)
      .Case("f32", ElemType::F32)
      .Case("f64", ElemType::F64)
      .Default(std::nullopt);
}

llvm::StringRef stencilc::precisionName(Precision p) {
  switch (p) {
  case Precision::Exact:
    return "exact";
  case Precision::SplitTF32:
    return "split-tf32";
  case Precision::TF32:
    return "tf32";
  }
  return "?";
}

std::optional<Precision> stencilc::parsePrecision(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Precision>>(name)
      .Case("exact", Precision::Exact)
      .Case("split-tf32", Precision::SplitTF32)
      .Case("tf32", Precision::TF32)
      .Default(std::nullopt);
}

llvm::StringRef stencilc::precisionHintName(Precision p) {
  return p == Precision::SplitTF32 ? "split_tf32" : precisionName(p);
}

unsigned stencilc::elemTypeBytes(ElemType t) {
  switch (t) {
  case ElemType::F16:
  case ElemType::BF16:
    return 2;
  case ElemType::F32:
    return 4;
  case ElemType::F64:
    return 8;
  }
  return 0;
}

ElemType stencilc::computeType(ElemType t) {
  return t == ElemType::F64 ? ElemType::F64 : ElemType::F32;
}

double stencilc::unitRoundoff(ElemType t) {
  switch (t) {
  case ElemType::F16:
    return std::ldexp(1.0, -11);
  case ElemType::BF16:
    return std::ldexp(1.0, -8);
  case ElemType::F32:
    return std::ldexp(1.0, -24);
  case ElemType::F64:
    return std::ldexp(1.0, -53);
  }
  return 0;
}

float stencilc::roundToHalf(float x) {
  if (std::isnan(x))
    return x;
  float a = std::fabs(x);
  // Values at or past 65520 round to infinity.
  if (a >= 65520.0f)
    return std::copysign(INFINITY, x);
  // Below 2^-14 the spacing is fixed at 2^-24 (subnormals).
  int exp;
  std::frexp(a, &exp); // a = m * 2^exp, m in [0.5, 1)
  int e = std::max(exp - 1, -14);
  double ulp = std::ldexp(1.0, e - 10);
  double q = static_cast<double>(a) / ulp;
  double r = std::nearbyint(q); // ties to even in the default rounding mode
  return std::copysign(static_cast<float>(r * ulp), x);
}

float stencilc::roundToBFloat16(float x) {
  if (std::isnan(x))
    return x;
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  uint32_t lsb = (bits >> 16) & 1u;
  bits += 0x7FFFu + lsb;
  bits &= 0xFFFF0000u;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

double stencilc::roundTo(ElemType t, double x) {
  switch (t) {
  case ElemType::F16:
    return roundToHalf(static_cast<float>(x));
  case ElemType::BF16:
    return roundToBFloat16(static_cast<float>(x));
  case ElemType::F32:
    return static_cast<float>(x);
  case ElemType::F64:
    return x;
  }
  return x;
}

std::string stencilc::largestFiniteText(ElemType t) {
  // The largest finite value is the largest significand at the largest
  // exponent: (2 - 2^(1-p)) * 2^emax with p significand bits.
  double max = 0;
  switch (t) {
  case ElemType::F16:
    max = std::ldexp(2.0 - std::ldexp(1.0, -10), 15);
    break;
  case ElemType::BF16:
    max = std::ldexp(2.0 - std::ldexp(1.0, -7), 127);
    break;
  case ElemType::F32:
    max = FLT_MAX;
    break;
  case ElemType::F64:
    max = DBL_MAX;
    break;
  }
  char buf[64];
  // Nine digits name any f32 (and so f16 and bf16) value, 17 any double.
  std::snprintf(buf, sizeof buf, "%.*g", t == ElemType::F64 ? 17 : 9, max);
  return buf;
}

bool stencilc::isFiniteIn(ElemType t, double v) {
  return std::isfinite(v) && std::isfinite(roundTo(t, v));
}
