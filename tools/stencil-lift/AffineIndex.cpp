//===- AffineIndex.cpp - Array indices as polynomials ---------------------===//

#include "AffineIndex.h"
#include "SourceText.h"

#include <algorithm>

using namespace stencil_lift;

AffineIndex AffineIndex::constant(int64_t value) {
  AffineIndex a;
  a.add(Monomial{}, value);
  return a;
}

AffineIndex AffineIndex::counter(int axis) {
  AffineIndex a;
  a.add(Monomial{axis, {}}, 1);
  return a;
}

AffineIndex AffineIndex::symbol(const std::string &text) {
  AffineIndex a;
  a.add(Monomial{-1, {text}}, 1);
  return a;
}

void AffineIndex::add(const Monomial &m, int64_t coeff) {
  int64_t &c = termMap[m];
  c += coeff;
  if (c == 0)
    termMap.erase(m);
}

AffineIndex AffineIndex::operator+(const AffineIndex &o) const {
  AffineIndex a = *this;
  for (const auto &[m, c] : o.termMap)
    a.add(m, c);
  return a;
}

AffineIndex AffineIndex::operator-(const AffineIndex &o) const {
  AffineIndex a = *this;
  for (const auto &[m, c] : o.termMap)
    a.add(m, -c);
  return a;
}

std::optional<AffineIndex> AffineIndex::times(const AffineIndex &o) const {
  AffineIndex a;
  for (const auto &[m1, c1] : termMap)
    for (const auto &[m2, c2] : o.termMap) {
      if (m1.counter >= 0 && m2.counter >= 0)
        return std::nullopt;
      Monomial m;
      m.counter = std::max(m1.counter, m2.counter);
      m.symbols = m1.symbols;
      m.symbols.insert(m.symbols.end(), m2.symbols.begin(), m2.symbols.end());
      std::sort(m.symbols.begin(), m.symbols.end());
      a.add(m, c1 * c2);
    }
  return a;
}

std::string AffineIndex::symbolText(const std::vector<std::string> &symbols,
                                    int64_t coeff) {
  std::string out;
  if (coeff != 1 || symbols.empty())
    out = std::to_string(coeff);
  for (const std::string &s : symbols) {
    if (!out.empty())
      out += " * ";
    out += isIdentifier(s) ? s : "(" + s + ")";
  }
  return out;
}
