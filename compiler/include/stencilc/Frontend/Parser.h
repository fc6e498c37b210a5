//===- Parser.h - Recursive-descent parser for .st files --------*- C++ -*-===//
//
// Builds the AST of one buffer. On a syntax error the parser reports it,
// skips to the end of the declaration and goes on, so one run shows several
// mistakes; every loop consumes a token, so it always terminates.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_FRONTEND_PARSER_H
#define STENCILC_FRONTEND_PARSER_H

#include "stencilc/Frontend/AST.h"
#include "stencilc/Frontend/Lexer.h"

namespace stencilc {

class Parser {
public:
  Parser(llvm::StringRef buffer, DiagnosticEngine &diags)
      : lexer(buffer, diags), diags(diags) {
    tok = lexer.next();
  }

  /// Parses the whole buffer. The result is meaningful only when no error
  /// was reported.
  ast::Module parseModule();

  /// Deepest expression nesting accepted (parentheses, calls, unary
  /// operators and the left spine of operator chains each count one level);
  /// deeper input is an error, so that no later recursive walk can exhaust
  /// the stack.
  static constexpr int kMaxDepth = 1024;

private:
  ast::StencilDecl parseStencil();
  bool parseDecl(std::vector<ast::Decl> &decls);
  bool parseGridDecl(std::vector<ast::Decl> &decls);
  bool parseParamDecl(std::vector<ast::Decl> &decls);
  bool parseBoundaryDecl(std::vector<ast::Decl> &decls);
  bool parseHintDecl(std::vector<ast::Decl> &decls);
  bool parseLetDecl(std::vector<ast::Decl> &decls, ast::DeclKind kind);
  bool parseBoundarySpec(ast::BoundarySpec &spec, bool inPair);
  bool parseUpdate(std::vector<ast::Decl> &decls);
  bool parseNameList(std::vector<ast::Name> &names, llvm::StringRef what);
  bool parseType(ast::TypeRef &type, bool withDims);

  ast::ExprPtr parseExpr(int depth);
  /// Binary operators binding at least `minPrec`, by precedence climbing.
  ast::ExprPtr parseBinary(int depth, int minPrec);
  ast::ExprPtr parseUnary(int depth);
  ast::ExprPtr parsePrimary(int depth);
  ast::ExprPtr parseNumber();
  bool parseOffsets(ast::Expr &index);
  bool parseCallArgs(ast::Expr &call, int depth);

  void consume() {
    prevEnd = llvm::SMLoc::getFromPointer(tok.text.end());
    tok = lexer.next();
  }
  bool consumeIf(TokenKind kind);
  /// Consumes a token of `kind`, or reports "expected X <context>".
  bool expect(TokenKind kind, llvm::StringRef context);
  /// Skips to just past the next ';' at this nesting level, or to a '}'.
  void recoverToDeclEnd();
  /// Skips to a token that can start a declaration, or past a ';'.
  void recoverToDeclStart();
  bool checkDepth(int depth);

  Lexer lexer;
  DiagnosticEngine &diags;
  Token tok;
  /// End of the last consumed token: where a missing ';' belongs.
  llvm::SMLoc prevEnd;
};

} // namespace stencilc

#endif // STENCILC_FRONTEND_PARSER_H
