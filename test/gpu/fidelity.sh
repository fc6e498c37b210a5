#!/usr/bin/env bash
# Issue 22's GPU checks of numerical fidelity, in one go:
#   test/gpu/fidelity.sh generate DIR   (here: needs stencilc)
#   test/gpu/fidelity.sh run DIR        (on the GPU machine: nvcc, a GPU)
# Periodic heat with alpha = 0.2 (test/CodeGen/emulate/Inputs/
# heat-periodic.st), f32, 1000 steps at SIZE (default 1024x1024), each
# variant's error against the driver's float64 reference:
#   - CUDA cores at every fusion depth 1..8 and the automatic one, beside
#     the error of evaluating the update as written in f32
#     (aswritten-heat.cpp, the same data);
#   - tensor cores under --precision=tf32, every layout, dense and sparse,
#     one step a pass and the automatic depth;
#   - split-TF32 (--precision=split-tf32), every layout, dense and sparse.
# The issue asks for CUDA cores within 4x the as-written error and tf32
# within 2e-3.
set -uo pipefail
mode=${1:-}
dir=${2:-.gpu-fidelity}
root=$(cd "$(dirname "$0")/../.." && pwd)
stencilc=${STENCILC:-$root/build/tools/stencilc/stencilc}
src=$root/test/CodeGen/emulate/Inputs/heat-periodic.st

generate() {
  mkdir -p "$dir"
  for fuse in auto 1 2 3 4 5 6 7 8; do
    "$stencilc" "$src" --emit-main --target=cuda-core --fuse=$fuse \
      -o "$dir/cc$fuse.cu" || echo "GENERATE FAIL cc$fuse"
  done
  for tg in tc sptc; do
    for layout in decompose morph flatten; do
      for fuse in 1 auto; do
        "$stencilc" "$src" --emit-main --target=$tg --layout=$layout \
          --precision=tf32 --fuse=$fuse -o "$dir/$tg-$layout$fuse.cu" ||
          echo "GENERATE FAIL $tg-$layout$fuse"
      done
    done
  done
  # Split-TF32 (precision exact): f32 accuracy on the tensor cores.
  for tg in tc sptc; do
    for layout in decompose morph flatten; do
      "$stencilc" "$src" --emit-main --target=$tg --layout=$layout \
        --precision=split-tf32 -o "$dir/split$tg-$layout.cu" ||
        echo "GENERATE FAIL split$tg-$layout"
    done
  done
  cp "$root/test/gpu/aswritten-heat.cpp" "$dir/"
  echo "generated $(ls "$dir"/*.cu | wc -l) programs in $dir"
}

run() {
  cd "$dir"
  local size=${SIZE:-1024x1024} steps=${STEPS:-1000}
  ls *.cu | sed 's/\.cu$//' | xargs -P "$(nproc)" -I{} sh -c \
    'nvcc -O3 -gencode arch=compute_90,code=sm_90 {}.cu -o {} 2> {}.build.log || echo "BUILD FAIL {}"'
  g++ -O2 -ffp-contract=off aswritten-heat.cpp -o aswritten-heat
  ./aswritten-heat ${size%x*} ${size#*x} $steps
  for bin in $(ls *.cu | sed 's/\.cu$//'); do
    printf '%s: ' "$bin"
    ./$bin --check --reps=0 --size=$size --steps=$steps | grep '^check:' ||
      echo "RUN FAIL"
    grep -o 'fuse=[0-9]*' <(./$bin --reps=0 --size=8x8 --steps=0) | head -1
  done
}

case $mode in
  generate) generate ;;
  run) run ;;
  *) echo "usage: $0 generate|run DIR" >&2; exit 2 ;;
esac
