// Checks stencilc::rt::frameTile against a plain enumeration: the tiles of
// a 1-D, 2-D or 3-D grid of tiles that lie outside a hole, row-major, for
// every hole that fits, including empty ones and holes touching the edges.
#include "stencilc/runtime.cuh"

#include <cstdio>

namespace {

int failures = 0;
long long cases = 0;

void check(int dims, const long long *tiles, const long long *lo,
           const long long *hi) {
  long long total = 1;
  for (int a = 0; a < dims; ++a)
    total *= tiles[a];
  long long i = 0;
  for (long long k = 0; k < total; ++k) {
    long long c[3], r = k;
    for (int a = dims - 1; a >= 0; --a) {
      c[a] = r % tiles[a];
      r /= tiles[a];
    }
    bool inHole = true;
    for (int a = 0; a < dims; ++a)
      inHole = inHole && c[a] >= lo[a] && c[a] < hi[a];
    if (inHole)
      continue;
    long long t[3] = {-1, -1, -1};
    stencilc::rt::frameTile(i, dims, tiles, lo, hi, t);
    for (int a = 0; a < dims; ++a)
      if (t[a] != c[a]) {
        if (++failures <= 5)
          std::printf("mismatch: dims=%d block %lld axis %d: %lld, want "
                      "%lld\n",
                      dims, i, a, t[a], c[a]);
      }
    ++i;
    ++cases;
  }
}

} // namespace

int main() {
  const long long extents[][3] = {{1, 1, 1}, {5, 1, 1}, {4, 6, 1},
                                  {3, 1, 7}, {4, 5, 3}, {6, 4, 5}};
  for (int dims = 1; dims <= 3; ++dims)
    for (const auto &tiles : extents) {
      long long lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
      // Every hole [lo, hi) with 0 <= lo <= hi <= tiles on every axis.
      auto next = [&]() {
        for (int a = 0; a < dims; ++a) {
          if (++hi[a] <= tiles[a])
            return true;
          if (++lo[a] <= tiles[a]) {
            hi[a] = lo[a];
            return true;
          }
          lo[a] = hi[a] = 0;
        }
        return false;
      };
      do
        check(dims, tiles, lo, hi);
      while (next());
    }
  std::printf("frameTile: %lld tiles checked, %d wrong\n", cases, failures);
  return failures ? 1 : 0;
}
