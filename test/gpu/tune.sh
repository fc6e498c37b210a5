#!/usr/bin/env bash
# stencilc --tune on the GPU machine, then the benchmark protocol on what it
# chose: for each shape and type, --tune picks the strategy (and, where CUDA
# cores win, the tile shape), and the tuned program and the cost model's own
# choice (--fuse=auto, the plan's tile) are timed alternately, ROUNDS rounds
# of the median of 5 runs of at least 0.2 s at the DESIGN.md sizes, 8 steps.
#
#   test/gpu/tune.sh DIR   (on the GPU machine: needs nvcc and a stencilc
#                           that runs there, STENCILC; with LD_LIBRARY_PATH
#                           for its libraries where they are not installed)
#
# SHAPES (default: the f32 benchmark set of issue 4) lists EXAMPLE.TYPE.
# Writes DIR/EXAMPLE.TYPE.tune.log (the sweep's progress), and RESULT lines
# (variant=EXAMPLE.TYPE.tuned|auto) to RESULTS (default DIR/results.txt),
# with one TUNED line per shape naming the choice.
set -uo pipefail
dir=${1:-.tune}
root=$(cd "$(dirname "$0")/../.." && pwd)
stencilc=${STENCILC:-$root/build/tools/stencilc/stencilc}
shapes=${SHAPES:-"heat-2d.f32 box-2d9p.f32 star-2d13p.f32 box-2d49p.f32 heat-3d.f32 box-3d27p.f32"}
rounds=${ROUNDS:-2}
mkdir -p "$dir"
log=${RESULTS:-$dir/results.txt}
: > "$log"

bench_size() {
  case $1 in 1) echo 10240000 ;; 2) echo 10240x10240 ;; 3) echo 512x512x512 ;; esac
}
dims_of() { grep -m1 -o 'f[0-9]*\[[123]\]' "$root/dsl-examples/$1.st" | grep -o '[123]\]' | tr -d ']'; }

# "// Strategy: cuda-core t=3 tile 64x10x26, 512 threads, the fastest ..."
# -> the stencilc flags that generate it.
flags_of_choice() {
  local line; line=$(grep -m1 '^// Strategy:' "$1")
  local t; t=$(sed -n 's/.* t=\([0-9]*\).*/\1/p' <<< "$line")
  local flags="--fuse=$t"
  case $line in
    *cuda-core*) flags="--target=cuda-core $flags" ;;
    *) echo "tune.sh: $1: only CUDA-core choices are timed here: $line" >&2; return 1 ;;
  esac
  local tile; tile=$(sed -n 's/.* tile \([0-9x]*\).*/\1/p' <<< "$line")
  [ -n "$tile" ] && flags="$flags --tile=$tile"
  local threads; threads=$(sed -n 's/.*, \([0-9]*\) threads.*/\1/p' <<< "$line")
  [ -n "$threads" ] && flags="$flags --threads=$threads"
  echo "$flags"
}

for shape in $shapes; do
  ex=${shape%.*}; ty=${shape##*.}
  d=$(dims_of "$ex")
  st="$root/dsl-examples/$ex.st"
  "$stencilc" "$st" --type=$ty --tune -o "$dir/$shape.tuned.cu" 2> "$dir/$shape.tune.log" ||
    { echo "TUNE FAIL $shape"; tail -n 3 "$dir/$shape.tune.log"; continue; }
  flags=$(flags_of_choice "$dir/$shape.tuned.cu") || continue
  echo "TUNED shape=$shape flags=$(tr ' ' ',' <<< "$flags")" | tee -a "$log"
  grep '^tuning' "$dir/$shape.tune.log"
  # shellcheck disable=SC2086
  "$stencilc" "$st" --type=$ty --emit-main $flags -o "$dir/$shape.tuned.main.cu" &&
    "$stencilc" "$st" --type=$ty --emit-main --fuse=auto -o "$dir/$shape.auto.main.cu" || continue
  for v in tuned auto; do
    nvcc -O3 -gencode arch=compute_90,code=sm_90 "$dir/$shape.$v.main.cu" \
      -o "$dir/$shape.$v" || echo "BUILD FAIL $shape.$v"
  done
  for round in $(seq "$rounds"); do
    for v in tuned auto; do
      [ -x "$dir/$shape.$v" ] || continue
      "$dir/$shape.$v" --reps=5 --min-time=0.2 --size=$(bench_size "$d") --steps=8 |
        sed "s/^RESULT /RESULT variant=$shape.$v round=$round /" | grep '^RESULT' | tee -a "$log"
    done
  done
done
