//===- ParserTest.cpp - The recursive-descent parser ----------------------===//

#include "TestUtil.h"
#include "stencilc/Frontend/Parser.h"

#include "gtest/gtest.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace stencilc;

namespace {

struct Parsed : test::DiagCapture {
  ast::Module module;
  std::string printed;
  std::string &text = diagText;

  explicit Parsed(llvm::StringRef source) {
    Parser p(bufferText(addSource(source)), diags);
    module = p.parseModule();
    llvm::raw_string_ostream ps(printed);
    ast::print(module, ps);
    diagStream.flush();
  }
};

TEST(Parser, PrecedenceAndAssociativity) {
  Parsed p("stencil s { grid u : f32[1]; u' = u - u[1] * 2 - -u[-1] / 4; }");
  EXPECT_TRUE(p.text.empty()) << p.text;
  EXPECT_NE(p.printed.find("(- (- u (* u[1] 2)) (/ (- u[-1]) 4))"),
            std::string::npos)
      << p.printed;
}

TEST(Parser, AllDeclarationKinds) {
  Parsed p("stencil s { grid u, v : f64[2]; param a : f32 = 0.5;\n"
           "boundary u, v : periodic, clamp; hint fuse = 3; let l = u + v;\n"
           "u' = l; v' = box(v, 1, [1,2,3,4,5,6,7,8,9]); }");
  EXPECT_TRUE(p.text.empty()) << p.text;
  ASSERT_EQ(p.module.stencils.size(), 1u);
  EXPECT_EQ(p.module.stencils[0].decls.size(), 7u);
}

TEST(Parser, RecoversAndReportsSeveralErrors) {
  Parsed p("stencil s { grid u f32[1]; param a : f32 = ; u' = u; }");
  EXPECT_EQ(p.diags.errorCount(), 2u) << p.text;
}

TEST(Parser, DeepNestingIsAnErrorNotAStackOverflow) {
  std::string src = "stencil s { grid u : f32[1]; u' = ";
  src += std::string(100000, '(');
  src += "u;}";
  Parsed p(src);
  EXPECT_NE(p.text.find("nested more than"), std::string::npos);
}

TEST(Parser, LongSumChainsAreBounded) {
  std::string src = "stencil s { grid u : f32[1]; u' = u";
  for (int i = 0; i < 5000; ++i)
    src += " + u";
  src += "; }";
  Parsed p(src);
  EXPECT_NE(p.text.find("nested more than"), std::string::npos);
}

} // namespace
