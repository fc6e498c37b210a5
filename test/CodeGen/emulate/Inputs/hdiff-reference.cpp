// COSMO's horizontal diffusion with flux limiting (the hdiff benchmark of
// GridTools and GT4Py), written here from its description, against
// dsl-examples/hdiff.st, stepped in time on a doubly periodic n0 x n1
// domain: each step computes lap, the limited fluxes flx and fly, and the
// new field from the old one.
#include "hdiff.h"
#include "reference-common.h"

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  const long long n0 = std::atoll(argv[1]), n1 = std::atoll(argv[2]),
                  steps = std::atoll(argv[3]);
  const size_t points = n0 * n1;
  std::vector<double> in = randomField(points, 1, 0, 1);
  const std::vector<double> coeff = randomField(points, 2, 0.01, 0.05);
  double *du = toDevice(in), *dc = toDevice(coeff);
  if (hdiff::run(du, dc, n0, n1, steps) != cudaSuccess) {
    std::printf("run failed\n");
    return 1;
  }
  auto at = [&](long long i, long long j) {
    i = (i % n0 + n0) % n0;
    j = (j % n1 + n1) % n1;
    return i * n1 + j;
  };
  std::vector<double> lap(points), flx(points), fly(points), out(points);
  for (long long s = 0; s < steps; ++s) {
    for (long long i = 0; i < n0; ++i)
      for (long long j = 0; j < n1; ++j)
        lap[at(i, j)] =
            4 * in[at(i, j)] - (in[at(i + 1, j)] + in[at(i - 1, j)] +
                                in[at(i, j + 1)] + in[at(i, j - 1)]);
    for (long long i = 0; i < n0; ++i)
      for (long long j = 0; j < n1; ++j) {
        double fx = lap[at(i + 1, j)] - lap[at(i, j)];
        if (fx * (in[at(i + 1, j)] - in[at(i, j)]) > 0)
          fx = 0;
        flx[at(i, j)] = fx;
        double fy = lap[at(i, j + 1)] - lap[at(i, j)];
        if (fy * (in[at(i, j + 1)] - in[at(i, j)]) > 0)
          fy = 0;
        fly[at(i, j)] = fy;
      }
    for (long long i = 0; i < n0; ++i)
      for (long long j = 0; j < n1; ++j)
        out[at(i, j)] = in[at(i, j)] -
                        coeff[at(i, j)] * (flx[at(i, j)] - flx[at(i - 1, j)] +
                                           fly[at(i, j)] - fly[at(i, j - 1)]);
    std::swap(in, out);
  }
  return compare("u", toHost(du, points), in) ? 0 : 1;
}
