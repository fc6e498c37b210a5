//===- memcpy2d-emulation.cpp - cudaMemcpy2D for test/emulation -----------===//
//
// Rewritten sources copy host arrays of any row pitch with cudaMemcpy2D,
// which the CPU emulation of test/emulation does not provide. Linked into a
// rewritten program built with %emucxx, this definition copies row by row
// in host memory, where the emulation keeps "device" arrays too.
//
//===----------------------------------------------------------------------===//

#include <cuda_runtime.h>

#include <cstring>

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src,
                         size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind) {
  if (width > dpitch || width > spitch)
    return cudaErrorInvalidPitchValue;
  for (size_t row = 0; row < height; ++row)
    std::memcpy(static_cast<char *>(dst) + row * dpitch,
                static_cast<const char *>(src) + row * spitch, width);
  return cudaSuccess;
}
