//===- EmitterTest.cpp - Indented output ----------------------------------===//

#include "stencilc/CodeGen/Emitter.h"

#include "gtest/gtest.h"

using namespace stencilc;

namespace {

TEST(Emitter, ScopesIndentAndClose) {
  Emitter e;
  {
    auto ns = e.scope("namespace a", "} // namespace a");
    e.line("int x = {};", 3);
    auto fn = e.scope("void f()");
    e.line("if (x)\n  return;");
  }
  EXPECT_EQ(e.str(), "namespace a {\n  int x = 3;\n  void f() {\n"
                     "    if (x)\n      return;\n  }\n} // namespace a\n");
}

} // namespace
