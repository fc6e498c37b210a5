// fdtd-2d as one stencil (dsl-examples/fdtd-2d.st, fused as generated)
// against the multi-stencil workaround (Inputs/fdtd-2d-workaround.st: two
// stencils a step, run(..., 1) each, the step index a parameter). Both from
// PolyBench's initial fields; prints both times and their results'
// largest difference: both compute the same formulas in f64, the linear
// ones of the workaround tap by tap (its stencils without conditions are
// linear), so they differ by rounding only: the program fails beyond 1e-10
// of max |result|, as the reference tests of test/CodeGen/emulate do.
//   workaround-fdtd N STEPS REPS
#include "fdtd-2d-workaround.h"
#include "fdtd-2d.h"
#include "workaround-common.h"

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  const long long n = std::atoll(argv[1]), steps = std::atoll(argv[2]);
  const int reps = std::atoi(argv[3]);
  const size_t points = n * n;
  std::vector<double> ex(points), ey(points), hz(points);
  for (long long i = 0; i < n; ++i)
    for (long long j = 0; j < n; ++j) {
      ex[i * n + j] = static_cast<double>(i) * (j + 1) / n;
      ey[i * n + j] = static_cast<double>(i) * (j + 2) / n;
      hz[i * n + j] = static_cast<double>(i) * (j + 3) / n;
    }
  double *ex0 = deviceCopy(ex), *ey0 = deviceCopy(ey), *hz0 = deviceCopy(hz);
  double *a[3] = {deviceBuffer(points), deviceBuffer(points),
                  deviceBuffer(points)};
  double *b[3] = {deviceBuffer(points), deviceBuffer(points),
                  deviceBuffer(points)};
  double *sa[3] = {deviceBuffer(points), deviceBuffer(points),
                   deviceBuffer(points)};
  double *sb[3] = {deviceBuffer(points), deviceBuffer(points),
                   deviceBuffer(points)};
  cudaStream_t stream;
  WA_CHECK(cudaStreamCreate(&stream));
  auto reset = [&](double **g) {
    return [=]() {
      const double *init[3] = {ex0, ey0, hz0};
      for (int k = 0; k < 3; ++k)
        WA_CHECK(cudaMemcpyAsync(g[k], init[k], points * sizeof(double),
                                 cudaMemcpyDeviceToDevice, stream));
    };
  };
  fdtd2d::Scratch scratch;
  scratch.ex = sa[0];
  scratch.ey = sa[1];
  scratch.hz = sa[2];
  const double fused = medianMs(reps, stream, reset(a), [&]() {
    WA_CHECK(fdtd2d::run(a[0], a[1], a[2], n, n, steps, fdtd2d::Params(),
                         stream, scratch));
  });
  fdtd_e::Scratch se;
  se.ex = sb[0];
  se.ey = sb[1];
  fdtd_h::Scratch sh;
  sh.hz = sb[2];
  const double split = medianMs(reps, stream, reset(b), [&]() {
    for (long long s = 0; s < steps; ++s) {
      fdtd_e::Params p;
      p.tt = static_cast<double>(s);
      WA_CHECK(fdtd_e::run(b[0], b[1], b[2], n, n, 1, p, stream, se));
      WA_CHECK(
          fdtd_h::run(b[0], b[1], b[2], n, n, 1, fdtd_h::Params(), stream, sh));
    }
  });
  WA_CHECK(cudaStreamSynchronize(stream));
  double diff = 0;
  for (int k = 0; k < 3; ++k)
    diff = std::max(diff, relativeDifference(hostCopy(a[k], points),
                                             hostCopy(b[k], points)));
  const double gs = static_cast<double>(points) * steps;
  std::printf("WORKAROUND stencil=fdtd2d size=%lldx%lld steps=%lld "
              "one_ms=%.3f one_gstencils=%.2f split_ms=%.3f "
              "split_gstencils=%.2f speedup=%.2f max_rel_diff=%.3e\n",
              n, n, steps, fused, gs / (fused * 1e6), split, gs / (split * 1e6),
              split / fused, diff);
  return diff <= 1e-10 ? 0 : 1;
}
