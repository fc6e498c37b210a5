//===- EmbeddedRuntime.h - The runtime headers carried by stencilc -*- C++ -*-===//
//
// runtime/include/stencilc/{weights.h,runtime.cuh,driver.cuh} (and the
// distributed runtime's files, and the Hopper ones), embedded at build
// time, so that every generated .cu is self-contained: `nvcc -c out.cu`
// needs no include path.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_CODEGEN_EMBEDDEDRUNTIME_H
#define STENCILC_CODEGEN_EMBEDDEDRUNTIME_H

#include <string_view>

namespace stencilc {

/// The text of runtime/include/stencilc/weights.h (plain C++).
std::string_view embeddedWeightsHeader();
/// The text of runtime/include/stencilc/runtime.cuh.
std::string_view embeddedRuntimeHeader();
/// The text of runtime/include/stencilc/amplification.h (plain C++; the
/// driver's amplification bound).
std::string_view embeddedAmplificationHeader();
/// The text of runtime/include/stencilc/driver.cuh (the --emit-main driver).
std::string_view embeddedDriverHeader();
/// runtime/include/stencilc/distributed.h, distributed.cuh and
/// distributed_driver.cuh (stencilc --distributed).
std::string_view embeddedDistributedHeader();
std::string_view embeddedDistributedRuntime();
std::string_view embeddedDistributedDriver();
/// runtime/include/stencilc/hopper.cuh and tma_ring.cuh (the star kernel's
/// TMA ring, code for sm_90 and later).
std::string_view embeddedHopperHeader();
std::string_view embeddedTmaRingHeader();

} // namespace stencilc

#endif // STENCILC_CODEGEN_EMBEDDEDRUNTIME_H
