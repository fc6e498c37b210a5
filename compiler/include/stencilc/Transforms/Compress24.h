//===- Compress24.h - Values, metadata and PTX registers --------*- C++ -*-===//
//
// The last tensor-core pass (DESIGN.md §4): it packs the kernel matrix A of
// a MatrixProgram into the registers of its fragment shape, exactly as
// PTX.md lays them out. For a 2:4 (f16, bf16) or 1:2 (tf32) program it
// first compresses A into kept values and ordered metadata nibbles, and
// packs the metadata of several fragment tiles into one register through
// the sparsity selector, as SPIDER does. The slots name coefficient nodes,
// not numbers: the values depend on run-time parameters and are filled in
// by the host (or by the CPU emulator, MatrixEmulator.h).
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_TRANSFORMS_COMPRESS24_H
#define STENCILC_TRANSFORMS_COMPRESS24_H

#include "stencilc/IR/Stencil.h"
#include "stencilc/Support/Diagnostics.h"

namespace stencilc {

/// Compresses A of a OneOfTwo or TwoOfFour program: per row and aligned
/// group, the kept entries in increasing position (ordered metadata), and
/// the group's nibble (2:4: p0 | p1 << 2; 1:2: 0x4 for position 0, 0xE for
/// position 1). A group with fewer nonzeros than it keeps stores zeros at
/// valid positions (p0 < p1). Expects A to satisfy the pattern
/// (verifyMatrixProgram); extra nonzeros of a group would be dropped. A
/// trailing partial group counts as padded with zero columns.
CompressedMatrix compressMatrix(const MatrixProgram &program);

/// The register layout of A for `program.shape`: A padded to multiples of
/// shape.m rows and shape.k (logical) columns, cut into tilesM x tilesK
/// fragment tiles, and for every tile, lane, register and element the node
/// in that slot. For sparse shapes, the metadata registers too: consecutive
/// tiles share one register through the selector (4 per register for
/// f16/bf16 k16 and tf32 k8, 2 for f16/bf16 k32 and tf32 k16). Lanes that
/// no tile's selector reads hold 0. A shape PTX.md does not document gives
/// an empty packing (no tiles).
PackedFragments packFragments(const MatrixProgram &program);

/// The pass: sets `stencil.matrix->compressed` (sparse patterns only) and
/// `stencil.matrix->packed`. Reports an error and returns false when there
/// is no MatrixProgram, when its shape is not one PTX offers on its arch,
/// when a sparse pattern meets a dense shape or the other way round, or
/// when the program fails verification. With `split`, marks the program
/// split-TF32 (MatrixProgram::split), which its shape must allow: tf32.
bool compress24(Stencil &stencil, DiagnosticEngine &diags,
                bool split = false);

} // namespace stencilc

#endif // STENCILC_TRANSFORMS_COMPRESS24_H
