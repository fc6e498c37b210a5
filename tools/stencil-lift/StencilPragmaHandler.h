//===- StencilPragmaHandler.h - Parses '#pragma stencil' --------*- C++ -*-===//
//
// `#pragma stencil [steps(EXPR)] [boundary(KIND, ...)] [target(NAME)]`
// marks the loop nest that follows it. The preprocessor hands each such
// pragma to this handler, which parses the clauses and records them with
// the pragma's location; the AST consumer later pairs each record with the
// statement that follows it. Registering the handler also keeps clang from
// warning about an unknown pragma.
//
//===----------------------------------------------------------------------===//

#ifndef STENCIL_LIFT_STENCILPRAGMAHANDLER_H
#define STENCIL_LIFT_STENCILPRAGMAHANDLER_H

#include "LiftDiagnostics.h"
#include "LiftedStencil.h"

#include "clang/Lex/Pragma.h"

#include <optional>
#include <string>
#include <vector>

namespace stencil_lift {

/// One `#pragma stencil` and its clauses.
struct StencilPragma {
  clang::SourceLocation loc; ///< The '#'.
  std::optional<std::string> steps;
  std::vector<BoundarySpec> boundary; ///< Empty: the default, fixed.
  clang::SourceLocation boundaryLoc;
  std::optional<std::string> target;
  bool valid = true;
};

/// Records every `#pragma stencil` of the translation unit.
class StencilPragmaHandler : public clang::PragmaHandler {
public:
  StencilPragmaHandler(std::vector<StencilPragma> &pragmas,
                       LiftDiagnostics &diags)
      : clang::PragmaHandler("stencil"), pragmas(pragmas), diags(diags) {}

  void HandlePragma(clang::Preprocessor &pp, clang::PragmaIntroducer introducer,
                    clang::Token &firstToken) override;

private:
  /// clause = IDENT "(" balanced-tokens ")"
  bool parseClause(clang::Preprocessor &pp, clang::Token &tok,
                   StencilPragma &pragma);
  /// boundary = kind { "," kind } ; kind = IDENT [ "(" [sign] NUMBER ")" ]
  bool parseBoundary(clang::Preprocessor &pp,
                     const std::vector<clang::Token> &tokens,
                     StencilPragma &pragma);

  std::vector<StencilPragma> &pragmas;
  LiftDiagnostics &diags;
};

} // namespace stencil_lift

#endif // STENCIL_LIFT_STENCILPRAGMAHANDLER_H
