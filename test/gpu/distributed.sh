#!/usr/bin/env bash
# The GPU check of stencilc --distributed (issue 26), on one GPU:
#   - every example's --emit-main --distributed program under mpirun with 2
#     and 4 ranks sharing the GPU through the MPI transport, --check (bit for
#     bit against run() on the whole grid, and the float64 reference) at
#     sizes not divisible by the process grid, step counts not multiples of
#     the fusion depth; f16 and f64 variants of two;
#   - one rank through NCCL (exchanging with itself across the periodic
#     axes of the periodic examples, so that ncclSend/ncclRecv run);
#   - compute-sanitizer's memcheck of three of them at 2 ranks;
#   - the one-rank overhead against run() on heat-3d 512^3 f32, with run()
#     of a build without --distributed as the reference;
#   - the exchange against the compute time at 2 ranks (heat-3d 512^3,
#     heat-2d 8192^2), with and without overlap.
#
#   test/gpu/distributed.sh generate DIR   (here: needs a built stencilc)
#   test/gpu/distributed.sh run DIR        (there: nvcc, NCCL, OpenMPI)
#   test/gpu/distributed.sh multi DIR      (there, on 2 or more GPUs)
#   test/gpu/distributed.sh mpi [MPIDIR]   (here: fetch OpenMPI's .debs)
#
# The GPU machine has no MPI launcher: `mpi` downloads Debian's OpenMPI and
# the libraries it needs into MPIDIR/debs (default .mpi, which
# .git/info/exclude should name); `run` unpacks them with dpkg -x into
# $TMPDIR and runs mpirun from there (OPAL_PREFIX, PATH, LD_LIBRARY_PATH).
# MPIDIR=... points `run` at another copy. NCCL comes from the Python
# package nvidia-nccl-cu13 (NCCL_HOME overrides). NCCL_NVLS_ENABLE=0 stays
# set. RESULTS=file also writes the summary there (e.g. under $OUT).
# EXAMPLES="heat heat-3d" restricts `generate`; BUILD_ONLY=1 stops `run`
# after building (to try the build where there is no GPU); CHECKS=0 skips
# the checks and memcheck, BENCH=0 the timing (to split a run in two; a
# program newer than its source is not built again).
set -uo pipefail
mode=${1:-run}
dir=${2:-.gpu-dist}
root=$(cd "$(dirname "$0")/../.." && pwd)
stencilc=${STENCILC:-$root/build/tools/stencilc/stencilc}
export NCCL_NVLS_ENABLE=0

# example -> sizes for 2 and 4 ranks (odd, not divisible by the process
# grid), steps (not multiples of the automatic depths)
# (upwind-2d's grids differ in type: --distributed refuses it.)
examples=(heat heat-1d 1d5p heat-2d box-2d9p star-2d13p box-2d49p heat-3d
          box-3d27p allen-cahn varcoef-diffusion gray-scott
          fdtd-2d hdiff hotspot wave-source hyperdiffusion)
[ -n "${EXAMPLES:-}" ] && read -r -a examples <<< "$EXAMPLES"
periodic="1d5p box-3d27p gray-scott hdiff hyperdiffusion"
size_of() {
  case $1 in
    heat-1d|1d5p) echo 1000003 ;;
    heat-3d|box-3d27p) echo 131x67x45 ;;
    *) echo 1001x1003 ;;
  esac
}

fetch_mpi() {
  local mpidir=${1:-$root/.mpi}
  mkdir -p "$mpidir/debs"
  # OpenMPI (mpirun, libmpi, headers), PMIx and what their libraries and
  # components load: what a CUDA image without MPI lacks.
  (cd "$mpidir/debs" && apt-get download openmpi-bin openmpi-common \
    libopenmpi3 libopenmpi-dev libpmix2 libevent-core-2.1-7 \
    libevent-pthreads-2.1-7 libhwloc15 libfabric1 libibverbs1 \
    ibverbs-providers librdmacm1 libmunge2 libnl-3-200 libnl-route-3-200 \
    libnuma1 libpsm-infinipath1 libpsm2-2 libucx0 libudev1 libuuid1 \
    libatomic1) || return 1
  du -sh "$mpidir/debs"
}

# Unpacks MPIDIR/debs under $1 and points the environment at it.
use_mpi() {
  local mpidir=${MPIDIR:-$root/.mpi} prefix=$1
  [ -d "$mpidir/debs" ] || { echo "no $mpidir/debs: run '$0 mpi' here and carry .mpi"; return 1; }
  mkdir -p "$prefix"
  for f in "$mpidir"/debs/*.deb; do dpkg -x "$f" "$prefix" || return 1; done
  local lib=$prefix/usr/lib/x86_64-linux-gnu
  export OPAL_PREFIX=$prefix/usr OPAL_SYSCONFDIR=$prefix/etc/openmpi
  export PMIX_PREFIX=$lib/pmix2
  export HWLOC_PLUGINS_PATH=$lib/hwloc
  export PATH=$prefix/usr/bin:$PATH
  export LD_LIBRARY_PATH=$lib:$prefix/lib/x86_64-linux-gnu:$lib/openmpi/lib:$lib/pmix2/lib:${LD_LIBRARY_PATH:-}
  # One node: shared memory between the ranks, no cross-memory attach
  # (containers forbid it), no launcher agent, quiet about optional
  # components whose libraries are not there.
  export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
  export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_plm=isolated
  export OMPI_MCA_mca_base_component_show_load_errors=0
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  MPI_INC=$lib/openmpi/include
  MPI_LIB=$lib/openmpi/lib
  MPIRUN="mpirun.openmpi --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE"
}

generate() {
  mkdir -p "$dir"
  for ex in "${examples[@]}"; do
    "$stencilc" "$root/dsl-examples/$ex.st" --distributed --emit-main \
      -o "$dir/$ex.f32.cu" || return 1
  done
  [ -n "${EXAMPLES:-}" ] && { ls "$dir"/*.cu | wc -l; return 0; }
  "$stencilc" "$root/dsl-examples/heat-2d.st" --distributed --emit-main --type=f16 -o "$dir/heat-2d.f16.cu" || return 1
  "$stencilc" "$root/dsl-examples/heat-3d.st" --distributed --emit-main --type=f64 -o "$dir/heat-3d.f64.cu" || return 1
  # run() of a build without --distributed: the overhead's reference.
  "$stencilc" "$root/dsl-examples/heat-3d.st" --emit-main -o "$dir/heat-3d.plain.cu" || return 1
  ls "$dir"/*.cu | wc -l
}

# OpenMPI and NCCL set up, and every program of $dir built (a program
# newer than its source is kept); leaves the shell in $dir.
build_all() {
  use_mpi "${TMPDIR:-/tmp}/stencilc-openmpi" || return 1
  nccl=${NCCL_HOME:-$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null)}
  [ -f "$nccl/include/nccl.h" ] || { echo "no NCCL (nvidia-nccl-cu13 or NCCL_HOME)"; return 1; }
  export LD_LIBRARY_PATH=$nccl/lib:$LD_LIBRARY_PATH
  cd "$dir" || return 1
  $MPIRUN --version | head -1
  echo "building $(ls *.cu | wc -l) programs"
  export MPI_INC MPI_LIB nccl
  ls *.cu | sed 's/\.cu$//' | xargs -P "$(nproc)" -I{} sh -c \
    '[ -x {} ] && [ {} -nt {}.cu ] && exit 0;
     nvcc -std=c++17 -O3 -gencode arch=compute_90,code=sm_90 -DSTENCILC_WITH_NCCL \
       -I"$MPI_INC" -I"$nccl/include" {}.cu -o {} -L"$MPI_LIB" -lmpi \
       -Xlinker "$nccl/lib/libnccl.so.2" 2> {}.build.log || echo "BUILD FAIL {}"'
}

# Runs the lines of checks.list ("BIN NP ARGS...") with --check, four at a
# time, and appends their RESULT lines, tagged with the variant and the
# ranks, to $1.
run_checks() {
  local log=$1 n=0
  rm -rf checks && mkdir -p checks
  echo "running $(wc -l < checks.list) checks"
  while read -r bin np args; do
    n=$((n + 1))
    cat > checks/$n.sh <<CHECK
$MPIRUN -np $np ./$bin --check --reps=0 --seed=$((n * 7919)) $args > checks/$n.raw 2>&1
rc=\$?
grep -q '^RESULT.*status=' checks/$n.raw || echo "RESULT status=FAIL exit=\$rc" >> checks/$n.raw
sed "s/^RESULT /RESULT variant=$bin np=$np /" checks/$n.raw > checks/$n.out
CHECK
  done < checks.list
  if [ -s checks.list ]; then
    ls checks/*.sh | xargs -P "${JOBS:-4}" -n 1 sh
    cat checks/*.out | grep '^RESULT' >> "$log"
  fi
}

run() {
  build_all || return 1
  local log=results.txt
  : > "$log"
  [ "${BUILD_ONLY:-0}" = 1 ] && { ls -l $(ls *.cu | sed 's/\.cu$//'); return 0; }
  # Correctness, four jobs at a time (up to 16 processes on one GPU).
  mkdir -p checks
  : > checks.list
  for bin in $(ls *.f32 *.f16 *.f64 2>/dev/null); do
    local ex=${bin%.*} sz; sz=$(size_of "$ex")
    echo "$bin 2 --transport=mpi --size=$sz --steps=13" >> checks.list
    echo "$bin 4 --transport=mpi --size=$sz --steps=7" >> checks.list
    case " $periodic " in
      *" $ex "*) echo "$bin 1 --transport=nccl --self-exchange --size=$sz --steps=9" >> checks.list ;;
      *) echo "$bin 1 --transport=nccl --size=$sz --steps=9" >> checks.list ;;
    esac
  done
  echo "heat-2d.f32 2 --transport=mpi --size=1001x1003 --steps=11 --no-overlap" >> checks.list
  echo "box-3d27p.f32 4 --transport=mpi --size=131x67x45 --steps=5 --procs=1x2x2" >> checks.list
  [ "${CHECKS:-1}" = 0 ] && : > checks.list
  run_checks "$log"
  # Out-of-bounds reads that land in allocated memory pass --check; the
  # sanitizer sees them.
  local mem=0
  if [ "${CHECKS:-1}" = 1 ] && command -v compute-sanitizer > /dev/null; then
    for bin in heat.f32 heat-3d.f32 varcoef-diffusion.f32; do
      local sz; sz=$(size_of "${bin%.*}")
      $MPIRUN -np 2 compute-sanitizer --tool memcheck --error-exitcode 9 \
        ./$bin --check --reps=0 --transport=mpi --size=$sz --steps=5 \
        > $bin.memcheck.out 2>&1
      local rc=$?
      echo "MEMCHECK variant=$bin np=2 exit=$rc" >> "$log"
      [ $rc = 0 ] || mem=1
    done
  fi
  [ "${BENCH:-1}" = 0 ] && { summarize "$log" $mem; return; }
  # The one-rank overhead: the same steps for the three.
  local steps=600
  ./heat-3d.plain --size=512 --steps=$steps --reps=5 > overhead.plain.out 2>&1
  $MPIRUN -np 1 ./heat-3d.f32 --size=512 --steps=$steps --reps=5 --transport=mpi > overhead.mpi.out 2>&1
  $MPIRUN -np 1 ./heat-3d.f32 --size=512 --steps=$steps --reps=5 --transport=nccl > overhead.nccl.out 2>&1
  grep -h '^RESULT' overhead.*.out | sed 's/^RESULT /RESULT overhead /' >> "$log"
  # Exchange against compute at 2 ranks on the one GPU (MPI transport).
  $MPIRUN -np 2 ./heat-3d.f32 --size=512 --steps=$steps --reps=5 --transport=mpi > exchange.heat-3d.out 2>&1
  $MPIRUN -np 2 ./heat-2d.f32 --size=8192 --steps=200 --reps=5 --transport=mpi > exchange.heat-2d.out 2>&1
  grep -h '^RESULT' exchange.*.out | sed 's/^RESULT /RESULT exchange /' >> "$log"
  cat exchange.*.out overhead.mpi.out | grep '^time:'
  summarize "$log" $mem
}

# Several GPUs (issue 27), one rank a GPU: the checks of every example
# across the GPUs through NCCL and MPI; weak scaling of heat-3d, box-3d27p
# and heat-2d at t = auto, each rank's block filling most of its GPU
# (WEAK3, WEAK2: its extent per axis, default 1280 and 45056), on 2 GPUs
# (NCCL and MPI) and on all of them in a 2-D process grid; strong scaling
# of 1024^3 heat-3d on 1, 2 and all; STEPS a run (default 60). CHECKS=0 /
# BENCH=0 as for run.
multi() {
  build_all || return 1
  local gpus; gpus=$(nvidia-smi -L | grep -c '^GPU')
  [ "$gpus" -ge 2 ] || { echo "multi: $gpus GPU; needs 2 or more"; return 1; }
  nvidia-smi -L
  nvidia-smi topo -m 2>/dev/null | head -8
  local log=multi.txt
  : > "$log"
  : > checks.list
  if [ "${CHECKS:-1}" = 1 ]; then
    for bin in $(ls *.f32 *.f16 *.f64 2>/dev/null); do
      local ex=${bin%.*} sz; sz=$(size_of "$ex")
      for np in 2 "$gpus"; do
        echo "$bin $np --transport=nccl --size=$sz --steps=13" >> checks.list
        echo "$bin $np --transport=mpi --size=$sz --steps=11" >> checks.list
      done
    done
    echo "box-3d27p.f32 $gpus --transport=nccl --size=131x67x45 --steps=5 --procs=0x0x0" >> checks.list
    echo "heat-2d.f32 $gpus --transport=nccl --size=1001x1003 --steps=11 --no-overlap" >> checks.list
    sort -u checks.list -o checks.list
  fi
  JOBS=2 run_checks "$log"
  if [ "${BENCH:-1}" = 1 ]; then
    local w3=${WEAK3:-1280} w2=${WEAK2:-45056} s=${STEPS:-60}
    local all3="2x2x1" all2="2x2"
    [ "$gpus" = 2 ] && { all3=2x1x1; all2=2x1; }
    [ "$gpus" = 8 ] && { all3=2x2x2; all2=4x2; }
    # tag  ranks  program  arguments
    cat > scaling.list <<LIST
weak2-nccl 2 heat-3d.f32 --scaling=weak --size=${w3}x${w3}x${w3} --procs=2x1x1 --transport=nccl
weak2-mpi 2 heat-3d.f32 --scaling=weak --size=${w3}x${w3}x${w3} --procs=2x1x1 --transport=mpi
weak2-nccl 2 box-3d27p.f32 --scaling=weak --size=${w3}x${w3}x${w3} --procs=2x1x1 --transport=nccl
weak2-nccl 2 heat-2d.f32 --scaling=weak --size=${w2}x${w2} --procs=2x1 --transport=nccl
weak2-mpi 2 heat-2d.f32 --scaling=weak --size=${w2}x${w2} --procs=2x1 --transport=mpi
weak$gpus-nccl $gpus heat-3d.f32 --scaling=weak --size=${w3}x${w3}x${w3} --procs=$all3 --transport=nccl
weak$gpus-nccl $gpus box-3d27p.f32 --scaling=weak --size=${w3}x${w3}x${w3} --procs=$all3 --transport=nccl
weak$gpus-nccl $gpus heat-2d.f32 --scaling=weak --size=${w2}x${w2} --procs=$all2 --transport=nccl
strong1-nccl 1 heat-3d.f32 --scaling=strong --size=1024 --transport=nccl
strong2-nccl 2 heat-3d.f32 --scaling=strong --size=1024 --procs=2x1x1 --transport=nccl
strong$gpus-nccl $gpus heat-3d.f32 --scaling=strong --size=1024 --procs=$all3 --transport=nccl
LIST
    # ONLY=REGEX keeps the lines it matches; a smaller machine drops those
    # that ask for more ranks than GPUs.
    [ -n "${ONLY:-}" ] && { grep -E "$ONLY" scaling.list > scaling.keep; mv scaling.keep scaling.list; }
    awk -v g="$gpus" '$2 <= g && !seen[$0]++' scaling.list > scaling.keep
    mv scaling.keep scaling.list
    local i=0
    while read -r tag np bin args; do
      i=$((i + 1))
      $MPIRUN -np "$np" ./$bin --steps=$s --reps=3 $args > scaling.$i.out 2>&1 < /dev/null
      echo "== $tag $bin np=$np $args (exit $?)"
      grep '^time:' scaling.$i.out
      grep -h '^RESULT' scaling.$i.out | sed "s/^RESULT /RESULT $tag /" >> "$log"
      grep -q 'gstencils=' scaling.$i.out || { echo "timing failed: $tag $bin"; tail -5 scaling.$i.out; }
    done < scaling.list
  fi
  local runs fails
  runs=$(grep -c 'status=' "$log")
  fails=$(grep 'status=' "$log" | grep -vc 'status=PASS')
  grep 'status=' "$log" | grep -v 'status=PASS'
  echo "multi-GPU checks on $gpus GPUs: $runs run, $fails failed"
  grep -h 'efficiency=' "$log" | while read -r line; do
    echo "scaling: $(echo "$line" | grep -o '^RESULT [^ ]* \|stencil=[^ ]* \|size=[^ ]* \|ranks=[^ ]* \|procs=[^ ]* \|transport=[^ ]* \| ms=[^ ]* \|per_gpu=[^ ]* \|exchange_ms=[^ ]* \|interior_ms=[^ ]* \|frame_ms=[^ ]* \|baseline=[^ ]* \|efficiency=[^ ]*' | tr -d '\n')"
  done
  [ -n "${RESULTS:-}" ] && cp "$log" "$RESULTS"
  [ "$fails" = 0 ]
}

summarize() {
  local log=$1 mem=$2
  local runs fails builds
  runs=$(grep -c 'status=' "$log")
  fails=$(grep 'status=' "$log" | grep -vc 'status=PASS')
  builds=$(ls *.build.log 2>/dev/null | while read -r f; do [ -s "$f" ] && echo "$f"; done | wc -l)
  grep 'status=' "$log" | grep -v 'status=PASS'
  local plain mpi nccl base timing=0
  if [ -f overhead.plain.out ]; then
  plain=$(grep -o 'gstencils=[0-9.]*' overhead.plain.out | cut -d= -f2)
  mpi=$(grep -o 'gstencils=[0-9.]*' overhead.mpi.out | cut -d= -f2)
  nccl=$(grep -o 'gstencils=[0-9.]*' overhead.nccl.out | cut -d= -f2)
  base=$(grep -o 'baseline=[0-9.]*' overhead.mpi.out | cut -d= -f2)
  echo "overhead: heat-3d 512^3 f32, 1 rank: run() without --distributed ${plain:-?} GStencils/s, run() in the --distributed build ${base:-?}, run_distributed ${mpi:-?} (mpi) ${nccl:-?} (nccl)"
  if [ -n "$plain" ] && [ -n "$mpi" ]; then
    awk -v p="$plain" -v m="$mpi" -v c="${nccl:-0}" 'BEGIN {
      printf "overhead: run_distributed against run(): %.1f%% (mpi), %.1f%% (nccl); target <= 5%%\n",
             100 * (1 - m / p), 100 * (1 - c / p) }'
  fi
  # A timing run that printed no rate failed.
  for f in overhead.plain.out overhead.mpi.out overhead.nccl.out \
           exchange.heat-3d.out exchange.heat-2d.out; do
    grep -q 'gstencils=' "$f" || { echo "timing failed: $f"; tail -5 "$f"; timing=1; }
  done
  for f in exchange.heat-3d.out exchange.heat-2d.out; do
    echo "exchange: $(grep -h '^RESULT' "$f" | grep -o 'stencil=[^ ]* \|size=[^ ]* \|ranks=[^ ]* \|gstencils=[^ ]* \|exchange_ms=[^ ]* \|interior_ms=[^ ]* \|frame_ms=[^ ]* \|serial_ms=[^ ]* \|efficiency=[^ ]*' | tr -d '\n')"
  done
  fi
  local memline=""
  grep -q '^MEMCHECK' "$log" && memline=", memcheck $(grep -c '^MEMCHECK.*exit=0$' "$log") of $(grep -c '^MEMCHECK' "$log") clean"
  echo "distributed checks: $runs run, $fails failed$memline; build logs with output: $builds"
  [ -n "${RESULTS:-}" ] && cp "$log" "$RESULTS"
  [ "$fails" = 0 ] && [ "$mem" = 0 ] && [ "$timing" = 0 ] &&
    { [ "$runs" -gt 0 ] || [ "${CHECKS:-1}" = 0 ]; }
}

case $mode in
  generate) generate ;;
  run) run ;;
  multi) multi ;;
  mpi) fetch_mpi "${2:-}" ;;
  *) echo "usage: $0 generate|run|multi DIR, or $0 mpi [MPIDIR]"; exit 2 ;;
esac
