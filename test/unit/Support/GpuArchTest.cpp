//===- GpuArchTest.cpp - The architectures --arch accepts -----------------===//

#include "stencilc/Support/GpuArch.h"

#include "gtest/gtest.h"

#include <string>

using namespace stencilc;

namespace {

TEST(GpuArch, NamesAndNumbersRoundTrip) {
  const char *const names[] = {"sm_80", "sm_86",  "sm_89",
                               "sm_90", "sm_100", "sm_120"};
  const int numbers[] = {80, 86, 89, 90, 100, 120};
  ASSERT_EQ(allArchs().size(), std::size(names));
  for (size_t i = 0; i < std::size(names); ++i) {
    SCOPED_TRACE(names[i]);
    std::optional<GpuArch> a = parseArch(names[i]);
    ASSERT_TRUE(a);
    EXPECT_EQ(archName(*a), names[i]);
    EXPECT_EQ(archNumber(*a), numbers[i]);
    EXPECT_EQ(archFromNumber(numbers[i]), a);
    EXPECT_EQ(allArchs()[i].arch, *a);
  }
  // nvcc knows these; stencilc does not target them.
  for (const char *name :
       {"sm_70", "sm_87", "sm_90a", "sm_103", "sm_121", "SM_90", "90", ""})
    EXPECT_FALSE(parseArch(name)) << name;
  EXPECT_FALSE(archFromNumber(75));
  EXPECT_EQ(archNames(), "sm_80, sm_86, sm_89, sm_90, sm_100 or sm_120");
  EXPECT_EQ(archNumbers(), "80, 86, 89, 90, 100 or 120");
}

// The CUDA C++ Programming Guide's figures for each compute capability
// (GpuArch.cpp gives the sources).
TEST(GpuArch, ComputeCapabilityLimits) {
  struct Row {
    GpuArch arch;
    int64_t perBlock, perSM;
    int threads, blocks;
  };
  const Row rows[] = {{GpuArch::SM80, 166912, 167936, 2048, 32},
                      {GpuArch::SM86, 101376, 102400, 1536, 16},
                      {GpuArch::SM89, 101376, 102400, 1536, 24},
                      {GpuArch::SM90, 232448, 233472, 2048, 32},
                      {GpuArch::SM100, 232448, 233472, 2048, 32},
                      {GpuArch::SM120, 101376, 102400, 1536, 24}};
  for (const Row &r : rows) {
    SCOPED_TRACE(archName(r.arch).str());
    const ArchInfo &a = archInfo(r.arch);
    EXPECT_EQ(maxSharedBytesPerBlock(r.arch), r.perBlock);
    EXPECT_EQ(sharedBytesPerSM(r.arch), r.perSM);
    // The driver reserves 1 KB of the SM's shared memory per block.
    EXPECT_EQ(a.sharedPerSM - a.sharedPerBlock, 1024);
    EXPECT_EQ(a.threadsPerSM, r.threads);
    EXPECT_EQ(a.blocksPerSM, r.blocks);
    EXPECT_EQ(a.registersPerSM, 65536);
    // The plans' largest block (1024 threads) fits on every SM.
    EXPECT_GE(a.threadsPerSM, 1024);
  }
}

TEST(GpuArch, CodeRunsOnNewerArchitecturesThatHoldItsSharedMemory) {
  auto names = [](const std::vector<GpuArch> &archs) {
    std::string s;
    for (GpuArch a : archs)
      s += (s.empty() ? "" : " ") + archName(a).str();
    return s;
  };
  // Small blocks: the target and everything newer.
  EXPECT_EQ(names(archsRunning(GpuArch::SM80, 48 * 1024)),
            "sm_80 sm_86 sm_89 sm_90 sm_100 sm_120");
  EXPECT_EQ(names(archsRunning(GpuArch::SM89, 48 * 1024)),
            "sm_89 sm_90 sm_100 sm_120");
  // More than 99 KB: not on sm_86, sm_89 or sm_120.
  EXPECT_EQ(names(archsRunning(GpuArch::SM80, 150000)), "sm_80 sm_90 sm_100");
  EXPECT_EQ(names(archsRunning(GpuArch::SM90, 200000)), "sm_90 sm_100");
  EXPECT_EQ(names(archsRunning(GpuArch::SM100, 101377)), "sm_100");
  // Exactly 99 KB fits.
  EXPECT_EQ(names(archsRunning(GpuArch::SM100, 101376)), "sm_100 sm_120");
  EXPECT_EQ(names(archsRunning(GpuArch::SM120, 1)), "sm_120");
}

} // namespace
