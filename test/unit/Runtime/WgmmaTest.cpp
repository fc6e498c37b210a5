//===- WgmmaTest.cpp - The host side of stencilc/wgmma.cuh ----------------===//
//
// The descriptor bit packing against values derived by hand from the PTX
// ISA's table (9.7.15.5.1.2.2, "Matrix Descriptor Format"), the K-major
// tile layouts against the ISA's canonical layouts read through a decoded
// descriptor (an address computation written here, independently of the
// header), and the accumulator and sparse-metadata maps against hand-worked
// lanes. Compiled by the host C++ compiler alone: the header needs no CUDA
// there.
//
//===----------------------------------------------------------------------===//

#include "stencilc/wgmma.cuh"

#include "gtest/gtest.h"

#include <cstdint>
#include <set>
#include <utility>

using namespace stencilc::rt::wgmma;

namespace {

// start 0x400 -> 0x40 in bits 13..0; LBO 128 -> 8 in bits 29..16; SBO 1024
// -> 0x40 in bits 45..32; no swizzle, base offset 0.
static_assert(matrixDescriptor(0x400, 128, 1024, Swizzle::None) ==
                  0x0000004000080040ull,
              "the descriptor is a constant expression");

TEST(WgmmaDescriptor, FieldsByHand) {
  EXPECT_EQ(matrixDescriptor(0x400, 128, 1024, Swizzle::None),
            0x0000004000080040ull);
  // 0x12340 >> 4 = 0x1234; LBO 16 -> 1; 128B swizzle: 1 in bits 63..62.
  EXPECT_EQ(matrixDescriptor(0x12340, 16, 1024, Swizzle::B128),
            0x4000004000011234ull);
  // 64B swizzle is 2, 32B 3; base offset 5 in bits 51..49 is 0xA << 48.
  EXPECT_EQ(matrixDescriptor(0, 0, 0, Swizzle::B64, 5), 0x800A000000000000ull);
  EXPECT_EQ(matrixDescriptor(0, 0, 0, Swizzle::B32), 0xC000000000000000ull);
  // Base offset has 3 bits.
  EXPECT_EQ(matrixDescriptor(0, 0, 0, Swizzle::None, 9), 0x0002000000000000ull);
}

TEST(WgmmaDescriptor, EncodeMasksTo18BitsAndDropsTheLow4) {
  // (x & 0x3FFFF) >> 4: the largest value fills exactly 14 bits, and
  // nothing reaches bits 15..14, 31..30 or 48..46.
  EXPECT_EQ(matrixDescriptor(0x3FFF0, 0x3FFF0, 0x3FFF0, Swizzle::None),
            0x00003FFF3FFF3FFFull);
  EXPECT_EQ(matrixDescriptor(0x40010, 0, 0, Swizzle::None), 0x1ull);
  EXPECT_EQ(matrixDescriptor(0x40F, 0x8F, 0x40F, Swizzle::None),
            0x0000004000080040ull);
  EXPECT_EQ(encodeBytes(0x7FFFF), 0x3FFFull);
}

TEST(WgmmaTile, OffsetsByHand) {
  const KMajorTile none{Swizzle::None, 64, 256};
  EXPECT_EQ(none.bytes(), 64u * 256);
  EXPECT_EQ(none.leadingByteOffset(), 128u);
  EXPECT_EQ(none.strideByteOffset(), 2048u);
  // Row 9, K byte 18: core matrix (1, 1) at 128 + 2048, row 1 in it, byte 2.
  EXPECT_EQ(none.offset(9, 18), 128u + 2048 + 16 + 2);

  const KMajorTile sw{Swizzle::B128, 64, 256};
  EXPECT_EQ(sw.leadingByteOffset(), 16u);
  EXPECT_EQ(sw.strideByteOffset(), 1024u);
  // Row 9, K byte 18: chunk 1 ^ (9 mod 8) = 0.
  EXPECT_EQ(sw.offset(9, 18), 9u * 128 + 0 * 16 + 2);
  // Row 3, K byte 200: second 128-byte block (at 64 * 128), chunk 4 ^ 3 = 7.
  EXPECT_EQ(sw.offset(3, 200), 8192u + 3 * 128 + 7 * 16 + 8);
}

TEST(WgmmaTile, SliceDescriptorsByHand) {
  // 128B swizzle, tile at 0x2000, slice at K byte 160: the second block of
  // K (8192 bytes on) plus 32: start 0x4020 -> 0x402.
  const KMajorTile sw{Swizzle::B128, 64, 256};
  EXPECT_EQ(sw.descriptor(0x2000, 160), 0x4000004000010402ull);
  // No swizzle, tile at 0x400, slice at K byte 96: 6 core matrices of 128
  // bytes on, start 0x700 -> 0x70; LBO 128 -> 8; SBO 2048 -> 0x80.
  const KMajorTile none{Swizzle::None, 64, 256};
  EXPECT_EQ(none.descriptor(0x400, 96), 0x0000008000080070ull);
}

/// Byte address of byte kk (0 .. sliceBytes - 1) of the K slice of row r
/// that a wgmma reads through descriptor d, from the ISA's canonical K-major
/// layouts in 16-byte units T: no swizzle ((8,m),(T,2k)):((1T,SBO),(1,LBO)),
/// 128B swizzle ((8,m),(T,2k)):((8T,SBO),(1,T)) with address bits 6..4
/// XORed with bits 9..7.
unsigned canonicalAddress(std::uint64_t d, unsigned r, unsigned kk) {
  const unsigned start = static_cast<unsigned>(d & 0x3FFF) << 4;
  const unsigned lbo = static_cast<unsigned>(d >> 16 & 0x3FFF) << 4;
  const unsigned sbo = static_cast<unsigned>(d >> 32 & 0x3FFF) << 4;
  const unsigned mode = static_cast<unsigned>(d >> 62);
  if (mode == 0)
    return start + r % 8 * 16 + r / 8 * sbo + kk % 16 + kk / 16 * lbo;
  EXPECT_EQ(mode, 1u);
  const unsigned a = start + r % 8 * 128 + r / 8 * sbo + kk;
  return a ^ ((a >> 7 & 7) << 4);
}

TEST(WgmmaTile, DescriptorsReadTheTileAsTheCanonicalLayout) {
  const unsigned base = 0x3000; // 1024-aligned, as 128B swizzle needs
  for (Swizzle s : {Swizzle::None, Swizzle::B128})
    for (unsigned rows : {8u, 64u, 128u})
      for (unsigned kBytes : {128u, 256u, 512u})
        for (unsigned slice : {32u, 64u}) {
          const KMajorTile tile{s, rows, kBytes};
          std::set<unsigned> seen;
          for (unsigned kb = 0; kb < kBytes; kb += slice) {
            const std::uint64_t d = tile.descriptor(base, kb);
            for (unsigned r = 0; r < rows; ++r)
              for (unsigned kk = 0; kk < slice; ++kk) {
                const unsigned at = canonicalAddress(d, r, kk) - base;
                ASSERT_EQ(at, tile.offset(r, kb + kk))
                    << "swizzle " << static_cast<unsigned>(s) << " rows "
                    << rows << " kBytes " << kBytes << " row " << r << " byte "
                    << kb + kk;
                seen.insert(at);
              }
          }
          // Every byte of the tile once.
          ASSERT_EQ(seen.size(), tile.bytes());
          ASSERT_EQ(*seen.rbegin(), tile.bytes() - 1);
        }
}

TEST(WgmmaFragments, AccumulatorByHand) {
  auto at = [](int thread, int i) {
    const Coord c = accumulatorCoord(thread, i);
    return std::make_pair(c.row, c.col);
  };
  EXPECT_EQ(at(0, 0), std::make_pair(0, 0));
  EXPECT_EQ(at(0, 1), std::make_pair(0, 1));
  EXPECT_EQ(at(0, 2), std::make_pair(8, 0));
  EXPECT_EQ(at(0, 4), std::make_pair(0, 8));
  // Lane 5 of warp 0: g = 1, t = 1.
  EXPECT_EQ(at(5, 3), std::make_pair(9, 3));
  // Thread 127: warp 3, g = 7, t = 3; d[7] of N = 16.
  EXPECT_EQ(at(127, 7), std::make_pair(63, 15));
  // Thread 70: warp 2, lane 6: g = 1, t = 2; d[61] of N = 128.
  EXPECT_EQ(at(70, 61), std::make_pair(32 + 1 + 0, 8 * 15 + 4 + 1));

  // Every (row, col) of 64 x 128 exactly once.
  std::set<std::pair<int, int>> seen;
  for (int th = 0; th < 128; ++th)
    for (int i = 0; i < 64; ++i)
      seen.insert(at(th, i));
  EXPECT_EQ(seen.size(), 64u * 128);
}

TEST(WgmmaFragments, SparseMetadataByHand) {
  auto slot = [](int thread, int sel, int j) {
    const MetadataSlot s = metadataSlot(thread, sel, j);
    return std::make_pair(s.row, s.group);
  };
  const auto none = std::make_pair(-1, -1);
  EXPECT_EQ(slot(0, 0, 0), std::make_pair(0, 0));
  EXPECT_EQ(slot(0, 0, 4), std::make_pair(8, 0));
  EXPECT_EQ(slot(1, 0, 5), std::make_pair(8, 5));
  EXPECT_EQ(slot(2, 0, 0), none);
  EXPECT_EQ(slot(3, 0, 7), none);
  EXPECT_EQ(slot(0, 1, 0), none);
  EXPECT_EQ(slot(2, 1, 3), std::make_pair(0, 3));
  EXPECT_EQ(slot(3, 1, 3), std::make_pair(0, 7));
  // Thread 37: warp 1, lane 5: g = 1, t = 1.
  EXPECT_EQ(slot(37, 0, 6), std::make_pair(16 + 1 + 8, 6));

  // Under either selector, every group of the 64 x 32 slice once.
  for (int sel : {0, 1}) {
    std::set<std::pair<int, int>> seen;
    for (int th = 0; th < 128; ++th)
      for (int j = 0; j < 8; ++j)
        if (metadataSlot(th, sel, j).row >= 0)
          seen.insert(slot(th, sel, j));
    EXPECT_EQ(seen.size(), 64u * 8);
  }

  EXPECT_EQ(metadataNibble(0, 1), 0x4u);
  EXPECT_EQ(metadataNibble(1, 3), 0xDu);
  EXPECT_EQ(metadataNibble(2, 3), 0xEu);
}

} // namespace
