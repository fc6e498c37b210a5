//===- Sema.cpp - Name resolution, checking and lowering to IR ------------===//

#include "stencilc/Frontend/Sema.h"
#include "stencilc/Frontend/Values.h"
#include "stencilc/IR/LinearForm.h"
#include "stencilc/IR/Stages.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <cmath>

using namespace stencilc;
using ast::BoundarySpec;
using ast::Decl;
using ast::DeclKind;
using ast::Expr;
using ast::ExprKind;
using ast::ExprPtr;
using ast::Name;
using ast::StencilDecl;

bool stencilc::isReservedName(llvm::StringRef name) {
  static const char *const kReserved[] = {
      // C++ keywords and alternative tokens.
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor",
      "bool", "break", "case", "catch", "char", "char8_t", "char16_t",
      "char32_t", "class", "compl", "concept", "const", "consteval",
      "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "decltype", "default", "delete", "do",
      "double", "dynamic_cast", "else", "enum", "explicit", "export",
      "extern", "false", "float", "for", "friend", "goto", "if", "inline",
      "int", "long", "mutable", "namespace", "new", "noexcept", "not",
      "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected",
      "public", "register", "reinterpret_cast", "requires", "return", "short",
      "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "thread_local", "throw", "true", "try",
      "typedef", "typeid", "typename", "union", "unsigned", "using",
      "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      // Names the generated interface uses itself, and namespaces a
      // stencil's namespace must not merge with.
      "run", "steps", "params", "stream", "scratch", "n0", "n1", "n2",
      "Params", "Scratch", "std", "stencilc", "main", "cuda", "cub",
      "thrust", "nv"};
  // Generated code keeps the sc_ prefix for its own names.
  if (name.startswith("_") || name.contains("__") || name.startswith("sc_"))
    return true;
  return llvm::is_contained(kReserved, name);
}

namespace {

/// Invalid: a declaration that failed; uses of it report nothing more.
enum class SymKind { Grid, Param, Let, Stage, Invalid };

/// "grid", "parameter", "let", "stage".
const char *symKindName(SymKind k) {
  switch (k) {
  case SymKind::Grid:
    return "grid";
  case SymKind::Param:
    return "parameter";
  case SymKind::Let:
    return "let";
  case SymKind::Stage:
    return "stage";
  case SymKind::Invalid:
    break;
  }
  return "name";
}

struct Symbol {
  SymKind kind;
  int index;
  llvm::SMLoc loc;
};

class StencilSema {
public:
  StencilSema(DiagnosticEngine &diags, Stencil &out)
      : diags(diags), s(out) {}

  void run(const StencilDecl &decl);

private:
  bool declare(const Name &name, SymKind kind, int index);
  /// Records a name whose declaration failed, so uses stay quiet.
  void declareInvalid(const Name &name);
  void reportUnknownType(const Name &type);
  bool checkTableShape(const Expr &table, llvm::StringRef fn);
  void declareGrids(const Decl &d);
  void declareParam(const Decl &d);
  void applyBoundary(const Decl &d);
  std::optional<BoundarySide> boundarySide(const ast::BoundarySpec &spec);
  std::optional<AxisBoundary> axisBoundary(const ast::BoundarySpec &spec);
  void applyHint(const Decl &d);
  /// The value of a constant expression of numbers and + - * /; reports
  /// what is not one when `report` (else returns nullopt quietly).
  std::optional<double> constantValue(const Expr &e, llvm::StringRef what,
                                      bool report = true);
  std::optional<int64_t> integerValue(const Expr &e);

  int lower(const Expr &e);
  /// lower, where a number is needed (not a condition).
  int lowerNumber(const Expr &e);
  /// lower, where a condition is needed (not a number).
  int lowerCondition(const Expr &e);
  /// A predeclared name: t, i0, i1, i2; -1 when `name` is none of them.
  int lowerBuiltin(const Expr &e);
  void declareStage(const Decl &d);
  void checkStages();
  /// `node`, or -1 after an error when lowering `e` folded it to infinity
  /// or NaN.
  int checkFolded(int node, const Expr &e);
  int lowerRef(const Expr &e);
  int lowerIndex(const Expr &e);
  int lowerCall(const Expr &e);
  int lowerShorthand(const Expr &e, bool isBox);
  void reportUnknownName(llvm::StringRef name, llvm::SMLoc loc);
  void finish(const StencilDecl &decl);

  DiagnosticEngine &diags;
  Stencil &s;
  llvm::StringMap<Symbol> symbols;
  /// Names of lets declared later in the stencil, to explain use before
  /// definition.
  llvm::StringMap<llvm::SMLoc> laterLets;
  std::vector<int> letNodes;
  /// Stages by name, created before lowering so that boundaries can name
  /// them; a stage's symbol is declared where it is, in order.
  llvm::StringMap<int> stageIndex;
  llvm::StringMap<llvm::SMLoc> laterStages;
  /// Every name the stencil declares: they hide the predeclared names.
  llvm::StringSet<> declaredNames;
  /// Grids whose update has been lowered: their new values may be read.
  std::vector<bool> updatedSoFar;
  /// Set while lowering the value of a dirichlet boundary, which may use
  /// numbers and parameters only.
  bool inBoundaryValue = false;
  std::vector<const Decl *> gridDecls;
  llvm::StringMap<llvm::SMLoc> updateLocs;
  llvm::StringMap<llvm::SMLoc> hintLocs;
  unsigned errorsAtStart = 0;
};

} // namespace

void StencilSema::reportUnknownType(const Name &type) {
  std::string hint;
  llvm::StringRef best =
      closestMatch(type.text, {"f16", "bf16", "f32", "f64"});
  if (!best.empty())
    hint = "; did you mean '" + best.str() + "'?";
  diags.error(type.loc, "unknown element type '" + type.text +
                            "'; expected f16, bf16, f32 or f64" + hint);
}

void StencilSema::declareInvalid(const Name &name) {
  symbols.try_emplace(name.text, Symbol{SymKind::Invalid, -1, name.loc});
}

bool StencilSema::declare(const Name &name, SymKind kind, int index) {
  if (isReservedName(name.text)) {
    diags.error(name.loc, "'" + name.text +
                              "' is reserved in the generated C++; choose "
                              "another name");
    declareInvalid(name);
    return false;
  }
  auto [it, inserted] = symbols.try_emplace(name.text, Symbol{kind, index, name.loc});
  if (!inserted) {
    diags.error(name.loc, "redefinition of '" + name.text + "'");
    diags.note(it->second.loc, "previous definition is here");
    return false;
  }
  return true;
}

void StencilSema::declareGrids(const Decl &d) {
  std::optional<ElemType> type = parseElemType(d.type.name.text);
  bool ok = true;
  if (!type) {
    reportUnknownType(d.type.name);
    ok = false;
  } else if (d.type.dims < 1 || d.type.dims > kMaxDims) {
    diags.error(d.type.dimsLoc, "a grid has 1, 2 or 3 dimensions, not " +
                                    d.type.dimsText);
    ok = false;
  }
  if (!ok) {
    for (const Name &n : d.names)
      declareInvalid(n);
    return;
  }
  int dims = static_cast<int>(d.type.dims);
  for (const Name &n : d.names) {
    if (!s.grids.empty()) {
      const Grid &first = s.grids.front();
      if (dims != s.dims) {
        diags.error(d.type.dimsLoc,
                    "grid '" + n.text + "' has " + llvm::Twine(dims) +
                        (dims == 1 ? " dimension" : " dimensions") +
                        " but grid '" + first.name + "' has " +
                        llvm::Twine(s.dims) +
                        "; all grids of a stencil share one shape");
        declareInvalid(n);
        continue;
      }
    }
    if (!declare(n, SymKind::Grid, static_cast<int>(s.grids.size())))
      continue;
    Grid g;
    g.name = n.text;
    g.loc = n.loc;
    g.type = *type;
    g.boundary.assign(dims, AxisBoundary{});
    if (s.grids.empty())
      s.elemType = *type;
    s.dims = dims;
    s.grids.push_back(g);
  }
}

std::optional<double>
StencilSema::constantValue(const Expr &e, llvm::StringRef what, bool report) {
  switch (e.kind) {
  case ExprKind::Number:
    return e.number;
  case ExprKind::Unary: {
    if (e.op == '!')
      break;
    auto v = constantValue(*e.args[0], what, report);
    if (!v)
      return std::nullopt;
    return e.op == '-' ? -*v : *v;
  }
  case ExprKind::Binary: {
    if (e.op != '+' && e.op != '-' && e.op != '*' && e.op != '/')
      break;
    auto a = constantValue(*e.args[0], what, report);
    if (!a)
      return std::nullopt;
    auto b = constantValue(*e.args[1], what, report);
    if (!b)
      return std::nullopt;
    switch (e.op) {
    case '+':
      return *a + *b;
    case '-':
      return *a - *b;
    case '*':
      return *a * *b;
    default:
      return *a / *b;
    }
  }
  default:
    break;
  }
  if (report)
    diags.error(e.loc, what + " must be a constant number");
  return std::nullopt;
}

void StencilSema::declareParam(const Decl &d) {
  const Name &n = d.names[0];
  std::optional<ElemType> type = parseElemType(d.type.name.text);
  if (!type) {
    reportUnknownType(d.type.name);
    declareInvalid(n);
    return;
  }
  if (!d.value) {
    diags.error(n.loc, "parameter '" + n.text +
                           "' needs a default value (write param " + n.text +
                           " : " + d.type.name.text + " = ...;)");
    declareInvalid(n);
    return;
  }
  auto v = constantValue(*d.value, "the default value of a parameter");
  if (!v) {
    declareInvalid(n);
    return;
  }
  if (!std::isfinite(*v)) {
    diags.error(d.value->loc, "the default value of parameter '" + n.text +
                                  "' is not a finite number");
    declareInvalid(n);
    return;
  }
  if (!declare(n, SymKind::Param, static_cast<int>(s.params.size())))
    return;
  s.params.push_back(Param{n.text, n.loc, *type, *v, d.value->loc});
}

/// An integer literal, optionally signed, whose value is exact in a double
/// (|v| <= 2^53); anything else is nullopt.
std::optional<int64_t> StencilSema::integerValue(const Expr &e) {
  const Expr *num = &e;
  bool negative = false;
  if (e.kind == ExprKind::Unary) {
    num = e.args[0].get();
    negative = e.op == '-';
  }
  if (num->kind != ExprKind::Number || !num->isInteger ||
      !(num->number <= 0x1p53))
    return std::nullopt;
  int64_t v = static_cast<int64_t>(num->number);
  return negative ? -v : v;
}

/// One side's condition: `dirichlet(v)`, `periodic`, `clamp` or `fixed`.
/// A dirichlet value is a constant expression, or one of parameters.
std::optional<BoundarySide>
StencilSema::boundarySide(const ast::BoundarySpec &spec) {
  BoundarySide b;
  llvm::StringRef kind = spec.kind.text;
  if (kind == "dirichlet") {
    b.kind = BoundaryKind::Dirichlet;
    if (spec.args.size() != 1) {
      diags.error(spec.kind.loc, "'dirichlet' takes one constant value, as in "
                                 "dirichlet(0.0)");
      return std::nullopt;
    }
    const Expr &arg = *spec.args[0];
    b.valueLoc = arg.loc;
    if (auto v = constantValue(arg, "", /*report=*/false)) {
      if (!std::isfinite(*v)) {
        diags.error(arg.loc, "the value of a dirichlet boundary is not a "
                             "finite number");
        return std::nullopt;
      }
      b.value = *v;
      return b;
    }
    // Built from parameters: the host evaluates it at every run().
    inBoundaryValue = true;
    int node = lowerNumber(arg);
    inBoundaryValue = false;
    if (node < 0)
      return std::nullopt;
    if (!s.graph.isGridFree(node)) {
      diags.error(arg.loc, "the value of a dirichlet boundary must be built "
                           "from numbers and parameters only");
      return std::nullopt;
    }
    std::vector<double> defaults;
    for (const Param &p : s.params)
      defaults.push_back(roundTo(p.type, p.defaultValue));
    b.value = evaluateGridFree(s.graph, node, defaults);
    if (s.graph[node].op != Op::Const)
      b.node = node;
    return b;
  }
  if (kind == "periodic" || kind == "clamp" || kind == "fixed") {
    b.kind = kind == "periodic" ? BoundaryKind::Periodic
             : kind == "clamp"  ? BoundaryKind::Clamp
                                : BoundaryKind::Fixed;
    if (spec.hasParens) {
      diags.error(spec.kind.loc, "'" + kind + "' takes no arguments");
      return std::nullopt;
    }
    return b;
  }
  std::string hint;
  llvm::StringRef best =
      closestMatch(kind, {"dirichlet", "periodic", "clamp", "fixed"});
  if (!best.empty())
    hint = "; did you mean '" + best.str() + "'?";
  diags.error(spec.kind.loc, "unknown boundary condition '" + kind +
                                 "'; expected dirichlet(c), periodic, "
                                 "clamp or fixed" +
                                 hint);
  return std::nullopt;
}

/// One axis's conditions: one for both sides, or a pair (low, high).
std::optional<AxisBoundary>
StencilSema::axisBoundary(const ast::BoundarySpec &spec) {
  AxisBoundary axis;
  if (spec.pair.empty()) {
    std::optional<BoundarySide> b = boundarySide(spec);
    if (!b)
      return std::nullopt;
    axis.side = {*b, *b};
    return axis;
  }
  std::optional<BoundarySide> lo = boundarySide(spec.pair[0]);
  if (!lo)
    return std::nullopt;
  std::optional<BoundarySide> hi = boundarySide(spec.pair[1]);
  if (!hi)
    return std::nullopt;
  if ((lo->kind == BoundaryKind::Periodic) !=
      (hi->kind == BoundaryKind::Periodic)) {
    const ast::BoundarySpec &other =
        lo->kind == BoundaryKind::Periodic ? spec.pair[1] : spec.pair[0];
    const ast::BoundarySpec &periodic =
        lo->kind == BoundaryKind::Periodic ? spec.pair[0] : spec.pair[1];
    diags.error(periodic.kind.loc,
                "'periodic' joins the two sides of an axis, so it cannot "
                "pair with '" +
                    other.kind.text + "'; write periodic alone for the axis");
    return std::nullopt;
  }
  axis.side = {*lo, *hi};
  return axis;
}

void StencilSema::applyBoundary(const Decl &d) {
  std::vector<AxisBoundary> axes;
  for (const ast::BoundarySpec &spec : d.specs) {
    std::optional<AxisBoundary> axis = axisBoundary(spec);
    if (!axis)
      return;
    axes.push_back(*axis);
  }
  for (const Name &n : d.names) {
    auto it = symbols.find(n.text);
    bool isLet = laterLets.count(n.text) != 0;
    auto stage = stageIndex.find(n.text);
    if (it != symbols.end() && it->second.kind == SymKind::Invalid)
      continue;
    if (it == symbols.end() && !isLet && stage == stageIndex.end()) {
      reportUnknownName(n.text, n.loc);
      continue;
    }
    Field *field = nullptr;
    if (it != symbols.end() && it->second.kind == SymKind::Grid)
      field = &s.grids[it->second.index];
    else if (it == symbols.end() && stage != stageIndex.end())
      field = &s.stages[stage->second];
    if (!field) {
      diags.error(n.loc, "'" + n.text +
                             "' is not a grid or a stage; only grids and "
                             "stages have boundary conditions");
      continue;
    }
    if (axes.size() != 1 && axes.size() != static_cast<size_t>(s.dims)) {
      diags.error(d.specs[0].kind.loc,
                  "boundary of '" + field->name + "' gives " +
                      llvm::Twine(axes.size()) + " conditions; a " +
                      llvm::Twine(s.dims) +
                      "-dimensional grid takes 1 (for every axis) or " +
                      llvm::Twine(s.dims) + " (one per axis)");
      continue;
    }
    if (field->hasBoundary) {
      diags.error(n.loc, "boundary of " +
                             std::string(stage != stageIndex.end() &&
                                                 it == symbols.end()
                                             ? "stage"
                                             : "grid") +
                             " '" + field->name + "' is already defined");
      diags.note(field->boundaryLoc, "previous definition is here");
      continue;
    }
    for (int a = 0; a < s.dims; ++a)
      field->boundary[a] = axes.size() == 1 ? axes[0] : axes[a];
    field->hasBoundary = true;
    field->boundaryLoc = n.loc;
  }
}

void StencilSema::applyHint(const Decl &d) {
  const Name &key = d.names[0];
  const Expr &v = *d.value;
  if (key.text == "fuse" || key.text == "steps" || key.text == "precision") {
    auto [prev, inserted] = hintLocs.try_emplace(key.text, key.loc);
    if (!inserted) {
      diags.error(key.loc, "hint '" + key.text + "' is already given");
      diags.note(prev->second, "previous hint is here");
      return;
    }
  }
  if (key.text == "fuse") {
    if (v.kind == ExprKind::Ref && v.name == "auto") {
      s.hints.fuse.reset();
      return;
    }
    auto n = integerValue(v);
    if (!n || *n < 1 || *n > 64) {
      diags.error(v.loc, "hint 'fuse' takes an integer from 1 to 64, or auto");
      return;
    }
    s.hints.fuse = static_cast<int>(*n);
  } else if (key.text == "steps") {
    auto n = integerValue(v);
    if (!n || *n < 0) {
      diags.error(v.loc, "hint 'steps' takes a non-negative integer up to "
                         "2^53");
      return;
    }
    s.hints.steps = *n;
  } else if (key.text == "precision") {
    std::optional<Precision> p;
    for (Precision q : {Precision::Exact, Precision::SplitTF32, Precision::TF32})
      if (v.kind == ExprKind::Ref && v.name == precisionHintName(q))
        p = q;
    if (!p) {
      diags.error(v.loc, "hint 'precision' takes exact, split_tf32 or tf32");
      return;
    }
    // Split-TF32 splits f32 operands; other grid types have no f32
    // products to split (the grids are declared before hints apply).
    if (*p == Precision::SplitTF32 && !s.grids.empty() &&
        s.elemType != ElemType::F32) {
      diags.error(v.loc, "hint precision = split_tf32 is for f32 grids; the "
                         "grids of stencil '" +
                             s.name + "' are " + elemTypeName(s.elemType) +
                             " (use exact)");
      return;
    }
    s.hints.precision = p;
    s.hints.precisionLoc = v.loc;
  } else {
    std::string hint;
    llvm::StringRef best =
        closestMatch(key.text, {"fuse", "steps", "precision"});
    if (!best.empty())
      hint = "; did you mean '" + best.str() + "'?";
    diags.error(key.loc, "unknown hint '" + key.text +
                             "'; expected fuse, steps or precision" + hint);
  }
}

void StencilSema::reportUnknownName(llvm::StringRef name, llvm::SMLoc loc) {
  auto later = laterLets.find(name);
  if (later != laterLets.end()) {
    diags.error(loc, "'" + name + "' is used before its let");
    diags.note(later->second, "'" + name + "' is defined here");
    return;
  }
  std::vector<llvm::StringRef> candidates;
  for (const auto &entry : symbols)
    candidates.push_back(entry.getKey());
  llvm::sort(candidates);
  llvm::StringRef best = closestMatch(name, candidates);
  if (!best.empty())
    diags.error(loc, "unknown name '" + name + "'; did you mean '" + best +
                         "'?");
  else
    diags.error(loc, "unknown name '" + name + "'");
}

int StencilSema::lowerBuiltin(const Expr &e) {
  // A declared name hides the predeclared one in the whole stencil.
  if (declaredNames.count(e.name))
    return -2;
  const std::string &n = e.name;
  bool step = n == "t";
  bool coord = n.size() == 2 && n[0] == 'i' && n[1] >= '0' && n[1] <= '2';
  if (!step && !coord)
    return -2;
  if (inBoundaryValue) {
    diags.error(e.loc, "the value of a dirichlet boundary must be built from "
                       "numbers and parameters only, not '" +
                           n + "'");
    return -1;
  }
  const char *what = step ? "the step index" : "a coordinate of the point";
  if (e.kind == ExprKind::Index || e.prime) {
    diags.error(e.loc,
                "'" + n + "' is " + what + ", not a grid, and " +
                    (e.prime ? "has no new value" : "cannot be indexed"));
    return -1;
  }
  if (step)
    return s.graph.leaf(Op::Step, 0, Offset{0, 0, 0}, e.loc);
  int axis = n[1] - '0';
  if (axis >= s.dims) {
    diags.error(e.loc, "'" + n + "' is the coordinate along axis " +
                           llvm::Twine(axis) + ", but stencil '" + s.name +
                           "' has " + llvm::Twine(s.dims) +
                           (s.dims == 1 ? " dimension" : " dimensions"));
    return -1;
  }
  return s.graph.leaf(Op::Coord, axis, Offset{0, 0, 0}, e.loc);
}

int StencilSema::lowerRef(const Expr &e) {
  auto it = symbols.find(e.name);
  if (it == symbols.end()) {
    int builtin = lowerBuiltin(e);
    if (builtin != -2)
      return builtin;
    auto stage = laterStages.find(e.name);
    if (stage != laterStages.end()) {
      diags.error(e.loc, "'" + e.name + "' is used before its stage");
      diags.note(stage->second, "'" + e.name + "' is defined here");
      return -1;
    }
    reportUnknownName(e.name, e.loc);
    return -1;
  }
  if (it->second.kind == SymKind::Invalid)
    return -1; // Its declaration was reported.
  if (inBoundaryValue && it->second.kind != SymKind::Param) {
    diags.error(e.loc, "the value of a dirichlet boundary must be built from "
                       "numbers and parameters only, not " +
                           std::string(symKindName(it->second.kind)) + " '" +
                           e.name + "'");
    return -1;
  }
  if (e.prime)
    return lowerIndex(e);
  switch (it->second.kind) {
  case SymKind::Grid:
    return s.graph.read(it->second.index, Offset{0, 0, 0}, e.loc);
  case SymKind::Param:
    return s.graph.param(it->second.index, e.loc);
  case SymKind::Let:
    return letNodes[it->second.index];
  case SymKind::Stage:
    return s.graph.leaf(Op::StageRead, it->second.index, Offset{0, 0, 0},
                        e.loc);
  case SymKind::Invalid:
    return -1;
  }
  return -1;
}

int StencilSema::lowerIndex(const Expr &e) {
  auto it = symbols.find(e.name);
  if (it == symbols.end()) {
    int builtin = lowerBuiltin(e);
    if (builtin != -2)
      return builtin;
    auto stage = laterStages.find(e.name);
    if (stage != laterStages.end()) {
      diags.error(e.loc, "'" + e.name + "' is used before its stage");
      diags.note(stage->second, "'" + e.name + "' is defined here");
      return -1;
    }
    reportUnknownName(e.name, e.loc);
    return -1;
  }
  if (it->second.kind == SymKind::Invalid)
    return -1;
  if (inBoundaryValue) {
    diags.error(e.loc, "the value of a dirichlet boundary must be built from "
                       "numbers and parameters only, not " +
                           std::string(symKindName(it->second.kind)) + " '" +
                           e.name + "'");
    return -1;
  }
  SymKind kind = it->second.kind;
  if (e.prime && kind != SymKind::Grid) {
    diags.error(e.loc, "'" + e.name + "' is a " + symKindName(kind) +
                           "; only a grid has a new value (" + e.name +
                           "' reads it)");
    return -1;
  }
  if (kind != SymKind::Grid && kind != SymKind::Stage) {
    diags.error(e.loc, "'" + e.name + "' is a " +
                           (kind == SymKind::Param ? "parameter" : "let") +
                           ", not a grid, and cannot be indexed");
    return -1;
  }
  Offset off{0, 0, 0};
  if (e.kind == ExprKind::Index) {
    if (e.offsets.size() != static_cast<size_t>(s.dims)) {
      diags.error(
          e.loc, std::string(symKindName(kind)) + " '" + e.name + "' has " +
                     llvm::Twine(s.dims) +
                     (s.dims == 1 ? " dimension" : " dimensions") + " but " +
                     llvm::Twine(e.offsets.size()) +
                     (e.offsets.size() == 1 ? " offset was" : " offsets were") +
                     " given");
      return -1;
    }
    for (size_t a = 0; a < e.offsets.size(); ++a) {
      int64_t v = e.offsets[a].value;
      if (v < -kMaxRadius || v > kMaxRadius) {
        diags.error(e.offsets[a].loc, "offset " + e.offsets[a].text +
                                          " exceeds the maximum radius " +
                                          llvm::Twine(kMaxRadius));
        return -1;
      }
      off[a] = static_cast<int>(v);
    }
  }
  int index = it->second.index;
  if (kind == SymKind::Stage)
    return s.graph.leaf(Op::StageRead, index, off, e.loc);
  if (!e.prime)
    return s.graph.read(index, off, e.loc);
  // u': the new value, which only a grid updated earlier in the step has.
  if (!s.grids[index].updated) {
    diags.error(e.loc, "grid '" + e.name +
                           "' is not updated, so it has no new value; read " +
                           e.name + " instead");
    return -1;
  }
  if (!updatedSoFar[index]) {
    diags.error(e.loc, "the new value of grid '" + e.name +
                           "' is read before its update; write the update " +
                           "of '" + e.name + "' first");
    diags.note(updateLocs.lookup(e.name), "'" + e.name + "' is updated here");
    return -1;
  }
  return s.graph.leaf(Op::NewRead, index, off, e.loc);
}

static void flattenList(const Expr &e, std::vector<const Expr *> &out) {
  if (e.kind == ExprKind::List) {
    for (const ExprPtr &a : e.args)
      flattenList(*a, out);
    return;
  }
  out.push_back(&e);
}

/// A nested weight table must be rectangular: at each level, either every
/// entry is a list or none is, and sibling lists have one length.
bool StencilSema::checkTableShape(const Expr &table, llvm::StringRef fn) {
  std::vector<const Expr *> level = {&table};
  while (!level.empty()) {
    std::vector<const Expr *> next;
    for (const Expr *list : level) {
      size_t lists = 0;
      for (const ExprPtr &a : list->args)
        lists += a->kind == ExprKind::List;
      if (lists != 0 && lists != list->args.size()) {
        diags.error(list->loc, "weight table of '" + fn +
                                   "' mixes rows and single weights");
        return false;
      }
      for (const ExprPtr &a : list->args)
        if (a->kind == ExprKind::List)
          next.push_back(a.get());
    }
    for (const Expr *row : next)
      if (row->args.size() != next.front()->args.size()) {
        diags.error(row->loc, "weight table of '" + fn + "' is ragged: this "
                              "row has " + llvm::Twine(row->args.size()) +
                              " entries, the first row " +
                              llvm::Twine(next.front()->args.size()));
        return false;
      }
    level = std::move(next);
  }
  return true;
}

int StencilSema::lowerShorthand(const Expr &e, bool isBox) {
  llvm::StringRef fn = e.name;
  if (e.args.size() != 2 && e.args.size() != 3) {
    diags.error(e.loc, "'" + fn + "' takes 2 or 3 arguments (grid, radius" +
                           "[, weights]), but " + llvm::Twine(e.args.size()) +
                           (e.args.size() == 1 ? " was" : " were") + " given");
    return -1;
  }
  const Expr &gridArg = *e.args[0];
  auto it = gridArg.kind == ExprKind::Ref ? symbols.find(gridArg.name)
                                          : symbols.end();
  if (it == symbols.end() || it->second.kind != SymKind::Grid) {
    diags.error(gridArg.loc, "first argument of '" + fn + "' must be a grid");
    return -1;
  }
  int grid = it->second.index;
  auto r = integerValue(*e.args[1]);
  if (!r || *r < 1 || *r > kMaxRadius) {
    diags.error(e.args[1]->loc, "radius of '" + fn +
                                    "' must be an integer from 1 to " +
                                    llvm::Twine(kMaxRadius));
    return -1;
  }
  int radius = static_cast<int>(*r);
  // The shape, in the order weight tables list it.
  std::vector<Offset> shape;
  if (isBox) {
    int side = 2 * radius + 1;
    int count = 1;
    for (int a = 0; a < s.dims; ++a)
      count *= side;
    for (int i = 0; i < count; ++i) {
      Offset off{0, 0, 0};
      int rest = i;
      for (int a = s.dims - 1; a >= 0; --a) {
        off[a] = rest % side - radius;
        rest /= side;
      }
      shape.push_back(off);
    }
  } else {
    shape.push_back(Offset{0, 0, 0});
    for (int a = 0; a < s.dims; ++a)
      for (int k = -radius; k <= radius; ++k)
        if (k != 0) {
          Offset off{0, 0, 0};
          off[a] = k;
          shape.push_back(off);
        }
  }
  std::vector<int> weights(shape.size(), -1);
  if (e.args.size() == 3) {
    const Expr &w = *e.args[2];
    if (w.kind != ExprKind::List) {
      int scalar = lowerNumber(w);
      if (scalar < 0)
        return -1;
      std::fill(weights.begin(), weights.end(), scalar);
    } else {
      if (!checkTableShape(w, fn))
        return -1;
      std::vector<const Expr *> table;
      flattenList(w, table);
      std::vector<int> lowered;
      for (const Expr *x : table) {
        int v = lowerNumber(*x);
        if (v < 0)
          return -1;
        lowered.push_back(v);
      }
      if (isBox && lowered.size() == shape.size()) {
        weights = lowered;
      } else if (!isBox && lowered.size() == shape.size()) {
        weights = lowered;
      } else if (!isBox && lowered.size() == static_cast<size_t>(radius) + 1) {
        for (size_t i = 0; i < shape.size(); ++i) {
          int dist = 0;
          for (int a = 0; a < s.dims; ++a)
            dist += std::abs(shape[i][a]);
          weights[i] = lowered[dist];
        }
      } else {
        std::string expected =
            isBox ? std::to_string(shape.size())
                  : std::to_string(radius + 1) + " (one per distance) or " +
                        std::to_string(shape.size()) + " (one per point)";
        diags.error(w.loc, "weight table of '" + fn + "' has " +
                               llvm::Twine(lowered.size()) +
                               " entries; expected " + expected +
                               " for radius " + llvm::Twine(radius) + " in " +
                               llvm::Twine(s.dims) +
                               (s.dims == 1 ? " dimension" : " dimensions"));
        return -1;
      }
    }
  }
  std::vector<int> terms;
  for (size_t i = 0; i < shape.size(); ++i) {
    int rd = s.graph.read(grid, shape[i], e.loc);
    int w = weights[i];
    if (w < 0 || (s.graph[w].op == Op::Const && s.graph[w].value == 1.0))
      terms.push_back(rd);
    else if (s.graph[w].op == Op::Const && s.graph[w].value == 0.0)
      continue;
    else
      terms.push_back(s.graph.binary(Op::Mul, w, rd, e.loc));
  }
  if (terms.empty())
    return s.graph.constant(0.0, e.loc);
  return s.graph.balancedSum(terms, e.loc);
}

int StencilSema::lowerCall(const Expr &e) {
  llvm::StringRef fn = e.name;
  if (fn == "box" || fn == "star")
    return lowerShorthand(e, fn == "box");
  auto arity = [&](size_t want) {
    if (e.args.size() == want)
      return true;
    diags.error(e.loc, "'" + fn + "' takes " + llvm::Twine(want) +
                           (want == 1 ? " argument" : " arguments") + ", but " +
                           llvm::Twine(e.args.size()) +
                           (e.args.size() == 1 ? " was" : " were") + " given");
    return false;
  };
  if (fn == "min" || fn == "max") {
    if (e.args.size() < 2) {
      diags.error(e.loc, "'" + fn + "' takes at least 2 arguments, but " +
                             llvm::Twine(e.args.size()) +
                             (e.args.size() == 1 ? " was" : " were") +
                             " given");
      return -1;
    }
    int acc = lowerNumber(*e.args[0]);
    for (size_t i = 1; i < e.args.size() && acc >= 0; ++i) {
      int next = lowerNumber(*e.args[i]);
      if (next < 0)
        return -1;
      acc = s.graph.binary(fn == "min" ? Op::Min : Op::Max, acc, next, e.loc);
    }
    return acc;
  }
  static const std::pair<const char *, Op> kUnary[] = {
      {"sqrt", Op::Sqrt}, {"abs", Op::Abs},    {"exp", Op::Exp},
      {"log", Op::Log},   {"sin", Op::Sin},    {"cos", Op::Cos},
      {"tanh", Op::Tanh}, {"floor", Op::Floor}};
  for (const auto &[name, op] : kUnary) {
    if (fn != name)
      continue;
    if (!arity(1))
      return -1;
    int x = lowerNumber(*e.args[0]);
    if (x < 0)
      return -1;
    return s.graph.unary(op, x, e.loc);
  }
  if (fn == "fma") {
    if (!arity(3))
      return -1;
    int a = lowerNumber(*e.args[0]);
    int b = a < 0 ? -1 : lowerNumber(*e.args[1]);
    int c = b < 0 ? -1 : lowerNumber(*e.args[2]);
    if (c < 0)
      return -1;
    return s.graph.ternary(Op::Fma, a, b, c, e.loc);
  }
  if (fn == "select") {
    if (!arity(3))
      return -1;
    int c = lowerCondition(*e.args[0]);
    int a = c < 0 ? -1 : lowerNumber(*e.args[1]);
    int b = a < 0 ? -1 : lowerNumber(*e.args[2]);
    if (b < 0)
      return -1;
    return s.graph.ternary(Op::Select, c, a, b, e.loc);
  }
  if (fn == "pow") {
    if (!arity(2))
      return -1;
    int x = lowerNumber(*e.args[0]);
    if (x < 0)
      return -1;
    // An integer literal from -64 to 64 multiplies (exactly as written in
    // docs/language.md §5); any other exponent is CUDA's pow.
    auto n = integerValue(*e.args[1]);
    if (n && *n >= -64 && *n <= 64) {
      if (*n == 0)
        return s.graph.constant(1.0, e.loc);
      if (*n == 1)
        return x;
      return s.graph.unary(Op::Pow, x, e.loc, static_cast<int>(*n));
    }
    int y = lowerNumber(*e.args[1]);
    if (y < 0)
      return -1;
    return s.graph.binary(Op::PowF, x, y, e.loc);
  }
  static const char *const kFunctions[] = {
      "min", "max",  "sqrt",  "abs", "pow",    "exp", "log", "sin",
      "cos", "tanh", "floor", "fma", "select", "box", "star"};
  std::string hint;
  llvm::StringRef best =
      closestMatch(fn, std::vector<llvm::StringRef>(std::begin(kFunctions),
                                                    std::end(kFunctions)));
  if (!best.empty())
    hint = "; did you mean '" + best.str() + "'?";
  diags.error(e.loc, "unknown function '" + fn +
                         "'; expected min, max, sqrt, abs, pow, exp, log, "
                         "sin, cos, tanh, floor, fma, select, box or star" +
                         hint);
  return -1;
}

int StencilSema::checkFolded(int node, const Expr &e) {
  if (node < 0 || s.graph[node].op != Op::Const ||
      std::isfinite(s.graph[node].value))
    return node;
  // Its operands were finite, or lowering them would have failed: this is
  // where the fold left the finite numbers.
  diags.error(e.loc, constantNotFinite(s.graph[node].value));
  return -1;
}

int StencilSema::lowerNumber(const Expr &e) {
  int v = lower(e);
  if (v >= 0 && s.graph.isLogical(v)) {
    diags.error(e.loc, "a condition is not a number; choose a number by it "
                       "with select(c, a, b) or c ? a : b");
    return -1;
  }
  return v;
}

int StencilSema::lowerCondition(const Expr &e) {
  int v = lower(e);
  if (v >= 0 && !s.graph.isLogical(v)) {
    diags.error(e.loc, "expected a condition, such as a comparison x > 0, "
                       "not a number");
    return -1;
  }
  return v;
}

int StencilSema::lower(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Number:
    return s.graph.constant(e.number, e.loc);
  case ExprKind::Ref:
    return lowerRef(e);
  case ExprKind::Index:
    return lowerIndex(e);
  case ExprKind::Unary: {
    if (e.op == '!') {
      int c = lowerCondition(*e.args[0]);
      return c < 0 ? -1 : s.graph.unary(Op::Not, c, e.loc);
    }
    int x = lowerNumber(*e.args[0]);
    if (x < 0 || e.op == '+')
      return x;
    return checkFolded(s.graph.unary(Op::Neg, x, e.loc), e);
  }
  case ExprKind::Binary: {
    if (e.op == '&' || e.op == '|') {
      int a = lowerCondition(*e.args[0]);
      if (a < 0)
        return -1;
      int b = lowerCondition(*e.args[1]);
      if (b < 0)
        return -1;
      return s.graph.binary(e.op == '&' ? Op::And : Op::Or, a, b, e.loc);
    }
    int a = lowerNumber(*e.args[0]);
    if (a < 0)
      return -1;
    int b = lowerNumber(*e.args[1]);
    if (b < 0)
      return -1;
    Op op;
    switch (e.op) {
    case '+':
      op = Op::Add;
      break;
    case '-':
      op = Op::Sub;
      break;
    case '*':
      op = Op::Mul;
      break;
    case '/':
      op = Op::Div;
      break;
    case '<':
      op = Op::Lt;
      break;
    case 'l':
      op = Op::Le;
      break;
    case '>':
      op = Op::Gt;
      break;
    case 'g':
      op = Op::Ge;
      break;
    case 'e':
      op = Op::Eq;
      break;
    default:
      op = Op::Ne;
      break;
    }
    return checkFolded(s.graph.binary(op, a, b, e.loc), e);
  }
  case ExprKind::Conditional: {
    int c = lowerCondition(*e.args[0]);
    if (c < 0)
      return -1;
    int a = lowerNumber(*e.args[1]);
    if (a < 0)
      return -1;
    int b = lowerNumber(*e.args[2]);
    if (b < 0)
      return -1;
    return s.graph.ternary(Op::Select, c, a, b, e.loc);
  }
  case ExprKind::Call:
    return checkFolded(lowerCall(e), e);
  case ExprKind::List:
    diags.error(e.loc, "a weight table [...] is only allowed as the last "
                       "argument of box or star");
    return -1;
  }
  return -1;
}

void StencilSema::run(const StencilDecl &decl) {
  errorsAtStart = diags.errorCount();
  s.name = decl.name.text;
  s.loc = decl.name.loc;
  // Declarations first, so boundaries and updates may come in any order.
  for (const Decl &d : decl.decls) {
    if (d.kind == DeclKind::Grid)
      declareGrids(d);
    else if (d.kind == DeclKind::Param)
      declareParam(d);
    else if (d.kind == DeclKind::Let)
      laterLets.try_emplace(d.names[0].text, d.names[0].loc);
    else if (d.kind == DeclKind::Stage &&
             laterStages.try_emplace(d.names[0].text, d.names[0].loc).second) {
      // Created now so that boundary declarations can name it.
      Stage st;
      st.name = d.names[0].text;
      st.loc = d.names[0].loc;
      stageIndex[st.name] = static_cast<int>(s.stages.size());
      s.stages.push_back(st);
    }
    if (d.kind != DeclKind::Boundary && d.kind != DeclKind::Hint &&
        d.kind != DeclKind::Update)
      for (const Name &n : d.names)
        declaredNames.insert(n.text);
  }
  for (Stage &st : s.stages)
    st.boundary.assign(std::max(s.dims, 1), AxisBoundary{});
  updatedSoFar.assign(s.grids.size(), false);
  // Mark updated grids before boundaries, which check 'fixed' against them.
  for (const Decl &d : decl.decls) {
    if (d.kind != DeclKind::Update)
      continue;
    const Name &target = d.names[0];
    auto it = symbols.find(target.text);
    bool isLet = laterLets.count(target.text) != 0;
    bool isStage = stageIndex.count(target.text) != 0;
    if (it != symbols.end() && it->second.kind == SymKind::Invalid)
      continue;
    if (it == symbols.end() && !isLet && !isStage) {
      reportUnknownName(target.text, target.loc);
      continue;
    }
    if (it == symbols.end() || it->second.kind != SymKind::Grid) {
      diags.error(target.loc, "'" + target.text + "' is a " +
                                  (isLet     ? "let"
                                   : isStage ? "stage"
                                             : "parameter") +
                                  ", not a grid; only grids can be updated");
      continue;
    }
    auto [prev, inserted] = updateLocs.try_emplace(target.text, target.loc);
    if (!inserted) {
      diags.error(target.loc, "grid '" + target.text + "' is updated twice");
      diags.note(prev->second, "first update is here");
      continue;
    }
    s.grids[it->second.index].updated = true;
  }
  s.updateTypes(); // The stencil's element type is its first updated grid's.
  for (const Decl &d : decl.decls) {
    if (d.kind == DeclKind::Boundary)
      applyBoundary(d);
    else if (d.kind == DeclKind::Hint)
      applyHint(d);
  }
  // Lets, stages and updates, in order: a let or stage is visible after its
  // declaration, a new value after its update.
  for (const Decl &d : decl.decls) {
    if (d.kind == DeclKind::Let) {
      const Name &n = d.names[0];
      laterLets.erase(n.text);
      int v = lower(*d.value);
      if (v < 0) {
        declareInvalid(n);
        continue;
      }
      if (declare(n, SymKind::Let, static_cast<int>(letNodes.size())))
        letNodes.push_back(v);
    } else if (d.kind == DeclKind::Stage) {
      declareStage(d);
    } else if (d.kind == DeclKind::Update) {
      int v = lowerNumber(*d.value);
      auto it = symbols.find(d.names[0].text);
      if (v < 0 || it == symbols.end() || it->second.kind != SymKind::Grid)
        continue;
      Update u;
      u.grid = it->second.index;
      u.root = u.written = v;
      u.loc = d.loc;
      s.order.push_back({false, static_cast<int>(s.updates.size())});
      s.updates.push_back(u);
      updatedSoFar[u.grid] = true;
    }
  }
  finish(decl);
}

void StencilSema::declareStage(const Decl &d) {
  const Name &n = d.names[0];
  auto idx = stageIndex.find(n.text);
  bool first = idx != stageIndex.end() && s.stages[idx->second].loc == n.loc;
  // The stage's own name is not yet visible in its expression.
  int v = lowerNumber(*d.value);
  if (first)
    laterStages.erase(n.text);
  if (v < 0 || !first) {
    if (!first)
      declare(n, SymKind::Stage, -1); // Reports the redefinition.
    else
      declareInvalid(n);
    return;
  }
  if (!declare(n, SymKind::Stage, idx->second))
    return;
  s.stages[idx->second].root = v;
  s.order.push_back({true, idx->second});
}

void StencilSema::finish(const StencilDecl &decl) {
  if (diags.errorCount() != errorsAtStart)
    return;
  if (s.grids.empty()) {
    diags.error(decl.name.loc, "stencil '" + s.name +
                                   "' declares no grid; add one such as grid "
                                   "u : f32[2];");
    return;
  }
  if (s.updates.empty()) {
    diags.error(decl.name.loc, "stencil '" + s.name +
                                   "' updates no grid; add an update such as " +
                                   s.grids[0].name + "' = ...;");
    return;
  }
  // A grid or stage read off its centre needs a boundary; 'fixed' needs an
  // updated grid.
  std::vector<bool> live = s.graph.reachable(s.writtenRoots());
  std::vector<bool> stageReported(s.stages.size(), false);
  for (size_t i = 0; i < s.graph.size(); ++i) {
    const Node &n = s.graph[i];
    if (!live[i] || !isReadOp(n.op))
      continue;
    bool offCentre = llvm::any_of(n.offset, [](int o) { return o != 0; });
    if (!offCentre)
      continue;
    if (n.op == Op::StageRead) {
      Stage &st = s.stages[n.index];
      if (!st.hasBoundary && !stageReported[n.index]) {
        diags.error(n.loc, "stage '" + st.name +
                               "' is read off its centre but has no boundary "
                               "condition; add one such as boundary " +
                               st.name + " : clamp;");
        stageReported[n.index] = true;
      }
      continue;
    }
    Grid &g = s.grids[n.index];
    if (!g.hasBoundary) {
      diags.error(n.loc, "grid '" + g.name +
                             "' is read off its centre but has no boundary "
                             "condition; add one such as boundary " +
                             g.name + " : clamp;");
      g.hasBoundary = true; // Report each grid once.
    }
  }
  for (Grid &g : s.grids) {
    bool fixed = llvm::any_of(g.boundary, [](const AxisBoundary &b) {
      return b.has(BoundaryKind::Fixed);
    });
    if (fixed && !g.updated)
      diags.error(g.boundaryLoc, "'fixed' boundary needs grid '" + g.name +
                                     "' to be updated; use clamp or "
                                     "dirichlet for a read-only grid");
  }
  for (Stage &st : s.stages) {
    bool fixed = llvm::any_of(st.boundary, [](const AxisBoundary &b) {
      return b.has(BoundaryKind::Fixed);
    });
    if (fixed)
      diags.error(st.boundaryLoc,
                  "'fixed' boundary is for updated grids; stage '" + st.name +
                      "' is computed anew in every step, so use clamp or "
                      "dirichlet");
  }
  if (diags.errorCount() != errorsAtStart)
    return;
  for (Update &u : s.updates) {
    std::vector<bool> reach = s.graph.reachable({u.written});
    for (size_t i = 0; i < reach.size(); ++i) {
      const Node &n = s.graph[i];
      if (!reach[i] || !isReadOp(n.op))
        continue;
      for (int a = 0; a < s.dims; ++a) {
        u.reachLo[a] = std::max(u.reachLo[a], -n.offset[a]);
        u.reachHi[a] = std::max(u.reachHi[a], n.offset[a]);
      }
    }
  }
  // Stages and new values inlined: the form every kernel's interior and the
  // linear form use. A new value is rounded where its grid's type is
  // narrower than the compute type, which inlining needs to know.
  s.updateTypes();
  inlineStages(s);
  for (Update &u : s.updates)
    for (int a = 0; a < s.dims; ++a) {
      int span = std::max(u.spanLo[a], u.spanHi[a]);
      if (span > kMaxRadius) {
        diags.error(u.loc, "the update of '" + s.grids[u.grid].name +
                               "' reaches " + llvm::Twine(span) +
                               " points along axis " + llvm::Twine(a) +
                               " through its stages and new values; at most " +
                               llvm::Twine(kMaxRadius) + " are supported");
        return;
      }
    }
  for (Update &u : s.updates) {
    u.linear = extractLinearForm(s.graph, u.root);
    u.linearPart = extractLinearPart(s.graph, u.root);
  }
  s.updateTypes();
}

std::optional<Module> stencilc::lowerToIR(const ast::Module &module,
                                          DiagnosticEngine &diags) {
  Module out;
  if (module.stencils.empty()) {
    diags.error(module.endLoc, "file defines no stencil; start one with "
                               "stencil name { ... }");
    return std::nullopt;
  }
  llvm::StringMap<llvm::SMLoc> names;
  for (const StencilDecl &decl : module.stencils) {
    if (isReservedName(decl.name.text))
      diags.error(decl.name.loc, "'" + decl.name.text +
                                     "' is reserved in the generated C++; "
                                     "choose another name");
    auto [it, inserted] = names.try_emplace(decl.name.text, decl.name.loc);
    if (!inserted) {
      diags.error(decl.name.loc, "redefinition of stencil '" +
                                     decl.name.text + "'");
      diags.note(it->second, "previous definition is here");
      continue;
    }
    out.stencils.emplace_back();
    StencilSema sema(diags, out.stencils.back());
    sema.run(decl);
    // After lowering, so that the linear forms' coefficients are checked too.
    checkValuesFit(out.stencils.back(), diags);
  }
  if (diags.hasErrors())
    return std::nullopt;
  return out;
}
