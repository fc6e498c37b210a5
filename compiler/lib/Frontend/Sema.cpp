//===- Sema.cpp - Name resolution, checking and lowering to IR ------------===//

#include "stencilc/Frontend/Sema.h"
#include "stencilc/Frontend/Values.h"
#include "stencilc/IR/LinearForm.h"

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
enum class SymKind { Grid, Param, Let, Invalid };

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
  void applyHint(const Decl &d);
  std::optional<double> constantValue(const Expr &e, llvm::StringRef what);
  std::optional<int64_t> integerValue(const Expr &e);

  int lower(const Expr &e);
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
      if (*type != s.elemType) {
        diags.error(d.type.name.loc,
                    "grid '" + n.text + "' has element type " +
                        elemTypeName(*type) + " but grid '" + first.name +
                        "' has " + elemTypeName(s.elemType) +
                        "; all grids of a stencil share one element type");
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
    s.dims = dims;
    s.elemType = *type;
    s.grids.push_back(g);
  }
}

std::optional<double> StencilSema::constantValue(const Expr &e,
                                                 llvm::StringRef what) {
  switch (e.kind) {
  case ExprKind::Number:
    return e.number;
  case ExprKind::Unary: {
    auto v = constantValue(*e.args[0], what);
    if (!v)
      return std::nullopt;
    return e.op == '-' ? -*v : *v;
  }
  case ExprKind::Binary: {
    auto a = constantValue(*e.args[0], what);
    if (!a)
      return std::nullopt;
    auto b = constantValue(*e.args[1], what);
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
    diags.error(e.loc, what + " must be a constant number");
    return std::nullopt;
  }
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

void StencilSema::applyBoundary(const Decl &d) {
  std::vector<AxisBoundary> axes;
  for (const BoundarySpec &spec : d.specs) {
    AxisBoundary b;
    llvm::StringRef kind = spec.kind.text;
    if (kind == "dirichlet") {
      b.kind = BoundaryKind::Dirichlet;
      if (spec.args.size() != 1) {
        diags.error(spec.kind.loc,
                    "'dirichlet' takes one constant value, as in "
                    "dirichlet(0.0)");
        return;
      }
      auto v = constantValue(*spec.args[0], "the value of a dirichlet boundary");
      if (!v)
        return;
      if (!std::isfinite(*v)) {
        diags.error(spec.args[0]->loc, "the value of a dirichlet boundary is "
                                       "not a finite number");
        return;
      }
      b.value = *v;
      b.valueLoc = spec.args[0]->loc;
    } else if (kind == "periodic" || kind == "clamp" || kind == "fixed") {
      b.kind = kind == "periodic" ? BoundaryKind::Periodic
               : kind == "clamp"  ? BoundaryKind::Clamp
                                  : BoundaryKind::Fixed;
      if (spec.hasParens) {
        diags.error(spec.kind.loc, "'" + kind + "' takes no arguments");
        return;
      }
    } else {
      std::string hint;
      llvm::StringRef best = closestMatch(
          kind, {"dirichlet", "periodic", "clamp", "fixed"});
      if (!best.empty())
        hint = "; did you mean '" + best.str() + "'?";
      diags.error(spec.kind.loc, "unknown boundary condition '" + kind +
                                     "'; expected dirichlet(c), periodic, "
                                     "clamp or fixed" + hint);
      return;
    }
    axes.push_back(b);
  }
  for (const Name &n : d.names) {
    auto it = symbols.find(n.text);
    bool isLet = laterLets.count(n.text) != 0;
    if (it != symbols.end() && it->second.kind == SymKind::Invalid)
      continue;
    if (it == symbols.end() && !isLet) {
      reportUnknownName(n.text, n.loc);
      continue;
    }
    if (isLet || it->second.kind != SymKind::Grid) {
      diags.error(n.loc, "'" + n.text +
                             "' is not a grid; only grids have boundary "
                             "conditions");
      continue;
    }
    Grid &g = s.grids[it->second.index];
    if (axes.size() != 1 && axes.size() != static_cast<size_t>(s.dims)) {
      diags.error(d.specs[0].kind.loc,
                  "boundary of '" + g.name + "' gives " +
                      llvm::Twine(axes.size()) + " conditions; a " +
                      llvm::Twine(s.dims) +
                      "-dimensional grid takes 1 (for every axis) or " +
                      llvm::Twine(s.dims) + " (one per axis)");
      continue;
    }
    if (g.hasBoundary) {
      diags.error(n.loc, "boundary of grid '" + g.name + "' is already defined");
      diags.note(g.boundaryLoc, "previous definition is here");
      continue;
    }
    for (int a = 0; a < s.dims; ++a)
      g.boundary[a] = axes.size() == 1 ? axes[0] : axes[a];
    g.hasBoundary = true;
    g.boundaryLoc = n.loc;
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

int StencilSema::lowerRef(const Expr &e) {
  auto it = symbols.find(e.name);
  if (it == symbols.end()) {
    reportUnknownName(e.name, e.loc);
    return -1;
  }
  switch (it->second.kind) {
  case SymKind::Grid:
    return s.graph.read(it->second.index, Offset{0, 0, 0}, e.loc);
  case SymKind::Param:
    return s.graph.param(it->second.index, e.loc);
  case SymKind::Let:
    return letNodes[it->second.index];
  case SymKind::Invalid:
    return -1; // Its declaration was reported.
  }
  return -1;
}

int StencilSema::lowerIndex(const Expr &e) {
  auto it = symbols.find(e.name);
  if (it == symbols.end()) {
    reportUnknownName(e.name, e.loc);
    return -1;
  }
  if (it->second.kind == SymKind::Invalid)
    return -1;
  if (it->second.kind != SymKind::Grid) {
    diags.error(e.loc, "'" + e.name + "' is a " +
                           (it->second.kind == SymKind::Param ? "parameter"
                                                              : "let") +
                           ", not a grid, and cannot be indexed");
    return -1;
  }
  if (e.offsets.size() != static_cast<size_t>(s.dims)) {
    diags.error(e.loc, "grid '" + e.name + "' has " + llvm::Twine(s.dims) +
                           (s.dims == 1 ? " dimension" : " dimensions") +
                           " but " + llvm::Twine(e.offsets.size()) +
                           (e.offsets.size() == 1 ? " offset was"
                                                  : " offsets were") +
                           " given");
    return -1;
  }
  Offset off{0, 0, 0};
  for (size_t a = 0; a < e.offsets.size(); ++a) {
    int64_t v = e.offsets[a].value;
    if (v < -kMaxRadius || v > kMaxRadius) {
      diags.error(e.offsets[a].loc,
                  "offset " + e.offsets[a].text +
                      " exceeds the maximum radius " + llvm::Twine(kMaxRadius));
      return -1;
    }
    off[a] = static_cast<int>(v);
  }
  return s.graph.read(it->second.index, off, e.loc);
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
      int scalar = lower(w);
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
        int v = lower(*x);
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
    int acc = lower(*e.args[0]);
    for (size_t i = 1; i < e.args.size() && acc >= 0; ++i) {
      int next = lower(*e.args[i]);
      if (next < 0)
        return -1;
      acc = s.graph.binary(fn == "min" ? Op::Min : Op::Max, acc, next, e.loc);
    }
    return acc;
  }
  if (fn == "sqrt" || fn == "abs") {
    if (!arity(1))
      return -1;
    int x = lower(*e.args[0]);
    if (x < 0)
      return -1;
    return s.graph.unary(fn == "sqrt" ? Op::Sqrt : Op::Abs, x, e.loc);
  }
  if (fn == "pow") {
    if (!arity(2))
      return -1;
    auto n = integerValue(*e.args[1]);
    if (!n || *n < -64 || *n > 64) {
      diags.error(e.args[1]->loc, "exponent of 'pow' must be an integer "
                                  "constant from -64 to 64");
      return -1;
    }
    int x = lower(*e.args[0]);
    if (x < 0)
      return -1;
    if (*n == 0)
      return s.graph.constant(1.0, e.loc);
    if (*n == 1)
      return x;
    return s.graph.unary(Op::Pow, x, e.loc, static_cast<int>(*n));
  }
  std::string hint;
  llvm::StringRef best =
      closestMatch(fn, {"min", "max", "sqrt", "abs", "pow", "box", "star"});
  if (!best.empty())
    hint = "; did you mean '" + best.str() + "'?";
  diags.error(e.loc, "unknown function '" + fn +
                         "'; expected min, max, sqrt, abs, pow, box or star" +
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

int StencilSema::lower(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Number:
    return s.graph.constant(e.number, e.loc);
  case ExprKind::Ref:
    return lowerRef(e);
  case ExprKind::Index:
    return lowerIndex(e);
  case ExprKind::Unary: {
    int x = lower(*e.args[0]);
    if (x < 0 || e.op == '+')
      return x;
    return checkFolded(s.graph.unary(Op::Neg, x, e.loc), e);
  }
  case ExprKind::Binary: {
    int a = lower(*e.args[0]);
    if (a < 0)
      return -1;
    int b = lower(*e.args[1]);
    if (b < 0)
      return -1;
    Op op = e.op == '+'   ? Op::Add
            : e.op == '-' ? Op::Sub
            : e.op == '*' ? Op::Mul
                          : Op::Div;
    return checkFolded(s.graph.binary(op, a, b, e.loc), e);
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
  }
  // Mark updated grids before boundaries, which check 'fixed' against them.
  for (const Decl &d : decl.decls) {
    if (d.kind != DeclKind::Update)
      continue;
    const Name &target = d.names[0];
    auto it = symbols.find(target.text);
    bool isLet = laterLets.count(target.text) != 0;
    if (it != symbols.end() && it->second.kind == SymKind::Invalid)
      continue;
    if (it == symbols.end() && !isLet) {
      reportUnknownName(target.text, target.loc);
      continue;
    }
    if (isLet || it->second.kind != SymKind::Grid) {
      diags.error(target.loc,
                  "'" + target.text + "' is a " +
                      (isLet ? "let" : "parameter") +
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
  for (const Decl &d : decl.decls) {
    if (d.kind == DeclKind::Boundary)
      applyBoundary(d);
    else if (d.kind == DeclKind::Hint)
      applyHint(d);
  }
  // Lets and updates, in order: a let is visible after its declaration.
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
    } else if (d.kind == DeclKind::Update) {
      int v = lower(*d.value);
      auto it = symbols.find(d.names[0].text);
      if (v < 0 || it == symbols.end() || it->second.kind != SymKind::Grid)
        continue;
      Update u;
      u.grid = it->second.index;
      u.root = v;
      u.loc = d.loc;
      s.updates.push_back(u);
    }
  }
  finish(decl);
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
  // A grid read off its centre needs a boundary; 'fixed' needs an update.
  std::vector<bool> live = s.graph.reachable(s.roots());
  for (size_t i = 0; i < s.graph.size(); ++i) {
    const Node &n = s.graph[i];
    if (!live[i] || n.op != Op::Read)
      continue;
    Grid &g = s.grids[n.index];
    bool offCentre = llvm::any_of(n.offset, [](int o) { return o != 0; });
    if (offCentre && !g.hasBoundary) {
      diags.error(n.loc, "grid '" + g.name +
                             "' is read off its centre but has no boundary "
                             "condition; add one such as boundary " +
                             g.name + " : clamp;");
      g.hasBoundary = true; // Report each grid once.
    }
  }
  for (Grid &g : s.grids) {
    bool fixed = llvm::any_of(g.boundary, [](const AxisBoundary &b) {
      return b.kind == BoundaryKind::Fixed;
    });
    if (fixed && !g.updated)
      diags.error(g.boundaryLoc, "'fixed' boundary needs grid '" + g.name +
                                     "' to be updated; use clamp or "
                                     "dirichlet for a read-only grid");
  }
  if (diags.errorCount() != errorsAtStart)
    return;
  for (Update &u : s.updates) {
    std::vector<bool> reach = s.graph.reachable({u.root});
    for (size_t i = 0; i < reach.size(); ++i) {
      const Node &n = s.graph[i];
      if (!reach[i] || n.op != Op::Read)
        continue;
      for (int a = 0; a < s.dims; ++a) {
        u.reachLo[a] = std::max(u.reachLo[a], -n.offset[a]);
        u.reachHi[a] = std::max(u.reachHi[a], n.offset[a]);
      }
    }
    u.linear = extractLinearForm(s.graph, u.root);
  }
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
