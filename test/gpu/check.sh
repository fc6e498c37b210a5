#!/usr/bin/env bash
# The GPU check of every example: builds each with --emit-main for several
# element types and fusion depths, runs --check on fresh random data at sizes
# that are not multiples of the tile or of the fusion depth, times the
# benchmark set at the DESIGN.md sizes, and prints one table.
#
#   test/gpu/check.sh generate DIR   (here: needs a built stencilc)
#   test/gpu/check.sh run DIR        (on the GPU machine: needs nvcc)
#   test/gpu/check.sh all DIR        (both, where both are available)
# FUSES="auto 1" limits the fusion depths generated (default: auto 1 2 3 4 8);
# FUSES=none generates no CUDA-core variant. TARGETS="tc sptc" (the default)
# adds the tensor-core strategies of every linear example in every legal
# type (variant EX.TYPE.TARGETFUSE, e.g. heat-2d.f16.sptcauto), at the
# depths TCFUSES (default: auto; box-2d9p adds 7, SPIDER's Box-2D1R case).
# BENCH=0 skips the timing, CHECKS=0 the correctness checks (for a timing
# run of code that was just checked).
# The generated code embeds its runtime: nvcc needs no include path.
set -uo pipefail
mode=${1:-all}
dir=${2:-.gpu}
root=$(cd "$(dirname "$0")/../.." && pwd)
stencilc=${STENCILC:-$root/build/tools/stencilc/stencilc}
mkdir -p "$dir"

# example  -> extra fusion depths to try beyond the automatic one
examples=(heat heat-1d 1d5p heat-2d box-2d9p star-2d13p box-2d49p heat-3d
          box-3d27p allen-cahn varcoef-diffusion gray-scott)
types=(f32 f64 f16 bf16)
# The paper benchmark set, timed at every fusion depth.
benchmarks="heat-1d 1d5p heat-2d box-2d9p star-2d13p box-2d49p heat-3d box-3d27p"

generate() {
  for ex in "${examples[@]}"; do
    for tg in ${TARGETS-tc sptc}; do
      for ty in "${types[@]}"; do
        # sptc has no f64 shapes; nonlinear examples have no matrices.
        [ $tg = sptc ] && [ $ty = f64 ] && continue
        grep -q "^$ex\$" <<< "$(printf '%s\n' allen-cahn varcoef-diffusion gray-scott)" && continue
        local fuses=${TCFUSES:-auto}
        [ "$ex" = box-2d9p ] && fuses="$fuses 7"
        # f32 grids multiply in tf32 only under --precision=tf32.
        local precision=""
        [ $ty = f32 ] && precision=--precision=tf32
        for layout in ${LAYOUTS:-decompose morph flatten}; do
          # morph and flatten share decompose's types; bf16 is f16's code.
          [ $layout != decompose ] && [ $ty = bf16 ] && continue
          local name=$tg
          [ $layout != decompose ] && name=$tg$layout
          for fuse in $fuses; do
            "$stencilc" "$root/dsl-examples/$ex.st" --emit-main --type=$ty \
              --target=$tg --layout=$layout --fuse=$fuse $precision \
              -o "$dir/$ex.$ty.$name$fuse.cu" ||
              echo "GENERATE FAIL $ex.$ty.$name$fuse"
          done
        done
      done
    done
    [ "${FUSES:-}" = none ] && continue
    for ty in "${types[@]}"; do
      for fuse in ${FUSES:-auto 1 2 3 4 8}; do
        # A sweep of fusion depths in f32; auto and 1 in the other types.
        [ "$fuse" != auto ] && [ "$fuse" != 1 ] && [ "$ty" != f32 ] && continue
        out="$dir/$ex.$ty.$fuse"
        "$stencilc" "$root/dsl-examples/$ex.st" --emit-main --type=$ty \
          --fuse=$fuse -o "$out.cu"
      done
    done
    # sm_80 code, built as a fat binary that also runs on sm_90.
    "$stencilc" "$root/dsl-examples/$ex.st" --emit-main --arch=sm_80 \
      -o "$dir/$ex.src.sm80.cu"
  done
  echo "generated $(ls "$dir"/*.cu | wc -l) programs in $dir"
}

# The middle size's fastest extent is a multiple of 8, so the tensor-core
# kernels copy their boxes 16 bytes at a time (cp.async) there and element
# by element at the others; memcheck runs at the middle size.
sizes_for() { # dims -> check sizes
  case $1 in
    1) echo "77 10008 1000003" ;;
    2) echo "37x29 307x264 1000x999" ;;
    3) echo "13x17x19 67x61x72 131x61x70" ;;
  esac
}
bench_size() {
  case $1 in 1) echo 10240000 ;; 2) echo 10240x10240 ;; 3) echo 512x512x512 ;; esac
}
dims_of() { grep -m1 -o 'f[0-9]*\[[123]\]' "$root/dsl-examples/$1.st" | grep -o '[123]\]' | tr -d ']'; }

run() {
  cd "$dir"
  # RESULTS may point outside DIR (e.g. under $OUT) so that a run cut short
  # still leaves what it measured.
  local log=${RESULTS:-results.txt}
  : > "$log"
  echo "building $(ls *.cu | wc -l) programs"
  ls *.cu | sed 's/\.cu$//' | xargs -P "$(nproc)" -I{} sh -c \
    'gencode="-gencode arch=compute_90,code=sm_90";
     case {} in *.sm80) gencode="-gencode arch=compute_80,code=sm_80 $gencode";; esac;
     nvcc -O3 $gencode {}.cu -o {} 2> {}.build.log || echo "BUILD FAIL {}"'
  local failed=0
  # Correctness: every variant at every size, in parallel (the float64
  # reference runs on the CPU), each with its own output file.
  mkdir -p checks
  : > checks.list
  for ex in "${examples[@]}"; do
    local d; d=$(dims_of "$ex")
    for bin in $(ls "$ex".* | grep -v '\.\(cu\|h\|log\)$' | grep "^$ex\.[a-z0-9]*\.[a-z0-9]*$"); do
      for sz in $(sizes_for "$d"); do
        for steps in 1 13; do
          echo "$bin $sz $steps" >> checks.list
        done
      done
    done
  done
  [ "${CHECKS:-1}" = 0 ] && : > checks.list
  echo "running $(wc -l < checks.list) checks"
  local n=0
  while read -r bin sz steps; do
    n=$((n + 1))
    cat > checks/$n.sh <<CHECK
./$bin --check --reps=0 --size=$sz --steps=$steps --seed=$((n * 7919)) > checks/$n.raw 2>&1 || echo "RESULT status=FAIL exit=\$?" >> checks/$n.raw
sed "s/^RESULT /RESULT variant=$bin /" checks/$n.raw > checks/$n.out
CHECK
  done < checks.list
  if [ -s checks.list ]; then
    ls checks/*.sh | xargs -P "$(nproc)" -n 1 sh
    cat checks/*.out | grep '^RESULT' >> "$log"
    for f in checks/*.out; do
      if ! grep -q '^RESULT.*status=' "$f"; then
        echo "NO RESULT: $f"; cat "$f"; failed=1
      fi
    done
  fi
  # compute-sanitizer's memcheck on every tensor-core variant and a few
  # CUDA-core ones at one small odd size: an out-of-bounds read that lands in allocated memory passes
  # --check, so only the sanitizer sees it.
  if [ "${MEMCHECK:-1}" = 1 ] && command -v compute-sanitizer > /dev/null; then
    : > memcheck.list
    for ex in "${examples[@]}"; do
      local d; d=$(dims_of "$ex")
      local sz; sz=$(sizes_for "$d" | cut -d' ' -f2)
      for bin in $(ls "$ex".*.*tc* "$ex".f32.auto "$ex".f32.3 "$ex".f64.auto 2>/dev/null | grep -v '\.\(cu\|h\|log\|out\)$'); do
        echo "$bin $sz" >> memcheck.list
      done
    done
    echo "running memcheck on $(wc -l < memcheck.list) variants"
    xargs -r -P "$(nproc)" -L 1 sh -c 'compute-sanitizer --tool memcheck --error-exitcode 9 ./$0 --check --reps=0 --size=$1 --steps=13 > $0.memcheck.out 2>&1; echo "MEMCHECK variant=$0 exit=$?"' < memcheck.list >> "$log"
    grep '^MEMCHECK' "$log" | grep -v 'exit=0' && failed=1
    echo "memcheck: $(grep -c '^MEMCHECK.*exit=0' "$log") of $(wc -l < memcheck.list) clean"
  fi
  # The tensor-core variants really run tensor-core instructions.
  for bin in $(ls *.*tc* 2>/dev/null | grep -v '\.\(cu\|h\|log\|out\)$'); do
    local ops; ops=$(cuobjdump --dump-sass "$bin" | grep -o '[HD]MMA[.A-Z0-9]*' | sort -u | tr '\n' ' ')
    echo "SASS variant=$bin ops=${ops:-none}" >> "$log"
    case $bin in
      *sptc*) grep -q 'HMMA.SP' <<< "$ops" || { echo "NO HMMA.SP in $bin"; failed=1; } ;;
      *.f64.tc*) grep -q 'DMMA' <<< "$ops" || { echo "NO DMMA in $bin"; failed=1; } ;;
      *tc*) grep -q 'HMMA' <<< "$ops" || { echo "NO HMMA in $bin"; failed=1; } ;;
    esac
  done
  grep '^SASS' "$log"
  [ "${BENCH:-1}" = 0 ] && { summarize "$log" $failed; return; }
  # Timing at the DESIGN.md size, one run at a time: the benchmark shapes at
  # every f32 fusion depth; the automatic depth in f16 and f64, and for the
  # other examples.
  for ex in "${examples[@]}"; do
    local d; d=$(dims_of "$ex")
    local variants="$ex.f32.auto $ex.f16.auto $ex.f64.auto"
    case " $benchmarks " in *" $ex "*)
      variants="$variants $(ls "$ex".f32.* | grep -v '\.\(cu\|h\|log\)$' | grep -v 'sm80\|auto\|tc')
                $(ls "$ex".*.*tc* 2>/dev/null | grep -v '\.\(cu\|h\|log\)$')";;
    esac
    for v in $variants; do
      [ -x "$v" ] || continue
      ./"$v" --reps=5 --min-time=0.2 --size=$(bench_size "$d") --steps=8 \
        | sed "s/^RESULT /RESULT variant=$v /" | grep '^RESULT' >> "$log" || failed=1
    done
  done
  summarize "$log" $failed
}

summarize() { # log failed
  local log=$1 failed=$2
  echo
  echo "| variant | type | t | size | steps | max rel. error | bound | check | GStencils/s |"
  echo "|---|---|---|---|---|---|---|---|---|"
  grep '^RESULT' "$log" | sed 's/RESULT //' | awk '{
    for (i = 1; i <= NF; ++i) { split($i, kv, "="); f[kv[1]] = kv[2] }
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", f["variant"],
      f["type"], f["fuse"], f["size"],
      (f["timed_steps"] != "" ? f["timed_steps"] : f["steps"]),
      (f["err"] != "" ? f["err"] : "-"), (f["bound"] != "" ? f["bound"] : "-"),
      (f["status"] != "" ? f["status"] : "-"),
      (f["gstencils"] != "" ? f["gstencils"] : "-");
    delete f }'
  local fails; fails=$(grep -c 'status=FAIL' "$log" || true)
  local builds; builds=$(grep -l . *.build.log 2>/dev/null | wc -l)
  echo
  echo "checks: $(grep -c 'status=' "$log") run, $fails failed; build logs with output: $builds"
  [ "$fails" = 0 ] && [ $failed = 0 ]
}

case $mode in
  generate) generate ;;
  run) run ;;
  all) generate; run ;;
  *) echo "usage: $0 generate|run|all DIR" >&2; exit 2 ;;
esac
