//===- Parser.cpp - Recursive-descent parser for .st files ----------------===//

#include "stencilc/Frontend/Parser.h"

#include <cmath>

using namespace stencilc;
using namespace stencilc::ast;

bool Parser::consumeIf(TokenKind kind) {
  if (!tok.is(kind))
    return false;
  consume();
  return true;
}

bool Parser::expect(TokenKind kind, llvm::StringRef context) {
  if (consumeIf(kind))
    return true;
  // The lexer already reported a malformed token.
  if (tok.is(TokenKind::Error))
    return false;
  // A missing ';' belongs right after what precedes it, not at the next
  // token, which may be lines further on.
  llvm::SMLoc at =
      kind == TokenKind::Semicolon && prevEnd.isValid() ? prevEnd : tok.loc;
  diags.error(at, "expected " + tokenKindSpelling(kind) + " " + context);
  return false;
}

void Parser::recoverToDeclStart() {
  while (!tok.is(TokenKind::Eof) && !tok.is(TokenKind::RBrace) &&
         !tok.is(TokenKind::KwStencil)) {
    switch (tok.kind) {
    case TokenKind::KwGrid:
    case TokenKind::KwParam:
    case TokenKind::KwBoundary:
    case TokenKind::KwHint:
    case TokenKind::KwLet:
    case TokenKind::KwStage:
    case TokenKind::Identifier:
      return;
    case TokenKind::Semicolon:
      consume();
      return;
    default:
      consume();
    }
  }
}

void Parser::recoverToDeclEnd() {
  int depth = 0;
  while (!tok.is(TokenKind::Eof)) {
    if (tok.is(TokenKind::LParen) || tok.is(TokenKind::LBracket) ||
        tok.is(TokenKind::LBrace))
      ++depth;
    else if (tok.is(TokenKind::RParen) || tok.is(TokenKind::RBracket))
      depth = depth > 0 ? depth - 1 : 0;
    else if (tok.is(TokenKind::RBrace)) {
      if (depth == 0)
        return; // The enclosing stencil's closing brace.
      --depth;
    } else if (tok.is(TokenKind::Semicolon) && depth == 0) {
      consume();
      return;
    }
    consume();
  }
}

bool Parser::checkDepth(int depth) {
  if (depth <= kMaxDepth)
    return true;
  diags.error(tok.loc, "expression is nested more than " +
                           llvm::Twine(kMaxDepth) + " levels deep");
  return false;
}

/// module ::= stencil*
Module Parser::parseModule() {
  Module module;
  while (!tok.is(TokenKind::Eof)) {
    if (tok.is(TokenKind::KwStencil)) {
      module.stencils.push_back(parseStencil());
      continue;
    }
    if (!tok.is(TokenKind::Error))
      diags.error(tok.loc, "expected 'stencil' at top level");
    // Skip to the next 'stencil' keyword.
    consume();
    while (!tok.is(TokenKind::Eof) && !tok.is(TokenKind::KwStencil))
      consume();
    if (diags.errorCount() > DiagnosticEngine::kMaxErrors)
      break;
  }
  module.endLoc = tok.loc;
  return module;
}

/// stencil ::= 'stencil' IDENT '{' decl* '}'
StencilDecl Parser::parseStencil() {
  StencilDecl s;
  s.loc = tok.loc;
  consume(); // 'stencil'
  if (tok.is(TokenKind::Identifier)) {
    s.name = {tok.text.str(), tok.loc};
    consume();
  } else {
    expect(TokenKind::Identifier, "after 'stencil' (the stencil's name)");
    s.name = {"", s.loc};
  }
  if (!expect(TokenKind::LBrace, "to open the stencil body")) {
    // Skip this stencil entirely.
    while (!tok.is(TokenKind::Eof) && !tok.is(TokenKind::KwStencil))
      consume();
    return s;
  }
  while (!tok.is(TokenKind::RBrace) && !tok.is(TokenKind::Eof) &&
         !tok.is(TokenKind::KwStencil)) {
    if (!parseDecl(s.decls))
      recoverToDeclEnd();
    if (diags.errorCount() > DiagnosticEngine::kMaxErrors)
      return s;
  }
  if (tok.is(TokenKind::RBrace))
    consume();
  else
    diags.error(tok.loc, "expected '}' to close stencil '" + s.name.text + "'");
  return s;
}

/// decl ::= gridDecl | paramDecl | boundaryDecl | hintDecl | letDecl
///        | stageDecl | update
bool Parser::parseDecl(std::vector<Decl> &decls) {
  switch (tok.kind) {
  case TokenKind::KwGrid:
    return parseGridDecl(decls);
  case TokenKind::KwParam:
    return parseParamDecl(decls);
  case TokenKind::KwBoundary:
    return parseBoundaryDecl(decls);
  case TokenKind::KwHint:
    return parseHintDecl(decls);
  case TokenKind::KwLet:
    return parseLetDecl(decls, DeclKind::Let);
  case TokenKind::KwStage:
    return parseLetDecl(decls, DeclKind::Stage);
  case TokenKind::Identifier:
    return parseUpdate(decls);
  case TokenKind::Error:
    consume();
    return false;
  default:
    diags.error(tok.loc, "expected a declaration (grid, param, boundary, "
                         "hint, let, stage) or an update such as u' = ...;");
    consume();
    recoverToDeclStart();
    return true;
  }
}

/// nameList ::= IDENT (',' IDENT)*
bool Parser::parseNameList(std::vector<Name> &names, llvm::StringRef what) {
  do {
    if (!tok.is(TokenKind::Identifier))
      return expect(TokenKind::Identifier, what);
    names.push_back({tok.text.str(), tok.loc});
    consume();
  } while (consumeIf(TokenKind::Comma));
  return true;
}

/// type ::= IDENT ('[' INT ']')?
bool Parser::parseType(TypeRef &type, bool withDims) {
  if (!tok.is(TokenKind::Identifier))
    return expect(TokenKind::Identifier, "(an element type: f16, bf16, f32 "
                                         "or f64)");
  type.name = {tok.text.str(), tok.loc};
  consume();
  if (!withDims)
    return true;
  if (!expect(TokenKind::LBracket,
              "after the element type (write the number of dimensions as "
              "f32[2])"))
    return false;
  type.dimsLoc = tok.loc;
  if (!tok.is(TokenKind::Integer))
    return expect(TokenKind::Integer, "(the number of dimensions)");
  type.dimsText = tok.text.str();
  if (tok.text.getAsInteger(10, type.dims))
    type.dims = INT64_MAX;
  consume();
  return expect(TokenKind::RBracket, "after the number of dimensions");
}

/// gridDecl ::= 'grid' IDENT (',' IDENT)* ':' IDENT '[' INT ']' ';'
bool Parser::parseGridDecl(std::vector<Decl> &decls) {
  Decl d(DeclKind::Grid, tok.loc);
  consume();
  if (!parseNameList(d.names, "(a grid name)") ||
      !expect(TokenKind::Colon, "after the grid name") ||
      !parseType(d.type, /*withDims=*/true) ||
      !expect(TokenKind::Semicolon, "after the grid declaration"))
    return false;
  decls.push_back(std::move(d));
  return true;
}

/// paramDecl ::= 'param' IDENT ':' type ('=' expr)? ';'
bool Parser::parseParamDecl(std::vector<Decl> &decls) {
  Decl d(DeclKind::Param, tok.loc);
  consume();
  if (!tok.is(TokenKind::Identifier))
    return expect(TokenKind::Identifier, "(a parameter name)");
  d.names.push_back({tok.text.str(), tok.loc});
  consume();
  if (!expect(TokenKind::Colon, "after the parameter name") ||
      !parseType(d.type, /*withDims=*/false))
    return false;
  if (consumeIf(TokenKind::Equal)) {
    d.value = parseExpr(0);
    if (!d.value)
      return false;
  }
  if (!expect(TokenKind::Semicolon, "after the parameter declaration"))
    return false;
  decls.push_back(std::move(d));
  return true;
}

/// spec ::= IDENT ('(' (expr (',' expr)*)? ')')?
///        | '(' spec ',' spec ')'           (* low side, high side *)
bool Parser::parseBoundarySpec(BoundarySpec &spec, bool inPair) {
  if (!inPair && tok.is(TokenKind::LParen)) {
    spec.kind = {"", tok.loc};
    consume();
    spec.pair.resize(2);
    if (!parseBoundarySpec(spec.pair[0], true))
      return false;
    if (!expect(TokenKind::Comma, "between the two sides of an axis, as in "
                                  "(dirichlet(0), clamp)") ||
        !parseBoundarySpec(spec.pair[1], true))
      return false;
    return expect(TokenKind::RParen,
                  "after the two sides of an axis (low, high)");
  }
  if (!tok.is(TokenKind::Identifier))
    return expect(TokenKind::Identifier,
                  "(a boundary condition: dirichlet(c), periodic, clamp or "
                  "fixed)");
  spec.kind = {tok.text.str(), tok.loc};
  consume();
  if (consumeIf(TokenKind::LParen)) {
    spec.hasParens = true;
    if (!tok.is(TokenKind::RParen)) {
      do {
        ExprPtr e = parseExpr(0);
        if (!e)
          return false;
        spec.args.push_back(std::move(e));
      } while (consumeIf(TokenKind::Comma));
    }
    if (!expect(TokenKind::RParen, "to close the boundary condition"))
      return false;
  }
  return true;
}

/// boundaryDecl ::= 'boundary' IDENT (',' IDENT)* ':' spec (',' spec)* ';'
bool Parser::parseBoundaryDecl(std::vector<Decl> &decls) {
  Decl d(DeclKind::Boundary, tok.loc);
  consume();
  if (!parseNameList(d.names, "(a grid or stage name)") ||
      !expect(TokenKind::Colon, "after the grid names of a boundary"))
    return false;
  do {
    BoundarySpec spec;
    if (!parseBoundarySpec(spec, false))
      return false;
    d.specs.push_back(std::move(spec));
  } while (consumeIf(TokenKind::Comma));
  if (!expect(TokenKind::Semicolon, "after the boundary declaration"))
    return false;
  decls.push_back(std::move(d));
  return true;
}

/// hintDecl ::= 'hint' IDENT '=' expr ';'
bool Parser::parseHintDecl(std::vector<Decl> &decls) {
  Decl d(DeclKind::Hint, tok.loc);
  consume();
  if (!tok.is(TokenKind::Identifier))
    return expect(TokenKind::Identifier, "(a hint name such as fuse)");
  d.names.push_back({tok.text.str(), tok.loc});
  consume();
  if (!expect(TokenKind::Equal, "after the hint name"))
    return false;
  d.value = parseExpr(0);
  if (!d.value || !expect(TokenKind::Semicolon, "after the hint"))
    return false;
  decls.push_back(std::move(d));
  return true;
}

/// letDecl   ::= 'let' IDENT '=' expr ';'
/// stageDecl ::= 'stage' IDENT '=' expr ';'
bool Parser::parseLetDecl(std::vector<Decl> &decls, DeclKind kind) {
  Decl d(kind, tok.loc);
  const char *what = kind == DeclKind::Let ? "let" : "stage";
  consume();
  if (!tok.is(TokenKind::Identifier))
    return expect(TokenKind::Identifier,
                  "(the name of the " + std::string(what) + ")");
  d.names.push_back({tok.text.str(), tok.loc});
  consume();
  if (!expect(TokenKind::Equal, "after the name of the " + std::string(what)))
    return false;
  d.value = parseExpr(0);
  if (!d.value ||
      !expect(TokenKind::Semicolon, "after the " + std::string(what)))
    return false;
  decls.push_back(std::move(d));
  return true;
}

/// update ::= IDENT ''' '=' expr ';'
bool Parser::parseUpdate(std::vector<Decl> &decls) {
  Decl d(DeclKind::Update, tok.loc);
  d.names.push_back({tok.text.str(), tok.loc});
  consume();
  if (!tok.is(TokenKind::Prime)) {
    if (!tok.is(TokenKind::Error))
      diags.error(tok.loc, "expected ''' after '" + d.names[0].text +
                               "' (an update is written " + d.names[0].text +
                               "' = ...;)");
    return false;
  }
  consume();
  if (!expect(TokenKind::Equal, "after the updated grid"))
    return false;
  d.value = parseExpr(0);
  if (!d.value || !expect(TokenKind::Semicolon, "after the update"))
    return false;
  decls.push_back(std::move(d));
  return true;
}

/// expr ::= or ('?' expr ':' expr)?        (* right-associative *)
ExprPtr Parser::parseExpr(int depth) {
  if (!checkDepth(depth))
    return nullptr;
  ExprPtr cond = parseBinary(depth, 1);
  if (!cond || !tok.is(TokenKind::Question))
    return cond;
  auto e = std::make_unique<Expr>(ExprKind::Conditional, tok.loc);
  consume();
  ExprPtr a = parseExpr(depth + 1);
  if (!a)
    return nullptr;
  if (!expect(TokenKind::Colon, "between the two choices of '?' (write "
                                "c ? a : b)"))
    return nullptr;
  ExprPtr b = parseExpr(depth + 1);
  if (!b)
    return nullptr;
  e->args.push_back(std::move(cond));
  e->args.push_back(std::move(a));
  e->args.push_back(std::move(b));
  return e;
}

/// The binding strength of a binary operator token (0: none) and its code
/// in the AST (ast::opSpelling).
static int precedence(TokenKind k, char &code) {
  switch (k) {
  case TokenKind::PipePipe:
    code = '|';
    return 1;
  case TokenKind::AmpAmp:
    code = '&';
    return 2;
  case TokenKind::EqualEqual:
    code = 'e';
    return 3;
  case TokenKind::BangEqual:
    code = 'n';
    return 3;
  case TokenKind::Less:
    code = '<';
    return 4;
  case TokenKind::LessEqual:
    code = 'l';
    return 4;
  case TokenKind::Greater:
    code = '>';
    return 4;
  case TokenKind::GreaterEqual:
    code = 'g';
    return 4;
  case TokenKind::Plus:
    code = '+';
    return 5;
  case TokenKind::Minus:
    code = '-';
    return 5;
  case TokenKind::Star:
    code = '*';
    return 6;
  case TokenKind::Slash:
    code = '/';
    return 6;
  default:
    return 0;
  }
}

/// or   ::= and ('||' and)*          and ::= eq ('&&' eq)*
/// eq   ::= rel (('==' | '!=') rel)*  rel ::= sum (('<' | '<=' | '>' | '>=')
/// sum)* sum  ::= term (('+' | '-') term)*  term ::= unary (('*' | '/') unary)*
/// All left-associative; operators binding at least `minPrec` are taken.
ExprPtr Parser::parseBinary(int depth, int minPrec) {
  if (!checkDepth(depth))
    return nullptr;
  ExprPtr lhs = parseUnary(depth);
  char code = 0;
  int prec = 0;
  while (lhs && (prec = precedence(tok.kind, code)) >= minPrec) {
    auto bin = std::make_unique<Expr>(ExprKind::Binary, tok.loc);
    bin->op = code;
    consume();
    ExprPtr rhs = parseBinary(depth + 1, prec + 1);
    if (!rhs)
      return nullptr;
    bin->args.push_back(std::move(lhs));
    bin->args.push_back(std::move(rhs));
    lhs = std::move(bin);
    // A long chain builds a deep left spine: count it against the limit.
    if (!checkDepth(++depth))
      return nullptr;
  }
  return lhs;
}

/// unary ::= ('-' | '+' | '!') unary | primary
ExprPtr Parser::parseUnary(int depth) {
  if (!checkDepth(depth))
    return nullptr;
  if (tok.is(TokenKind::Minus) || tok.is(TokenKind::Plus) ||
      tok.is(TokenKind::Bang)) {
    auto un = std::make_unique<Expr>(ExprKind::Unary, tok.loc);
    un->op = tok.text[0];
    consume();
    ExprPtr operand = parseUnary(depth + 1);
    if (!operand)
      return nullptr;
    un->args.push_back(std::move(operand));
    return un;
  }
  return parsePrimary(depth);
}

ExprPtr Parser::parseNumber() {
  auto num = std::make_unique<Expr>(ExprKind::Number, tok.loc);
  num->spelling = tok.text.str();
  num->isInteger = tok.is(TokenKind::Integer);
  if (tok.text.getAsDouble(num->number, /*AllowInexact=*/true) ||
      !std::isfinite(num->number)) {
    diags.error(tok.loc, "number '" + tok.text + "' is out of range");
    return nullptr;
  }
  consume();
  return num;
}

/// offsets ::= '[' ('-' | '+')? INT (',' ('-' | '+')? INT)* ']'
bool Parser::parseOffsets(Expr &index) {
  consume(); // '['
  do {
    Offset off;
    off.loc = tok.loc;
    bool negative = false;
    if (tok.is(TokenKind::Minus) || tok.is(TokenKind::Plus)) {
      negative = tok.is(TokenKind::Minus);
      consume();
    }
    if (!tok.is(TokenKind::Integer)) {
      if (!tok.is(TokenKind::Error))
        diags.error(tok.loc, "grid offset must be an integer constant such as "
                             "-1, 0 or 2");
      return false;
    }
    uint64_t magnitude = 0;
    if (tok.text.getAsInteger(10, magnitude) || magnitude > (1u << 30)) {
      // Far past any legal radius; sema reports the radius itself.
      magnitude = 1u << 30;
    }
    off.value = negative ? -static_cast<int64_t>(magnitude)
                         : static_cast<int64_t>(magnitude);
    off.text = (negative ? "-" : "") + tok.text.str();
    consume();
    index.offsets.push_back(off);
  } while (consumeIf(TokenKind::Comma));
  return expect(TokenKind::RBracket, "to close the grid offsets");
}

/// callArgs ::= '(' (expr (',' expr)*)? ')'
bool Parser::parseCallArgs(Expr &call, int depth) {
  consume(); // '('
  if (consumeIf(TokenKind::RParen))
    return true;
  do {
    ExprPtr arg = parseExpr(depth + 1);
    if (!arg)
      return false;
    call.args.push_back(std::move(arg));
  } while (consumeIf(TokenKind::Comma));
  return expect(TokenKind::RParen, "to close the argument list");
}

/// primary ::= NUMBER | IDENT [ "'" ] | IDENT [ "'" ] offsets
///           | IDENT callArgs | '(' expr ')' | '[' (expr (',' expr)*)? ']'
ExprPtr Parser::parsePrimary(int depth) {
  if (!checkDepth(depth))
    return nullptr;
  switch (tok.kind) {
  case TokenKind::Integer:
  case TokenKind::Float:
    return parseNumber();
  case TokenKind::Identifier: {
    llvm::SMLoc loc = tok.loc;
    std::string name = tok.text.str();
    consume();
    // u' is the new value of grid u in this step.
    bool prime = consumeIf(TokenKind::Prime);
    if (tok.is(TokenKind::LBracket)) {
      auto index = std::make_unique<Expr>(ExprKind::Index, loc);
      index->name = name;
      index->prime = prime;
      if (!parseOffsets(*index))
        return nullptr;
      return index;
    }
    if (prime) {
      auto ref = std::make_unique<Expr>(ExprKind::Ref, loc);
      ref->name = name;
      ref->prime = true;
      return ref;
    }
    if (tok.is(TokenKind::LParen)) {
      auto call = std::make_unique<Expr>(ExprKind::Call, loc);
      call->name = name;
      if (!parseCallArgs(*call, depth))
        return nullptr;
      return call;
    }
    auto ref = std::make_unique<Expr>(ExprKind::Ref, loc);
    ref->name = name;
    return ref;
  }
  case TokenKind::LParen: {
    consume();
    ExprPtr inner = parseExpr(depth + 1);
    if (!inner || !expect(TokenKind::RParen, "to close the parenthesis"))
      return nullptr;
    return inner;
  }
  case TokenKind::LBracket: {
    auto list = std::make_unique<Expr>(ExprKind::List, tok.loc);
    consume();
    if (!tok.is(TokenKind::RBracket)) {
      do {
        ExprPtr e = parseExpr(depth + 1);
        if (!e)
          return nullptr;
        list->args.push_back(std::move(e));
      } while (consumeIf(TokenKind::Comma));
    }
    if (!expect(TokenKind::RBracket, "to close the weight table"))
      return nullptr;
    return list;
  }
  case TokenKind::Error:
    return nullptr;
  default:
    diags.error(tok.loc, "expected an expression");
    return nullptr;
  }
}
