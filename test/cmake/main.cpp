// Calls the run() entry point of both generated stencils. The test builds
// it; it runs where a GPU is present.
#include "heat.h"
#include "waves.h"

#include <cstdio>

int main() {
  const long long n = 256;
  float *u = nullptr, *w = nullptr, *wPrev = nullptr;
  if (cudaMalloc(&u, n * n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&w, n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&wPrev, n * sizeof(float)) != cudaSuccess) {
    std::printf("no GPU memory: nothing run\n");
    return 0;
  }
  cudaMemset(u, 0, n * n * sizeof(float));
  cudaMemset(w, 0, n * sizeof(float));
  cudaMemset(wPrev, 0, n * sizeof(float));
  heat2d::Params heat;
  heat.alpha = 0.2f;
  cudaError_t err = heat2d::run(u, n, n, 10, heat);
  if (err == cudaSuccess)
    err = wave1d::run(w, wPrev, n, 10);
  if (err == cudaSuccess)
    err = cudaDeviceSynchronize();
  std::printf("%s\n", cudaGetErrorString(err));
  cudaFree(u);
  cudaFree(w);
  cudaFree(wPrev);
  return err == cudaSuccess ? 0 : 1;
}
