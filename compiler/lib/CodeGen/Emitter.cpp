//===- Emitter.cpp - Indented text output with scopes ---------------------===//

#include "stencilc/CodeGen/Emitter.h"

using namespace stencilc;

Emitter::Scope::~Scope() {
  if (!e)
    return;
  e->dedent();
  e->line("{}", closer);
}

void Emitter::write(std::string_view lines) {
  size_t start = 0;
  while (true) {
    size_t end = lines.find('\n', start);
    std::string_view one = lines.substr(
        start, end == std::string_view::npos ? std::string_view::npos
                                             : end - start);
    if (!one.empty())
      text.append(2 * depth, ' ');
    text.append(one);
    text.push_back('\n');
    if (end == std::string_view::npos)
      break;
    start = end + 1;
  }
}

Emitter::Scope Emitter::scope(std::string_view header, std::string closer) {
  if (header.empty())
    line("{{");
  else
    line("{} {{", header);
  indent();
  return Scope(*this, std::move(closer));
}
