#!/usr/bin/env bash
# Issue 22's speed figures, in one go (DESIGN.md §8 protocol: 10240^2 and
# 512^3, median of 5 runs of at least 0.2 s, after a --check at an odd
# size and one whose rows are a multiple of 4 elements):
#   test/gpu/precision-timing.sh generate DIR   (here: needs stencilc)
#   test/gpu/precision-timing.sh run DIR        (on the GPU machine)
# - tf32 against f16 on sparse tensor cores: box-2d9p at t = 7 (SPIDER's
#   Box-2D1R case), each in the layout stencilc picks, beside f32 on CUDA
#   cores;
# - split-TF32 against f32 on CUDA cores on the compute-bound boxes
#   (box-2d49p, and the radius-4 2-D and radius-3 and -4 3-D boxes of
#   test/gpu/Inputs), dense and sparse, and what --target=auto picks under
#   the default precision policy (exact).
set -uo pipefail
mode=${1:-}
dir=${2:-.gpu-precision}
root=$(cd "$(dirname "$0")/../.." && pwd)
stencilc=${STENCILC:-$root/build/tools/stencilc/stencilc}
boxes="box-2d49p box-2d81p box-3d343p box-3d729p"

src_of() {
  if [ -f "$root/dsl-examples/$1.st" ]; then echo "$root/dsl-examples/$1.st"
  else echo "$root/test/gpu/Inputs/$1.st"; fi
}
gen() { # name, stencilc arguments...
  local name=$1
  shift
  "$stencilc" "$@" --emit-main -o "$dir/$name.cu" || echo "GENERATE FAIL $name"
}

generate() {
  mkdir -p "$dir"
  local b9; b9=$(src_of box-2d9p)
  gen box-2d9p.f16.sptc7 "$b9" --type=f16 --target=sptc --fuse=7
  gen box-2d9p.tf32.sptc7 "$b9" --target=sptc --fuse=7 --precision=tf32
  gen box-2d9p.f32.cc "$b9" --target=cuda-core
  for ex in $boxes; do
    local f; f=$(src_of $ex)
    gen $ex.f32.cc "$f" --target=cuda-core
    gen $ex.f32.splitsptc "$f" --target=sptc --precision=split-tf32
    gen $ex.f32.splittc "$f" --target=tc --precision=split-tf32
    gen $ex.f32.auto "$f"
  done
  echo "generated $(ls "$dir"/*.cu | wc -l) programs in $dir"
}

run() {
  cd "$dir"
  ls *.cu | sed 's/\.cu$//' | xargs -P "$(nproc)" -I{} sh -c \
    '[ -x {} ] && [ {} -nt {}.cu ] && exit 0;
     nvcc -O3 -gencode arch=compute_90,code=sm_90 {}.cu -o {} 2> {}.build.log || echo "BUILD FAIL {}"'
  # What the model chose, from the comment above each stencil.
  for v in *.auto.cu; do
    echo "CHOICE $v: $(grep -m1 '^// Strategy: ' "$v" | cut -d: -f2 | cut -d, -f1)"
  done
  for bin in $(ls *.cu | sed 's/\.cu$//'); do
    local small=37x29 aligned=37x32 big=10240x10240
    grep -q '^// Stencil [a-z0-9_]*: 3-D' "$bin.cu" && { small=13x17x19; aligned=13x17x20; big=512x512x512; }
    local t; t=$(./$bin --reps=0 --size=8 --steps=0 | grep -o 'fuse=[0-9]*' | head -1 | cut -d= -f2)
    ./$bin --check --reps=0 --size=$small --steps=13 | grep '^RESULT' | sed "s/^RESULT /RESULT variant=$bin /"
    # Rows of a multiple of 4 elements: the box comes by cp.async, as at
    # the timed size (the odd size copies element by element).
    ./$bin --check --reps=0 --size=$aligned --steps=13 | grep '^RESULT' | sed "s/^RESULT /RESULT variant=$bin /"
    ./$bin --reps=5 --min-time=0.2 --size=$big --steps=$((t * 4)) | grep '^RESULT' | sed "s/^RESULT /RESULT variant=$bin /"
  done
}

case $mode in
  generate) generate ;;
  run) run ;;
  *) echo "usage: $0 generate|run DIR" >&2; exit 2 ;;
esac
