//===- hopper-maps.cpp - hopper.cuh's host side, as plain host C++ --------===//
//
// Input of test/CodeGen/nvcc/hopper-host.test, compiled by a host C++
// compiler with the CUDA headers (no nvcc): encodeTileMap's checks of its
// arguments, each of which must fail before the driver is reached, with
// the message the test expects, launchCluster's check of the cluster
// shape, and tmaStoreStaysInRow. Needs no GPU.
//
//===----------------------------------------------------------------------===//

#include <stencilc/hopper.cuh>

namespace hw = stencilc::rt::hopper;

namespace {

void kernelStub(int) {}

template <class T, int Rank>
void report(const char *what, const T *base,
            const std::uint64_t (&extent)[Rank],
            const std::uint64_t (&pitch)[Rank - 1],
            const std::uint32_t (&box)[Rank]) {
  CUtensorMap map;
  const hw::MapResult r = hw::encodeTileMap(&map, base, extent, pitch, box);
  std::printf("%s: %d %s\n", what, static_cast<int>(r.status),
              r.message.c_str());
}

} // namespace

int main() {
  // A 16-byte aligned address that no one dereferences: the checks come
  // first.
  const auto *f = reinterpret_cast<const float *>(std::uintptr_t(1) << 20);
  const auto *d = reinterpret_cast<const double *>(std::uintptr_t(1) << 20);
  const auto *h = reinterpret_cast<const __half *>(std::uintptr_t(1) << 20);
  report<float, 2>("misaligned", f + 1, {100, 10}, {100}, {32, 8});
  report<float, 2>("extent", f, {0, 10}, {100}, {32, 8});
  report<double, 3>("huge", d, {8, 8, (1ull << 32) + 1}, {8, 64}, {8, 8, 8});
  report<float, 2>("box", f, {100, 10}, {100}, {32, 257});
  report<__half, 2>("narrow", h, {100, 10}, {104}, {4, 8});
  report<float, 2>("short pitch", f, {100, 10}, {96}, {32, 8});
  report<float, 3>("short plane", f, {100, 10, 5}, {100, 900}, {32, 8, 2});
  report<double, 2>("odd pitch", d, {101, 10}, {101}, {32, 8});
  std::printf("map: %s\n", hw::encodeTileMap<float, 2>(nullptr, f, {100, 10},
                                                       {100}, {32, 8})
                               .message.c_str());
  const cudaError_t e = hw::launchCluster(kernelStub, dim3(6), dim3(32), 0,
                                          nullptr, dim3(4), 1);
  std::printf("cluster 4 of 6: %s\n", cudaGetErrorName(e));
  // Whether a TMA store stays in its row: tma-tile's last f32 box in x
  // (956 + 64 > 1001, 4004 bytes a row) does not, the one before it does,
  // and any box does in a row of whole 16-byte units.
  std::printf("row: %d %d %d %d %d\n",
              hw::tmaStoreStaysInRow<float>(1001, 956, 64),
              hw::tmaStoreStaysInRow<float>(1001, 892, 64),
              hw::tmaStoreStaysInRow<float>(1004, 956, 64),
              hw::tmaStoreStaysInRow<double>(1001, 992, 32),
              hw::tmaStoreStaysInRow<__half>(1008, 960, 64));
  return 0;
}
