//===- GpuArch.cpp - The GPU architectures stencilc generates for ---------===//

#include "stencilc/Support/GpuArch.h"

#include <cassert>

using namespace stencilc;

namespace {

constexpr int64_t kKiB = 1024;

// CUDA C++ Programming Guide (CUDA 13.0), "Technical Specifications per
// Compute Capability"; the shared memory per SM and the resident blocks
// also as CUDA 13.0's include/cuda_occupancy.h has them
// (cudaOccAlignUpShmemSizeVoltaPlus, cudaOccMaxBlocksPerMultiprocessor).
// A block may opt in to the SM's shared memory less the 1 KB the driver
// reserves per block: 164 - 1 KB on 8.0, 100 - 1 on 8.6, 8.9 and 12.0,
// 228 - 1 on 9.0 and 10.0. 64K registers per SM everywhere; 2048 resident
// threads on the data-centre parts (8.0, 9.0, 10.0), 1536 on 8.6, 8.9 and
// 12.0.
//
// The cost model's default description per architecture (Hardware.cpp):
// the lent H200 as measured, which the model is calibrated on, for sm_90;
// datasheets of one representative part otherwise (A100 80GB PCIe, RTX
// A6000, L40S, B200, GeForce RTX 5090).
const ArchInfo kArchs[] = {
    // arch, name, number, per block, per SM, threads, blocks, registers
    {GpuArch::SM80, "sm_80", 80, 163 * kKiB, 164 * kKiB, 2048, 32, 65536,
     "a100-80"},
    {GpuArch::SM86, "sm_86", 86, 99 * kKiB, 100 * kKiB, 1536, 16, 65536,
     "rtx-a6000"},
    {GpuArch::SM89, "sm_89", 89, 99 * kKiB, 100 * kKiB, 1536, 24, 65536,
     "l40s"},
    {GpuArch::SM90, "sm_90", 90, 227 * kKiB, 228 * kKiB, 2048, 32, 65536,
     "h200-measured"},
    {GpuArch::SM100, "sm_100", 100, 227 * kKiB, 228 * kKiB, 2048, 32, 65536,
     "b200"},
    {GpuArch::SM120, "sm_120", 120, 99 * kKiB, 100 * kKiB, 1536, 24, 65536,
     "rtx-5090"},
};

} // namespace

llvm::ArrayRef<ArchInfo> stencilc::allArchs() { return kArchs; }

const ArchInfo &stencilc::archInfo(GpuArch arch) {
  const ArchInfo &info = kArchs[static_cast<int>(arch)];
  assert(info.arch == arch && "kArchs follows the order of GpuArch");
  return info;
}

llvm::StringRef stencilc::archName(GpuArch arch) { return archInfo(arch).name; }

int stencilc::archNumber(GpuArch arch) { return archInfo(arch).number; }

std::optional<GpuArch> stencilc::parseArch(llvm::StringRef name) {
  for (const ArchInfo &a : kArchs)
    if (a.name == name)
      return a.arch;
  return std::nullopt;
}

std::optional<GpuArch> stencilc::archFromNumber(int number) {
  for (const ArchInfo &a : kArchs)
    if (a.number == number)
      return a.arch;
  return std::nullopt;
}

std::string stencilc::archNames(llvm::StringRef separator,
                                llvm::StringRef last) {
  std::string s;
  for (size_t i = 0; i < std::size(kArchs); ++i) {
    if (i > 0)
      s += (i + 1 == std::size(kArchs) ? last : separator).str();
    s += kArchs[i].name.str();
  }
  return s;
}

std::string stencilc::archNumbers() {
  std::string s;
  for (size_t i = 0; i < std::size(kArchs); ++i) {
    if (i > 0)
      s += i + 1 == std::size(kArchs) ? " or " : ", ";
    s += std::to_string(kArchs[i].number);
  }
  return s;
}

int64_t stencilc::maxSharedBytesPerBlock(GpuArch arch) {
  return archInfo(arch).sharedPerBlock;
}

int64_t stencilc::sharedBytesPerSM(GpuArch arch) {
  return archInfo(arch).sharedPerSM;
}

std::vector<GpuArch> stencilc::archsRunning(GpuArch arch, int64_t sharedBytes) {
  std::vector<GpuArch> out;
  // `arch` itself whatever `sharedBytes` says: its plans fit its limit.
  for (const ArchInfo &a : kArchs)
    if (a.arch == arch ||
        (a.number > archNumber(arch) && a.sharedPerBlock >= sharedBytes))
      out.push_back(a.arch);
  return out;
}
