//===- distributed.h - A grid split over the ranks of MPI -------*- C++ -*-===//
//
// The host interface of run_distributed (stencilc --distributed): the
// decomposition of a global grid over a Cartesian grid of MPI processes,
// each holding one block, and the options of a distributed run. Plain C++
// and MPI, no CUDA: the generated header embeds this file, so that the code
// which calls run_distributed builds with any C++ compiler and MPI's include
// path. The exchange itself is in distributed.cuh (docs/user-guide.md,
// "Many GPUs").
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_DISTRIBUTED_H
#define STENCILC_DISTRIBUTED_H

// Neither OpenMPI's nor MPICH's deprecated C++ bindings: the C interface
// only, so that no MPI C++ library needs linking.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace stencilc::dist {

/// How halos move between ranks.
enum class Transport {
  /// NCCL where the generated .cu was compiled with STENCILC_WITH_NCCL,
  /// else MpiDevice where MPI says it is CUDA-aware, else Mpi.
  Auto,
  /// ncclSend/ncclRecv between GPUs, grouped per axis; the communicator is
  /// bootstrapped through MPI on the first run. One rank per GPU.
  Nccl,
  /// MPI on host memory: halos are staged through pinned host buffers.
  /// Works with any MPI, and with several ranks sharing one GPU.
  Mpi,
  /// MPI on device pointers, for a CUDA-aware MPI.
  MpiDevice,
};

inline const char *transportName(Transport t) {
  switch (t) {
  case Transport::Auto:
    return "auto";
  case Transport::Nccl:
    return "nccl";
  case Transport::Mpi:
    return "mpi";
  case Transport::MpiDevice:
    return "mpi-device";
  }
  return "?";
}

/// Parses "auto", "nccl", "mpi" or "mpi-device".
inline bool parseTransport(const char *text, Transport &t) {
  for (Transport c :
       {Transport::Auto, Transport::Nccl, Transport::Mpi, Transport::MpiDevice})
    if (std::strcmp(text, transportName(c)) == 0) {
      t = c;
      return true;
    }
  return false;
}

struct DecompositionOptions {
  /// Ranks along each axis; 0 leaves the axis to MPI_Dims_create, which
  /// balances the process grid (slowest axes first). The product of the
  /// axes given must divide the number of ranks.
  int procs[3] = {0, 0, 0};
  Transport transport = Transport::Auto;
  /// Exchange halos across a periodic axis that one rank spans whole, with
  /// itself, instead of wrapping inside the kernel: for testing a transport
  /// on a single rank. The results are the same.
  bool selfExchange = false;
};

/// What run_distributed measured (RunOptions::timings): CUDA events on the
/// compute stream and on the exchange's own stream, summed over the passes.
struct Timings {
  double totalMs = 0;    ///< From the first pass to the last, on the stream.
  double exchangeMs = 0; ///< Packing, transfer and unpacking of the halos.
  double interiorMs = 0; ///< Tiles that need no halo (overlapping it).
  double frameMs = 0;    ///< Tiles that wait for the halo.
  long long passes = 0;
  long long messages = 0;                ///< Sent by this rank.
  long long bytesSent = 0;               ///< By this rank.
  Transport transport = Transport::Auto; ///< The one that ran.
};

struct RunOptions {
  /// Compute the tiles that need no halo while the halo is in flight, on
  /// another stream; false exchanges first and then computes every tile.
  bool overlap = true;
  /// Where to store the run's timings; null measures nothing. Measuring
  /// synchronizes the stream at the end of the run.
  Timings *timings = nullptr;
};

/// A global grid of `dims` axes split into blocks over a Cartesian grid of
/// the ranks of an MPI communicator. Each rank holds one block, the points
/// [lo(a), hi(a)) of every axis a; blocks differ by at most one point along
/// an axis, the first ones being the larger. Neighbours wrap around (a
/// periodic stencil uses them; others only where the side is not the
/// grid's edge). Constructing and destroying it are collective over the
/// communicator; so is every run_distributed that uses it.
class Decomposition {
public:
  Decomposition(MPI_Comm comm, int dims, const long long *global,
                const DecompositionOptions &options = DecompositionOptions()) {
    init(comm, dims, global, options);
  }
  ~Decomposition() { release(); }
  Decomposition(const Decomposition &) = delete;
  Decomposition &operator=(const Decomposition &) = delete;
  Decomposition(Decomposition &&o) noexcept { *this = std::move(o); }
  Decomposition &operator=(Decomposition &&o) noexcept {
    if (this != &o) {
      release();
      dims_ = o.dims_;
      std::copy(o.global_, o.global_ + 3, global_);
      std::copy(o.procs_, o.procs_ + 3, procs_);
      std::copy(o.coords_, o.coords_ + 3, coords_);
      std::copy(o.lo_, o.lo_ + 3, lo_);
      std::copy(o.hi_, o.hi_ + 3, hi_);
      std::copy(&o.neighbours_[0][0], &o.neighbours_[0][0] + 6,
                &neighbours_[0][0]);
      rank_ = o.rank_;
      size_ = o.size_;
      ok_ = o.ok_;
      options_ = o.options_;
      error_ = std::move(o.error_);
      cart_ = o.cart_;
      state_ = std::move(o.state_);
      o.cart_ = MPI_COMM_NULL;
      o.ok_ = false;
    }
    return *this;
  }

  /// False when the constructor's arguments could not be used; error() says
  /// why. Every rank agrees, as every rank gets the same arguments.
  bool ok() const { return ok_; }
  const std::string &error() const { return error_; }

  int dims() const { return dims_; }
  long long global(int a) const { return global_[a]; }
  long long globalPoints() const {
    long long n = 1;
    for (int a = 0; a < dims_; ++a)
      n *= global_[a];
    return n;
  }
  /// Ranks along axis a, and this rank's coordinate among them.
  int procs(int a) const { return procs_[a]; }
  int coord(int a) const { return coords_[a]; }
  /// This rank's block: [lo(a), hi(a)) along axis a.
  long long lo(int a) const { return lo_[a]; }
  long long hi(int a) const { return hi_[a]; }
  long long extent(int a) const { return hi_[a] - lo_[a]; }
  /// Points of this rank's block.
  long long points() const {
    long long n = 1;
    for (int a = 0; a < dims_; ++a)
      n *= extent(a);
    return n;
  }
  /// The rank beside this one along axis a, below (side 0) or above (side
  /// 1), wrapping around; this rank itself where one rank spans the axis.
  int neighbour(int a, int side) const { return neighbours_[a][side]; }
  /// Whether this rank's block touches the grid's low (side 0) or high
  /// (side 1) edge along axis a.
  bool atEdge(int a, int side) const {
    return side == 0 ? coords_[a] == 0 : coords_[a] == procs_[a] - 1;
  }
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// The Cartesian communicator (rank order as in the one given).
  MPI_Comm comm() const { return cart_; }
  const DecompositionOptions &options() const { return options_; }
  /// What went wrong in the last run_distributed that returned an error
  /// beyond its CUDA error code (a halo too deep for the blocks, NCCL's
  /// own error); empty when nothing was recorded.
  const std::string &lastError() const { return lastError_; }
  void setLastError(std::string what) const { lastError_ = std::move(what); }

  /// [lo, hi) of coordinate c of P along an axis of n points.
  static void split(long long n, int p, int c, long long &lo, long long &hi) {
    const long long q = n / p, r = n % p;
    lo = c * q + std::min<long long>(c, r);
    hi = lo + q + (c < r ? 1 : 0);
  }
  /// The block of any rank.
  void blockOf(int rank, long long *lo, long long *hi) const {
    int c[3] = {0, 0, 0};
    MPI_Cart_coords(cart_, rank, dims_, c);
    for (int a = 0; a < dims_; ++a)
      split(global_[a], procs_[a], c[a], lo[a], hi[a]);
  }

  /// Gathers every rank's block of host array `local` (row-major, this
  /// rank's extents) into `global` (row-major, the global extents) on rank
  /// `root`; `global` may be null elsewhere. Collective. Returns
  /// MPI_SUCCESS or MPI's error.
  template <class T> int gather(const T *local, T *global, int root = 0) const {
    return moveBlocks(const_cast<T *>(local), global, root, true);
  }
  /// The reverse: rank `root` sends each rank its block of `global`.
  template <class T>
  int scatter(const T *global, T *local, int root = 0) const {
    return moveBlocks(local, const_cast<T *>(global), root, false);
  }

  /// The state of the exchange (streams, staging buffers, the NCCL
  /// communicator), created by the first run_distributed and kept for the
  /// next ones: distributed.cuh's alone.
  std::shared_ptr<void> &exchangeState() const { return state_; }

private:
  void init(MPI_Comm comm, int dims, const long long *global,
            const DecompositionOptions &options) {
    options_ = options;
    dims_ = dims;
    if (dims < 1 || dims > 3)
      return fail("dims must be 1, 2 or 3");
    for (int a = 0; a < dims; ++a) {
      global_[a] = global[a];
      if (global[a] <= 0)
        return fail("every global extent must be positive");
    }
    int size = 0;
    MPI_Comm_size(comm, &size);
    int fixed = 1;
    for (int a = 0; a < dims; ++a) {
      if (options.procs[a] < 0)
        return fail("a process count must not be negative");
      procs_[a] = options.procs[a];
      if (procs_[a] > 0)
        fixed *= procs_[a];
    }
    if (size % fixed != 0)
      return fail("the process counts given (product " + std::to_string(fixed) +
                  ") do not divide the " + std::to_string(size) + " ranks");
    // MPI_Dims_create fills the zeros, as balanced as it can.
    if (MPI_Dims_create(size, dims, procs_) != MPI_SUCCESS)
      return fail("MPI_Dims_create failed");
    long long product = 1;
    for (int a = 0; a < dims; ++a) {
      product *= procs_[a];
      if (procs_[a] > global_[a])
        return fail("axis " + std::to_string(a) + " has " +
                    std::to_string(global_[a]) + " points for " +
                    std::to_string(procs_[a]) + " ranks");
    }
    if (product != size)
      return fail("the process grid has " + std::to_string(product) +
                  " ranks, the communicator " + std::to_string(size));
    int periods[3] = {1, 1, 1};
    if (MPI_Cart_create(comm, dims, procs_, periods, 0, &cart_) != MPI_SUCCESS)
      return fail("MPI_Cart_create failed");
    MPI_Comm_rank(cart_, &rank_);
    size_ = size;
    MPI_Cart_coords(cart_, rank_, dims, coords_);
    for (int a = 0; a < dims; ++a) {
      split(global_[a], procs_[a], coords_[a], lo_[a], hi_[a]);
      MPI_Cart_shift(cart_, a, 1, &neighbours_[a][0], &neighbours_[a][1]);
    }
    ok_ = true;
  }
  void fail(const std::string &why) {
    ok_ = false;
    error_ = "stencilc::dist::Decomposition: " + why;
  }
  void release() {
    state_.reset();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (cart_ != MPI_COMM_NULL && !finalized)
      MPI_Comm_free(&cart_);
    cart_ = MPI_COMM_NULL;
  }
  /// Gather (toRoot) or scatter of the blocks, a message of at most 1 GiB
  /// at a time.
  template <class T>
  int moveBlocks(T *local, T *global, int root, bool toRoot) const {
    constexpr long long kChunk = 1LL << 30;
    auto transfer = [&](T *data, long long count, int peer, bool send) {
      char *p = reinterpret_cast<char *>(data);
      long long bytes = count * static_cast<long long>(sizeof(T));
      for (long long off = 0; off < bytes || bytes == 0; off += kChunk) {
        int n = static_cast<int>(std::min(kChunk, bytes - off));
        int rc = send ? MPI_Send(p + off, n, MPI_BYTE, peer, 7, cart_)
                      : MPI_Recv(p + off, n, MPI_BYTE, peer, 7, cart_,
                                 MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || bytes == 0)
          return rc;
      }
      return MPI_SUCCESS;
    };
    if (rank_ != root)
      return transfer(local, points(), root, toRoot);
    std::vector<T> block;
    for (int r = 0; r < size_; ++r) {
      long long lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
      blockOf(r, lo, hi);
      long long e[3] = {1, 1, 1}, n[3] = {1, 1, 1};
      for (int a = 0; a < dims_; ++a) {
        e[3 - dims_ + a] = hi[a] - lo[a];
        n[3 - dims_ + a] = global_[a];
      }
      long long o[3] = {0, 0, 0};
      for (int a = 0; a < dims_; ++a)
        o[3 - dims_ + a] = lo[a];
      T *buf = local;
      if (r != rank_) {
        block.resize(e[0] * e[1] * e[2]);
        buf = block.data();
        if (!toRoot)
          copyRows(buf, global, e, n, o, false);
        int rc = transfer(buf, e[0] * e[1] * e[2], r, !toRoot);
        if (rc != MPI_SUCCESS)
          return rc;
      } else if (!toRoot) {
        copyRows(buf, global, e, n, o, false);
      }
      if (toRoot)
        copyRows(buf, global, e, n, o, true);
    }
    return MPI_SUCCESS;
  }
  /// Copies a block of extents e at offset o between its own dense array
  /// and the global one of extents n (into the global one when toGlobal).
  template <class T>
  static void copyRows(T *block, T *global, const long long *e,
                       const long long *n, const long long *o, bool toGlobal) {
    for (long long i = 0; i < e[0]; ++i)
      for (long long j = 0; j < e[1]; ++j) {
        T *b = block + (i * e[1] + j) * e[2];
        T *g = global + ((o[0] + i) * n[1] + o[1] + j) * n[2] + o[2];
        if (toGlobal)
          std::copy(b, b + e[2], g);
        else
          std::copy(g, g + e[2], b);
      }
  }

  int dims_ = 0;
  long long global_[3] = {1, 1, 1};
  int procs_[3] = {1, 1, 1};
  int coords_[3] = {0, 0, 0};
  long long lo_[3] = {0, 0, 0}, hi_[3] = {1, 1, 1};
  int neighbours_[3][2] = {{0, 0}, {0, 0}, {0, 0}};
  int rank_ = 0, size_ = 1;
  bool ok_ = false;
  DecompositionOptions options_;
  std::string error_;
  MPI_Comm cart_ = MPI_COMM_NULL;
  mutable std::shared_ptr<void> state_;
  mutable std::string lastError_;
};

} // namespace stencilc::dist

#endif // STENCILC_DISTRIBUTED_H
