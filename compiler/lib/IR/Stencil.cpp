//===- Stencil.cpp - The Stencil IR ---------------------------------------===//

#include "stencilc/IR/Stencil.h"
#include "stencilc/IR/Evaluate.h"
#include "stencilc/IR/LinearForm.h"
#include "stencilc/IR/Stages.h"

#include "llvm/ADT/Hashing.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace stencilc;

llvm::StringRef stencilc::boundaryKindName(BoundaryKind k) {
  switch (k) {
  case BoundaryKind::Dirichlet:
    return "dirichlet";
  case BoundaryKind::Periodic:
    return "periodic";
  case BoundaryKind::Clamp:
    return "clamp";
  case BoundaryKind::Fixed:
    return "fixed";
  }
  return "?";
}

llvm::StringRef stencilc::opName(Op op) {
  switch (op) {
  case Op::Const:
    return "const";
  case Op::Param:
    return "param";
  case Op::Read:
    return "read";
  case Op::Neg:
    return "neg";
  case Op::Add:
    return "add";
  case Op::Sub:
    return "sub";
  case Op::Mul:
    return "mul";
  case Op::Div:
    return "div";
  case Op::Min:
    return "min";
  case Op::Max:
    return "max";
  case Op::Sqrt:
    return "sqrt";
  case Op::Abs:
    return "abs";
  case Op::Pow:
    return "pow";
  case Op::Exp:
    return "exp";
  case Op::Log:
    return "log";
  case Op::Sin:
    return "sin";
  case Op::Cos:
    return "cos";
  case Op::Tanh:
    return "tanh";
  case Op::Floor:
    return "floor";
  case Op::PowF:
    return "powf";
  case Op::Fma:
    return "fma";
  case Op::Lt:
    return "lt";
  case Op::Le:
    return "le";
  case Op::Gt:
    return "gt";
  case Op::Ge:
    return "ge";
  case Op::Eq:
    return "eq";
  case Op::Ne:
    return "ne";
  case Op::And:
    return "and";
  case Op::Or:
    return "or";
  case Op::Not:
    return "not";
  case Op::Select:
    return "select";
  case Op::Step:
    return "step";
  case Op::Coord:
    return "coord";
  case Op::Round:
    return "round";
  case Op::StageRead:
    return "stage";
  case Op::NewRead:
    return "new";
  }
  return "?";
}

bool Node::sameAs(const Node &o) const {
  if (op != o.op || lhs != o.lhs || rhs != o.rhs || third != o.third ||
      index != o.index || offset != o.offset || exponent != o.exponent ||
      logical != o.logical)
    return false;
  // Compare constants bitwise so that 0.0 and -0.0 stay distinct.
  return std::memcmp(&value, &o.value, sizeof(double)) == 0;
}

static uint64_t hashNode(const Node &n) {
  uint64_t bits;
  std::memcpy(&bits, &n.value, sizeof(double));
  return llvm::hash_combine(static_cast<int>(n.op), n.lhs, n.rhs, n.third,
                            n.index, n.offset[0], n.offset[1], n.offset[2],
                            n.exponent, bits, n.logical);
}

/// Whether `op` has operands that constant folding may combine: not the
/// leaves, and not Round, which stands for the GPU's storage of a value
/// the float64 reference keeps unrounded.
static bool foldable(Op op) {
  return op != Op::Const && op != Op::Param && op != Op::Read &&
         op != Op::StageRead && op != Op::NewRead && op != Op::Step &&
         op != Op::Coord && op != Op::Round;
}

int ExprGraph::add(Node n) {
  // Fold arithmetic on constants, in double, at compile time.
  if (foldable(n.op)) {
    auto isConst = [&](int i) { return i < 0 || nodes[i].op == Op::Const; };
    double a = n.lhs >= 0 ? nodes[n.lhs].value : 0;
    if (isConst(n.lhs) && isConst(n.rhs) && isConst(n.third)) {
      double b = n.rhs >= 0 ? nodes[n.rhs].value : 0;
      double c = n.third >= 0 ? nodes[n.third].value : 0;
      double v = applyOp(n, a, b, c);
      if (isLogicalOp(n.op))
        return condition(v != 0, n.loc);
      return constant(v, n.loc);
    }
    // A choice whose condition is known, and a condition that one known
    // operand decides.
    if (n.op == Op::Select && nodes[n.lhs].op == Op::Const)
      return a != 0 ? n.rhs : n.third;
    if ((n.op == Op::And || n.op == Op::Or) &&
        (nodes[n.lhs].op == Op::Const || nodes[n.rhs].op == Op::Const)) {
      bool leftKnown = nodes[n.lhs].op == Op::Const;
      int known = leftKnown ? n.lhs : n.rhs;
      int other = leftKnown ? n.rhs : n.lhs;
      bool k = nodes[known].value != 0;
      if (n.op == Op::And)
        return k ? other : condition(false, n.loc);
      return k ? condition(true, n.loc) : other;
    }
  }
  uint64_t h = hashNode(n);
  std::vector<int> &bucket = buckets[h];
  for (int i : bucket)
    if (nodes[i].sameAs(n))
      return i;
  int id = static_cast<int>(nodes.size());
  bool free = n.op != Op::Read && n.op != Op::StageRead &&
              n.op != Op::NewRead && n.op != Op::Step && n.op != Op::Coord;
  for (int operand : {n.lhs, n.rhs, n.third})
    if (operand >= 0)
      free = free && gridFree[operand];
  nodes.push_back(n);
  gridFree.push_back(free);
  bucket.push_back(id);
  return id;
}

int ExprGraph::constant(double v, llvm::SMLoc loc) {
  Node n;
  n.op = Op::Const;
  n.value = v;
  n.loc = loc;
  return add(n);
}

int ExprGraph::condition(bool v, llvm::SMLoc loc) {
  Node n;
  n.op = Op::Const;
  n.value = v ? 1.0 : 0.0;
  n.logical = true;
  n.loc = loc;
  return add(n);
}

int ExprGraph::ternary(Op op, int a, int b, int c, llvm::SMLoc loc) {
  Node n;
  n.op = op;
  n.lhs = a;
  n.rhs = b;
  n.third = c;
  n.loc = loc;
  return add(n);
}

int ExprGraph::leaf(Op op, int index, const Offset &off, llvm::SMLoc loc) {
  Node n;
  n.op = op;
  n.index = index;
  n.offset = off;
  n.loc = loc;
  return add(n);
}

int ExprGraph::read(int grid, const Offset &off, llvm::SMLoc loc) {
  Node n;
  n.op = Op::Read;
  n.index = grid;
  n.offset = off;
  n.loc = loc;
  return add(n);
}

int ExprGraph::param(int index, llvm::SMLoc loc) {
  Node n;
  n.op = Op::Param;
  n.index = index;
  n.loc = loc;
  return add(n);
}

int ExprGraph::unary(Op op, int operand, llvm::SMLoc loc, int exponent) {
  Node n;
  n.op = op;
  n.lhs = operand;
  n.exponent = exponent;
  n.loc = loc;
  return add(n);
}

int ExprGraph::binary(Op op, int lhs, int rhs, llvm::SMLoc loc) {
  Node n;
  n.op = op;
  n.lhs = lhs;
  n.rhs = rhs;
  n.loc = loc;
  return add(n);
}

int ExprGraph::balancedSum(llvm::ArrayRef<int> terms, llvm::SMLoc loc) {
  if (terms.size() == 1)
    return terms.front();
  size_t mid = terms.size() / 2;
  // The left half first, in its own statement: the order of a call's
  // arguments is unspecified, and the nodes' order shows in the generated
  // code (GCC and Clang builds of stencilc wrote different files).
  int left = balancedSum(terms.take_front(mid), loc);
  int right = balancedSum(terms.drop_front(mid), loc);
  return binary(Op::Add, left, right, loc);
}

std::vector<bool> ExprGraph::reachable(const std::vector<int> &roots) const {
  std::vector<bool> live(nodes.size(), false);
  for (int r : roots)
    if (r >= 0)
      live[r] = true;
  for (int i = static_cast<int>(nodes.size()) - 1; i >= 0; --i) {
    if (!live[i])
      continue;
    for (int operand : {nodes[i].lhs, nodes[i].rhs, nodes[i].third})
      if (operand >= 0)
        live[operand] = true;
  }
  return live;
}

bool ExprGraph::isGridFree(int i) const { return gridFree[i]; }

int Stencil::findGrid(llvm::StringRef n) const {
  for (size_t i = 0; i < grids.size(); ++i)
    if (grids[i].name == n)
      return static_cast<int>(i);
  return -1;
}

const Update *Stencil::updateOf(int grid) const {
  for (const Update &u : updates)
    if (u.grid == grid)
      return &u;
  return nullptr;
}

std::vector<int> Stencil::roots() const {
  std::vector<int> r;
  for (const Update &u : updates)
    r.push_back(u.root);
  return r;
}

std::vector<Offset> Stencil::updatedReads() const {
  std::vector<bool> live = graph.reachable(roots());
  std::vector<Offset> reads;
  for (size_t i = 0; i < graph.size(); ++i) {
    const Node &n = graph[i];
    if (live[i] && n.op == Op::Read && grids[n.index].updated)
      reads.push_back(n.offset);
  }
  return reads;
}

int Stencil::updatedRadius(int axis) const {
  int r = 0;
  for (const Offset &o : updatedReads())
    r = std::max(r, std::abs(o[axis]));
  return r;
}

int Stencil::maxUpdatedRadius() const {
  int r = 0;
  for (int a = 0; a < dims; ++a)
    r = std::max(r, updatedRadius(a));
  return r;
}

int Stencil::radius() const {
  std::vector<bool> live = graph.reachable(roots());
  int r = 0;
  for (size_t i = 0; i < graph.size(); ++i)
    if (live[i] && graph[i].op == Op::Read)
      for (int a = 0; a < dims; ++a)
        r = std::max(r, std::abs(graph[i].offset[a]));
  return r;
}

std::vector<int> Stencil::writtenRoots() const {
  std::vector<int> r;
  for (const Stage &st : stages)
    r.push_back(st.root);
  for (const Update &u : updates)
    r.push_back(u.written);
  return r;
}

bool Stencil::hasStages() const {
  for (const Update &u : updates)
    if (u.written != u.root)
      return true;
  return false;
}

bool Stencil::usesStepOrPoint() const {
  std::vector<bool> live = graph.reachable(roots());
  for (size_t i = 0; i < graph.size(); ++i)
    if (live[i] && (graph[i].op == Op::Step || graph[i].op == Op::Coord))
      return true;
  return false;
}

bool Stencil::mixedTypes() const {
  for (const Grid &g : grids)
    if (g.type != grids.front().type)
      return true;
  return false;
}

void Stencil::updateTypes() {
  // The first updated grid's type names the stencil's type.
  for (const Grid &g : grids)
    if (g.updated) {
      elemType = g.type;
      break;
    }
  std::vector<bool> read(grids.size(), false);
  std::vector<int> all = roots();
  for (int r : writtenRoots())
    all.push_back(r);
  std::vector<bool> live = graph.reachable(all);
  for (size_t i = 0; i < graph.size(); ++i)
    if (live[i] && (graph[i].op == Op::Read || graph[i].op == Op::NewRead))
      read[graph[i].index] = true;
  compType = ElemType::F32;
  for (size_t g = 0; g < grids.size(); ++g)
    if ((read[g] || grids[g].updated) &&
        computeType(grids[g].type) == ElemType::F64)
      compType = ElemType::F64;
}

bool Stencil::isLinear() const {
  for (const Update &u : updates)
    if (!u.linear)
      return false;
  return true;
}

void Stencil::setElemType(ElemType t) {
  elemType = t;
  for (Grid &g : grids)
    g.type = t;
  updateTypes();
  // Which new values inlining rounds depends on the types.
  if (hasStages()) {
    inlineStages(*this);
    for (Update &u : updates) {
      u.linear = extractLinearForm(graph, u.root);
      u.linearPart = extractLinearPart(graph, u.root);
    }
  }
}
