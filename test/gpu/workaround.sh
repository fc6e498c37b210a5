#!/usr/bin/env bash
# fdtd-2d and COSMO's hdiff as one stencil each (stages, new values, the step
# index; fused, t > 1) against the workaround the language needed before
# (several stencils and run(..., 1) per step, test/gpu/Inputs/*-workaround.st),
# timed on one GPU in f64 by Inputs/workaround-{fdtd,hdiff}.cpp: CUDA
# events, the median of REPS runs, each from the same initial data. Each
# program also checks that both give the same result (within 1e-10 of its
# largest value) and exits 1 otherwise.
#
#   test/gpu/workaround.sh generate DIR   (here: needs a built stencilc)
#   test/gpu/workaround.sh run DIR        (on the GPU machine: needs nvcc)
#   test/gpu/workaround.sh all DIR
# SIZE (default 8192, an N x N grid), STEPS (default 96: every depth below
# divides it), REPS (default 5); FUSES (default "auto 1 2 4") are the fusion
# depths of the one stencil, each its own program.
set -uo pipefail
mode=${1:-all}
dir=${2:-.gpu-workaround}
root=$(cd "$(dirname "$0")/../.." && pwd)
stencilc=${STENCILC:-$root/build/tools/stencilc/stencilc}
mkdir -p "$dir"

generate() {
  for ex in fdtd-2d hdiff; do
    "$stencilc" "$root/test/gpu/Inputs/$ex-workaround.st" --fuse=1 \
      -o "$dir/$ex-workaround.cu" || echo "GENERATE FAIL $ex-workaround"
    for fuse in ${FUSES:-auto 1 2 4}; do
      mkdir -p "$dir/$ex.$fuse"
      "$stencilc" "$root/dsl-examples/$ex.st" --fuse=$fuse \
        -o "$dir/$ex.$fuse/$ex.cu" || echo "GENERATE FAIL $ex.$fuse"
    done
  done
  cp "$root"/test/gpu/Inputs/workaround-*.cpp "$root"/test/gpu/Inputs/workaround-common.h "$dir"/
  echo "generated in $dir: $(ls -d "$dir"/*.*/ | wc -l) fused variants and 2 workarounds"
}

run() {
  cd "$dir"
  local failed=0 log=${RESULTS:-workaround.txt}
  : > "$log"
  for ex in fdtd-2d hdiff; do
    local harness=workaround-${ex%-2d}.cpp
    for v in $(ls -d $ex.*/ | tr -d /); do
      nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -I"$v" -I. \
        "$harness" "$v/$ex.cu" "$ex-workaround.cu" -o "$v/run" \
        2> "$v/build.log" || { echo "BUILD FAIL $v"; cat "$v/build.log"; failed=1; continue; }
      "./$v/run" "${SIZE:-8192}" "${STEPS:-96}" "${REPS:-5}" \
        | sed "s/^WORKAROUND /WORKAROUND variant=$v /" | tee -a "$log"
      [ "${PIPESTATUS[0]}" = 0 ] || { echo "FAIL $v"; failed=1; }
    done
  done
  echo
  echo "| variant | size | steps | one stencil (ms) | GStencils/s | workaround (ms) | GStencils/s | speedup | max rel. diff | points beyond 1e-10 |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  sed 's/^WORKAROUND //' "$log" | awk '{
    for (i = 1; i <= NF; ++i) { split($i, kv, "="); f[kv[1]] = kv[2] }
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", f["variant"],
      f["size"], f["steps"], f["one_ms"], f["one_gstencils"], f["split_ms"],
      f["split_gstencils"], f["speedup"], f["max_rel_diff"],
      ("beyond_1e-10" in f) ? f["beyond_1e-10"] : "-"; delete f }'
  return $failed
}

case $mode in
  generate) generate ;;
  run) run ;;
  all) generate; run ;;
  *) echo "usage: $0 generate|run|all DIR" >&2; exit 2 ;;
esac
