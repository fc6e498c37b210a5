//===- HardwareTest.cpp - GPU descriptions --------------------------------===//

#include "../Frontend/TestUtil.h"
#include "stencilc/Analysis/Hardware.h"

#include "gtest/gtest.h"

using namespace stencilc;
using namespace stencilc::test;

namespace {

TEST(Hardware, BuiltinsFromDatasheets) {
  for (const char *name :
       {"a100-40", "a100-80", "rtx-a6000", "l40s", "h100-sxm", "h100-pcie",
        "h200", "b200", "rtx-5090"}) {
    SCOPED_TRACE(name);
    std::optional<HardwareDesc> hw = builtinHardware(name);
    ASSERT_TRUE(hw);
    EXPECT_GT(hw->bandwidth, 7e11);
    EXPECT_GT(hw->sms, 80);
    EXPECT_EQ(hw->origin, "datasheet figures, uncalibrated");
    EXPECT_TRUE(parseArch(hw->arch)) << hw->arch;
    // Sparse tensor cores double the dense rate; f64 has none.
    for (int t = 0; t < 3; ++t)
      EXPECT_DOUBLE_EQ(hw->sparseTensorCore[t], 2 * hw->tensorCore[t]);
    EXPECT_EQ(hw->sparseTensorCore[3], 0);
    // f16 and bf16 with f32 accumulators run at one rate, tf32 at half.
    EXPECT_DOUBLE_EQ(hw->tensorCore[0], hw->tensorCore[1]);
    EXPECT_NEAR(hw->tensorCore[2] / hw->tensorCore[0], 0.5, 0.02);
    EXPECT_GT(hw->tensorCore[3], 0);
    EXPECT_GT(hw->cudaCoreF32, hw->cudaCoreF64);
  }
  EXPECT_FALSE(builtinHardware("v100"));
  EXPECT_DOUBLE_EQ(builtinHardware("h200")->bandwidth, 4.8e12);
  // The GeForce part runs f16 with f32 accumulators at the FP32 rate
  // times two, half its f16-accumulator rate; the professional and
  // data-centre parts at four times or more.
  HardwareDesc geforce = *builtinHardware("rtx-5090");
  EXPECT_DOUBLE_EQ(geforce.tensorCore[0], 209.5e12);
  EXPECT_NEAR(geforce.tensorCore[0] / geforce.cudaCoreF32, 2, 0.01);
  HardwareDesc pro = *builtinHardware("rtx-a6000");
  EXPECT_NEAR(pro.tensorCore[0] / pro.cudaCoreF32, 4, 0.01);
}

TEST(Hardware, EachArchitectureHasADefaultDescription) {
  for (const ArchInfo &a : allArchs()) {
    SCOPED_TRACE(a.name.str());
    std::optional<HardwareDesc> hw = builtinHardware(a.gpu);
    ASSERT_TRUE(hw);
    EXPECT_EQ(hw->arch, a.name);
    EXPECT_EQ(defaultHardware(a.arch).name, hw->name);
    // Each SM's shared memory as the compute capability has it.
    EXPECT_DOUBLE_EQ(hw->sharedKiBPerSM * 1024, a.sharedPerSM);
  }
  // sm_90's is the measured H200 the weights were fitted on.
  EXPECT_EQ(defaultHardware(GpuArch::SM90).name, defaultHardware().name);
  EXPECT_EQ(defaultHardware(GpuArch::SM90).origin,
            "measured by stencil-probe; the weights were fitted on it");
}

TEST(Hardware, PrintParseRoundTrip) {
  HardwareDesc hw = *builtinHardware("a100-40");
  hw.weights.byKind = {{"tc.table.half", {0.5, 2, 0}},
                       {"sptc.rolling.f32", {1, 0, 3}},
                       {"tc.table.half.3d", {7, 7, 7}}};
  DiagCapture d;
  std::optional<HardwareDesc> back =
      parseHardware(d.addSource(printHardware(hw)), d.diags);
  ASSERT_TRUE(back) << d.diagText;
  EXPECT_EQ(back->name, hw.name);
  EXPECT_EQ(back->arch, "sm_80");
  EXPECT_DOUBLE_EQ(back->bandwidth, hw.bandwidth);
  EXPECT_DOUBLE_EQ(back->tensorCore[2], hw.tensorCore[2]);
  EXPECT_DOUBLE_EQ(back->sharedBandwidth, hw.sharedBandwidth);
  EXPECT_EQ(back->weights.byKind, hw.weights.byKind);
  // Kinds the calibration never saw: the mean of the unit and width, in
  // every dimension, then of the unit, then ones.
  EXPECT_EQ(back->weights.lookup("tc", "uniform", ElemType::BF16, 2),
            (std::array<double, 3>{3.75, 4.5, 3.5}));
  // A kind's weights for one dimension take precedence.
  EXPECT_EQ(back->weights.lookup("tc", "table", ElemType::F16, 3),
            (std::array<double, 3>{7, 7, 7}));
  EXPECT_EQ(back->weights.lookup("tc", "table", ElemType::F16, 2),
            (std::array<double, 3>{0.5, 2, 0}));
  EXPECT_EQ(back->weights.lookup("sptc", "table", ElemType::F64, 2),
            (std::array<double, 3>{1, 0, 3}));
  EXPECT_EQ(back->weights.lookup("cuda-core", "cuda-core", ElemType::F32, 1),
            (std::array<double, 3>{1, 1, 1}));
}

TEST(Hardware, UnseenDimensionsTakeTheSameKindsOtherDimensions) {
  // Weights fitted per dimension, as the calibration writes them: a kind
  // in a dimension it was not fitted in takes the mean of its other
  // dimensions before that of its unit and width.
  CostWeights w;
  w.byKind = {{"sptc.uniform.half.1d", {2, 2, 2}},
              {"sptc.uniform.half.2d", {4, 4, 4}},
              {"sptc.table.half.2d", {9, 0, 0}},
              {"sptc.table.f32.2d", {0, 9, 0}}};
  EXPECT_EQ(w.lookup("sptc", "uniform", ElemType::F16, 2),
            (std::array<double, 3>{4, 4, 4}));
  EXPECT_EQ(w.lookup("sptc", "uniform", ElemType::BF16, 3),
            (std::array<double, 3>{3, 3, 3}));
  EXPECT_EQ(w.lookup("sptc", "rolling", ElemType::F16, 2),
            (std::array<double, 3>{5, 2, 2}));
  EXPECT_EQ(w.lookup("sptc", "rolling", ElemType::F64, 2),
            (std::array<double, 3>{3.75, 3.75, 1.5}));
  EXPECT_EQ(w.lookup("tc", "rolling", ElemType::F16, 2),
            (std::array<double, 3>{1, 1, 1}));
}

/// Parses `text`; returns the diagnostics ("" when it parsed).
std::string errorsOf(const std::string &text) {
  DiagCapture d;
  std::optional<HardwareDesc> hw = parseHardware(d.addSource(text), d.diags);
  d.diagStream.flush();
  EXPECT_EQ(!hw, !d.diagText.empty());
  return d.diagText;
}

TEST(Hardware, LocatedErrors) {
  std::string good = printHardware(*builtinHardware("h200"));
  EXPECT_EQ(errorsOf(good), "");
  EXPECT_NE(errorsOf(good + "bandwith-gbs = 3\n")
                .find("t.st:" + std::to_string(std::count(good.begin(),
                                                          good.end(), '\n') +
                                               1) +
                      ":1: error: unknown key 'bandwith-gbs' in a hardware "
                      "description; did you mean 'bandwidth-gbs'?"),
            std::string::npos);
  EXPECT_NE(errorsOf(good + "sms = 3\n").find("key 'sms' is already given"),
            std::string::npos);
  std::string noBandwidth = good;
  noBandwidth.replace(noBandwidth.find("bandwidth-gbs"), 1, "#");
  EXPECT_NE(errorsOf(noBandwidth)
                .find("hardware description lacks key 'bandwidth-gbs'"),
            std::string::npos);
  std::string negative = good;
  negative.replace(negative.find("= 4800"), 6, "= -1");
  EXPECT_NE(errorsOf(negative).find(
                "key 'bandwidth-gbs' takes a positive number, not '-1'"),
            std::string::npos);
  EXPECT_NE(errorsOf(good + "weight.tc.fast.half.dram = 1\n")
                .find("unknown weight 'weight.tc.fast.half.dram'"),
            std::string::npos);
  HardwareDesc bare = *builtinHardware("h200");
  bare.weights.byKind.clear();
  EXPECT_NE(errorsOf(printHardware(bare) + "weight.tc.table.half.dram = -2\n")
                .find("takes a non-negative number, not '-2'"),
            std::string::npos);
  EXPECT_NE(errorsOf("name\n").find("expected 'key = value'"),
            std::string::npos);
  std::string arch = good;
  arch.replace(arch.find("sm_90"), 5, "sm_70");
  EXPECT_NE(errorsOf(arch).find("arch 'sm_70' is not supported; expected "
                                "sm_80, sm_86, sm_89, sm_90, sm_100 or "
                                "sm_120"),
            std::string::npos);
  arch.replace(arch.find("sm_70"), 5, "sm_120");
  EXPECT_EQ(errorsOf(arch), "");
  std::string empty = good;
  empty.replace(empty.find("sms = 132"), 9, "sms =");
  EXPECT_NE(errorsOf(empty).find("key 'sms' has no value"), std::string::npos);
}

} // namespace
