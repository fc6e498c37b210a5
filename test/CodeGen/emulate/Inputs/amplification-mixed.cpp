// The check of amplification-bound.test that must fail: the float64
// reference and the bound of Inputs/amplification.st's yee, with the
// kernels of yee_bad (one weight off by 2^-30 of itself) as the "GPU".
// Compiled with -DAMPLIFICATION_CU="path of the generated --emit-main .cu".

#define main stencilc_generated_main
#include AMPLIFICATION_CU
#undef main

struct Mixed : yee::driver::Problem {
  static cudaError_t run(void *const *grids, void *const *scratch,
                         const long long *n, long long steps,
                         cudaStream_t stream) {
    return yee_bad::driver::Problem::run(grids, scratch, n, steps, stream);
  }
};

int main(int argc, char **argv) {
  return stencilc::rt::driverMain<Mixed>(argc, argv);
}
