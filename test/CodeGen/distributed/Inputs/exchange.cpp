// The decomposition, the layout of a rank's buffers and the halo exchange of
// runtime/include/stencilc/distributed.cuh, on the CPU: each MPI process
// is a rank, its "device" memory the emulation's host memory. For every
// process grid the ranks allow in 1-D, 2-D and 3-D:
//   - the blocks tile the grid (each point on exactly one rank) and the
//     neighbours agree with one another;
//   - after an exchange of depth h, each ghost point within h of the block
//     (corners included) holds the value of the point it stands for, the
//     grid's own point across a periodic wrap; every other point of the
//     buffer is as it was (the block's values, or the NaN it started as).
// Grid 0 is periodic on every axis, grid 1 on none; both exchange
// together, as the grids of one stencil do.
//
// usage: mpirun -np N exchange [--transport=mpi|mpi-device] [--self-exchange]
#include "stencilc/distributed.cuh"

#include <cmath>
#include <cstdio>
#include <vector>

using namespace stencilc::dist;

namespace {

long long checks = 0, failures = 0;

void expect(bool ok, const char *what, int rank, int dims, const int *procs,
            long long detail) {
  ++checks;
  if (ok)
    return;
  if (++failures <= 10)
    std::printf("rank %d, %d-D, procs %dx%dx%d: %s (%lld)\n", rank, dims,
                procs[0], procs[1], procs[2], what, detail);
}

/// The value of global point x of grid g: exact in float at these sizes.
float valueOf(int g, const long long *x) {
  return static_cast<float>(g * 1000000 + x[0] * 10000 + x[1] * 100 + x[2]);
}

long long wrapped(long long i, long long n) { return ((i % n) + n) % n; }

/// One process grid: the blocks, then exchanges of every depth up to the
/// halo.
void testGrid(int dims, const long long *n, const int *procs,
              const DecompositionOptions &base) {
  constexpr int G = 2;
  DecompositionOptions o = base;
  for (int a = 0; a < 3; ++a)
    o.procs[a] = a < dims ? procs[a] : 0;
  Decomposition d(MPI_COMM_WORLD, dims, n, o);
  int p3[3] = {procs[0], dims > 1 ? procs[1] : 1, dims > 2 ? procs[2] : 1};
  if (!d.ok()) {
    expect(false, d.error().c_str(), 0, dims, p3, 0);
    return;
  }
  const int rank = d.rank();
  // The blocks: every point owned once; neighbours see this rank back.
  std::vector<int> owners(d.globalPoints(), 0);
  for (int r = 0; r < d.size(); ++r) {
    long long lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    d.blockOf(r, lo, hi);
    for (long long i = lo[0]; i < hi[0]; ++i)
      for (long long j = dims > 1 ? lo[1] : 0; j < (dims > 1 ? hi[1] : 1); ++j)
        for (long long k = dims > 2 ? lo[2] : 0; k < (dims > 2 ? hi[2] : 1);
             ++k)
          ++owners[(i * (dims > 1 ? n[1] : 1) + j) * (dims > 2 ? n[2] : 1) + k];
    for (int a = 0; a < dims; ++a) {
      long long len = hi[a] - lo[a];
      expect(len == n[a] / d.procs(a) || len == n[a] / d.procs(a) + 1,
             "unbalanced block", rank, dims, p3, len);
    }
  }
  for (long long i = 0; i < d.globalPoints(); ++i)
    expect(owners[i] == 1, "a point not owned exactly once", rank, dims, p3, i);
  for (int a = 0; a < dims; ++a)
    for (int s = 0; s < 2; ++s) {
      int back[2] = {-1, -1};
      MPI_Sendrecv(&rank, 1, MPI_INT, d.neighbour(a, s), 0, &back[0], 1,
                   MPI_INT, d.neighbour(a, 1 - s), 0, d.comm(),
                   MPI_STATUS_IGNORE);
      expect(back[0] == d.neighbour(a, 1 - s), "neighbours disagree", rank,
             dims, p3, a);
    }

  // The exchange.
  Shape<G> shape{};
  shape.dims = dims;
  shape.fuse = 2;
  const int radius[3] = {1, 2, 1};
  for (int a = 0; a < 3; ++a) {
    shape.radius[a] = a < dims ? radius[a] : 0;
    shape.reach[a] = 0;
    shape.tile[a] = 8;
  }
  for (int g = 0; g < G; ++g) {
    shape.updated[g] = true;
    for (int a = 0; a < 3; ++a)
      shape.periodic[g][a] = g == 0 && a < dims;
  }
  const Layout<G> l = makeLayout<G, float>(d, shape);
  ExchangeState *st = nullptr;
  if (exchangeState(d, st) != cudaSuccess) {
    expect(false, "no exchange state", rank, dims, p3, 0);
    return;
  }
  const bool all[G] = {true, true};
  if (reserveStaging<G, float>(*st, l, all) != cudaSuccess) {
    expect(false, "no staging", rank, dims, p3, 0);
    return;
  }
  std::vector<std::vector<float>> buf(G, std::vector<float>(l.points()));
  for (int depthStep = 1; depthStep <= shape.fuse; ++depthStep) {
    long long depth[3] = {0, 0, 0};
    for (int a = 0; a < dims; ++a)
      depth[3 - dims + a] = static_cast<long long>(depthStep) * radius[a];
    // Block values, NaN elsewhere.
    for (int g = 0; g < G; ++g)
      for (long long p = 0; p < l.points(); ++p) {
        long long x[3] = {l.b[0] + p / (l.m[1] * l.m[2]),
                          l.b[1] + p / l.m[2] % l.m[1], l.b[2] + p % l.m[2]};
        bool inBlock = true;
        for (int a = 0; a < 3; ++a)
          inBlock &= x[a] >= l.lo[a] && x[a] < l.hi[a];
        long long gx[3] = {0, 0, 0};
        for (int a = 0; a < dims; ++a)
          gx[a] = x[3 - dims + a];
        buf[g][p] = inBlock ? valueOf(g, gx) : NAN;
      }
    float *ptrs[G] = {buf[0].data(), buf[1].data()};
    Timings t;
    if (exchangeHalos<G, float>(d, *st, l, ptrs, all, depth, &t) !=
        cudaSuccess) {
      expect(false, "exchangeHalos failed", rank, dims, p3, depthStep);
      continue;
    }
    for (int g = 0; g < G; ++g)
      for (long long p = 0; p < l.points(); ++p) {
        long long x[3] = {l.b[0] + p / (l.m[1] * l.m[2]),
                          l.b[1] + p / l.m[2] % l.m[1], l.b[2] + p % l.m[2]};
        // Filled: inside the block, or within `depth` of it on a side
        // that exchanges, along every axis.
        bool filled = true, inBlock = true;
        for (int a = 0; a < 3; ++a) {
          bool in = x[a] >= l.lo[a] && x[a] < l.hi[a];
          inBlock &= in;
          bool low = x[a] >= l.lo[a] - depth[a] && x[a] < l.lo[a] &&
                     l.exchange[g][a][0];
          bool high = x[a] >= l.hi[a] && x[a] < l.hi[a] + depth[a] &&
                      l.exchange[g][a][1];
          filled &= in || low || high;
        }
        long long gx[3] = {0, 0, 0};
        for (int a = 0; a < dims; ++a)
          gx[a] = wrapped(x[3 - dims + a], n[a]);
        if (filled)
          expect(buf[g][p] == valueOf(g, gx),
                 inBlock ? "a block point changed" : "a ghost point is wrong",
                 rank, dims, p3, p);
        else
          expect(std::isnan(buf[g][p]), "a point beyond the halo was written",
                 rank, dims, p3, p);
      }
  }
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  DecompositionOptions base;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--transport=", 12) == 0)
      parseTransport(argv[i] + 12, base.transport);
    else if (std::strcmp(argv[i], "--self-exchange") == 0)
      base.selfExchange = true;
  }
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Odd extents, not multiples of the process counts; every block holds
  // the halo of fuse 2 times radius (1, 2, 1).
  const long long sizes[3][3] = {{23, 1, 1}, {13, 21, 1}, {9, 17, 11}};
  int grids = 0;
  for (int dims = 1; dims <= 3; ++dims)
    for (int p0 = 1; p0 <= size; ++p0)
      for (int p1 = 1; p1 <= (dims > 1 ? size : 1); ++p1)
        for (int p2 = 1; p2 <= (dims > 2 ? size : 1); ++p2) {
          if (p0 * p1 * p2 != size)
            continue;
          const int procs[3] = {p0, p1, p2};
          testGrid(dims, sizes[dims - 1], procs, base);
          ++grids;
        }
  long long mine[2] = {checks, failures}, all[2] = {0, 0};
  MPI_Reduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("exchange: %d ranks, %d process grids, %lld checks, %lld "
                "failures\n",
                size, grids, all[0], all[1]);
  MPI_Finalize();
  return all[1] == 0 ? 0 : 1;
}
