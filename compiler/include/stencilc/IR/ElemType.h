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

} // namespace stencilc

#endif // STENCILC_IR_ELEMTYPE_H
