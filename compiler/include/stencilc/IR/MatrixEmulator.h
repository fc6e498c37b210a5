//===- MatrixEmulator.h - mma / mma.sp executed lane by lane ----*- C++ -*-===//
//
// The CPU emulator of DESIGN.md §2. It executes a MatrixProgram fragment by
// fragment and lane by lane with the PTX semantics of `mma.sync` and
// `mma.sp::ordered_metadata.sync` (PTX.md): the warp's registers are decoded
// through the documented fragment layouts, the metadata nibbles are read
// from exactly the lanes the sparsity selector names and select the B rows
// as the hardware does, and the accumulation happens in the fragment's
// accumulator type. The fragment layout tables here are the single source
// Compress24 packs with.
//
// Precision semantics:
//   - Operands are rounded as the generated code rounds them: f16 and bf16
//     to nearest even (a double is first rounded to float), tf32 by
//     cvt.rna.tf32.f32 (nearest, ties away from zero, 10 explicit mantissa
//     bits; a double is first rounded to float), f64 unchanged. On decoding
//     a tf32 register its low 13 bits are ignored, as the tensor core does.
//   - f16, bf16 and tf32 accumulate in f32: every product of two operands is
//     exact in float (at most 11 + 11 significant bits), and the sum runs
//     sequentially in float, C first, then the products in increasing k.
//     The hardware adds the products of one k-block in a wider adder with
//     its own (truncating) alignment, so on data whose partial sums are not
//     exact in float the emulator and the GPU may differ in the last bits of
//     f32; whenever every partial sum is representable in float (small
//     integers, dyadic weights) both are exact and agree bit for bit.
//   - f64 (DMMA) accumulates with a fused multiply-add per product, in
//     increasing k: exact IEEE double arithmetic, but the GPU may order the
//     additions differently, so results agree to rounding unless the
//     partial sums are exact.
//   - Sparse shapes multiply only the kept entries (the stored values with
//     their metadata-selected B rows): an Inf or NaN in a B row that the
//     metadata drops never reaches the sum. Stored zeros do multiply their
//     B row. Metadata the ordered form forbids (p0 >= p1, or a tf32 nibble
//     other than 0x4 / 0xE) is undefined on the GPU; the emulator makes the
//     rows it touches NaN so that tests notice.
//
// Checked on an H200 (sm_90, CUDA 13.0) with registers built from these
// tables, 32 random warps per shape, the metadata of unnamed lanes random:
// on small integers D agreed bit for bit for all 16 shapes and every
// selector; on random reals f64 agreed bit for bit too, while the f32
// accumulators differed in the last bits in about half of the values.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_IR_MATRIXEMULATOR_H
#define STENCILC_IR_MATRIXEMULATOR_H

#include "stencilc/IR/MatrixProgram.h"
#include "stencilc/IR/Stencil.h"

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace stencilc {

//===----------------------------------------------------------------------===//
// Operand encodings. A register is a uint64_t word: 32-bit values sit in the
// low bits; a pair of 16-bit values has its lower-index element in the low
// half; an f64 fills the word.
//===----------------------------------------------------------------------===//

/// IEEE binary16 bits of `x`, rounded to nearest even.
uint16_t encodeF16(double x);
double decodeF16(uint16_t bits);
/// bfloat16 bits of `x`, rounded to nearest even.
uint16_t encodeBF16(double x);
double decodeBF16(uint16_t bits);
/// cvt.rna.tf32.f32: the f32 bits of `x` rounded to nearest, ties away from
/// zero, to 10 explicit mantissa bits (the low 13 bits are zero).
uint32_t encodeTF32(double x);
/// The value a tensor core reads from an f32 register holding `bits`.
double decodeTF32(uint32_t bits);
uint64_t encodeF64(double x);
double decodeF64(uint64_t bits);

/// Split-TF32 (MatrixProgram::split): `x`, first rounded to f32, as two
/// tf32 parts as the generated code splits it: hi = cvt.rna(x), lo =
/// cvt.rna(x - hi), where x - hi is exact in f32. hi + lo is within 2^-22
/// |x| of x. An infinite x gives a NaN lo (inf - inf), as on the GPU.
void splitTF32(double x, uint32_t &hi, uint32_t &lo);
/// A split-TF32 coefficient (an f32 value of A): hi and lo as splitTF32
/// splits it, and lo2 = cvt.rna(x - hi - lo), the last two bits; all three
/// sum to the f32 value exactly (docs/language.md §6.4).
void splitTF32Coefficient(double x, uint32_t (&parts)[3]);

/// The bits of one operand element of type `t` (16, 32 or 64 of them).
uint64_t encodeOperand(MmaType t, double x);
double decodeOperand(MmaType t, uint64_t bits);
/// `x` rounded as encoding it in `t` rounds it.
double roundToOperand(MmaType t, double x);

//===----------------------------------------------------------------------===//
// Fragment layouts (PTX.md), per lane, register and element.
//===----------------------------------------------------------------------===//

/// A position in a fragment's matrix.
struct FragmentCoord {
  int row = 0, col = 0;
};

/// True for the shapes PTX.md documents: dense f16/bf16 m16n8k8 and
/// m16n8k16, tf32 m16n8k4 and m16n8k8, f64 m8n8k4 and m16n8k{4,8,16};
/// sparse f16/bf16 m16n8k16 and m16n8k32, tf32 m16n8k8 and m16n8k16.
bool isSupportedShape(const FragmentShape &shape);
/// 2 for f16 and bf16 (a 32-bit register holds a pair), else 1.
int elementsPerRegister(MmaType t);
/// Registers per lane of the A, B and C/D fragments.
int aRegisters(const FragmentShape &shape);
int bRegisters(const FragmentShape &shape);
int accumulators(const FragmentShape &shape);
/// Columns of A the registers hold: k, or k/2 for a sparse shape.
int storedK(const FragmentShape &shape);
/// Logical columns of one metadata group: 4 (2:4) or 2 (1:2); 1 if dense.
int metadataGroupSize(const FragmentShape &shape);

/// Where element `elem` of A register `reg` of `lane` lives. Dense shapes:
/// the row and column of A (m x k). Sparse shapes: the row and the column
/// of the compressed A (m x k/2), where compressed column c is stored
/// value c % (g/2) of group c / (g/2), g = metadataGroupSize(shape).
FragmentCoord fragmentA(const FragmentShape &shape, int lane, int reg,
                        int elem);
/// Row (k) and column (n) of B for element `elem` of B register `reg`.
FragmentCoord fragmentB(const FragmentShape &shape, int lane, int reg,
                        int elem);
/// Row (m) and column (n) of C and D for accumulator `acc` of `lane`.
FragmentCoord fragmentC(const FragmentShape &shape, int lane, int acc);

/// Sparse shapes: tiles one metadata register serves through the selector
/// (4 for f16/bf16 k16 and tf32 k8, 2 for f16/bf16 k32 and tf32 k16).
int selectorsPerRegister(const FragmentShape &shape);
/// Sparse shapes: whether mma.sp with selector `selector` reads the
/// metadata register of `lane`; if so, nibble j of it covers row
/// `metadataRow(lane, j)` and group `metadataGroup(shape, lane, j)`.
bool metadataLaneRead(const FragmentShape &shape, int selector, int lane);
int metadataRow(int lane, int nibble);
int metadataGroup(const FragmentShape &shape, int lane, int nibble);

//===----------------------------------------------------------------------===//
// Execution.
//===----------------------------------------------------------------------===//

/// One warp-wide mma (or mma.sp with `meta` and `selector`): D = A * B + C.
/// `a` is [lane][reg] (32 x aRegisters), `b` is [lane][reg] (32 x
/// bRegisters), `cd` is [lane][acc] (32 x accumulators), read as C and
/// overwritten with D. `meta` is the metadata register of each lane (32
/// entries), sparse shapes only; `selector` is mma.sp's immediate f.
void emulateMma(const FragmentShape &shape, const std::vector<uint64_t> &a,
                const std::vector<uint64_t> &b, std::vector<double> &cd,
                const std::vector<uint32_t> *meta, int selector);

/// The numeric A registers of every tile, [tile][lane][reg], from
/// `program.packed` (which must be set) and the value of every node. With
/// `splitPart` 1 or 2 (split-TF32 only), part 1 (lo) or 2 (lo2) of the
/// coefficients (splitTF32Coefficient) instead of their (hi) values.
std::vector<uint64_t> packNumericA(const MatrixProgram &program,
                                   const std::vector<double> &nodeValues,
                                   int splitPart = 0);

/// Split-TF32: whether some coefficient of A (a packed slot) has a nonzero
/// lo part, so that the product needs its third MMA, A_lo B_hi. Known at
/// compile time when every coefficient is a constant; nullopt when one
/// depends on a parameter, and the generated host code (like
/// emulateOnGrid) decides from the run-time values.
std::optional<bool> splitNeedsLowA(const Stencil &stencil);

/// Whether the kernels centre the B operands of `program` on one grid
/// value per tile (docs/language.md §6.4): plain tf32, whose operands round
/// the grid's values to 11 significant bits. Split-TF32 keeps them to 22
/// bits; centring would put its f32 arithmetic on partial sums up to twice
/// the result's size, so it does not centre; f16, bf16 and f64 take the
/// grid's values as they are.
bool centresOperands(const MatrixProgram &program);

/// A grid computed by the emulator: `covered` marks the points the matrix
/// program wrote; the others hold 0.
struct EmulatedGrid {
  std::vector<double> values;
  std::vector<bool> covered;
};

/// Runs one pass of the stencil's packed MatrixProgram (`stencil.matrix`
/// with `packed` set) on `input`, the values of its grid (row-major, axis 0
/// slowest, `sizes` per axis; entries beyond the stencil's dims count as
/// 1). `params` holds one value per parameter, rounded to its declared
/// type before the coefficients are evaluated (as the interpreter does).
///
/// Patch origins step by `program.patch` from the lowest origin whose
/// outputs and real gather offsets all lie inside the grid on non-periodic
/// axes; periodic axes wrap and start at 0. Patches go `shape.n` at a time
/// in row-major order of their origins (a short last group is padded with
/// patches whose results are dropped). Every output a patch writes is
/// stored rounded to the grid's element type and marked covered, except
/// points inside the fused kernel's boundary band or a `fixed` boundary's
/// frozen band, which the tensor cores must not compute. Without a packed
/// program nothing is covered.
///
/// A split-TF32 program runs as the kernel does: per K tile, A_lo B_hi
/// and A_lo2 B_hi (only where some lo part of A is nonzero) and A_hi B_lo
/// into a second accumulator, A_hi B_hi into a zero one that is then added
/// to the first in f32; the first two are added in f32 at the end.
///
/// Plain tf32 programs are centred as the kernel centres them
/// (docs/language.md §6.4): each group of patches takes one value r of the
/// grid (at its first patch's first output; the kernel takes one per block
/// tile), B holds u - r computed in f32 and rounded as an operand, and each
/// output is fma(r, S, D) in f32, S being its row's sum of A's rounded
/// coefficients, rounded to f32.
EmulatedGrid emulateOnGrid(const Stencil &stencil,
                           const std::array<int64_t, 3> &sizes,
                           const std::vector<double> &input,
                           const std::vector<double> &params);

} // namespace stencilc

#endif // STENCILC_IR_MATRIXEMULATOR_H
