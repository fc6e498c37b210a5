//===- StencilPragmaHandler.cpp - Parses '#pragma stencil' ----------------===//
//
// The pragma is read with unexpanded tokens: steps(NSTEPS) is copied into
// the rewritten code as written, where NSTEPS means what it meant in the
// loop. A malformed pragma is reported at the offending token, the rest of
// the line is skipped, and the record is kept (marked invalid) so that the
// nest it marks is not lifted.
//
//===----------------------------------------------------------------------===//

#include "StencilPragmaHandler.h"
#include "StSyntax.h"

#include "clang/Lex/Preprocessor.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace stencil_lift;

std::string BoundarySpec::str() const {
  switch (kind) {
  case BoundaryKind::Fixed:
    return "fixed";
  case BoundaryKind::Periodic:
    return "periodic";
  case BoundaryKind::Clamp:
    return "clamp";
  case BoundaryKind::Dirichlet:
    return "dirichlet(" + value + ")";
  }
  return "fixed";
}

/// The spelling of `tokens`, with a space wherever the source had one.
static std::string spell(clang::Preprocessor &pp,
                         llvm::ArrayRef<clang::Token> tokens, bool keepSpaces) {
  std::string text;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0 && keepSpaces && tokens[i].hasLeadingSpace())
      text += ' ';
    text += pp.getSpelling(tokens[i]);
  }
  return text;
}

void StencilPragmaHandler::HandlePragma(clang::Preprocessor &pp,
                                        clang::PragmaIntroducer introducer,
                                        clang::Token &firstToken) {
  StencilPragma pragma;
  pragma.loc = introducer.Loc;
  clang::Token tok;
  pp.LexUnexpandedToken(tok);
  while (tok.isNot(clang::tok::eod)) {
    if (!parseClause(pp, tok, pragma)) {
      pragma.valid = false;
      while (tok.isNot(clang::tok::eod))
        pp.LexUnexpandedToken(tok);
      break;
    }
  }
  pragmas.push_back(std::move(pragma));
}

bool StencilPragmaHandler::parseClause(clang::Preprocessor &pp,
                                       clang::Token &tok,
                                       StencilPragma &pragma) {
  std::string name = pp.getSpelling(tok);
  clang::SourceLocation nameLoc = tok.getLocation();
  if (name != "steps" && name != "boundary" && name != "target") {
    diags.error(nameLoc, "unknown clause '" + name +
                             "' in '#pragma stencil'; expected steps, "
                             "boundary or target");
    return false;
  }
  bool seen = name == "steps"      ? pragma.steps.has_value()
              : name == "boundary" ? pragma.boundaryLoc.isValid()
                                   : pragma.target.has_value();
  if (seen) {
    diags.error(nameLoc, "clause '" + name + "' appears twice");
    return false;
  }
  pp.LexUnexpandedToken(tok);
  std::vector<clang::Token> args;
  bool closed = false;
  if (tok.is(clang::tok::l_paren)) {
    int depth = 1;
    pp.LexUnexpandedToken(tok);
    while (tok.isNot(clang::tok::eod)) {
      if (tok.is(clang::tok::l_paren))
        ++depth;
      if (tok.is(clang::tok::r_paren) && --depth == 0) {
        closed = true;
        pp.LexUnexpandedToken(tok);
        break;
      }
      args.push_back(tok);
      pp.LexUnexpandedToken(tok);
    }
  }
  if (!closed || args.empty()) {
    diags.error(nameLoc,
                "clause '" + name + "' needs an argument in parentheses");
    return false;
  }
  if (name == "steps") {
    pragma.steps = spell(pp, args, /*keepSpaces=*/true);
    return true;
  }
  if (name == "target") {
    pragma.target = spell(pp, args, /*keepSpaces=*/true);
    return true;
  }
  pragma.boundaryLoc = nameLoc;
  return parseBoundary(pp, args, pragma);
}

bool StencilPragmaHandler::parseBoundary(
    clang::Preprocessor &pp, const std::vector<clang::Token> &tokens,
    StencilPragma &pragma) {
  // Split at the commas outside parentheses.
  std::vector<std::vector<clang::Token>> items(1);
  int depth = 0;
  for (const clang::Token &t : tokens) {
    if (t.is(clang::tok::l_paren))
      ++depth;
    if (t.is(clang::tok::r_paren))
      --depth;
    if (t.is(clang::tok::comma) && depth == 0)
      items.emplace_back();
    else
      items.back().push_back(t);
  }
  for (const std::vector<clang::Token> &item : items) {
    if (item.empty()) {
      diags.error(tokens.front().getLocation(),
                  "malformed boundary '" + spell(pp, tokens, false) +
                      "'; write dirichlet(c) with a number c, and periodic, "
                      "clamp or fixed without parentheses");
      return false;
    }
    std::string kindName = pp.getSpelling(item[0]);
    std::string text = spell(pp, item, /*keepSpaces=*/false);
    std::optional<BoundaryKind> kind =
        llvm::StringSwitch<std::optional<BoundaryKind>>(kindName)
            .Case("fixed", BoundaryKind::Fixed)
            .Case("periodic", BoundaryKind::Periodic)
            .Case("clamp", BoundaryKind::Clamp)
            .Case("dirichlet", BoundaryKind::Dirichlet)
            .Default(std::nullopt);
    if (!kind || item[0].isNot(clang::tok::identifier)) {
      diags.error(item[0].getLocation(),
                  "unknown boundary '" + kindName +
                      "'; expected dirichlet(c), periodic, clamp or fixed");
      return false;
    }
    BoundarySpec spec;
    spec.kind = *kind;
    bool ok = true;
    if (*kind != BoundaryKind::Dirichlet) {
      ok = item.size() == 1;
    } else {
      // dirichlet ( [+|-] NUMBER )
      size_t i = 2;
      bool negative = false;
      if (item.size() > i &&
          item[i].isOneOf(clang::tok::minus, clang::tok::plus)) {
        negative = item[i].is(clang::tok::minus);
        ++i;
      }
      ok = item.size() == i + 2 && item[1].is(clang::tok::l_paren) &&
           item[i].is(clang::tok::numeric_constant) &&
           item[i + 1].is(clang::tok::r_paren);
      if (ok) {
        std::string digits = pp.getSpelling(item[i]);
        llvm::StringRef number = llvm::StringRef(digits).rtrim("fFlL");
        double value = 0;
        ok = !number.getAsDouble(value) && std::isfinite(value);
        if (ok)
          spec.value = formatNumber(negative ? -value : value,
                                    /*asFloat=*/false);
      }
    }
    if (!ok) {
      diags.error(item[0].getLocation(),
                  "malformed boundary '" + text +
                      "'; write dirichlet(c) with a number c, and periodic, "
                      "clamp or fixed without parentheses");
      return false;
    }
    pragma.boundary.push_back(spec);
  }
  return true;
}
