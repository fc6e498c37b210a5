//===- EmbeddedRuntime.cpp - The runtime headers carried by stencilc ------===//

#include "stencilc/CodeGen/EmbeddedRuntime.h"

extern const char stencilc_embedded_weights[];
extern const unsigned long stencilc_embedded_weights_size;
extern const char stencilc_embedded_runtime[];
extern const unsigned long stencilc_embedded_runtime_size;
extern const char stencilc_embedded_driver[];
extern const unsigned long stencilc_embedded_driver_size;

std::string_view stencilc::embeddedWeightsHeader() {
  return {stencilc_embedded_weights, stencilc_embedded_weights_size};
}

std::string_view stencilc::embeddedRuntimeHeader() {
  return {stencilc_embedded_runtime, stencilc_embedded_runtime_size};
}

std::string_view stencilc::embeddedDriverHeader() {
  return {stencilc_embedded_driver, stencilc_embedded_driver_size};
}
