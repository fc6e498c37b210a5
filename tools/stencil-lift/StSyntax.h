//===- StSyntax.h - .st spellings of numbers and names ----------*- C++ -*-===//
//
// A constant of the C++ source reaches the .st file as text. It must come
// back as the same value once stencilc rounds it to the stencil's compute
// type, so it is printed with the fewest digits that round-trip at that
// precision: `0.1f` in a float stencil prints as 0.1, but in a double
// stencil as 0.10000000149011612, the double the C++ code computes with.
// Names come from C++ variables and functions; the ones stencilc rejects
// (docs/language.md §2) are renamed.
//
//===----------------------------------------------------------------------===//

#ifndef STENCIL_LIFT_STSYNTAX_H
#define STENCIL_LIFT_STSYNTAX_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace stencil_lift {

/// `value` as a .st number (a leading '-' when negative). With `asFloat`,
/// the shortest text whose double, rounded to float, is `(float)value`;
/// otherwise the shortest that round-trips as a double.
std::string formatNumber(double value, bool asFloat);

/// Whether stencilc rejects `name` for a stencil, grid, parameter or let,
/// or would read it as something else (a grid named `min`).
bool isReservedStName(llvm::StringRef name);

/// `name`, or a variant of it that stencilc accepts.
std::string validStName(const std::string &name);

} // namespace stencil_lift

#endif // STENCIL_LIFT_STSYNTAX_H
