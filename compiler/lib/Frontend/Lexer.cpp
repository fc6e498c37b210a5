//===- Lexer.cpp - Tokens of the stencil language -------------------------===//

#include "stencilc/Frontend/Lexer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace stencilc;

llvm::StringRef stencilc::tokenKindSpelling(TokenKind kind) {
  switch (kind) {
  case TokenKind::Eof:
    return "end of file";
  case TokenKind::Error:
    return "invalid token";
  case TokenKind::Identifier:
    return "identifier";
  case TokenKind::Integer:
    return "integer";
  case TokenKind::Float:
    return "number";
  case TokenKind::KwStencil:
    return "'stencil'";
  case TokenKind::KwGrid:
    return "'grid'";
  case TokenKind::KwParam:
    return "'param'";
  case TokenKind::KwBoundary:
    return "'boundary'";
  case TokenKind::KwHint:
    return "'hint'";
  case TokenKind::KwLet:
    return "'let'";
  case TokenKind::KwStage:
    return "'stage'";
  case TokenKind::LBrace:
    return "'{'";
  case TokenKind::RBrace:
    return "'}'";
  case TokenKind::LParen:
    return "'('";
  case TokenKind::RParen:
    return "')'";
  case TokenKind::LBracket:
    return "'['";
  case TokenKind::RBracket:
    return "']'";
  case TokenKind::Comma:
    return "','";
  case TokenKind::Semicolon:
    return "';'";
  case TokenKind::Colon:
    return "':'";
  case TokenKind::Equal:
    return "'='";
  case TokenKind::Prime:
    return "'''";
  case TokenKind::Plus:
    return "'+'";
  case TokenKind::Minus:
    return "'-'";
  case TokenKind::Star:
    return "'*'";
  case TokenKind::Slash:
    return "'/'";
  case TokenKind::Less:
    return "'<'";
  case TokenKind::LessEqual:
    return "'<='";
  case TokenKind::Greater:
    return "'>'";
  case TokenKind::GreaterEqual:
    return "'>='";
  case TokenKind::EqualEqual:
    return "'=='";
  case TokenKind::BangEqual:
    return "'!='";
  case TokenKind::AmpAmp:
    return "'&&'";
  case TokenKind::PipePipe:
    return "'||'";
  case TokenKind::Bang:
    return "'!'";
  case TokenKind::Question:
    return "'?'";
  }
  return "token";
}

static bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool isDigit(char c) { return c >= '0' && c <= '9'; }
static bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }

Token Lexer::make(TokenKind kind, const char *start) {
  Token tok;
  tok.kind = kind;
  tok.text = llvm::StringRef(start, cur - start);
  tok.loc = llvm::SMLoc::getFromPointer(start);
  return tok;
}

bool Lexer::skipTrivia() {
  const char *end = buffer.end();
  while (cur < end) {
    char c = *cur;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
        c == '\v') {
      ++cur;
    } else if (c == '/' && cur + 1 < end && cur[1] == '/') {
      while (cur < end && *cur != '\n')
        ++cur;
    } else if (c == '/' && cur + 1 < end && cur[1] == '*') {
      const char *start = cur;
      cur += 2;
      while (cur + 1 < end && !(cur[0] == '*' && cur[1] == '/'))
        ++cur;
      if (cur + 1 >= end) {
        cur = end;
        diags.error(llvm::SMLoc::getFromPointer(start),
                    "unterminated block comment");
        return false;
      }
      cur += 2;
    } else {
      break;
    }
  }
  return true;
}

Token Lexer::lexNumber(const char *start) {
  const char *end = buffer.end();
  bool isFloat = false;
  while (cur < end && isDigit(*cur))
    ++cur;
  if (cur < end && *cur == '.') {
    isFloat = true;
    ++cur;
    while (cur < end && isDigit(*cur))
      ++cur;
  }
  if (cur < end && (*cur == 'e' || *cur == 'E')) {
    isFloat = true;
    ++cur;
    if (cur < end && (*cur == '+' || *cur == '-'))
      ++cur;
    if (cur >= end || !isDigit(*cur)) {
      diags.error(llvm::SMLoc::getFromPointer(start),
                  "malformed number: missing exponent digits");
      while (cur < end && isIdentChar(*cur))
        ++cur;
      return make(TokenKind::Error, start);
    }
    while (cur < end && isDigit(*cur))
      ++cur;
  }
  if (cur < end && (isIdentStart(*cur) || *cur == '.')) {
    while (cur < end && (isIdentChar(*cur) || *cur == '.'))
      ++cur;
    diags.error(llvm::SMLoc::getFromPointer(start),
                "malformed number '" + llvm::StringRef(start, cur - start) +
                    "'");
    return make(TokenKind::Error, start);
  }
  return make(isFloat ? TokenKind::Float : TokenKind::Integer, start);
}

Token Lexer::lexIdentifier(const char *start) {
  while (cur < buffer.end() && isIdentChar(*cur))
    ++cur;
  llvm::StringRef text(start, cur - start);
  TokenKind kind = llvm::StringSwitch<TokenKind>(text)
                       .Case("stencil", TokenKind::KwStencil)
                       .Case("grid", TokenKind::KwGrid)
                       .Case("param", TokenKind::KwParam)
                       .Case("boundary", TokenKind::KwBoundary)
                       .Case("hint", TokenKind::KwHint)
                       .Case("let", TokenKind::KwLet)
                       .Case("stage", TokenKind::KwStage)
                       .Default(TokenKind::Identifier);
  return make(kind, start);
}

Token Lexer::next() {
  if (!skipTrivia())
    return make(TokenKind::Eof, cur);
  if (cur >= buffer.end())
    return make(TokenKind::Eof, cur);
  const char *start = cur;
  char c = *cur++;
  // The operators of two characters first.
  auto followedBy = [&](char next) {
    if (cur < buffer.end() && *cur == next) {
      ++cur;
      return true;
    }
    return false;
  };
  switch (c) {
  case '<':
    return make(followedBy('=') ? TokenKind::LessEqual : TokenKind::Less,
                start);
  case '>':
    return make(followedBy('=') ? TokenKind::GreaterEqual : TokenKind::Greater,
                start);
  case '!':
    return make(followedBy('=') ? TokenKind::BangEqual : TokenKind::Bang,
                start);
  case '&':
    if (followedBy('&'))
      return make(TokenKind::AmpAmp, start);
    break;
  case '|':
    if (followedBy('|'))
      return make(TokenKind::PipePipe, start);
    break;
  case '?':
    return make(TokenKind::Question, start);
  default:
    break;
  }
  switch (c) {
  case '{':
    return make(TokenKind::LBrace, start);
  case '}':
    return make(TokenKind::RBrace, start);
  case '(':
    return make(TokenKind::LParen, start);
  case ')':
    return make(TokenKind::RParen, start);
  case '[':
    return make(TokenKind::LBracket, start);
  case ']':
    return make(TokenKind::RBracket, start);
  case ',':
    return make(TokenKind::Comma, start);
  case ';':
    return make(TokenKind::Semicolon, start);
  case ':':
    return make(TokenKind::Colon, start);
  case '=':
    return make(followedBy('=') ? TokenKind::EqualEqual : TokenKind::Equal,
                start);
  case '\'':
    return make(TokenKind::Prime, start);
  case '+':
    return make(TokenKind::Plus, start);
  case '-':
    return make(TokenKind::Minus, start);
  case '*':
    return make(TokenKind::Star, start);
  case '/':
    return make(TokenKind::Slash, start);
  default:
    break;
  }
  if (isDigit(c) || (c == '.' && cur < buffer.end() && isDigit(*cur))) {
    cur = start;
    return lexNumber(start);
  }
  if (isIdentStart(c))
    return lexIdentifier(start);
  // Consume a whole UTF-8 sequence so the caret and message name one
  // character.
  while (cur < buffer.end() && (static_cast<unsigned char>(*cur) & 0xC0) == 0x80)
    ++cur;
  llvm::StringRef bad(start, cur - start);
  bool printable = bad.size() == 1 && c >= 0x20 && c < 0x7f;
  if (printable)
    diags.error(llvm::SMLoc::getFromPointer(start),
                "unexpected character '" + bad + "'");
  else {
    std::string hex = llvm::utohexstr(static_cast<unsigned char>(c));
    if (hex.size() < 2)
      hex = "0" + hex;
    diags.error(llvm::SMLoc::getFromPointer(start),
                "unexpected character (byte 0x" + hex + ")");
  }
  return make(TokenKind::Error, start);
}
