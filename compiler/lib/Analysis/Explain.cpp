//===- Explain.cpp - The cost model's decision, for people ----------------===//

#include "stencilc/Analysis/Explain.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

using namespace stencilc;

namespace {

std::string scenarioText(const CostCandidate &c) {
  return c.scenario ? std::to_string(c.scenario) : "-";
}

/// The fragment shape; "4xm16n8k8.tf32" for split-TF32's four MMAs per
/// product (two where A is exact in tf32).
std::string shapeText(const CostCandidate &c) {
  if (c.strategy.target == Target::CudaCore)
    return "-";
  if (c.splitMmas)
    return std::to_string(c.splitMmas) + "x" + c.shape.name();
  return c.shape.name();
}

/// What the tensor cores do with f32 grids under the policy.
std::string policyText(const Stencil &s, Precision p) {
  std::string name = precisionName(p).str();
  if (s.elemType != ElemType::F32)
    return name;
  return name + (p == Precision::TF32 ? " (f32 tensor cores in tf32)"
                                      : " (f32 tensor cores in split-TF32)");
}

std::string escapeXml(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

} // namespace

void stencilc::printExplanation(const Stencil &s,
                                const std::vector<CostCandidate> &cands,
                                const CostModelOptions &o,
                                llvm::raw_ostream &os) {
  const HardwareDesc &hw = o.hw;
  os << fmt::format("stencil {}: {}-D {}, {} taps, {} flops and {} bytes "
                    "per point and step\n",
                    s.name, s.dims, elemTypeName(s.elemType).str(),
                    cands.empty() ? 0 : cands.front().K,
                    cands.empty() ? 0 : cands.front().flopsPerStep,
                    cands.empty() ? 0 : cands.front().metrics.M);
  os << fmt::format("  GPU: {} ({:.0f} GB/s, CUDA cores {:.1f} TFLOP/s in "
                    "{}); precision policy: {}\n",
                    hw.name, hw.bandwidth / 1e9,
                    hw.cudaCorePeak(s.elemType) / 1e12,
                    s.elemType == ElemType::F64 ? "f64" : "f32",
                    policyText(s, o.precision));
  if (!hw.origin.empty())
    os << "  hardware description: " << hw.origin << "\n";
  os << fmt::format("  {:<30} {:<18} {:>9} {:>13} {:>9} {:>3} {:>8} {:>6} "
                    "{:>6}  {}\n",
                    "candidate", "fragment", "predicted", "bound", "roofline",
                    "sc.", "I", "alpha", "S", "precision");
  for (const CostCandidate &c : cands) {
    os << fmt::format("  {:<30} {:<18} {:>9.1f} {:>13} {:>9.1f} {:>3} "
                      "{:>8.2f} {:>6.3f} {:>6.4f}  {}{}\n",
                      c.strategy.label(), shapeText(c), c.predicted, c.bound,
                      c.roofline, scenarioText(c), c.metrics.I, c.alpha, c.S,
                      c.allowed ? "allowed" : "not allowed",
                      c.chosen ? "  <- chosen" : "");
  }
  for (const CostCandidate &c : cands)
    if (!c.allowed) {
      os << "  not allowed: " << c.reason << "\n";
      break;
    }
  os << "  predicted and roofline: GStencils/s (points x steps / s); bound: "
        "the model's binding resource; sc.: Gu et al.'s scenario 1-4; I: "
        "flop/byte\n";
}

std::string stencilc::explanationTsv(const Stencil &s,
                                     const std::vector<CostCandidate> &cands) {
  std::string out = "stencil\tcandidate\tfragment\tpredicted\tbound\t"
                    "roofline\tscenario\tI\talpha\tS\tallowed\tchosen\t"
                    "t_dram\tt_shared\tt_compute\tw_dram\tw_shared\tw_compute\t"
                    "kernel\tt_split\n";
  for (const CostCandidate &c : cands)
    out += fmt::format("{}\t{}\t{}\t{:.4g}\t{}\t{:.4g}\t{}\t{:.4g}\t{:.4g}\t"
                       "{:.4g}\t{}\t{}\t{:.6g}\t{:.6g}\t{:.6g}\t{:.4g}\t{:.4g}\t"
                       "{:.4g}\t{}\t{:.6g}\n",
                       s.name, c.strategy.label(), shapeText(c), c.predicted,
                       c.bound, c.roofline, scenarioText(c), c.metrics.I,
                       c.alpha, c.S, c.allowed ? "yes" : "no",
                       c.chosen ? "yes" : "no", c.tGlobal, c.tShared,
                       c.tCompute, c.weights[0], c.weights[1],
                       c.weights[2], c.kernel, c.tSplit);
  return out;
}

std::string stencilc::renderRooflineSvg(const Stencil &s,
                                        const std::vector<CostCandidate> &cands,
                                        const CostModelOptions &o) {
  const HardwareDesc &hw = o.hw;
  const double width = 760, height = 520, left = 80, right = 200, top = 50,
               bottom = 60;
  double plotW = width - left - right, plotH = height - top - bottom;
  // Axes: intensity 0.1 .. 10^4 flop/byte, rate 10^10 .. 10^16 flop/s,
  // widened to hold every marker.
  double xmin = -1, xmax = 4, ymin = 10, ymax = 16;
  auto rate = [](const CostCandidate &c) {
    return c.predicted * 1e9 * c.metrics.C / c.strategy.steps;
  };
  for (const CostCandidate &c : cands) {
    xmin = std::min(xmin, std::floor(std::log10(c.metrics.I)));
    xmax = std::max(xmax, std::ceil(std::log10(c.metrics.I)));
    ymin = std::min(ymin, std::floor(std::log10(rate(c))));
  }
  auto px = [&](double i) {
    return left + (std::log10(i) - xmin) / (xmax - xmin) * plotW;
  };
  auto py = [&](double f) {
    return top + (ymax - std::log10(f)) / (ymax - ymin) * plotH;
  };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
      "height=\"{1}\" viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n",
      width, height);
  svg += fmt::format("<text x=\"{}\" y=\"24\" font-size=\"15\">Roofline of "
                     "{} on {} ({})</text>\n",
                     left, escapeXml(s.name), escapeXml(hw.name),
                     elemTypeName(s.elemType).str());
  // Grid and axis labels, one per decade.
  for (double e = xmin; e <= xmax; ++e) {
    double x = px(std::pow(10, e));
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" "
                       "y2=\"{2}\" stroke=\"#ddd\"/>\n<text x=\"{0:.1f}\" "
                       "y=\"{3}\" text-anchor=\"middle\">1e{4}</text>\n",
                       x, top, top + plotH, top + plotH + 18, e);
  }
  for (double e = ymin; e <= ymax; ++e) {
    double y = py(std::pow(10, e));
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" "
                       "y2=\"{1:.1f}\" stroke=\"#ddd\"/>\n<text x=\"{3}\" "
                       "y=\"{4:.1f}\" text-anchor=\"end\">1e{5}</text>\n",
                       left, y, left + plotW, left - 6, y + 4, e);
  }
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
      "stroke=\"black\"/>\n<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">"
      "arithmetic intensity I (flop/byte)</text>\n<text x=\"18\" y=\"{}\" "
      "text-anchor=\"middle\" transform=\"rotate(-90 18 {})\">performance "
      "(flop/s)</text>\n",
      left, top, plotW, plotH, left + plotW / 2, height - 16,
      top + plotH / 2, top + plotH / 2);
  // The roofs: DRAM slope up to each unit's peak.
  struct Roof {
    std::string name;
    double peak;
    const char *color;
  };
  std::vector<Roof> roofs{{"CUDA cores", hw.cudaCorePeak(s.elemType),
                           "#1f77b4"}};
  {
    // Split-TF32 spends three tf32 MMAs on a product: a third of the roof.
    int type = static_cast<int>(mmaTypeFor(s.elemType));
    bool split = splitsOperands(s.elemType, o.precision);
    double share = split ? 1.0 / 3 : 1.0;
    std::string suffix = split ? " (split-TF32)" : "";
    roofs.push_back(
        {"tensor cores" + suffix, hw.tensorCore[type] * share, "#2ca02c"});
    if (hw.sparseTensorCore[type] > 0)
      roofs.push_back({"sparse tensor cores" + suffix,
                       hw.sparseTensorCore[type] * share, "#d62728"});
  }
  double iLo = std::pow(10, xmin), iHi = std::pow(10, xmax);
  for (const Roof &r : roofs) {
    double ridge = r.peak / hw.bandwidth;
    double i0 = std::max(iLo, std::pow(10, ymin) / hw.bandwidth);
    svg += fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
        "points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"/>\n",
        r.color, px(i0), py(hw.bandwidth * i0), px(ridge), py(r.peak),
        px(iHi), py(r.peak));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"{}\">{} "
                       "{:.1f} TFLOP/s</text>\n",
                       left + plotW + 6, py(r.peak) + 4, r.color, r.name,
                       r.peak / 1e12);
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#555\" "
                     "transform=\"rotate(-{:.1f} {:.1f} {:.1f})\">DRAM "
                     "{:.0f} GB/s</text>\n",
                     px(iLo) + 8, py(hw.bandwidth * iLo) - 8,
                     std::atan2(py(hw.bandwidth * iLo) -
                                    py(hw.bandwidth * iLo * 10),
                                px(iLo * 10) - px(iLo)) *
                         180 / M_PI,
                     px(iLo) + 8, py(hw.bandwidth * iLo) - 8,
                     hw.bandwidth / 1e9);
  // The candidates, labelled in a legend on the right.
  double legendY = top + plotH - 14.0 * cands.size();
  for (size_t i = 0; i < cands.size(); ++i) {
    const CostCandidate &c = cands[i];
    const char *color = c.strategy.target == Target::CudaCore ? "#1f77b4"
                        : c.strategy.target == Target::TensorCore
                            ? "#2ca02c"
                            : "#d62728";
    std::string fill = c.chosen ? color : c.allowed ? "white" : "none";
    double x = px(c.metrics.I), y = py(rate(c));
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" "
                       "fill=\"{}\" stroke=\"{}\" stroke-width=\"1.5\"{}>"
                       "<title>{}: {:.1f} GStencils/s predicted, I = {:.2f}"
                       "</title></circle>\n",
                       x, y, c.chosen ? 7 : 5, fill, color,
                       c.allowed ? "" : " stroke-dasharray=\"2,2\"",
                       escapeXml(c.strategy.label()), c.predicted,
                       c.metrics.I);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\">"
                       "{}</text>\n",
                       x + 8, y + 3, i + 1);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" "
                       "fill=\"{}\">{}. {} {:.0f}{}</text>\n",
                       left + plotW + 6, legendY + 14.0 * i, color, i + 1,
                       escapeXml(c.strategy.label()), c.predicted,
                       c.chosen      ? " (chosen)"
                       : c.allowed   ? ""
                                     : " (not allowed)");
  }
  svg += "</svg>\n";
  return svg;
}
