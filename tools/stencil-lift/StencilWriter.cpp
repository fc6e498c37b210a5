//===- StencilWriter.cpp - Prints lifted nests as a .st file --------------===//

#include "StencilWriter.h"

using namespace stencil_lift;

std::string
StencilWriter::write(const std::vector<LiftedStencil> &stencils) const {
  std::string out = "// Lifted by stencil-lift from " + source +
                    ". Edit the loops there and lift them again.\n";
  for (const LiftedStencil &s : stencils) {
    out += "\n";
    writeStencil(s, out);
  }
  return out;
}

void StencilWriter::writeStencil(const LiftedStencil &s,
                                 std::string &out) const {
  out += "// From " + s.function + "(), lines " + std::to_string(s.firstLine) +
         "-" + std::to_string(s.lastLine) + "; time steps: " + s.steps + ".\n";
  if (!s.target.empty())
    out += "// target(" + s.target +
           "): recorded only; the generated code runs on CUDA cores.\n";
  out += "stencil " + s.name + " {\n";
  for (const LiftedArray &a : s.arrays)
    out += "  grid " + a.name + " : " + s.elemType + "[" +
           std::to_string(s.dims) + "];\n";
  for (const LiftedParam &p : s.params)
    out +=
        "  param " + p.name + " : " + p.type + " = " + p.defaultValue + ";\n";
  for (const LiftedArray &a : s.arrays) {
    bool same = true;
    for (const BoundarySpec &b : a.boundary)
      same = same && b.str() == a.boundary[0].str();
    out += "  boundary " + a.name + " : ";
    for (size_t i = 0; i < (same ? 1 : a.boundary.size()); ++i)
      out += (i ? ", " : "") + a.boundary[i].str();
    out += ";\n";
  }
  if (s.constantSteps && *s.constantSteps >= 0)
    out += "  hint steps = " + std::to_string(*s.constantSteps) + ";\n";
  for (const LiftedLet &l : s.lets)
    out += "  let " + l.name + " = " + l.expr + ";\n";
  for (const LiftedUpdate &u : s.updates)
    out += "  " + s.arrays[u.array].name + "' = " + u.expr + ";\n";
  out += "}\n";
}
