//===- Stencil.cpp - The Stencil IR ---------------------------------------===//

#include "stencilc/IR/Stencil.h"
#include "stencilc/IR/Evaluate.h"

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
  }
  return "?";
}

bool Node::sameAs(const Node &o) const {
  if (op != o.op || lhs != o.lhs || rhs != o.rhs || index != o.index ||
      offset != o.offset || exponent != o.exponent)
    return false;
  // Compare constants bitwise so that 0.0 and -0.0 stay distinct.
  return std::memcmp(&value, &o.value, sizeof(double)) == 0;
}

static uint64_t hashNode(const Node &n) {
  uint64_t bits;
  std::memcpy(&bits, &n.value, sizeof(double));
  return llvm::hash_combine(static_cast<int>(n.op), n.lhs, n.rhs, n.index,
                            n.offset[0], n.offset[1], n.offset[2], n.exponent,
                            bits);
}

int ExprGraph::add(Node n) {
  // Fold arithmetic on constants, in double, at compile time.
  if (n.op != Op::Const && n.op != Op::Param && n.op != Op::Read) {
    bool lConst = n.lhs >= 0 && nodes[n.lhs].op == Op::Const;
    bool rConst = n.rhs < 0 || nodes[n.rhs].op == Op::Const;
    if (lConst && rConst) {
      double a = nodes[n.lhs].value;
      double b = n.rhs >= 0 ? nodes[n.rhs].value : 0;
      return constant(applyOp(n.op, a, b, n.exponent), n.loc);
    }
  }
  uint64_t h = hashNode(n);
  std::vector<int> &bucket = buckets[h];
  for (int i : bucket)
    if (nodes[i].sameAs(n))
      return i;
  int id = static_cast<int>(nodes.size());
  bool free = n.op != Op::Read;
  if (n.lhs >= 0)
    free = free && gridFree[n.lhs];
  if (n.rhs >= 0)
    free = free && gridFree[n.rhs];
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
    if (nodes[i].lhs >= 0)
      live[nodes[i].lhs] = true;
    if (nodes[i].rhs >= 0)
      live[nodes[i].rhs] = true;
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
}
