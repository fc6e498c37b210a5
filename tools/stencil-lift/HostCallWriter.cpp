//===- HostCallWriter.cpp - The C++ that replaces a lifted nest -----------===//
//
// The block declares only names that begin with sc_, which the generated
// code reserves too. Every CUDA call is checked: the loop it replaces could
// not fail, so a failure aborts with the CUDA error's text instead of going
// on with stale host arrays.
//
//===----------------------------------------------------------------------===//

#include "HostCallWriter.h"
#include "SourceText.h"

#include "llvm/ADT/StringExtras.h"

#include <vector>

using namespace stencil_lift;

namespace {

/// Lines at increasing depth, printed at the nest's indentation.
class Lines {
public:
  explicit Lines(unsigned indent) : base(indent, ' ') {}
  void add(const std::string &line) {
    text +=
        (text.empty() ? "" : "\n") + base + std::string(2 * depth, ' ') + line;
  }
  void open(const std::string &line) {
    add(line);
    ++depth;
  }
  void close(const std::string &line = "}") {
    --depth;
    add(line);
  }
  /// Source text that stood at the block's own column, moved in to the
  /// current depth: its first line starts there, and every other line keeps
  /// its indentation relative to the first.
  void verbatim(const std::string &source) {
    bool first = true;
    for (llvm::StringRef line : llvm::split(source, '\n')) {
      if (first)
        add(line.str());
      else
        text += "\n" + (line.trim().empty()
                            ? std::string()
                            : std::string(2 * depth, ' ') + line.rtrim().str());
      first = false;
    }
  }
  /// Goes one level deeper without a line (after `} else {`).
  void indent() { ++depth; }
  /// Ends a block that has no closing line (a loop's single statement).
  void end() { --depth; }
  std::string text;

private:
  std::string base;
  unsigned depth = 0;
};

} // namespace

std::string HostCallWriter::includes(const std::string &header) {
  return "#include \"" + header +
         "\" // stencil-lift: the lifted stencils' run()\n"
         "#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n";
}

std::string HostCallWriter::replacement(const LiftedStencil &s) const {
  unsigned d = s.dims;
  unsigned pad = 3 - d;
  auto padded = [&](const std::string &fill, auto value) {
    std::vector<std::string> v(pad, fill);
    for (unsigned a = 0; a < d; ++a)
      v.push_back(value(a));
    return "{" + llvm::join(v, ", ") + "}";
  };
  // Brace initialization rejects narrowing (from size_t, say): convert.
  auto asLongLong = [](const SymbolicSum &v) {
    std::string t = v.str();
    if (v.asConstant())
      return t;
    return "static_cast<long long>" + (t[0] == '(' ? t : "(" + t + ")");
  };
  std::string n =
      padded("1", [&](unsigned a) { return asLongLong(s.axes[a].extent); });
  std::string o = padded("0", [&](unsigned a) {
    return std::to_string(s.axes[a].computedOffset);
  });
  std::string w = padded(
      "1", [&](unsigned a) { return asLongLong(s.axes[a].hi - s.axes[a].lo); });

  Lines out(s.indent);
  out.add("// stencil-lift: the loop nest that stood here (lines " +
          std::to_string(s.firstLine) + "-" + std::to_string(s.lastLine) +
          ") runs as stencil");
  out.add("// " + s.name + " of " + stName +
          " on the GPU; see docs/stencil-lift.md." +
          (s.target.empty() ? "" : " target(" + s.target + ")"));
  out.open("{");
  out.add("const long long sc_n[3] = " + n + ";");
  out.add("const long long sc_steps = " + s.steps + ";");
  out.add("const long long sc_o[3] = " + o + ";");
  out.add("const long long sc_w[3] = " + w + ";");

  // Per grid: where its host arrays' grid begins, and their pitches.
  struct Host {
    std::string dev, p0, p1;
  };
  std::vector<Host> hosts;
  for (const LiftedArray &a : s.arrays) {
    Host h;
    h.p0 = d == 3 ? a.slicePitch : "0";
    h.p1 = d == 1 ? "sc_n[2]" : a.rowPitch;
    std::vector<std::string> terms;
    for (unsigned ax = 0; ax < d; ++ax) {
      std::optional<int64_t> c = s.axes[ax].origin.asConstant();
      if (c && *c == 0)
        continue;
      std::string pitch = ax + 1 == d   ? ""
                          : ax + 2 == d ? a.rowPitch
                                        : a.slicePitch;
      std::string t = s.axes[ax].origin.str();
      if (!pitch.empty())
        t = c && *c == 1 ? pitch : t + " * " + asOperand(pitch);
      terms.push_back(t);
    }
    std::string offset =
        terms.empty() ? "" : " + (" + llvm::join(terms, " + ") + ")";
    std::string zeros;
    for (unsigned i = 0; i < a.subscripts; ++i)
      zeros += "[0]";
    h.dev = "sc_" + a.name;
    out.add("auto *" + h.dev + "_a = &" + a.cName + zeros + offset + ";");
    if (a.updated())
      out.add("auto *" + h.dev + "_b = &" + a.partner + zeros + offset + ";");
    hosts.push_back(h);
  }

  if (s.checkBands) {
    out.add("// The loop reads the edges it never writes (the band outside "
            "sc_w at sc_o)");
    out.add("// from both buffers in alternate steps; the stencil has one "
            "band. Run it");
    out.add("// where the buffers' bands are equal, and the loop as it was "
            "otherwise.");
    out.add("auto sc_same_band = [&](const auto *sc_x, const auto *sc_y, "
            "long long sc_p0,");
    out.open("                        long long sc_p1) {");
    out.open("for (long long sc_z = 0; sc_z < sc_n[0]; ++sc_z)");
    out.open("for (long long sc_r = 0; sc_r < sc_n[1]; ++sc_r) {");
    out.add("const bool sc_in = sc_z >= sc_o[0] && sc_z < sc_o[0] + sc_w[0] "
            "&&");
    out.add("                   sc_r >= sc_o[1] && sc_r < sc_o[1] + sc_w[1] "
            "&& sc_w[2] > 0;");
    out.open("for (long long sc_c = 0; sc_c < sc_n[2]; ++sc_c) {");
    out.open("if (sc_in && sc_c == sc_o[2]) {");
    out.add("sc_c = sc_o[2] + sc_w[2] - 1;");
    out.add("continue;");
    out.close();
    out.add("const long long sc_k = sc_z * sc_p0 + sc_r * sc_p1 + sc_c;");
    out.open("if (std::memcmp(sc_x + sc_k, sc_y + sc_k, sizeof *sc_x) != 0)");
    out.add("return false;");
    out.end();
    out.close();
    out.close();
    out.end();
    out.add("return true;");
    out.close("};");
    std::vector<std::string> same;
    std::vector<std::string> names;
    for (size_t i = 0; i < s.arrays.size(); ++i)
      if (s.arrays[i].updated()) {
        const Host &h = hosts[i];
        same.push_back("sc_same_band(" + h.dev + "_a, " + h.dev + "_b, " +
                       h.p0 + ", " + h.p1 + ")");
        names.push_back(s.arrays[i].cName + " and " + s.arrays[i].partner);
      }
    out.open("if (sc_steps > 0 && !(" + llvm::join(same, " && ") + ")) {");
    out.add("std::fprintf(stderr, \"stencil-lift: " + s.name +
            ": the edges of " + llvm::join(names, ", ") +
            " differ; running the original loop\\n\");");
    out.verbatim(s.loopText);
    out.close("} else if (sc_steps > 0) {");
    out.indent();
  } else {
    out.open("if (sc_steps > 0) {");
  }
  out.open("auto sc_check = [](cudaError_t sc_e) {");
  out.open("if (sc_e != cudaSuccess) {");
  out.add("std::fprintf(stderr, \"stencil-lift: " + s.name +
          ": %s\\n\", cudaGetErrorString(sc_e));");
  out.add("std::abort();");
  out.close();
  out.close("};");
  out.add("// Host arrays have row pitch sc_p1 and plane pitch sc_p0 "
          "(elements);");
  out.add("// the device grid is dense. In: the whole grid. Out: the points "
          "the");
  out.add("// loop computes, the box sc_w at sc_o.");
  out.add("auto sc_to_device = [&](auto *sc_dev, const auto *sc_host, "
          "long long sc_p0,");
  out.open("                        long long sc_p1) {");
  out.add("const size_t sc_t = sizeof *sc_dev;");
  out.open("for (long long sc_z = 0; sc_z < sc_n[0]; ++sc_z)");
  out.add("sc_check(cudaMemcpy2D(sc_dev + sc_z * sc_n[1] * sc_n[2], "
          "sc_n[2] * sc_t,");
  out.add("                      sc_host + sc_z * sc_p0, sc_p1 * sc_t, "
          "sc_n[2] * sc_t,");
  out.add("                      sc_n[1], cudaMemcpyHostToDevice));");
  out.end();
  out.close("};");
  out.add("auto sc_to_host = [&](auto *sc_host, const auto *sc_dev, "
          "long long sc_p0,");
  out.open("                      long long sc_p1) {");
  out.add("const size_t sc_t = sizeof *sc_dev;");
  out.open("for (long long sc_z = sc_o[0]; sc_z < sc_o[0] + sc_w[0]; "
           "++sc_z)");
  out.add("sc_check(cudaMemcpy2D(");
  out.add("    sc_host + sc_z * sc_p0 + sc_o[1] * sc_p1 + sc_o[2], "
          "sc_p1 * sc_t,");
  out.add("    sc_dev + (sc_z * sc_n[1] + sc_o[1]) * sc_n[2] + sc_o[2],");
  out.add("    sc_n[2] * sc_t, sc_w[2] * sc_t, sc_w[1], "
          "cudaMemcpyDeviceToHost));");
  out.end();
  out.close("};");

  // Per grid: the device array and where its host arrays' grid begins.
  std::vector<std::string> runArgs;
  for (const Host &h : hosts) {
    out.add(s.cType + " *" + h.dev + " = nullptr;");
    out.add("sc_check(cudaMalloc(&" + h.dev +
            ", sc_n[0] * sc_n[1] * sc_n[2] * sizeof(" + s.cType + ")));");
    out.add("sc_to_device(" + h.dev + ", " + h.dev + "_a, " + h.p0 + ", " +
            h.p1 + ");");
    runArgs.push_back(h.dev);
  }
  for (unsigned a = 0; a < d; ++a)
    runArgs.push_back("sc_n[" + std::to_string(pad + a) + "]");
  out.add(s.name + "::Params sc_params;");
  for (const LiftedParam &p : s.params)
    out.add("sc_params." + p.name + " = " + p.value + ";");
  std::string args = llvm::join(runArgs, ", ");
  auto copyOut = [&](const std::string &which) {
    for (const LiftedArray &a : s.arrays) {
      if (!a.updated())
        continue;
      std::string p0 = d == 3 ? a.slicePitch : "0";
      std::string p1 = d == 1 ? "sc_n[2]" : a.rowPitch;
      std::string dev = "sc_" + a.name;
      std::string host =
          which == "prev" ? "sc_steps % 2 != 0 ? " + dev + "_a : " + dev + "_b"
          : which == "last"
              ? "sc_steps % 2 != 0 ? " + dev + "_b : " + dev + "_a"
              : dev + "_" + which;
      out.add("sc_to_host(" + host + ", " + dev + ", " + p0 + ", " + p1 + ");");
    }
  };
  if (s.exchange == Exchange::TwoSweep) {
    out.add("// Each trip of the loop runs two sweeps, one into the second "
            "array and one");
    out.add("// back: the last step ends in the first array, the step "
            "before in the second.");
  }
  if (s.exchange != Exchange::CopyBack) {
    if (s.exchange == Exchange::Swap) {
      out.add("// The loop leaves the last step in the buffer the first "
              "array names");
      out.add("// at the end, and the step before it in the other buffer.");
    }
    out.add("sc_check(" + s.name + "::run(" + args +
            ", sc_steps - 1, sc_params));");
    copyOut("prev");
    out.add("sc_check(" + s.name + "::run(" + args + ", 1, sc_params));");
    copyOut("last");
  } else {
    out.add("// The copy-back loop leaves the last step in both buffers.");
    out.add("sc_check(" + s.name + "::run(" + args +
            ", sc_steps, sc_params));");
    copyOut("a");
    copyOut("b");
  }
  for (const LiftedArray &a : s.arrays)
    out.add("sc_check(cudaFree(sc_" + a.name + "));");
  if (s.exchange == Exchange::Swap) {
    out.open("if (sc_steps % 2 != 0) {");
    for (llvm::StringRef line : llvm::split(s.swapText, '\n'))
      out.add(line.str());
    out.close();
  }
  out.close();
  out.close();
  return out.text;
}
