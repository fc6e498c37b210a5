//===- wgmma.cuh - Hopper warpgroup tensor-core operations -----*- CUDA -*-===//
//
// The wgmma building blocks of the Hopper tensor-core kernels (issue 25):
// the shared-memory matrix descriptor and the K-major operand layouts it
// describes, dense wgmma.mma_async (f16, bf16 and tf32 into f32) and 2:4
// sparse wgmma.mma_async.sp (f16 and bf16 into f32) with both operands in
// shared memory, the fence, commit and wait that order them, and where each
// accumulator register of the 64 x N result lies. The authority is the PTX
// ISA, section 9.7.15; docs/architecture.md ("Hopper wgmma") says which of
// these facts a GPU has confirmed.
//
// Where it compiles:
// - Host code (nvcc's host pass, or a plain C++ compiler, which includes the
//   CPU emulation, STENCILC_EMULATE) gets the layout, descriptor and
//   fragment helpers only. They are constexpr and need no CUDA header. The
//   emulation has no wgmma: the wrappers do not exist there.
// - nvcc's device pass for sm_90a (__CUDA_ARCH_FEAT_SM90_ALL, which
//   -gencode arch=compute_90a,code=sm_90a defines) gets everything.
// - nvcc's device pass for any other target stops at an #error, because
//   wgmma exists only on sm_90a and a silent fallback would compute
//   nothing. A fat binary whose host code launches the wgmma kernel only on
//   sm_90a defines STENCILC_WGMMA_TRAP_ELSEWHERE: the wrappers then compile
//   to __trap() on the other targets.
// STENCILC_WGMMA_AVAILABLE is 1 exactly in the sm_90a device pass.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_WGMMA_CUH
#define STENCILC_WGMMA_CUH

#include <cstdint>

#if defined(__CUDACC__)
#define STENCILC_WG_HD __host__ __device__ constexpr inline
#else
#define STENCILC_WG_HD constexpr inline
#endif

namespace stencilc::rt::wgmma {

//===----------------------------------------------------------------------===//
// The matrix descriptor (PTX ISA 9.7.15.5.1.2.2, "Matrix Descriptor Format")
//===----------------------------------------------------------------------===//

/// The swizzle modes, as bits 63..62 of the descriptor encode them.
enum class Swizzle : unsigned { None = 0, B128 = 1, B64 = 2, B32 = 3 };

/// matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4: a shared-memory byte
/// address or offset, in 16-byte units, in 14 bits.
STENCILC_WG_HD std::uint64_t encodeBytes(unsigned bytes) {
  return (bytes & 0x3FFFFu) >> 4;
}

/// The 64-bit descriptor of one operand of one wgmma:
///
///   bits 13..0   encode(start): the operand's first byte, as an address in
///                the shared-memory window (__cvta_generic_to_shared)
///   bits 29..16  encode(leading-dimension byte offset, LBO)
///   bits 45..32  encode(stride-dimension byte offset, SBO)
///   bits 51..49  base offset: 0 when the swizzle pattern starts on its
///                boundary (1024 bytes for 128B); unused without swizzle
///   bits 63..62  swizzle mode
///
/// Bits 15..14, 31..30, 48..46 and 61..52 are zero. The start, LBO and SBO
/// must be multiples of 16 bytes. KMajorTile says what LBO and SBO are.
STENCILC_WG_HD std::uint64_t matrixDescriptor(unsigned start, unsigned lbo,
                                              unsigned sbo, Swizzle swizzle,
                                              unsigned baseOffset = 0) {
  return encodeBytes(start) | encodeBytes(lbo) << 16 | encodeBytes(sbo) << 32 |
         static_cast<std::uint64_t>(baseOffset & 7u) << 49 |
         static_cast<std::uint64_t>(swizzle) << 62;
}

//===----------------------------------------------------------------------===//
// K-major operand tiles (PTX ISA 9.7.15.5.1.2, "Shared Memory Matrix
// Layout")
//===----------------------------------------------------------------------===//

/// An operand tile in shared memory, K-major: A as M rows of K elements (A
/// row-major), B as N rows of K elements (B column-major, in the ISA's
/// words), which is what imm-trans-a = imm-trans-b = 0 read. `rows` is M or
/// N, a multiple of 8; `kBytes` is the bytes of K in a row (K times the
/// element size; for a sparse A, of the compressed K / 2 elements).
///
/// The unit is the core matrix: 8 rows of 16 bytes, 128 bytes in a row.
///
/// Swizzle::None ("interleave"): every core matrix is 128 contiguous bytes,
/// row r of it at byte 16 r. Core matrix (i, j), rows 8i..8i+7 and K bytes
/// 16j..16j+15, starts at byte 128 j + 8 kBytes i: the core matrices of 8
/// rows lie side by side along K, and each further 8 rows follow. So
///   LBO = 128        (the next core matrix along K),
///   SBO = 8 kBytes   (the next 8 rows, along M or N).
///
/// Swizzle::B128: kBytes is a multiple of 128. The tile is kBytes / 128
/// blocks of 128 bytes of K, one after another, each `rows` rows of 128
/// bytes (row r at byte 128 r); within each 1024-byte atom of 8 such rows,
/// 16-byte chunk c of row r is stored at chunk c ^ (r mod 8), which is the
/// hardware's XOR of address bits 6..4 with bits 9..7. The tile must start
/// on a 1024-byte boundary (base offset 0). So
///   LBO unused by K-major swizzled layouts (encoded as 1, as the ISA
///       assumes),
///   SBO = 1024       (the next 8 rows).
///
/// One wgmma reads a slice of K of 32 bytes (f16/bf16 k16, tf32 k8, the
/// compressed A of sparse k32) or 64 bytes (B of sparse k32) starting at K
/// byte kb, a multiple of the slice; its descriptor starts at sliceOffset(kb)
/// and the hardware steps from there by LBO and SBO, swizzling absolute
/// addresses, which is why a slice may start inside a swizzle atom.
struct KMajorTile {
  Swizzle swizzle;
  unsigned rows;
  unsigned kBytes;

  /// Bytes of shared memory the tile takes.
  STENCILC_WG_HD unsigned bytes() const { return rows * kBytes; }

  /// LBO and SBO of the descriptors of this tile.
  STENCILC_WG_HD unsigned leadingByteOffset() const {
    return swizzle == Swizzle::None ? 128u : 16u;
  }
  STENCILC_WG_HD unsigned strideByteOffset() const {
    return swizzle == Swizzle::None ? 8 * kBytes : 1024u;
  }

  /// The byte offset from the tile's start of byte `kb` of row `row`.
  STENCILC_WG_HD unsigned offset(unsigned row, unsigned kb) const {
    if (swizzle == Swizzle::None)
      return kb / 16 * 128 + row / 8 * (8 * kBytes) + row % 8 * 16 + kb % 16;
    const unsigned chunk = (kb % 128 / 16) ^ (row % 8);
    return kb / 128 * (rows * 128) + row * 128 + chunk * 16 + kb % 16;
  }

  /// The offset of the descriptor start of the K slice that begins at
  /// byte kb (row 0, before any swizzle).
  STENCILC_WG_HD unsigned sliceOffset(unsigned kb) const {
    if (swizzle == Swizzle::None)
      return kb / 16 * 128;
    return kb / 128 * (rows * 128) + kb % 128;
  }

  /// The descriptor of the K slice at byte kb of this tile, which starts at
  /// `tileAddress` in the shared-memory window.
  STENCILC_WG_HD std::uint64_t descriptor(unsigned tileAddress,
                                          unsigned kb) const {
    return matrixDescriptor(tileAddress + sliceOffset(kb), leadingByteOffset(),
                            strideByteOffset(), swizzle);
  }
};

//===----------------------------------------------------------------------===//
// Register fragments
//===----------------------------------------------------------------------===//

/// A position in the 64 x N result.
struct Coord {
  int row;
  int col;
};

/// Where f32 accumulator register d[i] (0 <= i < N / 2) of thread `thread`
/// (0..127, its rank in the warpgroup) lies in the 64 x N D tile (PTX ISA
/// 9.7.15.5.1.1.1, "WGMMA .m64nNk16 register fragment layout for
/// accumulator matrix D"; k8 and sparse k32 share it). Warp w = thread / 32
/// holds rows 16 w .. 16 w + 15; within it, as in an m16n8 mma, lane
/// 4g + t holds rows 16 w + g and 16 w + g + 8, columns 2t and 2t + 1 of
/// every 8 columns:
///
///   row = 16 w + g + 8 ((i >> 1) & 1),   col = 8 (i >> 2) + 2t + (i & 1).
STENCILC_WG_HD Coord accumulatorCoord(int thread, int i) {
  const int warp = thread >> 5, g = (thread & 31) >> 2, t = thread & 3;
  return {16 * warp + g + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * t + (i & 1)};
}

/// The metadata nibble of a 2:4 group whose nonzeros are at positions
/// p0 < p1 (0..3): p0 | p1 << 2 (docs/PTX.md). The compressed row stores the
/// value at p0 first.
STENCILC_WG_HD unsigned metadataNibble(unsigned p0, unsigned p1) {
  return p0 | p1 << 2;
}

/// A 2:4 group of the 64 x 32 A slice of one sparse m64nNk32 f16/bf16
/// wgmma: a row and one of the 8 groups of 4 columns. Row -1: no group.
struct MetadataSlot {
  int row;
  int group;
};

/// Which group nibble j (bits 4j + 3 .. 4j) of thread `thread`'s metadata
/// register describes under sparsity selector `sel` (0 or 1), in a sparse
/// m64nNk32 f16/bf16 wgmma. Each warp describes its own 16 rows as mma.sp
/// m16n8k32 does (docs/PTX.md, checked on a device for mma.sp): lane
/// 4g + 2 sel holds groups 0-3 and lane 4g + 2 sel + 1 groups 4-7 of rows
/// 16 w + g (nibbles 0-3) and 16 w + g + 8 (nibbles 4-7); the other two
/// lanes of the quad are not read. That wgmma.sp reads it so is the
/// reading of PTX ISA 9.7.15.6 that test/gpu/hopper/wgmma-gemm.cu checks.
STENCILC_WG_HD MetadataSlot metadataSlot(int thread, int sel, int j) {
  const int warp = thread >> 5, g = (thread & 31) >> 2, t = thread & 3;
  if (t >> 1 != sel)
    return {-1, -1};
  return {16 * warp + g + 8 * (j >> 2), (j & 3) + 4 * (t & 1)};
}

/// Whether wgmma has an m64nN shape with this N for the wrappers below (the
/// ISA has every multiple of 8 up to 256; these are the ones instantiated).
STENCILC_WG_HD bool supportedN(int n) {
  return n == 8 || n == 16 || n == 32 || n == 64 || n == 128 || n == 256;
}

} // namespace stencilc::rt::wgmma

//===----------------------------------------------------------------------===//
// Device wrappers: nvcc only
//===----------------------------------------------------------------------===//

#if defined(__CUDACC__)

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL) &&           \
    !defined(STENCILC_WGMMA_TRAP_ELSEWHERE)
// clang-format off
#error "stencilc/wgmma.cuh: wgmma needs the sm_90a target (nvcc -gencode arch=compute_90a,code=sm_90a); define STENCILC_WGMMA_TRAP_ELSEWHERE to compile its wrappers to __trap() for other targets"
// clang-format on
#endif

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define STENCILC_WGMMA_AVAILABLE 1
#else
#define STENCILC_WGMMA_AVAILABLE 0
#endif

#define STENCILC_DEV __device__ __forceinline__

// The bodies: the instruction on sm_90a, a trap on other device targets
// (STENCILC_WGMMA_TRAP_ELSEWHERE), nothing in the host pass.
#if STENCILC_WGMMA_AVAILABLE
#define STENCILC_WG_ASM(...) asm volatile(__VA_ARGS__)
#elif defined(__CUDA_ARCH__)
#define STENCILC_WG_ASM(...) __trap()
#else
#define STENCILC_WG_ASM(...) ((void)0)
#endif

// Operand placeholders %0 .. %127 of the accumulators, eight at a time.
#define STENCILC_WG_P8_0 "%0, %1, %2, %3, %4, %5, %6, %7"
#define STENCILC_WG_P8_1 "%8, %9, %10, %11, %12, %13, %14, %15"
#define STENCILC_WG_P8_2 "%16, %17, %18, %19, %20, %21, %22, %23"
#define STENCILC_WG_P8_3 "%24, %25, %26, %27, %28, %29, %30, %31"
#define STENCILC_WG_P8_4 "%32, %33, %34, %35, %36, %37, %38, %39"
#define STENCILC_WG_P8_5 "%40, %41, %42, %43, %44, %45, %46, %47"
#define STENCILC_WG_P8_6 "%48, %49, %50, %51, %52, %53, %54, %55"
#define STENCILC_WG_P8_7 "%56, %57, %58, %59, %60, %61, %62, %63"
#define STENCILC_WG_P8_8 "%64, %65, %66, %67, %68, %69, %70, %71"
#define STENCILC_WG_P8_9 "%72, %73, %74, %75, %76, %77, %78, %79"
#define STENCILC_WG_P8_10 "%80, %81, %82, %83, %84, %85, %86, %87"
#define STENCILC_WG_P8_11 "%88, %89, %90, %91, %92, %93, %94, %95"
#define STENCILC_WG_P8_12 "%96, %97, %98, %99, %100, %101, %102, %103"
#define STENCILC_WG_P8_13 "%104, %105, %106, %107, %108, %109, %110, %111"
#define STENCILC_WG_P8_14 "%112, %113, %114, %115, %116, %117, %118, %119"
#define STENCILC_WG_P8_15 "%120, %121, %122, %123, %124, %125, %126, %127"
#define STENCILC_WG_P4 "%0, %1, %2, %3"
#define STENCILC_WG_P8 STENCILC_WG_P8_0
#define STENCILC_WG_P16 STENCILC_WG_P8_0 ", " STENCILC_WG_P8_1
#define STENCILC_WG_P32                                                        \
  STENCILC_WG_P16 ", " STENCILC_WG_P8_2 ", " STENCILC_WG_P8_3
#define STENCILC_WG_P64                                                        \
  STENCILC_WG_P32 ", " STENCILC_WG_P8_4 ", " STENCILC_WG_P8_5                  \
                  ", " STENCILC_WG_P8_6 ", " STENCILC_WG_P8_7
#define STENCILC_WG_P128                                                       \
  STENCILC_WG_P64 ", " STENCILC_WG_P8_8 ", " STENCILC_WG_P8_9                  \
                  ", " STENCILC_WG_P8_10 ", " STENCILC_WG_P8_11                \
                  ", " STENCILC_WG_P8_12 ", " STENCILC_WG_P8_13                \
                  ", " STENCILC_WG_P8_14 ", " STENCILC_WG_P8_15

// The accumulator operands d[o] .. d[o + R - 1].
#define STENCILC_WG_D4(o)                                                      \
  "+f"(d[(o)]), "+f"(d[(o) + 1]), "+f"(d[(o) + 2]), "+f"(d[(o) + 3])
#define STENCILC_WG_D8(o) STENCILC_WG_D4(o), STENCILC_WG_D4((o) + 4)
#define STENCILC_WG_D16(o) STENCILC_WG_D8(o), STENCILC_WG_D8((o) + 8)
#define STENCILC_WG_D32(o) STENCILC_WG_D16(o), STENCILC_WG_D16((o) + 16)
#define STENCILC_WG_D64(o) STENCILC_WG_D32(o), STENCILC_WG_D32((o) + 32)
#define STENCILC_WG_D128(o) STENCILC_WG_D64(o), STENCILC_WG_D64((o) + 64)

// One dense shape: accumulators %0 .. %R-1, then the descriptors of A and B
// and the accumulate flag at the placeholders IA, IB, IS. scale-d is a
// predicate: false computes D = A B, true D = A B + D. imm-scale-a and
// imm-scale-b are 1 (no negation); TAIL adds imm-trans-a and imm-trans-b
// (0: K-major) where the type has them.
// clang-format off
#define STENCILC_WG_DENSE(NN, R, KTYPES, TAIL, IA, IB, IS)                     \
  if constexpr (N == NN) {                                                     \
    STENCILC_WG_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, " IS ", 0;\n"            \
                    "wgmma.mma_async.sync.aligned.m64n" #NN KTYPES             \
                    " {" STENCILC_WG_P##R "}, "                                \
                    IA ", " IB ", p, 1, 1" TAIL ";\n}\n"                       \
                    : STENCILC_WG_D##R(0)                                      \
                    : "l"(a), "l"(b), "r"(static_cast<unsigned>(accumulate))   \
                    : "memory");                                               \
  }
// clang-format on

// Every dense shape of one type.
#define STENCILC_WG_DENSE_ALL(KTYPES, TAIL)                                    \
  STENCILC_WG_DENSE(8, 4, KTYPES, TAIL, "%4", "%5", "%6")                      \
  STENCILC_WG_DENSE(16, 8, KTYPES, TAIL, "%8", "%9", "%10")                    \
  STENCILC_WG_DENSE(32, 16, KTYPES, TAIL, "%16", "%17", "%18")                 \
  STENCILC_WG_DENSE(64, 32, KTYPES, TAIL, "%32", "%33", "%34")                 \
  STENCILC_WG_DENSE(128, 64, KTYPES, TAIL, "%64", "%65", "%66")                \
  STENCILC_WG_DENSE(256, 128, KTYPES, TAIL, "%128", "%129", "%130")

// One sparse shape: as dense, with the metadata register at IE and the
// selector, an immediate, at ISEL, before the accumulate flag at IS.
// clang-format off
#define STENCILC_WG_SPARSE(NN, R, KTYPES, IA, IB, IE, ISEL, IS)                \
  if constexpr (N == NN) {                                                     \
    STENCILC_WG_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, " IS ", 0;\n"            \
                    "wgmma.mma_async.sp.sync.aligned.m64n" #NN KTYPES          \
                    " {" STENCILC_WG_P##R "}, "                                \
                    IA ", " IB ", " IE ", " ISEL ", p, 1, 1, 0, 0;\n}\n"       \
                    : STENCILC_WG_D##R(0)                                      \
                    : "l"(a), "l"(b), "r"(e), "n"(Sel),                        \
                      "r"(static_cast<unsigned>(accumulate))                   \
                    : "memory");                                               \
  }
// clang-format on

#define STENCILC_WG_SPARSE_ALL(KTYPES)                                         \
  STENCILC_WG_SPARSE(8, 4, KTYPES, "%4", "%5", "%6", "%7", "%8")               \
  STENCILC_WG_SPARSE(16, 8, KTYPES, "%8", "%9", "%10", "%11", "%12")           \
  STENCILC_WG_SPARSE(32, 16, KTYPES, "%16", "%17", "%18", "%19", "%20")        \
  STENCILC_WG_SPARSE(64, 32, KTYPES, "%32", "%33", "%34", "%35", "%36")        \
  STENCILC_WG_SPARSE(128, 64, KTYPES, "%64", "%65", "%66", "%67", "%68")       \
  STENCILC_WG_SPARSE(256, 128, KTYPES, "%128", "%129", "%130", "%131", "%132")

namespace stencilc::rt::wgmma {

/// p's address in the shared-memory window, as descriptors take it.
STENCILC_DEV unsigned sharedAddress(const void *p) {
#if defined(__CUDA_ARCH__)
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
#else
  (void)p;
  return 0;
#endif
}

/// The descriptor of the K slice at byte kb of `tile`, stored at `base`.
STENCILC_DEV std::uint64_t descriptor(const void *base, const KMajorTile &tile,
                                      unsigned kb) {
  return tile.descriptor(sharedAddress(base), kb);
}

/// fence.proxy.async.shared::cta: makes this thread's ordinary stores to
/// shared memory visible to the async proxy, through which wgmma reads its
/// operands. Each writing thread issues it before the barrier that precedes
/// the wgmma.
STENCILC_DEV void fenceSharedWrites() {
  STENCILC_WG_ASM("fence.proxy.async.shared::cta;" ::: "memory");
}

/// wgmma.fence.sync.aligned: orders this warpgroup's earlier register and
/// shared-memory accesses before the wgmma that follow. Needed before the
/// first wgmma and after any other access to its accumulators; consecutive
/// wgmma of one shape into the same accumulators need none between them.
STENCILC_DEV void fence() {
  STENCILC_WG_ASM("wgmma.fence.sync.aligned;" ::: "memory");
}

/// wgmma.commit_group.sync.aligned: closes the group of the wgmma issued
/// since the last commit.
STENCILC_DEV void commit() {
  STENCILC_WG_ASM("wgmma.commit_group.sync.aligned;" ::: "memory");
}

/// wgmma.wait_group.sync.aligned Pending: waits until at most `Pending`
/// committed groups are unfinished; the accumulators of the older ones may
/// then be read.
template <int Pending> STENCILC_DEV void wait() {
  static_assert(Pending >= 0 && Pending <= 7, "wait_group takes 0..7");
  STENCILC_WG_ASM("wgmma.wait_group.sync.aligned %0;" ::"n"(Pending)
                  : "memory");
}

/// Keeps the compiler from moving accesses to the accumulators across this
/// point: wgmma writes them asynchronously, behind its back. Call it on the
/// accumulators before fence() and after wait().
template <int R> STENCILC_DEV void fenceOperands(float (&d)[R]) {
#if STENCILC_WGMMA_AVAILABLE
#pragma unroll
  for (int i = 0; i < R; ++i)
    asm volatile("" : "+f"(d[i])::"memory");
#else
  (void)d;
#endif
}

/// Dense D (64 x N, f32) = A (64 x 16) B (16 x N) [+ D], f16 operands, both
/// from shared memory through descriptors of K-major tiles: a and b are
/// descriptors of 32-byte K slices. `accumulate` false ignores D's old
/// value. All 128 threads of the warpgroup call it with the same arguments
/// but for d, each thread's accumulators in the accumulatorCoord layout.
template <int N>
STENCILC_DEV void mma_f16(float (&d)[N / 2], std::uint64_t a, std::uint64_t b,
                          bool accumulate) {
  static_assert(supportedN(N), "wgmma: N is one of 8, 16, 32, 64, 128, 256");
  STENCILC_WG_DENSE_ALL("k16.f32.f16.f16", ", 0, 0")
}

/// As mma_f16, with bf16 operands.
template <int N>
STENCILC_DEV void mma_bf16(float (&d)[N / 2], std::uint64_t a, std::uint64_t b,
                           bool accumulate) {
  static_assert(supportedN(N), "wgmma: N is one of 8, 16, 32, 64, 128, 256");
  STENCILC_WG_DENSE_ALL("k16.f32.bf16.bf16", ", 0, 0")
}

/// Dense D (64 x N) = A (64 x 8) B (8 x N) [+ D] in tf32 (operands stored
/// as 32-bit floats, K slices of 32 bytes). tf32 is K-major only: the
/// instruction has no transpose operands.
template <int N>
STENCILC_DEV void mma_tf32(float (&d)[N / 2], std::uint64_t a, std::uint64_t b,
                           bool accumulate) {
  static_assert(supportedN(N), "wgmma: N is one of 8, 16, 32, 64, 128, 256");
  STENCILC_WG_DENSE_ALL("k8.f32.tf32.tf32", "")
}

/// Sparse D (64 x N) = A (64 x 32, 2:4 along K) B (32 x N) [+ D], f16
/// (needs sm_90a like every wgmma). `a` describes the compressed A: 64 rows
/// of 16 elements, a 32-byte slice of a K-major tile; `b` a 64-byte slice
/// of B. `e` is this thread's metadata register and Sel (0 or 1) the
/// sparsity selector, which says which threads' registers are read
/// (metadataSlot).
template <int N, int Sel>
STENCILC_DEV void mma_sp_f16(float (&d)[N / 2], std::uint64_t a,
                             std::uint64_t b, unsigned e, bool accumulate) {
  static_assert(supportedN(N), "wgmma: N is one of 8, 16, 32, 64, 128, 256");
  static_assert(Sel == 0 || Sel == 1, "f16 sparsity selector is 0 or 1");
  STENCILC_WG_SPARSE_ALL("k32.f32.f16.f16")
}

/// As mma_sp_f16, with bf16 operands.
template <int N, int Sel>
STENCILC_DEV void mma_sp_bf16(float (&d)[N / 2], std::uint64_t a,
                              std::uint64_t b, unsigned e, bool accumulate) {
  static_assert(supportedN(N), "wgmma: N is one of 8, 16, 32, 64, 128, 256");
  static_assert(Sel == 0 || Sel == 1, "bf16 sparsity selector is 0 or 1");
  STENCILC_WG_SPARSE_ALL("k32.f32.bf16.bf16")
}

} // namespace stencilc::rt::wgmma

#undef STENCILC_WG_SPARSE_ALL
#undef STENCILC_WG_SPARSE
#undef STENCILC_WG_DENSE_ALL
#undef STENCILC_WG_DENSE
#undef STENCILC_WG_D128
#undef STENCILC_WG_D64
#undef STENCILC_WG_D32
#undef STENCILC_WG_D16
#undef STENCILC_WG_D8
#undef STENCILC_WG_D4
#undef STENCILC_WG_P128
#undef STENCILC_WG_P64
#undef STENCILC_WG_P32
#undef STENCILC_WG_P16
#undef STENCILC_WG_P8
#undef STENCILC_WG_P4
#undef STENCILC_WG_P8_0
#undef STENCILC_WG_P8_1
#undef STENCILC_WG_P8_2
#undef STENCILC_WG_P8_3
#undef STENCILC_WG_P8_4
#undef STENCILC_WG_P8_5
#undef STENCILC_WG_P8_6
#undef STENCILC_WG_P8_7
#undef STENCILC_WG_P8_8
#undef STENCILC_WG_P8_9
#undef STENCILC_WG_P8_10
#undef STENCILC_WG_P8_11
#undef STENCILC_WG_P8_12
#undef STENCILC_WG_P8_13
#undef STENCILC_WG_P8_14
#undef STENCILC_WG_P8_15
#undef STENCILC_WG_ASM
#undef STENCILC_DEV

#endif // defined(__CUDACC__)

#undef STENCILC_WG_HD

#endif // STENCILC_WGMMA_CUH
