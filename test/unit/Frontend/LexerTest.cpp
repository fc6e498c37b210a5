//===- LexerTest.cpp - Tokens of the stencil language ---------------------===//

#include "TestUtil.h"
#include "stencilc/Frontend/Lexer.h"

#include "gtest/gtest.h"

#include "llvm/Support/MemoryBuffer.h"

#include <vector>

using namespace stencilc;

namespace {

struct Lexed : test::DiagCapture {
  std::vector<Token> tokens;
  std::string &text = diagText;

  explicit Lexed(llvm::StringRef source) {
    Lexer lexer(bufferText(addSource(source)), diags);
    for (int guard = 0; guard < 1000; ++guard) {
      tokens.push_back(lexer.next());
      if (tokens.back().is(TokenKind::Eof))
        break;
    }
    diagStream.flush();
  }
  std::vector<TokenKind> kinds() const {
    std::vector<TokenKind> k;
    for (const Token &t : tokens)
      k.push_back(t.kind);
    return k;
  }
};

TEST(Lexer, ConditionOperatorsAndStage) {
  // Two-character operators are one token; '=' after '<', '>', '!' and '='
  // joins them, a lone '&' or '|' is an error.
  Lexed l("stage a<=b>=c==d!=e&&f||!g<h>i?j:k=l");
  using K = TokenKind;
  std::vector<TokenKind> want = {
      K::KwStage,      K::Identifier, K::LessEqual,  K::Identifier,
      K::GreaterEqual, K::Identifier, K::EqualEqual, K::Identifier,
      K::BangEqual,    K::Identifier, K::AmpAmp,     K::Identifier,
      K::PipePipe,     K::Bang,       K::Identifier, K::Less,
      K::Identifier,   K::Greater,    K::Identifier, K::Question,
      K::Identifier,   K::Colon,      K::Identifier, K::Equal,
      K::Identifier,   K::Eof};
  EXPECT_EQ(l.kinds(), want);
  EXPECT_TRUE(l.text.empty()) << l.text;
  Lexed bad("a & b | c");
  EXPECT_NE(bad.text.find("unexpected character '&'"), std::string::npos);
  EXPECT_NE(bad.text.find("unexpected character '|'"), std::string::npos);
}

TEST(Lexer, KeywordsIdentifiersAndPunctuation) {
  Lexed l("stencil s { grid u : f32[2]; u' = u[-1,0]; }");
  std::vector<TokenKind> want = {
      TokenKind::KwStencil, TokenKind::Identifier, TokenKind::LBrace,
      TokenKind::KwGrid,    TokenKind::Identifier, TokenKind::Colon,
      TokenKind::Identifier, TokenKind::LBracket,  TokenKind::Integer,
      TokenKind::RBracket,  TokenKind::Semicolon,  TokenKind::Identifier,
      TokenKind::Prime,     TokenKind::Equal,      TokenKind::Identifier,
      TokenKind::LBracket,  TokenKind::Minus,      TokenKind::Integer,
      TokenKind::Comma,     TokenKind::Integer,    TokenKind::RBracket,
      TokenKind::Semicolon, TokenKind::RBrace,     TokenKind::Eof};
  EXPECT_EQ(l.kinds(), want);
  EXPECT_TRUE(l.text.empty());
}

TEST(Lexer, NumbersKeepTheirSpelling) {
  Lexed l("1 0.25 .5 1e-3 2E+4");
  ASSERT_EQ(l.tokens.size(), 6u);
  EXPECT_EQ(l.tokens[0].kind, TokenKind::Integer);
  for (int i = 1; i < 5; ++i)
    EXPECT_EQ(l.tokens[i].kind, TokenKind::Float) << l.tokens[i].text.str();
  EXPECT_EQ(l.tokens[3].text, "1e-3");
}

TEST(Lexer, CommentsAreSkipped) {
  Lexed l("// line\n/* block\n comment */ grid");
  ASSERT_EQ(l.tokens.size(), 2u);
  EXPECT_EQ(l.tokens[0].kind, TokenKind::KwGrid);
}

TEST(Lexer, UnterminatedCommentIsReportedOnce) {
  Lexed l("grid /* never closed");
  EXPECT_NE(l.text.find("unterminated block comment"), std::string::npos);
  EXPECT_EQ(l.tokens.back().kind, TokenKind::Eof);
}

TEST(Lexer, BadCharacterAndMalformedNumber) {
  Lexed l("u $ 1e+ 3x");
  EXPECT_NE(l.text.find("unexpected character '$'"), std::string::npos);
  EXPECT_NE(l.text.find("missing exponent digits"), std::string::npos);
  EXPECT_NE(l.text.find("malformed number '3x'"), std::string::npos);
}

} // namespace
