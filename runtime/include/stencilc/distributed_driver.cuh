//===- distributed_driver.cuh - mpirun driver ------------------*- CUDA -*-===//
//
// `stencilc --emit-main --distributed` appends a main() that calls
// stencilc::dist::driverMain<Problem>() under mpirun: every rank takes one
// GPU (its rank on the node, modulo the GPUs there) and the block of the
// global grid its place in the process grid gives it, filled with the very
// values the single-GPU driver draws for those points. --check gathers the
// blocks on rank 0 and compares them with run() on the whole grid on one
// GPU, point by point and bit by bit, and with the float64 reference within
// its error bound. Timing reports GStencils/s in all and per GPU, the
// parallel efficiency against run() on one GPU (of the whole grid, or of
// one rank's block under --scaling=weak), the exchange's and the kernels'
// times, and what overlapping them buys.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_DISTRIBUTED_DRIVER_CUH
#define STENCILC_DISTRIBUTED_DRIVER_CUH

#ifndef STENCILC_DRIVER_CUH
#include "stencilc/driver.cuh"
#endif
#ifndef STENCILC_DISTRIBUTED_CUH
#include "stencilc/distributed.cuh"
#endif

namespace stencilc::dist {

/// The value the single-GPU driver draws as its k-th random number.
inline double uniformAt(uint64_t seed, uint64_t k) {
  uint64_t state = seed + k * 0x9E3779B97F4A7C15ull;
  return rt::uniform01(state);
}

/// Stops every rank: a CUDA error on one would leave the others waiting.
#define STENCILC_DIST_CHECK(expr)                                              \
  do {                                                                         \
    cudaError_t stencilc_err_ = (expr);                                        \
    if (stencilc_err_ != cudaSuccess) {                                        \
      std::fprintf(stderr, "rank %d: %s:%d: CUDA error: %s (%s)%s%s\n",        \
                   worldRank, __FILE__, __LINE__,                              \
                   cudaGetErrorString(stencilc_err_), #expr,                   \
                   lastError().empty() ? "" : ": ", lastError().c_str());      \
      MPI_Abort(MPI_COMM_WORLD, 3);                                            \
      return 3;                                                                \
    }                                                                          \
  } while (0)

/// Parses "A", "AxB" or "AxBxC" of process counts (0: chosen).
inline bool parseProcs(const char *text, int dims, int *p) {
  long long n[3] = {0, 0, 0};
  int count = 0;
  for (const char *s = text; *s && count < 3;) {
    char *end = nullptr;
    n[count++] = std::strtoll(s, &end, 10);
    if (end == s || n[count - 1] < 0 || n[count - 1] > (1 << 20))
      return false;
    s = *end == 'x' ? end + 1 : end;
    if (*end && *end != 'x')
      return false;
  }
  if (count != dims)
    return false;
  for (int a = 0; a < dims; ++a)
    p[a] = static_cast<int>(n[a]);
  return true;
}

template <class P> int driverRun(int argc, char **argv, int worldRank) {
  using Elem = typename P::Elem;
  constexpr int G = P::kNumGrids;
  constexpr int D = P::kDims;
  std::string lastErrorText;
  auto lastError = [&]() -> const std::string & { return lastErrorText; };
  long long size[3] = {1, 1, 1};
  static const long long kDefault[3][3] = {
      {10240000, 1, 1}, {10240, 10240, 1}, {512, 512, 512}};
  for (int a = 0; a < D; ++a)
    size[a] = kDefault[D - 1][a];
  long long steps = P::kDefaultSteps;
  bool check = false, weak = false, overlap = true, baseline = true;
  uint64_t seed = 42;
  int reps = 5;
  double minTime = 0;
  DecompositionOptions dopts;
  const bool root = worldRank == 0;
  auto bad = [&](const char *fmt, const char *arg) {
    if (root)
      std::fprintf(stderr, fmt, arg);
    return 2;
  };
  // stencilc --distributed takes only stencils whose grids share one
  // element type; a Problem written by hand may not.
  for (size_t bytes : P::kElemBytes)
    if (bytes != sizeof(Elem))
      return bad("error: the grids of %s differ in element type; the "
                 "distributed driver needs one\n",
                 P::kName);
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (std::strncmp(arg, "--size=", 7) == 0) {
      if (!rt::parseSizes(arg + 7, D, size))
        return bad("error: bad --size '%s'\n", arg + 7);
    } else if (std::strncmp(arg, "--steps=", 8) == 0) {
      steps = std::atoll(arg + 8);
    } else if (std::strcmp(arg, "--check") == 0) {
      check = true;
    } else if (std::strncmp(arg, "--seed=", 7) == 0) {
      seed = std::strtoull(arg + 7, nullptr, 10);
    } else if (std::strncmp(arg, "--reps=", 7) == 0) {
      reps = std::atoi(arg + 7);
    } else if (std::strncmp(arg, "--min-time=", 11) == 0) {
      minTime = std::atof(arg + 11);
    } else if (std::strncmp(arg, "--procs=", 8) == 0) {
      if (!parseProcs(arg + 8, D, dopts.procs))
        return bad("error: bad --procs '%s'; one count per axis, 0 to "
                   "choose, e.g. 2x0\n",
                   arg + 8);
    } else if (std::strncmp(arg, "--transport=", 12) == 0) {
      if (!parseTransport(arg + 12, dopts.transport))
        return bad("error: unknown --transport '%s'; expected auto, nccl, "
                   "mpi or mpi-device\n",
                   arg + 12);
    } else if (std::strcmp(arg, "--scaling=weak") == 0) {
      weak = true;
    } else if (std::strcmp(arg, "--scaling=strong") == 0) {
      weak = false;
    } else if (std::strcmp(arg, "--no-overlap") == 0) {
      overlap = false;
    } else if (std::strcmp(arg, "--no-baseline") == 0) {
      baseline = false;
    } else if (std::strcmp(arg, "--self-exchange") == 0) {
      dopts.selfExchange = true;
    } else if (std::strncmp(arg, "--stencil=", 10) == 0) {
      // Chosen by main().
    } else if (std::strcmp(arg, "--help") == 0) {
      if (root)
        std::printf(
            "usage: mpirun -np N %s [--stencil=NAME] [--size=N|N0xN1[xN2]] "
            "[--scaling=strong|weak]\n"
            "       [--procs=AxB..] [--transport=auto|nccl|mpi|mpi-device] "
            "[--steps=S] [--check]\n"
            "       [--seed=N] [--reps=N] [--min-time=SEC] [--no-overlap] "
            "[--no-baseline] [--self-exchange]\n"
            "  Runs stencil %s (%s, %d-D) over the MPI ranks, one GPU each.\n"
            "  --size       the global grid; with --scaling=weak, each "
            "rank's block\n"
            "  --procs      ranks per axis, 0 to let MPI_Dims_create "
            "choose\n"
            "  --check      gather on rank 0 and compare with run() on one "
            "GPU (bit for bit)\n"
            "               and with the float64 reference (within its "
            "bound)\n"
            "  --reps       timed runs; the median is reported (0: none)\n"
            "  --no-overlap time the exchange and all tiles one after the "
            "other only\n"
            "  --no-baseline  skip timing run() on one GPU (no "
            "efficiency)\n",
            argv[0], P::kName, P::kTypeName, D);
      return 0;
    } else {
      return bad("error: unknown option '%s' (see --help)\n", arg);
    }
  }
  if (steps < 0 || reps < 0)
    return bad("error: --steps and --reps must not be negative%s\n", "");

  int ranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  // The global grid: --size, or --size per rank times the process grid.
  long long n[3] = {1, 1, 1};
  {
    int procs[3] = {dopts.procs[0], dopts.procs[1], dopts.procs[2]};
    int fixed = 1;
    for (int a = 0; a < D; ++a)
      fixed *= procs[a] > 0 ? procs[a] : 1;
    if (ranks % fixed != 0)
      return bad("error: --procs does not divide the ranks%s\n", "");
    MPI_Dims_create(ranks, D, procs);
    for (int a = 0; a < D; ++a)
      n[a] = weak ? size[a] * procs[a] : size[a];
  }
  Decomposition d(MPI_COMM_WORLD, D, n, dopts);
  if (!d.ok())
    return bad("error: %s\n", d.error().c_str());
  lastErrorText.clear();
  auto syncError = [&]() { lastErrorText = d.lastError(); };

  const long long global = d.globalPoints(), local = d.points();
  long long lo[3] = {0, 0, 0}, ext[3] = {1, 1, 1};
  for (int a = 0; a < D; ++a) {
    lo[a] = d.lo(a);
    ext[a] = d.extent(a);
  }
  // This rank's block of every grid, drawn as the single-GPU driver draws
  // the whole grid: grid after grid, row-major.
  std::vector<std::vector<Elem>> host(G, std::vector<Elem>(local));
  for (int g = 0; g < G; ++g)
    for (long long i = 0; i < local; ++i) {
      long long r = i, gi = 0, stride = 1;
      for (int a = D - 1; a >= 0; --a) {
        gi += (lo[a] + r % ext[a]) * stride;
        r /= ext[a];
        stride *= n[a];
      }
      host[g][i] = rt::Convert<Elem>::from(
          uniformAt(seed, static_cast<uint64_t>(g * global + gi)));
    }
  rt::DeviceBuffer<Elem> grids[G], initial[G];
  Elem *gridPtrs[G];
  for (int g = 0; g < G; ++g) {
    STENCILC_DIST_CHECK(grids[g].allocate(local));
    STENCILC_DIST_CHECK(initial[g].allocate(local));
    STENCILC_DIST_CHECK(cudaMemcpy(initial[g].get(), host[g].data(),
                                   local * sizeof(Elem),
                                   cudaMemcpyHostToDevice));
    gridPtrs[g] = grids[g].get();
  }
  cudaStream_t stream;
  STENCILC_DIST_CHECK(cudaStreamCreate(&stream));
  // Restores the initial blocks; the buffers a run keeps between runs
  // (ghosted grids, staging) are poisoned with NaN, so that no run can
  // pass on what an earlier one left there.
  auto reset = [&]() -> cudaError_t {
    for (int g = 0; g < G; ++g)
      STENCILC_TRY(cudaMemcpyAsync(gridPtrs[g], initial[g].get(),
                                   local * sizeof(Elem),
                                   cudaMemcpyDeviceToDevice, stream));
    STENCILC_TRY(poisonBuffers(d, stream));
    return cudaStreamSynchronize(stream);
  };
  auto runDist = [&](long long s, bool withOverlap, Timings *t) -> cudaError_t {
    RunOptions o;
    o.overlap = withOverlap;
    o.timings = t;
    cudaError_t e = P::runDistributed(d, gridPtrs, s, stream, o);
    if (e != cudaSuccess)
      syncError();
    return e;
  };

  Timings probe;
  STENCILC_DIST_CHECK(reset());
  // One step, to learn the transport and to meet any error at once. An
  // invalid value is the same on every rank (a halo deeper than the
  // blocks): an error in the options, not a crash.
  {
    cudaError_t e = runDist(1, overlap, &probe);
    if (e == cudaErrorInvalidValue && !lastErrorText.empty())
      return bad("error: %s\n", lastErrorText.c_str());
    STENCILC_DIST_CHECK(e);
  }
  std::string procsText;
  for (int a = 0; a < D; ++a)
    procsText += (a ? "x" : "") + std::to_string(d.procs(a));
  std::string sizeText;
  for (int a = 0; a < D; ++a)
    sizeText += (a ? "x" : "") + std::to_string(n[a]);
  if (root)
    std::printf("%s %s size=%s steps=%lld fuse=%d ranks=%d procs=%s "
                "transport=%s\n",
                P::kName, rt::typeName<Elem>(), sizeText.c_str(), steps,
                P::kFuse, ranks, procsText.c_str(),
                transportName(probe.transport));
  std::string result =
      "RESULT stencil=" + std::string(P::kName) +
      " type=" + rt::typeName<Elem>() + " size=" + sizeText +
      " steps=" + std::to_string(steps) + " fuse=" + std::to_string(P::kFuse) +
      " ranks=" + std::to_string(ranks) + " procs=" + procsText +
      " transport=" + transportName(probe.transport);
  char buf[512];
  int status = 0;

  if (check) {
    STENCILC_DIST_CHECK(reset());
    STENCILC_DIST_CHECK(runDist(steps, overlap, nullptr));
    STENCILC_DIST_CHECK(cudaStreamSynchronize(stream));
    std::vector<std::vector<Elem>> got(G);
    for (int g = 0; g < G; ++g) {
      if (!P::kUpdated[g])
        continue;
      std::vector<Elem> block(local);
      STENCILC_DIST_CHECK(cudaMemcpy(block.data(), gridPtrs[g],
                                     local * sizeof(Elem),
                                     cudaMemcpyDeviceToHost));
      if (root)
        got[g].resize(global);
      d.gather(block.data(), root ? got[g].data() : nullptr, 0);
    }
    if (root) {
      // run() on one GPU, from the same values.
      // Each grid's values as P::store rounds them (the reference reads
      // them through P::load).
      std::vector<std::vector<unsigned char>> whole(G);
      for (int g = 0; g < G; ++g) {
        whole[g].resize(global * sizeof(Elem));
        for (long long i = 0; i < global; ++i)
          P::store(g, whole[g].data(), i,
                   uniformAt(seed, static_cast<uint64_t>(g * global + i)));
      }
      rt::DeviceBuffer<Elem> one[G], scratch[G];
      void *onePtrs[G], *scratchPtrs[G];
      for (int g = 0; g < G; ++g) {
        STENCILC_DIST_CHECK(one[g].allocate(global));
        STENCILC_DIST_CHECK(cudaMemcpy(one[g].get(), whole[g].data(),
                                       global * sizeof(Elem),
                                       cudaMemcpyHostToDevice));
        onePtrs[g] = one[g].get();
        scratchPtrs[g] = nullptr;
        if (P::kUpdated[g]) {
          STENCILC_DIST_CHECK(scratch[g].allocate(global));
          STENCILC_DIST_CHECK(cudaMemsetAsync(scratch[g].get(), 0xFF,
                                              global * sizeof(Elem), stream));
          scratchPtrs[g] = scratch[g].get();
        }
      }
      STENCILC_DIST_CHECK(P::run(onePtrs, scratchPtrs, n, steps, stream));
      STENCILC_DIST_CHECK(cudaStreamSynchronize(stream));
      std::vector<std::vector<double>> bounds;
      std::vector<std::vector<double>> ref =
          rt::referenceRun<P>(whole, n, global, steps, &bounds);
      long long differ = 0, over = 0;
      double err = 0, bound = 0, maxDiff = 0;
      for (int g = 0; g < G; ++g) {
        if (!P::kUpdated[g])
          continue;
        std::vector<Elem> single(global);
        STENCILC_DIST_CHECK(cudaMemcpy(single.data(), onePtrs[g],
                                       global * sizeof(Elem),
                                       cudaMemcpyDeviceToHost));
        rt::GridBound b = rt::summarizeBound(ref[g], bounds[g]);
        double gridDiff = 0;
        bool finite = true;
        for (long long i = 0; i < global; ++i) {
          if (std::memcmp(&got[g][i], &single[i], sizeof(Elem)) != 0) {
            ++differ;
            maxDiff = std::max(maxDiff,
                               std::fabs(rt::Convert<double>::from(got[g][i]) -
                                         rt::Convert<double>::from(single[i])));
          }
          double v = rt::Convert<double>::from(got[g][i]);
          if (!std::isfinite(v) && std::isfinite(ref[g][i]))
            finite = false;
          double diff = std::fabs(v - ref[g][i]);
          gridDiff = std::max(gridDiff, diff);
          if (!(diff <= bounds[g][i] * (1 + 0x1.0p-40)))
            ++over;
        }
        err = std::max(err, finite ? gridDiff / std::max(b.maxRef, 1e-300)
                                   : INFINITY);
        bound = std::isnan(b.relative()) ? NAN : std::max(bound, b.relative());
      }
      const char *verdict = "PASS";
      if (differ > 0 || (over > 0 && !std::isnan(bound)))
        verdict = "FAIL";
      else if (!rt::meaningful(bound))
        verdict = "INCONCLUSIVE";
      std::printf("check: against run() on one GPU: %lld of %lld points "
                  "differ (max |difference| %.3e)\n",
                  differ, global, maxDiff);
      std::printf("check: against the float64 reference: max relative "
                  "error %.3e (bound %.3e), %lld points beyond their "
                  "bound\n",
                  err, bound, over);
      std::printf("check: %s\n", verdict);
      std::snprintf(buf, sizeof buf,
                    " differ=%lld err=%.3e bound=%.3e status=%s", differ, err,
                    bound, verdict);
      result += buf;
      status = verdict[0] == 'F' ? 1 : verdict[0] == 'I' ? 4 : 0;
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }

  if (reps > 0 && steps > 0) {
    rt::EventTimer timer;
    // One timed run: the slowest rank's time, all starting together.
    auto timed = [&](long long s, bool withOverlap, double &ms) -> cudaError_t {
      STENCILC_TRY(reset());
      MPI_Barrier(MPI_COMM_WORLD);
      timer.start(stream);
      STENCILC_TRY(runDist(s, withOverlap, nullptr));
      timer.stop(stream);
      double mine = timer.milliseconds();
      MPI_Allreduce(&mine, &ms, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      return cudaSuccess;
    };
    auto median = [&](long long s, bool withOverlap,
                      double &ms) -> cudaError_t {
      std::vector<double> times;
      for (int r = 0; r < reps; ++r) {
        double t = 0;
        STENCILC_TRY(timed(s, withOverlap, t));
        times.push_back(t);
      }
      std::sort(times.begin(), times.end());
      ms = times[times.size() / 2];
      return cudaSuccess;
    };
    long long timedSteps = steps;
    double ms = 0;
    STENCILC_DIST_CHECK(timed(timedSteps, overlap, ms)); // warm-up
    while (minTime > 0) {
      STENCILC_DIST_CHECK(timed(timedSteps, overlap, ms));
      if (ms * 1e-3 >= minTime || timedSteps > (1LL << 40))
        break;
      double factor = std::min(16.0, 1.2 * minTime / std::max(ms * 1e-3, 1e-6));
      long long next = static_cast<long long>(timedSteps * factor) + 1;
      timedSteps = (next + P::kFuse - 1) / P::kFuse * P::kFuse;
    }
    STENCILC_DIST_CHECK(median(timedSteps, overlap, ms));
    const double rate =
        static_cast<double>(global) * timedSteps / (ms * 1e-3) / 1e9;
    // Where the time goes, from one more run with events (slowest rank).
    Timings t;
    STENCILC_DIST_CHECK(reset());
    MPI_Barrier(MPI_COMM_WORLD);
    STENCILC_DIST_CHECK(runDist(timedSteps, overlap, &t));
    double parts[4] = {t.exchangeMs, t.interiorMs, t.frameMs, t.totalMs},
           worst[4];
    MPI_Allreduce(parts, worst, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    long long bytes = 0;
    MPI_Allreduce(&t.bytesSent, &bytes, 1, MPI_LONG_LONG, MPI_SUM,
                  MPI_COMM_WORLD);
    double serialMs = 0;
    if (overlap && ranks > 1)
      STENCILC_DIST_CHECK(median(timedSteps, false, serialMs));
    // run() on one GPU: the whole grid (strong scaling), or one rank's
    // block (weak), with the same steps.
    double baseRate = 0;
    if (baseline) {
      if (root) {
        long long bn[3] = {1, 1, 1}, bp = 1;
        for (int a = 0; a < D; ++a) {
          bn[a] = weak ? size[a] : n[a];
          bp *= bn[a];
        }
        rt::DeviceBuffer<Elem> bg[G], bs[G];
        void *bgp[G], *bsp[G];
        for (int g = 0; g < G; ++g) {
          STENCILC_DIST_CHECK(bg[g].allocate(bp));
          std::vector<Elem> vals(bp);
          for (long long i = 0; i < bp; ++i)
            vals[i] = rt::Convert<Elem>::from(
                uniformAt(seed, static_cast<uint64_t>(g * bp + i)));
          STENCILC_DIST_CHECK(cudaMemcpy(bg[g].get(), vals.data(),
                                         bp * sizeof(Elem),
                                         cudaMemcpyHostToDevice));
          bgp[g] = bg[g].get();
          bsp[g] = nullptr;
          if (P::kUpdated[g]) {
            STENCILC_DIST_CHECK(bs[g].allocate(bp));
            bsp[g] = bs[g].get();
          }
        }
        std::vector<float> times;
        STENCILC_DIST_CHECK(P::run(bgp, bsp, bn, timedSteps, stream));
        for (int r = 0; r < reps; ++r) {
          timer.start(stream);
          STENCILC_DIST_CHECK(P::run(bgp, bsp, bn, timedSteps, stream));
          timer.stop(stream);
          times.push_back(timer.milliseconds());
        }
        std::sort(times.begin(), times.end());
        baseRate = static_cast<double>(bp) * timedSteps /
                   (times[times.size() / 2] * 1e-3) / 1e9;
      }
      MPI_Bcast(&baseRate, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    if (root) {
      const double perGpu = rate / ranks;
      // The per-GPU rate against one GPU's: on the whole grid, T1 / (P TP)
      // (strong scaling); on one block (weak).
      const double efficiency = baseRate > 0 ? perGpu / baseRate : 0;
      std::printf("time: %lld steps, median %.3f ms of %d runs, %.2f "
                  "GStencils/s, %.2f per GPU\n",
                  timedSteps, ms, reps, rate, perGpu);
      std::printf("time: slowest rank: exchange %.3f ms, interior tiles "
                  "%.3f ms, other tiles %.3f ms, whole run %.3f ms; %.1f MB "
                  "sent in all\n",
                  worst[0], worst[1], worst[2], worst[3], bytes / 1e6);
      if (serialMs > 0)
        std::printf("time: without overlap %.3f ms (overlap saves %.1f%%)\n",
                    serialMs, 100.0 * (serialMs - ms) / serialMs);
      if (baseRate > 0)
        std::printf("time: run() on one GPU (%s): %.2f GStencils/s; %s "
                    "scaling efficiency %.1f%%\n",
                    weak ? "one block" : "the whole grid", baseRate,
                    weak ? "weak" : "strong", 100 * efficiency);
      std::snprintf(buf, sizeof buf,
                    " timed_steps=%lld ms=%.3f gstencils=%.2f per_gpu=%.2f "
                    "exchange_ms=%.3f interior_ms=%.3f frame_ms=%.3f",
                    timedSteps, ms, rate, perGpu, worst[0], worst[1], worst[2]);
      result += buf;
      if (serialMs > 0) {
        std::snprintf(buf, sizeof buf, " serial_ms=%.3f", serialMs);
        result += buf;
      }
      if (baseRate > 0) {
        std::snprintf(buf, sizeof buf,
                      " baseline=%.2f scaling=%s efficiency=%.3f", baseRate,
                      weak ? "weak" : "strong", efficiency);
        result += buf;
      }
    }
  }
  if (root)
    std::printf("%s\n", result.c_str());
  cudaStreamDestroy(stream);
  return status;
}

template <class P> int driverMain(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // One GPU per rank of a node; several ranks share one where there are
  // fewer GPUs (the MPI transports allow that, NCCL does not).
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  int local = 0, devices = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0)
    cudaSetDevice(local % devices);
  int status = driverRun<P>(argc, argv, rank);
  MPI_Finalize();
  return status;
}

} // namespace stencilc::dist

#endif // STENCILC_DISTRIBUTED_DRIVER_CUH
