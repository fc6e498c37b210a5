//===- Hardware.cpp - GPU descriptions for the cost model -----------------===//

#include "stencilc/Analysis/Hardware.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <functional>

#include <fmt/format.h>

using namespace stencilc;

namespace {

constexpr double kGiga = 1e9, kTera = 1e12;

/// The weights fitted on the lent H200 (docs/cost-model.md, "Calibration");
/// every built-in description uses them, since they describe stencilc's
/// kernels more than the GPU. Each: DRAM, shared memory, compute.
CostWeights calibratedWeights() {
  CostWeights w;
  w.byKind = {
#include "CalibratedWeights.inc"
  };
  return w;
}

/// A datasheet description: dense tensor-core peaks in TFLOP/s, sparse
/// ones at twice those. `f16` is the rate of f16 and bf16 operands with
/// f32 accumulators, the kernels' kind (the GeForce parts run it at half
/// their f16-accumulator rate).
HardwareDesc datasheet(const char *name, const char *arch, int sms,
                       double clockMHz, double smemKiB, double l2MiB,
                       double bandwidthGBs, double f32, double f64,
                       double f16, double tf32, double f64tc) {
  HardwareDesc hw;
  hw.name = name;
  hw.origin = "datasheet figures, uncalibrated";
  hw.arch = arch;
  hw.sms = sms;
  hw.clockMHz = clockMHz;
  hw.sharedKiBPerSM = smemKiB;
  hw.l2MiB = l2MiB;
  hw.bandwidth = bandwidthGBs * kGiga;
  // 32 banks of 4 bytes per SM per clock.
  hw.sharedBandwidth = sms * 128.0 * clockMHz * 1e6;
  hw.cudaCoreF32 = f32 * kTera;
  hw.cudaCoreF64 = f64 * kTera;
  hw.tensorCore = {f16 * kTera, f16 * kTera, tf32 * kTera, f64tc * kTera};
  hw.sparseTensorCore = {2 * f16 * kTera, 2 * f16 * kTera, 2 * tf32 * kTera,
                         0};
  hw.weights = calibratedWeights();
  return hw;
}

/// One key of the file format: where its value goes.
struct Key {
  std::string name;
  bool required;
  std::function<void(HardwareDesc &, double)> setNumber;
  std::function<void(HardwareDesc &, llvm::StringRef)> setText;
};

std::vector<Key> keys() {
  std::vector<Key> k;
  auto text = [&](const char *name, std::string HardwareDesc::*field) {
    k.push_back({name, true, nullptr,
                 [field](HardwareDesc &hw, llvm::StringRef v) {
                   hw.*field = v.str();
                 }});
  };
  auto number = [&](const char *name, double scale, double HardwareDesc::*f) {
    k.push_back({name, true,
                 [scale, f](HardwareDesc &hw, double v) { hw.*f = v * scale; },
                 nullptr});
  };
  text("name", &HardwareDesc::name);
  text("arch", &HardwareDesc::arch);
  k.push_back({"sms", true,
               [](HardwareDesc &hw, double v) {
                 hw.sms = static_cast<int>(v);
               },
               nullptr});
  number("clock-mhz", 1, &HardwareDesc::clockMHz);
  number("shared-kib-per-sm", 1, &HardwareDesc::sharedKiBPerSM);
  number("l2-mib", 1, &HardwareDesc::l2MiB);
  number("bandwidth-gbs", kGiga, &HardwareDesc::bandwidth);
  number("shared-gbs", kGiga, &HardwareDesc::sharedBandwidth);
  number("cuda-core.f32-tflops", kTera, &HardwareDesc::cudaCoreF32);
  number("cuda-core.f64-tflops", kTera, &HardwareDesc::cudaCoreF64);
  static const char *const types[] = {"f16", "bf16", "tf32", "f64"};
  for (int i = 0; i < 4; ++i) {
    k.push_back({"tc." + std::string(types[i]) + "-tflops",
                 true,
                 [i](HardwareDesc &hw, double v) {
                   hw.tensorCore[i] = v * kTera;
                 },
                 nullptr});
    if (i < 3)
      k.push_back(
          {"sptc." + std::string(types[i]) + "-tflops", true,
           [i](HardwareDesc &hw, double v) {
             hw.sparseTensorCore[i] = v * kTera;
           },
           nullptr});
  }
  return k;
}

/// One `weight.<unit>.<kernel>.<width>.<resource> = w` line. The first one
/// clears the built-in weights: a description's weights are a set.
bool parseWeight(HardwareDesc &hw, llvm::StringRef key, llvm::StringRef value,
                 llvm::SMLoc keyLoc, llvm::SMLoc valueLoc,
                 llvm::StringMap<llvm::SMLoc> &seen, bool &weightsGiven,
                 DiagnosticEngine &diags) {
  llvm::SmallVector<llvm::StringRef, 6> parts;
  key.split(parts, '.');
  static const char *const resources[] = {"dram", "shared", "compute"};
  int resource = -1;
  bool shape = parts.size() == 5 || parts.size() == 6;
  for (int r = 0; r < 3 && shape; ++r)
    if (parts.back() == resources[r])
      resource = r;
  auto oneOf = [&](size_t i, std::initializer_list<llvm::StringRef> words) {
    return llvm::is_contained(words, parts[i]);
  };
  bool known = shape && resource >= 0 &&
               oneOf(1, {"cuda-core", "tc", "sptc"}) &&
               oneOf(2, {"cuda-core", "stream", "plane", "star", "rolling",
                         "uniform", "table"}) &&
               oneOf(3, {"half", "f32", "f64"}) &&
               (parts.size() == 5 || oneOf(4, {"1d", "2d", "3d"}));
  if (!known) {
    diags.error(keyLoc,
                "unknown weight '" + key +
                    "'; expected weight.<cuda-core|tc|sptc>."
                    "<cuda-core|stream|plane|star|rolling|uniform|table>."
                    "<half|f32|f64>"
                    "[.<1d|2d|3d>].<dram|shared|compute>");
    return false;
  }
  auto [prev, inserted] = seen.try_emplace(key, keyLoc);
  if (!inserted) {
    diags.error(keyLoc, "key '" + key + "' is already given");
    diags.note(prev->second, "previous value is here");
    return false;
  }
  double v = 0;
  if (value.empty() || value.getAsDouble(v) || !std::isfinite(v) || v < 0) {
    diags.error(valueLoc, "key '" + key +
                              "' takes a non-negative number, not '" + value +
                              "'");
    return false;
  }
  if (!weightsGiven)
    hw.weights.byKind.clear();
  weightsGiven = true;
  std::string kind = (parts[1] + "." + parts[2] + "." + parts[3]).str();
  if (parts.size() == 6)
    kind += "." + parts[4].str();
  auto [it, fresh] = hw.weights.byKind.try_emplace(
      kind, std::array<double, 3>{0, 0, 0});
  it->second[resource] = v;
  return true;
}

const std::vector<Key> &allKeys() {
  static const std::vector<Key> k = keys();
  return k;
}

} // namespace

std::optional<HardwareDesc> stencilc::builtinHardware(llvm::StringRef name) {
  // NVIDIA datasheets; TFLOP/s without sparsity. The A100 80GB entry is
  // the PCIe card of Gu et al.'s evaluation (1.935 TB/s). None but
  // h200-measured was calibrated: the weights were fitted on the lent H200
  // (docs/cost-model.md).
  if (name == "a100-40")
    return datasheet("NVIDIA A100 40GB SXM (datasheet)", "sm_80", 108, 1410,
                     164, 40, 1555, 19.5, 9.7, 312, 156, 19.5);
  if (name == "a100-80")
    return datasheet("NVIDIA A100 80GB PCIe (datasheet)", "sm_80", 108, 1410,
                     164, 80, 1935, 19.5, 9.7, 312, 156, 19.5);
  if (name == "h100-sxm")
    return datasheet("NVIDIA H100 SXM5 (datasheet)", "sm_90", 132, 1980, 228,
                     50, 3350, 67, 34, 989.4, 494.7, 66.9);
  if (name == "h100-pcie")
    return datasheet("NVIDIA H100 PCIe (datasheet)", "sm_90", 114, 1755, 228,
                     50, 2000, 51.2, 25.6, 756, 378, 51.2);
  if (name == "h200")
    return datasheet("NVIDIA H200 SXM (datasheet)", "sm_90", 132, 1980, 228,
                     50, 4800, 67, 34, 989.4, 494.7, 66.9);
  // One part per newer architecture, each the default of its --arch
  // (GpuArch.cpp). Shared memory per SM as the CUDA C++ Programming Guide
  // gives it for the compute capability. Where a datasheet gives no FP64
  // tensor-core rate (the GA102, AD102 and GB202 parts, whose FP64 runs at
  // 1/64 of FP32), tc.f64 is taken as the FP64 rate.
  if (name == "rtx-a6000")
    // sm_86. NVIDIA RTX A6000 datasheet and Ampere GA102 whitepaper: 84
    // SMs at 1800 MHz boost, 768 GB/s GDDR6, 6 MB L2, FP32 38.7 TFLOP/s
    // (FP64 1/64: 0.6), tensor TF32 77.4 | 154.8 sparse, FP16 and BF16
    // with FP32 accumulate 154.8 | 309.7 (the professional parts run
    // f32 accumulation at the full rate).
    return datasheet("NVIDIA RTX A6000 (datasheet)", "sm_86", 84, 1800, 100, 6,
                     768, 38.7, 0.605, 154.8, 77.4, 0.605);
  if (name == "l40s")
    // sm_89. NVIDIA L40S datasheet: 18176 CUDA cores (142 SMs) at 2520
    // MHz boost, 864 GB/s GDDR6, 96 MB L2, FP32 91.6 TFLOP/s (FP64 1/64:
    // 1.43), tensor TF32 183 | 366 sparse, FP16 and BF16 362.05 | 733.
    return datasheet("NVIDIA L40S (datasheet)", "sm_89", 142, 2520, 100, 96,
                     864, 91.6, 1.431, 362.05, 183, 1.431);
  if (name == "b200")
    // sm_100. NVIDIA HGX B200 datasheet, per GPU (1000 W): 8 TB/s HBM3e,
    // FP32 80 TFLOP/s, FP64 and FP64 tensor 40, tensor TF32 1100 | 2200
    // sparse, FP16 and BF16 2250 | 4500; 148 SMs, 126 MB L2 (Chips and
    // Cheese, "Nvidia's B200"); the clock, 2111 MHz, is what 80 TFLOP/s
    // of FP32 on 148 SMs of 128 lanes implies.
    return datasheet("NVIDIA B200 (datasheet)", "sm_100", 148, 2111, 228, 126,
                     8000, 80, 40, 2250, 1100, 40);
  if (name == "rtx-5090")
    // sm_120. NVIDIA GeForce RTX 5090 (Blackwell GB202 whitepaper): 170
    // SMs at 2407 MHz boost, 1792 GB/s GDDR7, 96 MB L2, FP32 104.8
    // TFLOP/s (FP64 1/64: 1.64), tensor TF32 104.8 | 209.5 sparse, FP16
    // and BF16 with FP32 accumulate 209.5 | 419 (half the 419 | 838 of
    // FP16 accumulate).
    return datasheet("NVIDIA GeForce RTX 5090 (datasheet)", "sm_120", 170, 2407,
                     100, 96, 1792, 104.8, 1.637, 209.5, 104.8, 1.637);
  if (name == "h200-measured") {
    // stencil-probe on the lent H200, 2026-11-22
    // (docs/results/calibration/h200-probe.hw): the ceilings the weights
    // were fitted against, so the default predictions are calibrated ones.
    HardwareDesc hw = datasheet("NVIDIA H200 (measured by stencil-probe)",
                                "sm_90", 132, 1980, 228, 60, 4267.112,
                                65.346, 33.436, 627.155, 313.116, 66.814);
    hw.origin = "measured by stencil-probe; the weights were fitted on it";
    hw.sharedBandwidth = 33257.027e9;
    hw.tensorCore[1] = 626.205 * kTera;
    hw.sparseTensorCore = {870.464 * kTera, 965.655 * kTera,
                           482.903 * kTera, 0};
    return hw;
  }
  return std::nullopt;
}

llvm::StringRef stencilc::builtinHardwareNames() {
  return "a100-40, a100-80, rtx-a6000, l40s, h100-sxm, h100-pcie, h200, "
         "h200-measured, b200, rtx-5090";
}

HardwareDesc stencilc::defaultHardware() {
  return *builtinHardware("h200-measured");
}

HardwareDesc stencilc::defaultHardware(GpuArch arch) {
  return *builtinHardware(archInfo(arch).gpu);
}

std::optional<HardwareDesc> stencilc::parseHardware(unsigned bufferId,
                                                    DiagnosticEngine &diags) {
  const llvm::MemoryBuffer *buf = diags.getSourceMgr().getMemoryBuffer(bufferId);
  llvm::StringRef text = buf->getBuffer();
  HardwareDesc hw = defaultHardware();
  hw.name.clear();
  hw.origin = "a description file";
  llvm::StringMap<llvm::SMLoc> seen;
  bool ok = true, weightsGiven = false;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == llvm::StringRef::npos)
      end = text.size();
    llvm::StringRef line = text.slice(pos, end);
    size_t lineStart = pos;
    pos = end + 1;
    llvm::StringRef body = line.split('#').first.rtrim();
    llvm::StringRef trimmed = body.ltrim();
    if (trimmed.empty())
      continue;
    auto locOf = [&](llvm::StringRef s) {
      return llvm::SMLoc::getFromPointer(text.data() + lineStart +
                                         (s.data() - line.data()));
    };
    size_t eq = trimmed.find('=');
    if (eq == llvm::StringRef::npos) {
      diags.error(locOf(trimmed), "expected 'key = value' in a hardware "
                                  "description");
      ok = false;
      continue;
    }
    llvm::StringRef key = trimmed.take_front(eq).rtrim();
    llvm::StringRef value = trimmed.drop_front(eq + 1).trim();
    if (key.startswith("weight.")) {
      if (!parseWeight(hw, key, value, locOf(key),
                       locOf(value.empty() ? key : value), seen, weightsGiven,
                       diags))
        ok = false;
      continue;
    }
    const Key *k = nullptr;
    for (const Key &cand : allKeys())
      if (key == cand.name)
        k = &cand;
    if (!k) {
      llvm::SmallVector<llvm::StringRef, 32> names;
      for (const Key &cand : allKeys())
        names.push_back(cand.name);
      llvm::StringRef best = closestMatch(key, names);
      diags.error(locOf(key), "unknown key '" + key +
                                  "' in a hardware description" +
                                  (best.empty() ? std::string()
                                                : "; did you mean '" +
                                                      best.str() + "'?"));
      ok = false;
      continue;
    }
    auto [prev, inserted] = seen.try_emplace(key, locOf(key));
    if (!inserted) {
      diags.error(locOf(key), "key '" + key + "' is already given");
      diags.note(prev->second, "previous value is here");
      ok = false;
      continue;
    }
    llvm::SMLoc valueLoc = locOf(value.empty() ? key : value);
    if (value.empty()) {
      diags.error(valueLoc, "key '" + key + "' has no value");
      ok = false;
      continue;
    }
    if (k->setText) {
      if (key == "arch" && !parseArch(value)) {
        diags.error(valueLoc, "arch '" + value +
                                  "' is not supported; expected " +
                                  archNames());
        ok = false;
        continue;
      }
      k->setText(hw, value);
      continue;
    }
    double v = 0;
    if (value.getAsDouble(v) || !std::isfinite(v) || v <= 0) {
      diags.error(valueLoc, "key '" + key + "' takes a positive number, not '" +
                                value + "'");
      ok = false;
      continue;
    }
    k->setNumber(hw, v);
  }
  if (!ok)
    return std::nullopt;
  for (const Key &k : allKeys())
    if (k.required && !seen.count(k.name)) {
      diags.error(llvm::SMLoc::getFromPointer(text.data()),
                  "hardware description lacks key '" + k.name +
                      "'");
      ok = false;
    }
  if (!ok)
    return std::nullopt;
  return hw;
}

std::string stencilc::printHardware(const HardwareDesc &hw) {
  std::string s = "# stencilc hardware description\n";
  s += fmt::format("name = {}\narch = {}\nsms = {}\nclock-mhz = {}\n"
                   "shared-kib-per-sm = {}\nl2-mib = {}\n"
                   "bandwidth-gbs = {}\nshared-gbs = {}\n"
                   "cuda-core.f32-tflops = {}\ncuda-core.f64-tflops = {}\n",
                   hw.name, hw.arch, hw.sms, hw.clockMHz, hw.sharedKiBPerSM,
                   hw.l2MiB, hw.bandwidth / kGiga, hw.sharedBandwidth / kGiga,
                   hw.cudaCoreF32 / kTera, hw.cudaCoreF64 / kTera);
  static const char *const types[] = {"f16", "bf16", "tf32", "f64"};
  for (int i = 0; i < 4; ++i)
    s += fmt::format("tc.{}-tflops = {}\n", types[i],
                     hw.tensorCore[i] / kTera);
  for (int i = 0; i < 3; ++i)
    s += fmt::format("sptc.{}-tflops = {}\n", types[i],
                     hw.sparseTensorCore[i] / kTera);
  static const char *const resources[] = {"dram", "shared", "compute"};
  for (const auto &[kind, w] : hw.weights.byKind)
    for (int r = 0; r < 3; ++r)
      s += fmt::format("weight.{}.{} = {}\n", kind, resources[r], w[r]);
  return s;
}

std::string CostWeights::key(llvm::StringRef unit, llvm::StringRef kernel,
                             ElemType type) {
  llvm::StringRef width = type == ElemType::F64   ? "f64"
                          : type == ElemType::F32 ? "f32"
                                                  : "half";
  return (unit + "." + kernel + "." + width).str();
}

std::array<double, 3> CostWeights::lookup(llvm::StringRef unit,
                                          llvm::StringRef kernel,
                                          ElemType type, int dims) const {
  std::string exact = key(unit, kernel, type);
  auto it = byKind.find(exact + "." + std::to_string(dims) + "d");
  if (it == byKind.end())
    it = byKind.find(exact);
  if (it != byKind.end())
    return it->second;
  // The mean over the kinds that share, whatever their dimension: the
  // unit, kernel and width; then the unit and width; then the unit.
  llvm::StringRef widthName = llvm::StringRef(exact).rsplit('.').second;
  for (int pass = 0; pass < 3; ++pass) {
    std::array<double, 3> sum{0, 0, 0};
    int n = 0;
    for (const auto &[k, w] : byKind) {
      // unit.kernel.width[.Nd]
      llvm::SmallVector<llvm::StringRef, 4> parts;
      llvm::StringRef(k).split(parts, '.');
      if (parts.size() < 3 || parts[0] != unit ||
          (pass == 0 && parts[1] != kernel) ||
          (pass <= 1 && parts[2] != widthName))
        continue;
      for (int r = 0; r < 3; ++r)
        sum[r] += w[r];
      ++n;
    }
    if (n > 0) {
      for (double &v : sum)
        v /= n;
      return sum;
    }
  }
  return {1, 1, 1};
}
