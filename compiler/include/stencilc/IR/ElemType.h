//===- ElemType.h - Element types and their rounding ------------*- C++ -*-===//
//
// The four grid element types, the type arithmetic runs in for each, and
// exact software rounding to f16 and bf16 so the CPU reference can store
// values as the GPU does.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_IR_ELEMTYPE_H
#define STENCILC_IR_ELEMTYPE_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace stencilc {

enum class ElemType { F16, BF16, F32, F64 };

/// "f16", "bf16", "f32", "f64".
llvm::StringRef elemTypeName(ElemType t);
std::optional<ElemType> parseElemType(llvm::StringRef name);
/// Storage size in bytes.
unsigned elemTypeBytes(ElemType t);
/// The type arithmetic runs in: f32 for f16, bf16 and f32; f64 for f64.
ElemType computeType(ElemType t);
/// Unit roundoff of the storage type (half an ulp at 1.0).
double unitRoundoff(ElemType t);

/// Rounds `x` to the nearest value representable in `t` (ties to even), as
/// a conversion on the GPU does.
double roundTo(ElemType t, double x);
float roundToHalf(float x);
/// True when `x` rounded to `t` is finite.
bool isFiniteIn(ElemType t, double x);
/// The largest finite value of `t`, as text with enough digits to name it
/// ("65504", "3.40282347e+38").
std::string largestFiniteText(ElemType t);
float roundToBFloat16(float x);

/// What arithmetic an f32 grid may use on tensor cores (docs/language.md
/// §6.4); f64 grids may use DMMA, which is exact, and f16 and bf16 grids
/// use tensor cores with f32 accumulation, under every policy.
enum class Precision {
  /// Never less accurate than f32 (the default): CUDA cores, or tensor
  /// cores in split-TF32, whichever the cost model predicts faster.
  Exact,
  /// As accurate as Exact, and the f32 products must run on tensor cores
  /// in split-TF32: each operand is split into two tf32 parts, hi + lo,
  /// and a product takes three MMAs (two where A's lo parts are zero).
  SplitTF32,
  /// f32 operands may be rounded to tf32 (10 of 23 mantissa bits), by
  /// request only.
  TF32,
};
/// "exact", "split-tf32", "tf32": the --precision values. The source's
/// hint spells split-tf32 as `split_tf32`, an identifier.
llvm::StringRef precisionName(Precision p);
std::optional<Precision> parsePrecision(llvm::StringRef name);
/// The name of the policy as `hint precision = ...` writes it.
llvm::StringRef precisionHintName(Precision p);

} // namespace stencilc

#endif // STENCILC_IR_ELEMTYPE_H
