//===- distributed.cuh - Halo exchange and passes --------------*- CUDA -*-===//
//
// What code generated with stencilc --distributed runs around its kernels.
// Each rank computes its block of the global grid with the same kernels and
// the same tiles as run() on the whole grid: tiles stay where run() puts
// them, in global coordinates, and every boundary rule is applied against
// the global extents, so every point takes the same operations in the same
// order as in run(). A rank keeps each grid in a buffer of its block plus
// ghost layers of kFuse * radius points on the sides where another rank (or
// a periodic wrap) lies; before each pass of t fused steps the ghosts are
// filled with t * radius points from the neighbours (deep halos), axis
// after axis, each axis's messages spanning the ghosts of the axes before
// it, so the corners arrive too. The tiles that read no ghost compute while
// the halo is in flight, on the caller's stream; the rest after it.
// docs/architecture.md, "Distributed runs", tells the whole design.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_DISTRIBUTED_CUH
#define STENCILC_DISTRIBUTED_CUH

#ifndef STENCILC_RUNTIME_CUH
#include "stencilc/runtime.cuh"
#endif
#ifndef STENCILC_DISTRIBUTED_H
#include "stencilc/distributed.h"
#endif

#if defined(STENCILC_WITH_NCCL)
#include <nccl.h>
#endif
// OpenMPI states its CUDA awareness here (MPIX_CUDA_AWARE_SUPPORT).
#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <algorithm>
#include <climits>
#include <memory>
#include <numeric>
#include <vector>

namespace stencilc::dist {

/// The part of a kernel's arguments that places it in a distributed run:
/// where its grids' buffers lie in the global grid, which points it stores,
/// and which of run()'s tiles it computes. run() passes wholeView().
struct View {
  /// The buffers' first point in global coordinates (periodic axes
  /// unwrapped: a ghost before the grid's start is negative) and their
  /// extents.
  long long b[3], m[3];
  /// What a periodic axis's buffer coordinates wrap by: the grid's extent
  /// where the kernel wraps (one rank spans the axis and holds no ghost);
  /// elsewhere kNoWrap, since the points a rank needs lie within its
  /// ghosts unwrapped, and wrapping by the extent could land on a ghost
  /// point this pass did not fill.
  long long period[3];
  /// The block this rank stores, [lo, hi).
  long long lo[3], hi[3];
  /// Along non-periodic axes, the buffer coordinates that are inside both
  /// the buffer and the grid: [qlo, qhi).
  long long qlo[3], qhi[3];
  /// The launch's tiles: tlo + [0, tn) along each axis, of which those in
  /// tlo + [hlo, hhi) form the hole (the tiles that read no ghost).
  long long tlo[3], tn[3], hlo[3], hhi[3];
  /// A common divisor of the last axis's buffer origin and extent and of
  /// the block's bounds (not the grid's end): 16-byte chunks apply where
  /// it is a multiple of the chunk.
  long long grain;
  /// 1: the launch computes the hole's tiles; 0: the others.
  int inner;
  /// The step index t of the pass's first step (steps done before it).
  long long t0;
};

constexpr long long kNoWrap = 1LL << 62;

/// Tile coordinates t of block i of a launch over view v.
STENCILC_HD void viewTile(const View &v, long long i, int dims, long long *t) {
  if (v.inner) {
    for (int a = dims - 1; a >= 0; --a) {
      const long long n = v.hhi[a] - v.hlo[a];
      t[a] = v.hlo[a] + i % n;
      i /= n;
    }
  } else {
    rt::frameTile(i, dims, v.tn, v.hlo, v.hhi, t);
  }
  for (int a = 0; a < dims; ++a)
    t[a] += v.tlo[a];
}

/// The thread blocks of a launch over v: the hole's tiles, or the others.
inline long long viewBlocks(const View &v, int dims) {
  long long all = 1, hole = 1;
  for (int a = 0; a < dims; ++a) {
    all *= v.tn[a];
    hole *= v.hhi[a] - v.hlo[a];
  }
  return v.inner ? hole : all - hole;
}

/// The view of run(): the buffers are the whole grid of extents n, and the
/// launch computes every tile.
inline View wholeView(int dims, const long long *n, const int *tile) {
  View v{};
  for (int a = 0; a < 3; ++a) {
    const long long e = a < dims ? n[a] : 1;
    v.m[a] = v.hi[a] = v.qhi[a] = v.period[a] = e;
    v.tn[a] = a < dims ? (e + tile[a] - 1) / tile[a] : 1;
  }
  v.grain = n[dims - 1];
  return v;
}

/// A stencil as the exchange sees it; the generated run_distributed fills
/// it from its constants.
template <int G> struct Shape {
  int dims;
  int fuse;      ///< Steps of a full pass.
  int radius[3]; ///< The halo one step needs of the updated grids, per axis.
  /// How far the update reads the read-only grids, per axis: a pass reads
  /// them up to (fuse - 1) * radius + reach from its block.
  int reach[3];
  int tile[3]; ///< run()'s tile.
  /// Points a block reads beyond its tile's box (16-byte chunks, the
  /// streaming kernel's rows ahead): the hole keeps them off the ghosts.
  int margin[3];
  bool updated[G];
  bool periodic[G][3];
  /// The ghosts a pass needs along axis a: fuse radii of the updated
  /// grids, or what the last step reads of a read-only grid.
  int ghost(int a) const {
    return std::max(fuse * radius[a], (fuse - 1) * radius[a] + reach[a]);
  }
};

//===----------------------------------------------------------------------===//
// Copies of boxes between strided arrays (ghosts in, blocks out, packing)
//===----------------------------------------------------------------------===//

/// A box of e[0] x e[1] x e[2] elements, at element offsets with strides
/// (in elements) of its rows and planes, in both arrays.
struct BoxCopy {
  long long e[3];
  long long dstOff, dstStride[2];
  long long srcOff, srcStride[2];
  long long total;
  unsigned threads, blocks;
};

template <class Elem>
__global__ void copyBoxKernel(Elem *dst, const Elem *src, const BoxCopy c) {
  const long long step = static_cast<long long>(c.threads) * c.blocks;
  for (long long i =
           static_cast<long long>(blockIdx.x) * c.threads + threadIdx.x;
       i < c.total; i += step) {
    const long long k = i % c.e[2], r = i / c.e[2];
    const long long j = r % c.e[1], p = r / c.e[1];
    dst[c.dstOff + p * c.dstStride[0] + j * c.dstStride[1] + k] =
        src[c.srcOff + p * c.srcStride[0] + j * c.srcStride[1] + k];
  }
}

/// Extents and origins of one array, padded to three axes.
struct Extent3 {
  long long n[3] = {1, 1, 1};
  long long o[3] = {0, 0, 0};
  static Extent3 of(int dims, const long long *n, const long long *o) {
    Extent3 x;
    for (int a = 0; a < dims; ++a) {
      x.n[3 - dims + a] = n[a];
      x.o[3 - dims + a] = o ? o[a] : 0;
    }
    return x;
  }
  long long offset() const { return (o[0] * n[1] + o[1]) * n[2] + o[2]; }
};

/// Copies box `e` (three axes) from src at s.o to dst at d.o.
template <class Elem>
cudaError_t copyBox(Elem *dst, const Extent3 &d, const Elem *src,
                    const Extent3 &s, const long long *e, cudaStream_t stream) {
  BoxCopy c{};
  for (int a = 0; a < 3; ++a)
    c.e[a] = e[a];
  c.total = e[0] * e[1] * e[2];
  if (c.total == 0)
    return cudaSuccess;
  c.dstOff = d.offset();
  c.dstStride[0] = d.n[1] * d.n[2];
  c.dstStride[1] = d.n[2];
  c.srcOff = s.offset();
  c.srcStride[0] = s.n[1] * s.n[2];
  c.srcStride[1] = s.n[2];
  c.threads = 256;
  c.blocks =
      static_cast<unsigned>(std::min<long long>((c.total + 255) / 256, 4096));
  STENCILC_LAUNCH(copyBoxKernel<Elem>, c.blocks, c.threads, 0, stream, dst, src,
                  c);
  return cudaGetLastError();
}

//===----------------------------------------------------------------------===//
// The exchange's state, kept in the Decomposition between runs
//===----------------------------------------------------------------------===//

/// A device or pinned host allocation that only grows.
struct Staging {
  void *ptr = nullptr;
  size_t bytes = 0;
  bool host = false;
  cudaError_t reserve(size_t want) {
    if (want <= bytes)
      return cudaSuccess;
    release();
    cudaError_t e = host ? cudaMallocHost(&ptr, want) : cudaMalloc(&ptr, want);
    if (e != cudaSuccess) {
      ptr = nullptr;
      return e;
    }
    bytes = want;
    return cudaSuccess;
  }
  void release() {
    if (ptr)
      host ? cudaFreeHost(ptr) : cudaFree(ptr);
    ptr = nullptr;
    bytes = 0;
  }
};

struct ExchangeState {
  Transport transport = Transport::Auto; ///< Resolved: never Auto.
  void *nccl = nullptr;                  ///< ncclComm_t, where used.
  cudaStream_t comm = nullptr;           ///< The exchange's stream.
  cudaEvent_t ready = nullptr, halo = nullptr;
  Staging sendDev, recvDev, sendHost{nullptr, 0, true},
      recvHost{nullptr, 0, true};
  /// Ghosted buffers: two per updated grid, one per read-only grid.
  std::vector<Staging> buffers;

  ~ExchangeState() {
    sendDev.release();
    recvDev.release();
    sendHost.release();
    recvHost.release();
    for (Staging &b : buffers)
      b.release();
    if (ready)
      cudaEventDestroy(ready);
    if (halo)
      cudaEventDestroy(halo);
    if (comm)
      cudaStreamDestroy(comm);
#if defined(STENCILC_WITH_NCCL)
    if (nccl)
      ncclCommDestroy(static_cast<ncclComm_t>(nccl));
#endif
  }
};

/// Whether MPI passes device pointers itself.
inline bool mpiIsCudaAware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

/// The decomposition's exchange state, made on first use: the transport
/// resolved, its stream and events, NCCL's communicator. Collective.
inline cudaError_t exchangeState(const Decomposition &d, ExchangeState *&out) {
  std::shared_ptr<void> &slot = d.exchangeState();
  if (slot) {
    out = static_cast<ExchangeState *>(slot.get());
    return cudaSuccess;
  }
  auto st = std::make_shared<ExchangeState>();
  Transport t = d.options().transport;
  if (t == Transport::Auto) {
#if defined(STENCILC_WITH_NCCL)
    t = Transport::Nccl;
#else
    t = mpiIsCudaAware() ? Transport::MpiDevice : Transport::Mpi;
#endif
  }
  st->transport = t;
  STENCILC_TRY(cudaStreamCreateWithFlags(&st->comm, cudaStreamNonBlocking));
  STENCILC_TRY(cudaEventCreateWithFlags(&st->ready, cudaEventDisableTiming));
  STENCILC_TRY(cudaEventCreateWithFlags(&st->halo, cudaEventDisableTiming));
  if (t == Transport::Nccl) {
#if defined(STENCILC_WITH_NCCL)
    ncclUniqueId id;
    if (d.rank() == 0 && ncclGetUniqueId(&id) != ncclSuccess)
      std::memset(&id, 0, sizeof id);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, d.comm());
    ncclComm_t comm = nullptr;
    ncclResult_t r = ncclCommInitRank(&comm, d.size(), id, d.rank());
    if (r != ncclSuccess) {
      d.setLastError(std::string("ncclCommInitRank: ") + ncclGetErrorString(r));
      return cudaErrorUnknown;
    }
    st->nccl = comm;
#else
    d.setLastError("Transport::Nccl: this code was compiled without NCCL "
                   "(define STENCILC_WITH_NCCL and link libnccl)");
    return cudaErrorNotSupported;
#endif
  }
  slot = st;
  out = st.get();
  return cudaSuccess;
}

/// Fills every buffer the decomposition's runs keep (ghosted grids,
/// staging) with all bits set, NaN in every element type: a value a run
/// reads before it writes it then shows in its result. For checks.
inline cudaError_t poisonBuffers(const Decomposition &d, cudaStream_t stream) {
  auto *st = static_cast<ExchangeState *>(d.exchangeState().get());
  if (!st)
    return cudaSuccess;
  for (Staging *b : {&st->sendDev, &st->recvDev})
    if (b->ptr)
      STENCILC_TRY(cudaMemsetAsync(b->ptr, 0xFF, b->bytes, stream));
  for (Staging &b : st->buffers)
    if (b.ptr)
      STENCILC_TRY(cudaMemsetAsync(b.ptr, 0xFF, b.bytes, stream));
  return cudaSuccess;
}

//===----------------------------------------------------------------------===//
// The layout of a rank's buffers and the halo exchange
//===----------------------------------------------------------------------===//

/// Where a rank's grids lie, which of its sides exchange, and its tiles.
template <int G> struct Layout {
  int dims = 1;
  long long n[3] = {1, 1, 1}; ///< Global extents.
  long long lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
  long long b[3] = {0, 0, 0}, m[3] = {1, 1, 1};
  /// Grid g exchanges along axis a on side s (0 low, 1 high).
  bool exchange[G][3][2] = {};
  int ghost[3][2] = {};
  int peer[3][2] = {};
  long long points() const { return m[0] * m[1] * m[2]; }
  long long blockPoints() const {
    return (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
  }
  /// Whether the buffers are exactly the block: no ghost, no padding.
  bool bare() const {
    for (int a = 0; a < dims; ++a)
      if (b[a] != lo[a] || m[a] != hi[a] - lo[a])
        return false;
    return true;
  }
};

inline long long floorDiv(long long a, long long b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

template <int G, class Elem>
Layout<G> makeLayout(const Decomposition &d, const Shape<G> &shape) {
  Layout<G> l;
  l.dims = shape.dims;
  for (int a = 0; a < shape.dims; ++a) {
    l.n[a] = d.global(a);
    l.lo[a] = d.lo(a);
    l.hi[a] = d.hi(a);
    const bool spans = d.procs(a) == 1;
    for (int s = 0; s < 2; ++s) {
      l.peer[a][s] = d.neighbour(a, s);
      for (int g = 0; g < G; ++g) {
        // One rank across a periodic axis wraps inside the kernel, unless
        // asked to exchange with itself.
        bool wraps =
            shape.periodic[g][a] && (!spans || d.options().selfExchange);
        l.exchange[g][a][s] =
            shape.ghost(a) > 0 && ((!spans && !d.atEdge(a, s)) || wraps);
        if (l.exchange[g][a][s])
          l.ghost[a][s] = shape.ghost(a);
      }
    }
    l.b[a] = l.lo[a] - l.ghost[a][0];
    l.m[a] = l.hi[a] + l.ghost[a][1] - l.b[a];
  }
  // Rows of whole 16-byte chunks where the last axis has ghosts, so that
  // the kernels' chunked loads and stores stay aligned.
  const int L = shape.dims - 1;
  const long long chunk = 16 / static_cast<long long>(sizeof(Elem));
  if (chunk > 1 && (l.ghost[L][0] || l.ghost[L][1])) {
    const long long end = l.b[L] + l.m[L];
    l.b[L] = floorDiv(l.b[L], chunk) * chunk;
    l.m[L] = (end - l.b[L] + chunk - 1) / chunk * chunk;
  }
  // Pad the layout to three axes: leading axes of one point.
  if (shape.dims < 3) {
    const int shift = 3 - shape.dims;
    for (int a = 2; a >= 0; --a) {
      const int from = a - shift;
      auto pick = [&](long long *x, long long fill) {
        x[a] = from >= 0 ? x[from] : fill;
      };
      pick(l.n, 1);
      pick(l.lo, 0);
      pick(l.hi, 1);
      pick(l.b, 0);
      pick(l.m, 1);
      for (int s = 0; s < 2; ++s) {
        l.ghost[a][s] = from >= 0 ? l.ghost[from][s] : 0;
        l.peer[a][s] = from >= 0 ? l.peer[from][s] : d.rank();
        for (int g = 0; g < G; ++g)
          l.exchange[g][a][s] = from >= 0 && l.exchange[g][from][s];
      }
    }
    l.dims = 3;
  }
  return l;
}

/// One message: grid g's slab along axis `axis` of `depth` points from
/// buffer coordinate `start`, to or from rank `peer`.
struct Message {
  int grid, axis, side;
  long long start, depth;
  int peer, tag;
  size_t bytes, staged; ///< Its size, and its offset in the staging.
  bool contiguous;
};

/// The messages of axis a of an exchange of `depth` points, in the order
/// they are posted: sends from the low side first, receives into the high
/// ghost first. Where both neighbours are one rank, a message sent towards
/// the low neighbour lands in its high ghost: NCCL matches messages between
/// two ranks in the order they are posted, and so does MPI, with one tag
/// per axis, which lets the MPI tests check the order NCCL relies on.
/// Returns the staging bytes the sends and the receives need.
template <int G, class Elem>
std::pair<size_t, size_t>
planMessages(const Layout<G> &l, const bool *grids, int a, long long depth,
             std::vector<Message> &sends, std::vector<Message> &recvs) {
  sends.clear();
  recvs.clear();
  size_t sendBytes = 0, recvBytes = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (int k = 0; k < 2; ++k) {
      const int s = pass == 0 ? k : 1 - k;
      for (int g = 0; g < G; ++g) {
        if (!grids[g] || !l.exchange[g][a][s])
          continue;
        Message msg{};
        msg.grid = g;
        msg.axis = a;
        msg.side = s;
        msg.depth = depth;
        msg.peer = l.peer[a][s];
        msg.tag = a;
        long long elems = depth;
        for (int i = 0; i < 3; ++i)
          if (i != a)
            elems *= l.m[i];
        msg.bytes = static_cast<size_t>(elems) * sizeof(Elem);
        msg.contiguous = a == 0 || (a == 1 && l.m[0] == 1) ||
                         (a == 2 && l.m[0] * l.m[1] == 1);
        const long long lo = l.lo[a] - l.b[a], hi = l.hi[a] - l.b[a];
        size_t &staged = pass == 0 ? sendBytes : recvBytes;
        msg.staged = staged;
        staged += (msg.bytes + 255) / 256 * 256;
        if (pass == 0) {
          msg.start = s == 0 ? lo : hi - depth;
          sends.push_back(msg);
        } else {
          msg.start = s == 0 ? lo - depth : hi;
          recvs.push_back(msg);
        }
      }
    }
  return {sendBytes, recvBytes};
}

/// Reserves the staging of the deepest exchange of `grids` (the whole
/// ghosts), once before the passes: a buffer that grew between two axes
/// would be freed while the exchange's stream may still use it.
template <int G, class Elem>
cudaError_t reserveStaging(ExchangeState &st, const Layout<G> &l,
                           const bool *grids) {
  std::vector<Message> sends, recvs;
  for (int a = 0; a < 3; ++a) {
    auto [sendBytes, recvBytes] = planMessages<G, Elem>(
        l, grids, a, std::max(l.ghost[a][0], l.ghost[a][1]), sends, recvs);
    STENCILC_TRY(st.sendDev.reserve(sendBytes));
    STENCILC_TRY(st.recvDev.reserve(recvBytes));
    if (st.transport == Transport::Mpi) {
      STENCILC_TRY(st.sendHost.reserve(sendBytes));
      STENCILC_TRY(st.recvHost.reserve(recvBytes));
    }
  }
  return cudaSuccess;
}

/// Moves the ghosts of one pass: for each axis in turn, every grid in
/// `grids` that exchanges there sends `depth[axis]` points from each side
/// of its block and receives as many into the ghosts beside it, spanning
/// the buffer along the other axes (the ghosts of the axes before
/// included: corners travel in two hops). Runs on st.comm, after st.ready;
/// the host waits in MPI for the MPI transports. The staging must hold
/// the deepest exchange (reserveStaging).
template <int G, class Elem>
cudaError_t exchangeHalos(const Decomposition &d, ExchangeState &st,
                          const Layout<G> &l, Elem *const *buf,
                          const bool *grids, const long long *depth,
                          Timings *timings) {
  const long long plane[3] = {l.m[1] * l.m[2], l.m[2], 1};
  std::vector<Message> sends, recvs;
  for (int a = 0; a < 3; ++a) {
    if (depth[a] == 0)
      continue;
    auto [sendBytes, recvBytes] =
        planMessages<G, Elem>(l, grids, a, depth[a], sends, recvs);
    if (sends.empty() && recvs.empty())
      continue;
    if (sendBytes > st.sendDev.bytes || recvBytes > st.recvDev.bytes) {
      d.setLastError("the halo exchange's staging was not reserved");
      return cudaErrorInvalidValue;
    }
    const bool host = st.transport == Transport::Mpi;
    // The slab of a message as a box of the buffer.
    auto slab = [&](const Message &msg, Extent3 &x, long long *e) {
      for (int i = 0; i < 3; ++i) {
        x.n[i] = l.m[i];
        x.o[i] = 0;
        e[i] = l.m[i];
      }
      x.o[a] = msg.start;
      e[a] = msg.depth;
    };
    // Where a message's bytes lie on the device: in the buffer itself where
    // the slab is contiguous, else in the staging.
    auto devicePtr = [&](const Message &msg, Staging &stage) -> Elem * {
      if (msg.contiguous)
        return buf[msg.grid] + msg.start * plane[a];
      return reinterpret_cast<Elem *>(static_cast<char *>(stage.ptr) +
                                      msg.staged);
    };
    for (const Message &msg : sends) {
      if (msg.bytes > static_cast<size_t>(INT_MAX) &&
          st.transport != Transport::Nccl) {
        d.setLastError("a halo message of more than 2 GiB");
        return cudaErrorInvalidValue;
      }
      if (!msg.contiguous) {
        Extent3 x, packed;
        long long e[3];
        slab(msg, x, e);
        for (int i = 0; i < 3; ++i)
          packed.n[i] = e[i];
        STENCILC_TRY(copyBox(devicePtr(msg, st.sendDev), packed, buf[msg.grid],
                             x, e, st.comm));
      }
      if (host)
        STENCILC_TRY(
            cudaMemcpyAsync(static_cast<char *>(st.sendHost.ptr) + msg.staged,
                            devicePtr(msg, st.sendDev), msg.bytes,
                            cudaMemcpyDeviceToHost, st.comm));
      if (timings) {
        ++timings->messages;
        timings->bytesSent += static_cast<long long>(msg.bytes);
      }
    }
    if (st.transport == Transport::Nccl) {
#if defined(STENCILC_WITH_NCCL)
      ncclComm_t comm = static_cast<ncclComm_t>(st.nccl);
      ncclResult_t r = ncclGroupStart();
      for (const Message &msg : sends)
        if (r == ncclSuccess)
          r = ncclSend(devicePtr(msg, st.sendDev), msg.bytes, ncclChar,
                       msg.peer, comm, st.comm);
      for (const Message &msg : recvs)
        if (r == ncclSuccess)
          r = ncclRecv(devicePtr(msg, st.recvDev), msg.bytes, ncclChar,
                       msg.peer, comm, st.comm);
      ncclResult_t end = ncclGroupEnd();
      if (r == ncclSuccess)
        r = end;
      if (r != ncclSuccess) {
        d.setLastError(std::string("NCCL: ") + ncclGetErrorString(r));
        return cudaErrorUnknown;
      }
#endif
    } else {
      // MPI starts from data that the stream has finished.
      STENCILC_TRY(cudaStreamSynchronize(st.comm));
      std::vector<MPI_Request> reqs;
      reqs.reserve(sends.size() + recvs.size());
      for (const Message &msg : recvs) {
        void *p = host ? static_cast<char *>(st.recvHost.ptr) + msg.staged
                       : static_cast<void *>(devicePtr(msg, st.recvDev));
        reqs.emplace_back();
        MPI_Irecv(p, static_cast<int>(msg.bytes), MPI_BYTE, msg.peer, msg.tag,
                  d.comm(), &reqs.back());
      }
      for (const Message &msg : sends) {
        void *p = host ? static_cast<char *>(st.sendHost.ptr) + msg.staged
                       : static_cast<void *>(devicePtr(msg, st.sendDev));
        reqs.emplace_back();
        MPI_Isend(p, static_cast<int>(msg.bytes), MPI_BYTE, msg.peer, msg.tag,
                  d.comm(), &reqs.back());
      }
      if (MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(),
                      MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
        d.setLastError("MPI_Waitall failed in the halo exchange");
        return cudaErrorUnknown;
      }
    }
    for (const Message &msg : recvs) {
      if (host)
        STENCILC_TRY(
            cudaMemcpyAsync(devicePtr(msg, st.recvDev),
                            static_cast<char *>(st.recvHost.ptr) + msg.staged,
                            msg.bytes, cudaMemcpyHostToDevice, st.comm));
      if (!msg.contiguous) {
        Extent3 x, packed;
        long long e[3];
        slab(msg, x, e);
        for (int i = 0; i < 3; ++i)
          packed.n[i] = e[i];
        STENCILC_TRY(copyBox(buf[msg.grid], x, devicePtr(msg, st.recvDev),
                             packed, e, st.comm));
      }
    }
  }
  return cudaSuccess;
}

//===----------------------------------------------------------------------===//
// The passes
//===----------------------------------------------------------------------===//

/// A pair of timing events around some work on a stream.
struct Span {
  cudaEvent_t begin = nullptr, end = nullptr;
  bool recorded = false;
  Span() = default;
  Span(const Span &) = delete;
  Span &operator=(const Span &) = delete;
  ~Span() {
    if (begin)
      cudaEventDestroy(begin);
    if (end)
      cudaEventDestroy(end);
  }
  cudaError_t start(cudaStream_t s) {
    if (!begin) {
      STENCILC_TRY(cudaEventCreate(&begin));
      STENCILC_TRY(cudaEventCreate(&end));
    }
    recorded = true;
    return cudaEventRecord(begin, s);
  }
  cudaError_t stop(cudaStream_t s) { return cudaEventRecord(end, s); }
  /// Milliseconds between the events, once `end` has completed; 0 if
  /// never recorded.
  double ms() const {
    float t = 0;
    if (recorded && cudaEventElapsedTime(&t, begin, end) != cudaSuccess)
      t = 0;
    return t;
  }
};

/// The spans of one pass: the exchange, the hole's tiles, the others.
struct PassSpans {
  Span exchange, inner, frame;
};

/// Runs `steps` steps of a stencil of G grids over a decomposition.
/// grids[g] is this rank's block of grid g, a dense row-major device array;
/// updated grids are advanced in place. launch(view, in, out, nt, blocks,
/// stream) launches one pass of nt steps of the generated kernel over
/// view's tiles, reading buffers in[g] and writing out[g] (updated grids).
template <class Elem, int G, class Launch>
cudaError_t runDistributed(const Decomposition &d, const Shape<G> &shape,
                           Elem *const *grids, long long steps,
                           cudaStream_t stream, const RunOptions &opts,
                           Launch &&launch) {
  if (!d.ok() || d.dims() != shape.dims)
    return cudaErrorInvalidValue;
  // Every rank returns the same error, or none does and all exchange.
  int fine = steps >= 0;
  for (int g = 0; g < G; ++g)
    fine &= grids[g] != nullptr;
  int allFine = 0;
  MPI_Allreduce(&fine, &allFine, 1, MPI_INT, MPI_MIN, d.comm());
  if (!allFine) {
    d.setLastError(fine ? "another rank was given a null grid or negative "
                          "steps"
                        : "a null grid or negative steps");
    return cudaErrorInvalidValue;
  }
  const Layout<G> l = makeLayout<G, Elem>(d, shape);
  const int shift = 3 - shape.dims;
  // A halo comes from the next rank only: every block must hold it.
  for (int a = 0; a < shape.dims; ++a)
    if ((l.ghost[a + shift][0] || l.ghost[a + shift][1]) &&
        d.global(a) / d.procs(a) < shape.ghost(a)) {
      d.setLastError(
          "axis " + std::to_string(a) + " gives blocks of " +
          std::to_string(d.global(a) / d.procs(a)) +
          " points, fewer than the halo of " + std::to_string(shape.ghost(a)) +
          " (fused steps times radius) that each pass takes from one "
          "neighbour; use fewer ranks along it or fewer fused steps");
      return cudaErrorInvalidValue;
    }
  if (steps == 0)
    return cudaSuccess;
  ExchangeState *st = nullptr;
  STENCILC_TRY(exchangeState(d, st));
  if (opts.timings) {
    *opts.timings = Timings();
    opts.timings->transport = st->transport;
  }

  // The kernels' view of this rank's buffers, in the stencil's own axes.
  View v{};
  bool anyExchange = false, ghostGrid[G] = {};
  for (int g = 0; g < G; ++g)
    for (int a = 0; a < 3; ++a)
      for (int s = 0; s < 2; ++s)
        if (l.exchange[g][a][s])
          anyExchange = ghostGrid[g] = true;
  long long holeAll = 1;
  for (int i = 0; i < 3; ++i) {
    const int a = i + shift; // axis i of the stencil in the padded layout
    if (i >= shape.dims) {
      v.m[i] = v.hi[i] = v.qhi[i] = v.tn[i] = v.hhi[i] = v.period[i] = 1;
      continue;
    }
    v.b[i] = l.b[a];
    v.m[i] = l.m[a];
    v.period[i] = l.ghost[a][0] || l.ghost[a][1] ? kNoWrap : l.n[a];
    v.lo[i] = l.lo[a];
    v.hi[i] = l.hi[a];
    v.qlo[i] = std::max(0LL, -l.b[a]);
    v.qhi[i] = std::min(l.m[a], l.n[a] - l.b[a]);
    const long long T = shape.tile[i];
    v.tlo[i] = l.lo[a] / T;
    v.tn[i] = (l.hi[a] + T - 1) / T - v.tlo[i];
    // The hole: tiles whose box, and what a block reads beyond it, stays
    // off the ghosts.
    const long long reach = shape.ghost(i) + shape.margin[i];
    long long first = v.tlo[i], last = v.tlo[i] + v.tn[i];
    if (l.ghost[a][0])
      first = std::max(first, (l.lo[a] + reach + T - 1) / T);
    if (l.ghost[a][1])
      last = std::min(last, floorDiv(l.hi[a] - reach, T));
    v.hlo[i] = std::min(first, last) - v.tlo[i];
    v.hhi[i] = std::max(first, last) - v.tlo[i];
    if (last <= first)
      v.hhi[i] = v.hlo[i];
    holeAll *= v.hhi[i] - v.hlo[i];
  }
  {
    const int L = shape.dims - 1;
    long long gr = std::gcd(std::llabs(v.b[L]), v.m[L]);
    gr = std::gcd(gr, v.lo[L]);
    if (v.hi[L] != d.global(L))
      gr = std::gcd(gr, v.hi[L]);
    v.grain = gr;
  }
  const bool overlap = opts.overlap && anyExchange && holeAll > 0;
  if (!overlap)
    for (int i = 0; i < 3; ++i)
      v.hlo[i] = v.hhi[i] = 0;

  // Buffers: the caller's grids where the layout is bare, else ghosted
  // copies, kept in the exchange state for the next run.
  const bool bare = l.bare();
  const size_t bytes =
      static_cast<size_t>(bare ? l.blockPoints() : l.points()) * sizeof(Elem);
  if (st->buffers.size() < static_cast<size_t>(2 * G))
    st->buffers.resize(2 * G);
  Elem *cur[G], *nxt[G];
  long long blockOrigin[3], blockExt[3];
  for (int a = 0; a < 3; ++a) {
    blockOrigin[a] = l.lo[a] - l.b[a];
    blockExt[a] = l.hi[a] - l.lo[a];
  }
  const Extent3 inBuf = Extent3::of(3, l.m, blockOrigin);
  const Extent3 dense = Extent3::of(3, blockExt, nullptr);
  for (int g = 0; g < G; ++g) {
    nxt[g] = nullptr;
    if (bare) {
      cur[g] = grids[g];
    } else {
      STENCILC_TRY(st->buffers[2 * g].reserve(bytes));
      cur[g] = static_cast<Elem *>(st->buffers[2 * g].ptr);
      STENCILC_TRY(copyBox(cur[g], inBuf, grids[g], dense, blockExt, stream));
    }
    if (shape.updated[g]) {
      STENCILC_TRY(st->buffers[2 * g + 1].reserve(bytes));
      nxt[g] = static_cast<Elem *>(st->buffers[2 * g + 1].ptr);
    }
  }

  if (anyExchange)
    STENCILC_TRY((reserveStaging<G, Elem>(*st, l, ghostGrid)));

  std::vector<std::unique_ptr<PassSpans>> spans;
  Span total;
  if (opts.timings)
    STENCILC_TRY(total.start(stream));
  cudaError_t status = cudaSuccess;
  for (long long done = 0; done < steps && status == cudaSuccess;) {
    const int nt =
        static_cast<int>(std::min<long long>(shape.fuse, steps - done));
    PassSpans *ev = nullptr;
    if (opts.timings) {
      spans.push_back(std::make_unique<PassSpans>());
      ev = spans.back().get();
      ++opts.timings->passes;
    }
    auto run = [&](int inner) -> cudaError_t {
      View w = v;
      w.inner = inner;
      w.t0 = done;
      const long long blocks = viewBlocks(w, shape.dims);
      if (blocks == 0)
        return cudaSuccess;
      if (blocks > 0x7fffffffLL)
        return cudaErrorInvalidConfiguration;
      Span *span = ev ? (inner ? &ev->inner : &ev->frame) : nullptr;
      if (span)
        STENCILC_TRY(span->start(stream));
      STENCILC_TRY(launch(w, cur, nxt, nt, blocks, stream));
      if (span)
        STENCILC_TRY(span->stop(stream));
      return cudaSuccess;
    };
    if (anyExchange) {
      // The halo: nt radii of the updated grids every pass, and the whole
      // ghosts, with the read-only grids', once.
      long long depth[3] = {0, 0, 0};
      bool which[G];
      for (int g = 0; g < G; ++g)
        which[g] = ghostGrid[g] && (shape.updated[g] || done == 0);
      for (int i = 0; i < shape.dims; ++i)
        depth[i + shift] = done == 0
                               ? shape.ghost(i)
                               : static_cast<long long>(nt) * shape.radius[i];
      STENCILC_TRY(cudaEventRecord(st->ready, stream));
      STENCILC_TRY(cudaStreamWaitEvent(st->comm, st->ready, 0));
      if (overlap)
        STENCILC_TRY(run(1));
      if (ev)
        STENCILC_TRY(ev->exchange.start(st->comm));
      STENCILC_TRY(exchangeHalos(d, *st, l, cur, which, depth, opts.timings));
      if (ev)
        STENCILC_TRY(ev->exchange.stop(st->comm));
      STENCILC_TRY(cudaEventRecord(st->halo, st->comm));
      STENCILC_TRY(cudaStreamWaitEvent(stream, st->halo, 0));
    }
    status = run(0);
    for (int g = 0; g < G; ++g)
      if (shape.updated[g])
        std::swap(cur[g], nxt[g]);
    done += nt;
  }
  STENCILC_TRY(status);
  // The result back into the caller's grids.
  for (int g = 0; g < G; ++g) {
    if (!shape.updated[g] || cur[g] == grids[g])
      continue;
    if (bare)
      STENCILC_TRY(cudaMemcpyAsync(grids[g], cur[g], bytes,
                                   cudaMemcpyDeviceToDevice, stream));
    else
      STENCILC_TRY(copyBox(grids[g], dense, cur[g], inBuf, blockExt, stream));
  }
  if (opts.timings) {
    STENCILC_TRY(total.stop(stream));
    STENCILC_TRY(cudaStreamSynchronize(stream));
    STENCILC_TRY(cudaStreamSynchronize(st->comm));
    Timings &t = *opts.timings;
    t.totalMs = total.ms();
    for (const auto &p : spans) {
      t.exchangeMs += p->exchange.ms();
      t.interiorMs += p->inner.ms();
      t.frameMs += p->frame.ms();
    }
  }
  return cudaSuccess;
}

} // namespace stencilc::dist

#endif // STENCILC_DISTRIBUTED_CUH
