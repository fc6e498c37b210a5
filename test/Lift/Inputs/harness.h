//===- harness.h - Runs a test input's loop on chosen data ------*- C++ -*-===//
//
// The test inputs of test/Lift end with a main() under
// STENCIL_LIFT_HARNESS that runs their loop nest through this harness. It
// draws the initial grid values exactly as stencil-interp does (splitmix64
// from --seed, uniform in [0, 1), rounded to the element type, grid after
// grid in the .st file's order, row-major within a grid) and prints each
// updated grid's sum in stencil-interp's format, so that `diff` against
// `stencil-interp --grid-type` checks the lifted stencil against the
// original loop. With --ints the values are small integers instead (the GPU
// check: with dyadic weights every result is then exact on any hardware),
// and --dump=FILE writes the raw host arrays for a byte-wise comparison.
//
//   prog --size=N|N0xN1[xN2] --steps=S [--seed=K] [--ints] [--dump=FILE]
//
//===----------------------------------------------------------------------===//

#ifndef STENCIL_LIFT_TEST_HARNESS_H
#define STENCIL_LIFT_TEST_HARNESS_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace lift_harness {

/// The command line, the random stream, and the outputs of one run.
class Run {
public:
  Run(int argc, char **argv, int dims) : dims(dims) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a.rfind("--size=", 0) == 0)
        parseSize(a.substr(7));
      else if (a.rfind("--steps=", 0) == 0)
        stepCount = std::atoll(a.c_str() + 8);
      else if (a.rfind("--seed=", 0) == 0)
        state = std::strtoull(a.c_str() + 7, nullptr, 10);
      else if (a == "--ints")
        ints = true;
      else if (a.rfind("--dump=", 0) == 0) {
        dumpFile = std::fopen(a.c_str() + 7, "wb");
        if (!dumpFile)
          fail("cannot write " + a.substr(7));
      } else
        fail("unknown option " + a);
    }
  }
  ~Run() {
    if (dumpFile)
      std::fclose(dumpFile);
  }

  long long n(int axis) const { return extent[axis]; }
  long long steps() const { return stepCount; }
  /// A value for padding that the loop must never read: it would turn
  /// every sum it reaches into NaN.
  static double poison() { return std::numeric_limits<double>::quiet_NaN(); }

  /// Draws the next grid's values: `index(i0, i1, i2)` is the host index of
  /// grid point (i0, i1, i2) (unused axes are 0).
  template <typename T, typename Index> void fill(T *data, Index index) {
    forEachPoint([&](long long i, long long j, long long k) {
      uint64_t r = next() >> 11;
      double v = ints ? static_cast<double>(r % 16)
                      : static_cast<double>(r) * 0x1.0p-53;
      data[index(i, j, k)] = static_cast<T>(v);
    });
  }

  /// Prints `stencil.grid sum S` as stencil-interp does.
  template <typename T, typename Index>
  void report(const char *stencil, const char *grid, const T *data,
              Index index) {
    double sum = 0;
    forEachPoint([&](long long i, long long j, long long k) {
      sum += static_cast<double>(data[index(i, j, k)]);
    });
    std::printf("%s.%s sum %.17g\n", stencil, grid, sum);
  }

  /// Appends `count` host elements to the --dump file.
  template <typename T> void dump(const T *data, size_t count) {
    if (dumpFile && std::fwrite(data, sizeof(T), count, dumpFile) != count)
      fail("cannot write the dump");
  }

private:
  [[noreturn]] static void fail(const std::string &msg) {
    std::fprintf(stderr, "harness: %s\n", msg.c_str());
    std::exit(2);
  }
  void parseSize(const std::string &s) {
    long long v[3] = {0, 0, 0};
    int count = 0;
    size_t pos = 0;
    while (count < 3) {
      size_t x = s.find('x', pos);
      v[count++] = std::atoll(s.substr(pos, x - pos).c_str());
      if (x == std::string::npos)
        break;
      pos = x + 1;
    }
    if (count != 1 && count != dims)
      fail("--size needs 1 or " + std::to_string(dims) + " extents");
    for (int a = 0; a < dims; ++a) {
      extent[a] = v[count == 1 ? 0 : a];
      if (extent[a] <= 0)
        fail("bad --size");
    }
  }
  template <typename F> void forEachPoint(F f) {
    for (long long i = 0; i < extent[0]; ++i)
      for (long long j = 0; j < extent[1]; ++j)
        for (long long k = 0; k < extent[2]; ++k)
          f(i, j, k);
  }
  /// splitmix64, as in tools/stencil-interp and the --emit-main driver.
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  int dims;
  long long extent[3] = {1, 1, 1};
  long long stepCount = 3;
  uint64_t state = 42;
  bool ints = false;
  FILE *dumpFile = nullptr;
};

} // namespace lift_harness

#endif // STENCIL_LIFT_TEST_HARNESS_H
