// Runs the CUDA-core code of dsl-examples/gray-scott.st (generated as
// gs.cu) on grids whose rows are 16-byte aligned and on the same grids one
// element further on, where they are not: the kernel must then load and
// store element by element (the emulation aborts on a misaligned chunk
// access), and both runs must give the same bits. Scratch buffers follow
// the grids, so every buffer of a run shares its alignment.
#include "gs.h"

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

int main() {
  constexpr long long n0 = 37, n1 = 64, n = n0 * n1, steps = 7;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> u0(n), v0(n);
  for (long long i = 0; i < n; ++i) {
    u0[i] = dist(rng);
    v0[i] = dist(rng);
  }
  // Four grids' worth of room, aligned to 16 bytes, plus one element.
  std::vector<float> results[2][2];
  for (int shift : {0, 1}) {
    alignas(16) static float pool[4 * n + 4];
    float *u = pool + shift, *v = u + n, *su = v + n, *sv = su + n;
    std::memcpy(u, u0.data(), n * sizeof(float));
    std::memcpy(v, v0.data(), n * sizeof(float));
    gray_scott::Scratch scratch;
    scratch.u = su;
    scratch.v = sv;
    if (gray_scott::run(u, v, n0, n1, steps, gray_scott::Params(), 0,
                        scratch) != cudaSuccess) {
      std::printf("run failed at shift %d\n", shift);
      return 1;
    }
    results[shift][0].assign(u, u + n);
    results[shift][1].assign(v, v + n);
  }
  int differ = 0;
  for (int g = 0; g < 2; ++g)
    differ += std::memcmp(results[0][g].data(), results[1][g].data(),
                          n * sizeof(float)) != 0;
  // The runs must also have done something.
  int moved = std::memcmp(results[0][0].data(), u0.data(), n * sizeof(float));
  std::printf("chunk-alignment: 2 grids compared, %d differ, %s\n", differ,
              moved ? "updated" : "NOT UPDATED");
  return differ || !moved;
}
