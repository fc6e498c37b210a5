// edges-differ-2d: a 5-point sweep that swaps two pointers every step, with
// buffers whose edges differ (as PolyBench starts A and B): the loop reads
// u's edges in even steps and v's in odd ones, which one stencil band cannot
// hold. The rewritten code must notice and run the loop as it was. main()
// takes the output file, the size, the step count and "same" or "differ".
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

void relax(double *u, double *v, int n, int steps) {
#pragma stencil
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < n - 1; ++j)
        v[i * n + j] = 0.5 * u[i * n + j] +
                       0.125 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] +
                                u[i * n + j - 1] + u[i * n + j + 1]);
    std::swap(u, v);
  }
}

int main(int argc, char **argv) {
  if (argc < 5)
    return 2;
  int n = std::atoi(argv[2]), steps = std::atoi(argv[3]);
  bool differ = std::strcmp(argv[4], "differ") == 0;
  std::vector<double> u(static_cast<size_t>(n) * n), v(u.size());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      u[i * n + j] = (i * 3 + j * 7) % 10;
      v[i * n + j] = differ ? (i + j) % 4 : u[i * n + j];
    }
  relax(u.data(), v.data(), n, steps);
  FILE *out = std::fopen(argv[1], "wb");
  if (!out)
    return 2;
  std::fwrite(u.data(), sizeof(double), u.size(), out);
  std::fwrite(v.data(), sizeof(double), v.size(), out);
  std::fclose(out);
  return 0;
}
