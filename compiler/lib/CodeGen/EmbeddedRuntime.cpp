//===- EmbeddedRuntime.cpp - The runtime headers carried by stencilc ------===//

#include "stencilc/CodeGen/EmbeddedRuntime.h"

// tools/binary2cpp's arrays, named after each file (compiler/CMakeLists.txt).
#define STENCILC_EMBEDDED(id)                                                  \
  extern const char stencilc_embedded_##id[];                                  \
  extern const unsigned long stencilc_embedded_##id##_size;
STENCILC_EMBEDDED(weights_h)
STENCILC_EMBEDDED(runtime_cuh)
STENCILC_EMBEDDED(driver_cuh)
STENCILC_EMBEDDED(amplification_h)
STENCILC_EMBEDDED(distributed_h)
STENCILC_EMBEDDED(distributed_cuh)
STENCILC_EMBEDDED(distributed_driver_cuh)
STENCILC_EMBEDDED(hopper_cuh)
STENCILC_EMBEDDED(tma_ring_cuh)
#undef STENCILC_EMBEDDED

std::string_view stencilc::embeddedWeightsHeader() {
  return {stencilc_embedded_weights_h, stencilc_embedded_weights_h_size};
}

std::string_view stencilc::embeddedRuntimeHeader() {
  return {stencilc_embedded_runtime_cuh, stencilc_embedded_runtime_cuh_size};
}

std::string_view stencilc::embeddedAmplificationHeader() {
  return {stencilc_embedded_amplification_h,
          stencilc_embedded_amplification_h_size};
}

std::string_view stencilc::embeddedDriverHeader() {
  return {stencilc_embedded_driver_cuh, stencilc_embedded_driver_cuh_size};
}

std::string_view stencilc::embeddedDistributedHeader() {
  return {stencilc_embedded_distributed_h,
          stencilc_embedded_distributed_h_size};
}

std::string_view stencilc::embeddedDistributedRuntime() {
  return {stencilc_embedded_distributed_cuh,
          stencilc_embedded_distributed_cuh_size};
}

std::string_view stencilc::embeddedDistributedDriver() {
  return {stencilc_embedded_distributed_driver_cuh,
          stencilc_embedded_distributed_driver_cuh_size};
}

std::string_view stencilc::embeddedHopperHeader() {
  return {stencilc_embedded_hopper_cuh, stencilc_embedded_hopper_cuh_size};
}

std::string_view stencilc::embeddedTmaRingHeader() {
  return {stencilc_embedded_tma_ring_cuh, stencilc_embedded_tma_ring_cuh_size};
}
