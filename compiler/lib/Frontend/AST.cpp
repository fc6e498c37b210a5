//===- AST.cpp - Printing the syntax tree ---------------------------------===//

#include "stencilc/Frontend/AST.h"

using namespace stencilc;
using namespace stencilc::ast;

llvm::StringRef ast::opSpelling(char op) {
  switch (op) {
  case 'l':
    return "<=";
  case 'g':
    return ">=";
  case 'e':
    return "==";
  case 'n':
    return "!=";
  case '&':
    return "&&";
  case '|':
    return "||";
  case '+':
    return "+";
  case '-':
    return "-";
  case '*':
    return "*";
  case '/':
    return "/";
  case '<':
    return "<";
  case '>':
    return ">";
  case '!':
    return "!";
  }
  return "?";
}

static void printExpr(const Expr &e, llvm::raw_ostream &os) {
  switch (e.kind) {
  case ExprKind::Number:
    os << e.spelling;
    return;
  case ExprKind::Ref:
    os << e.name << (e.prime ? "'" : "");
    return;
  case ExprKind::Conditional:
    os << "(? ";
    printExpr(*e.args[0], os);
    os << " ";
    printExpr(*e.args[1], os);
    os << " ";
    printExpr(*e.args[2], os);
    os << ")";
    return;
  case ExprKind::Index:
    os << e.name << (e.prime ? "'" : "") << "[";
    for (size_t i = 0; i < e.offsets.size(); ++i)
      os << (i ? "," : "") << e.offsets[i].value;
    os << "]";
    return;
  case ExprKind::Unary:
    os << "(" << opSpelling(e.op) << " ";
    printExpr(*e.args[0], os);
    os << ")";
    return;
  case ExprKind::Binary:
    os << "(" << opSpelling(e.op) << " ";
    printExpr(*e.args[0], os);
    os << " ";
    printExpr(*e.args[1], os);
    os << ")";
    return;
  case ExprKind::Call:
    os << "(call " << e.name;
    for (const ExprPtr &a : e.args) {
      os << " ";
      printExpr(*a, os);
    }
    os << ")";
    return;
  case ExprKind::List:
    os << "(list";
    for (const ExprPtr &a : e.args) {
      os << " ";
      printExpr(*a, os);
    }
    os << ")";
    return;
  }
}

static void printSpec(const BoundarySpec &b, llvm::raw_ostream &os) {
  if (!b.pair.empty()) {
    os << "(";
    printSpec(b.pair[0], os);
    os << " ";
    printSpec(b.pair[1], os);
    os << ")";
    return;
  }
  os << b.kind.text;
  if (b.hasParens) {
    os << "(";
    for (size_t i = 0; i < b.args.size(); ++i) {
      os << (i ? " " : "");
      printExpr(*b.args[i], os);
    }
    os << ")";
  }
}

static void printNames(const std::vector<Name> &names, llvm::raw_ostream &os) {
  for (size_t i = 0; i < names.size(); ++i)
    os << (i ? " " : "") << names[i].text;
}

void ast::print(const Module &module, llvm::raw_ostream &os) {
  for (const StencilDecl &s : module.stencils) {
    os << "(stencil " << s.name.text << "\n";
    for (const Decl &d : s.decls) {
      os << "  ";
      switch (d.kind) {
      case DeclKind::Grid:
        os << "(grid ";
        printNames(d.names, os);
        os << " : " << d.type.name.text << "[" << d.type.dims << "])";
        break;
      case DeclKind::Param:
        os << "(param " << d.names[0].text << " : " << d.type.name.text;
        if (d.value) {
          os << " = ";
          printExpr(*d.value, os);
        }
        os << ")";
        break;
      case DeclKind::Boundary:
        os << "(boundary ";
        printNames(d.names, os);
        os << " :";
        for (const BoundarySpec &b : d.specs) {
          os << " ";
          printSpec(b, os);
        }
        os << ")";
        break;
      case DeclKind::Hint:
        os << "(hint " << d.names[0].text << " ";
        printExpr(*d.value, os);
        os << ")";
        break;
      case DeclKind::Let:
        os << "(let " << d.names[0].text << " ";
        printExpr(*d.value, os);
        os << ")";
        break;
      case DeclKind::Stage:
        os << "(stage " << d.names[0].text << " ";
        printExpr(*d.value, os);
        os << ")";
        break;
      case DeclKind::Update:
        os << "(update " << d.names[0].text << " ";
        printExpr(*d.value, os);
        os << ")";
        break;
      }
      os << "\n";
    }
    os << ")\n";
  }
}
