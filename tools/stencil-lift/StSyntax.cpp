//===- StSyntax.cpp - .st spellings of numbers and names ------------------===//

#include "StSyntax.h"

#include "llvm/ADT/STLExtras.h"

#include <cstdio>
#include <cstdlib>

std::string stencil_lift::formatNumber(double value, bool asFloat) {
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, value);
    double back = std::strtod(buf, nullptr);
    bool same = asFloat ? static_cast<float>(back) == static_cast<float>(value)
                        : back == value;
    if (same)
      return buf;
  }
  std::snprintf(buf, sizeof buf, "%.17g", value);
  return buf;
}

bool stencil_lift::isReservedStName(llvm::StringRef name) {
  // Sema's isReservedName (compiler/lib/Frontend/Sema.cpp), the keywords of
  // the language, and its function names.
  static const char *const kReserved[] = {"alignas",
                                          "alignof",
                                          "and",
                                          "and_eq",
                                          "asm",
                                          "auto",
                                          "bitand",
                                          "bitor",
                                          "bool",
                                          "break",
                                          "case",
                                          "catch",
                                          "char",
                                          "char8_t",
                                          "char16_t",
                                          "char32_t",
                                          "class",
                                          "compl",
                                          "concept",
                                          "const",
                                          "consteval",
                                          "constexpr",
                                          "constinit",
                                          "const_cast",
                                          "continue",
                                          "co_await",
                                          "co_return",
                                          "co_yield",
                                          "decltype",
                                          "default",
                                          "delete",
                                          "do",
                                          "double",
                                          "dynamic_cast",
                                          "else",
                                          "enum",
                                          "explicit",
                                          "export",
                                          "extern",
                                          "false",
                                          "float",
                                          "for",
                                          "friend",
                                          "goto",
                                          "if",
                                          "inline",
                                          "int",
                                          "long",
                                          "mutable",
                                          "namespace",
                                          "new",
                                          "noexcept",
                                          "not",
                                          "not_eq",
                                          "nullptr",
                                          "operator",
                                          "or",
                                          "or_eq",
                                          "private",
                                          "protected",
                                          "public",
                                          "register",
                                          "reinterpret_cast",
                                          "requires",
                                          "return",
                                          "short",
                                          "signed",
                                          "sizeof",
                                          "static",
                                          "static_assert",
                                          "static_cast",
                                          "struct",
                                          "switch",
                                          "template",
                                          "this",
                                          "thread_local",
                                          "throw",
                                          "true",
                                          "try",
                                          "typedef",
                                          "typeid",
                                          "typename",
                                          "union",
                                          "unsigned",
                                          "using",
                                          "virtual",
                                          "void",
                                          "volatile",
                                          "wchar_t",
                                          "while",
                                          "xor",
                                          "xor_eq",
                                          "run",
                                          "steps",
                                          "params",
                                          "stream",
                                          "scratch",
                                          "n0",
                                          "n1",
                                          "n2",
                                          "Params",
                                          "Scratch",
                                          "std",
                                          "stencilc",
                                          "main",
                                          "cuda",
                                          "cub",
                                          "thrust",
                                          "nv",
                                          "stencil",
                                          "grid",
                                          "param",
                                          "boundary",
                                          "hint",
                                          "let",
                                          "min",
                                          "max",
                                          "sqrt",
                                          "abs",
                                          "pow",
                                          "box",
                                          "star"};
  if (name.empty() || name.startswith("_") || name.contains("__") ||
      name.startswith("sc_"))
    return true;
  return llvm::is_contained(kReserved, name);
}

std::string stencil_lift::validStName(const std::string &name) {
  if (!isReservedStName(name))
    return name;
  std::string core = llvm::StringRef(name).ltrim('_').str();
  for (size_t p; (p = core.find("__")) != std::string::npos;)
    core.erase(p, 1);
  return "v_" + core;
}
