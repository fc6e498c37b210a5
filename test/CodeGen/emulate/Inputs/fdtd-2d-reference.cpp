// PolyBench/C 4.2's fdtd-2d (kernel_fdtd_2d), written here from its
// description, against dsl-examples/fdtd-2d.st: NX x NY fields initialised
// as PolyBench initialises them, _fict_[t] = t, TMAX steps.
#include "fdtd-2d.h"
#include "reference-common.h"

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  const long long nx = std::atoll(argv[1]), ny = std::atoll(argv[2]),
                  tmax = std::atoll(argv[3]);
  const size_t points = nx * ny;
  std::vector<double> ex(points), ey(points), hz(points);
  auto at = [&](long long i, long long j) { return i * ny + j; };
  for (long long i = 0; i < nx; ++i)
    for (long long j = 0; j < ny; ++j) {
      ex[at(i, j)] = static_cast<double>(i) * (j + 1) / nx;
      ey[at(i, j)] = static_cast<double>(i) * (j + 2) / ny;
      hz[at(i, j)] = static_cast<double>(i) * (j + 3) / nx;
    }
  double *dex = toDevice(ex), *dey = toDevice(ey), *dhz = toDevice(hz);
  if (fdtd2d::run(dex, dey, dhz, nx, ny, tmax) != cudaSuccess) {
    std::printf("run failed\n");
    return 1;
  }
  // The reference: ey's first row is the source _fict_[t] = t; ey then ex
  // from the old hz; hz from the new ex and ey, but its last row and
  // column; ex keeps its first column.
  for (long long t = 0; t < tmax; ++t) {
    for (long long j = 0; j < ny; ++j)
      ey[at(0, j)] = static_cast<double>(t);
    for (long long i = 1; i < nx; ++i)
      for (long long j = 0; j < ny; ++j)
        ey[at(i, j)] = ey[at(i, j)] - 0.5 * (hz[at(i, j)] - hz[at(i - 1, j)]);
    for (long long i = 0; i < nx; ++i)
      for (long long j = 1; j < ny; ++j)
        ex[at(i, j)] = ex[at(i, j)] - 0.5 * (hz[at(i, j)] - hz[at(i, j - 1)]);
    for (long long i = 0; i < nx - 1; ++i)
      for (long long j = 0; j < ny - 1; ++j)
        hz[at(i, j)] = hz[at(i, j)] - 0.7 * (ex[at(i, j + 1)] - ex[at(i, j)] +
                                             ey[at(i + 1, j)] - ey[at(i, j)]);
  }
  bool ok = compare("ex", toHost(dex, points), ex);
  ok &= compare("ey", toHost(dey, points), ey);
  ok &= compare("hz", toHost(dhz, points), hz);
  return ok ? 0 : 1;
}
