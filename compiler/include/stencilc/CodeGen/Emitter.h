//===- Emitter.h - Indented text output with scopes -------------*- C++ -*-===//
//
// The one place generated text is assembled: lines with the current
// indentation and RAII scopes that close their braces. Passes never build
// strings; the CUDA emitter drives this class.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_CODEGEN_EMITTER_H
#define STENCILC_CODEGEN_EMITTER_H

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace stencilc {

class Emitter {
public:
  /// Writes one line at the current indentation.
  template <typename... Args>
  void line(fmt::format_string<Args...> format, Args &&...args) {
    write(fmt::format(format, std::forward<Args>(args)...));
  }
  /// Writes `text`; every line of it gets the current indentation, so
  /// continuation lines carry only their indentation relative to the first.
  void write(std::string_view lines);
  void blank() { text.push_back('\n'); }

  /// Closes a brace scope opened by `scope` when destroyed.
  class Scope {
  public:
    Scope(Emitter &e, std::string closer) : e(&e), closer(std::move(closer)) {}
    Scope(Scope &&o) noexcept : e(o.e), closer(std::move(o.closer)) {
      o.e = nullptr;
    }
    ~Scope();

  private:
    Emitter *e;
    std::string closer;
  };

  /// Writes `header {` and indents until the returned Scope ends, which
  /// writes `closer`.
  [[nodiscard]] Scope scope(std::string_view header,
                            std::string closer = "}");

  void indent() { ++depth; }
  void dedent() { --depth; }
  const std::string &str() const { return text; }

private:
  std::string text;
  int depth = 0;
};

} // namespace stencilc

#endif // STENCILC_CODEGEN_EMITTER_H
