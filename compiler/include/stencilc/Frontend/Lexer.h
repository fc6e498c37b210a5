//===- Lexer.h - Tokens of the stencil language -----------------*- C++ -*-===//
//
// Splits a .st buffer into tokens. Malformed characters, numbers and comments
// are reported once and turned into an error token, so the parser always makes
// progress and never reads past the end of the buffer.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_FRONTEND_LEXER_H
#define STENCILC_FRONTEND_LEXER_H

#include "stencilc/Support/Diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <string>

namespace stencilc {

enum class TokenKind {
  Eof,
  Error,
  Identifier,
  Integer,
  Float,
  // Keywords.
  KwStencil,
  KwGrid,
  KwParam,
  KwBoundary,
  KwHint,
  KwLet,
  KwStage,
  // Punctuation.
  LBrace,
  RBrace,
  LParen,
  RParen,
  LBracket,
  RBracket,
  Comma,
  Semicolon,
  Colon,
  Equal,
  Prime,
  Plus,
  Minus,
  Star,
  Slash,
  Less,         // <
  LessEqual,    // <=
  Greater,      // >
  GreaterEqual, // >=
  EqualEqual,   // ==
  BangEqual,    // !=
  AmpAmp,       // &&
  PipePipe,     // ||
  Bang,         // !
  Question,     // ?
};

/// Printable spelling of a token kind, used in "expected ..." messages.
llvm::StringRef tokenKindSpelling(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::Eof;
  llvm::StringRef text;
  llvm::SMLoc loc;

  bool is(TokenKind k) const { return kind == k; }
  llvm::SMRange range() const {
    return {loc, llvm::SMLoc::getFromPointer(text.end())};
  }
};

class Lexer {
public:
  Lexer(llvm::StringRef buffer, DiagnosticEngine &diags)
      : buffer(buffer), cur(buffer.begin()), diags(diags) {}

  /// Returns the next token; Eof forever once the buffer is exhausted.
  Token next();

private:
  Token make(TokenKind kind, const char *start);
  Token lexNumber(const char *start);
  Token lexIdentifier(const char *start);
  /// Skips white space and comments; false after an unterminated comment.
  bool skipTrivia();

  llvm::StringRef buffer;
  const char *cur;
  DiagnosticEngine &diags;
};

} // namespace stencilc

#endif // STENCILC_FRONTEND_LEXER_H
