#!/usr/bin/env bash
# Timing of AN5D's suite and EBISU's shapes (issues 24 and 25), to run in
# the same device call as the peers (DESIGN.md §8: median of 5 runs of at
# least 0.2 s, each variant checked first at an odd size):
#   test/gpu/suite-timing.sh generate DIR   (here: needs stencilc)
#   test/gpu/suite-timing.sh run DIR        (on the GPU machine)
# Variants of each shape: f32 as a user gets it (EX.f32.auto: the default
# precision policy, exact, and --target=auto), f32 on CUDA cores at the
# model's depth (EX.f32.cc) and at 1 (EX.f32.cc1), and, for every box of
# radius >= 2 and 3-D star of radius >= 2, f16 at --target=auto, tc and
# sptc (EX.f16.auto, .tc, .sptc) and f16 on CUDA cores (EX.f16.cc).
# SHAPES="..." restricts the shapes; SIZE2 and SIZE3 set the timed sizes
# (default 16384x16384, AN5D's, and 512x512x512); STEPS the steps timed
# (default: 4 passes of the variant's depth).
set -uo pipefail
mode=${1:-}
dir=${2:-.gpu-suite}
root=$(cd "$(dirname "$0")/../.." && pwd)
stencilc=${STENCILC:-$root/build/tools/stencilc/stencilc}
shapes="star2d1r star2d2r star2d3r star2d4r box2d1r box2d2r box2d3r box2d4r
        star3d1r star3d2r star3d3r star3d4r box3d1r box3d2r box3d3r box3d4r
        j2d5pt j2d9pt j2d9pt-gol gradient2d j3d27pt
        heat-2d box-2d9p box-2d49p heat-3d box-3d27p star-2d9p-r2"
[ -n "${SHAPES:-}" ] && shapes=$SHAPES

src_of() {
  if [ -f "$root/dsl-examples/$1.st" ]; then echo "$root/dsl-examples/$1.st"
  else echo "$root/dsl-examples/an5d/$1.st"; fi
}
gen() { # name, stencilc arguments...
  local name=$1
  shift
  "$stencilc" "$@" --emit-main -o "$dir/$name.cu" 2> "$dir/$name.gen.log" ||
    echo "GENERATE FAIL $name: $(head -1 "$dir/$name.gen.log")"
}
# The shapes whose f16 tensor-core variants issue 24 asks for.
wide() { case $1 in box2d[234]r|box3d[234]r|star3d[234]r) return 0 ;; esac; return 1; }

generate() {
  mkdir -p "$dir"
  for ex in $shapes; do
    local f; f=$(src_of "$ex")
    [ -f "$f" ] || { echo "NO SOURCE $ex"; continue; }
    gen $ex.f32.auto "$f" --type=f32
    gen $ex.f32.cc "$f" --type=f32 --target=cuda-core
    gen $ex.f32.cc1 "$f" --type=f32 --target=cuda-core --fuse=1
    if wide $ex; then
      gen $ex.f16.auto "$f" --type=f16
      gen $ex.f16.cc "$f" --type=f16 --target=cuda-core
      gen $ex.f16.tc "$f" --type=f16 --target=tc
      gen $ex.f16.sptc "$f" --type=f16 --target=sptc
    fi
  done
  echo "generated $(ls "$dir"/*.cu | wc -l) programs in $dir"
}

run() {
  cd "$dir"
  ls *.cu | sed 's/\.cu$//' | xargs -P "$(nproc)" -I{} sh -c \
    '[ -x {} ] && [ {} -nt {}.cu ] && exit 0;
     nvcc -O3 -gencode arch=compute_90,code=sm_90 {}.cu -o {} 2> {}.build.log || echo "BUILD FAIL {}"'
  for v in *.cu; do
    echo "CHOICE ${v%.cu}: $(grep -m1 '^// Strategy: ' "$v" | sed 's/^\/\/ Strategy: //')"
  done
  for bin in $(ls *.cu | sed 's/\.cu$//'); do
    [ -x "$bin" ] || continue
    local small=37x29 big=${SIZE2:-16384x16384}
    grep -q '^// Stencil [a-z0-9_]*: 3-D' "$bin.cu" && { small=13x17x19; big=${SIZE3:-512x512x512}; }
    local t; t=$(./$bin --reps=0 --size=8 --steps=0 | grep -o 'fuse=[0-9]*' | head -1 | cut -d= -f2)
    ./$bin --check --reps=0 --size=$small --steps=13 | grep '^RESULT' | sed "s/^RESULT /RESULT variant=$bin /"
    ./$bin --reps=5 --min-time=0.2 --size=$big --steps=${STEPS:-$((${t:-1} * 4))} |
      grep '^RESULT' | sed "s/^RESULT /RESULT variant=$bin /"
  done
}

case $mode in
  generate) generate ;;
  run) run ;;
  *) echo "usage: $0 generate|run DIR" >&2; exit 2 ;;
esac
