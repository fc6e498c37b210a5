#!/usr/bin/env bash
# Calibration of the cost model (docs/cost-model.md): every candidate the
# model scores for the benchmark set in every type is generated, built and
# timed on the GPU, and the probe measures the GPU's ceilings.
#
#   test/gpu/calibrate.sh generate DIR   (here: needs a built stencilc)
#   test/gpu/calibrate.sh run DIR        (on the GPU machine: needs nvcc)
#   python3 test/gpu/calibrate.py DIR/results.txt ...  (here: the report)
#
# generate writes DIR/manifest.txt, one line per variant:
#   VARIANT EXAMPLE TYPE LABEL...
# f32 variants are generated under --precision=tf32 so that the tf32
# tensor-core candidates are measured too, and the split-TF32 candidates
# under exact (labels "... split-tf32", variants EX.f32.sN; SPLIT=0 leaves
# them out); the report applies each policy. The fit uses the tf32 rows
# only: split-TF32 kernels are scored, not fitted.
# run writes DIR/results.txt (RESULT lines, as test/gpu/check.sh) and
# DIR/probe.hw; RESULTS and PROBE may point elsewhere (under $OUT), and
# BENCHMARKS="box3d2r star3d4r ..." may name the shapes of dsl-examples/an5d/.
# PART=k/n runs every n-th variant from the k-th. UNITS="cuda-core" (default
# "cuda-core tc sptc") generates only those units' candidates: a refit of
# their weights after a change to their kernels, the other units' results
# kept (docs/cost-model.md, "Calibration").
set -uo pipefail
mode=${1:-}
dir=${2:-.calibrate}
root=$(cd "$(dirname "$0")/../.." && pwd)
stencilc=${STENCILC:-$root/build/tools/stencilc/stencilc}
benchmarks=${BENCHMARKS:-"heat-1d 1d5p heat-2d box-2d9p star-2d13p box-2d49p heat-3d box-3d27p"}
types=${TYPES:-"f16 bf16 f32 f64"}

# The source of a shape: dsl-examples/, else its an5d/ suite
# (BENCHMARKS="star3d4r box3d2r ...").
src_of() {
  if [ -f "$root/dsl-examples/$1.st" ]; then echo "$root/dsl-examples/$1.st"
  else echo "$root/dsl-examples/an5d/$1.st"; fi
}

bench_size() {
  case $1 in 1) echo 10240000 ;; 2) echo 10240x10240 ;; 3) echo 512x512x512 ;; esac
}

# "sptc morph(8,8) t=8" (or "... t=8 split-tf32", which the policy
# implies), "cuda-core stream-2d t=6" -> stencilc flags
flags_of() {
  local label=${1% split-tf32}
  local target=${label%% *} rest=${label#* } t=${label##*t=}
  local f="--target=$target --fuse=$t"
  case $rest in
    decompose*) f="$f --layout=decompose" ;;
    flatten*) f="$f --layout=flatten" ;;
    morph*) local rr=${rest#morph(}; rr=${rr%%)*}; f="$f --layout=morph --morph=$rr" ;;
    stream-2d*) f="$f --stream-2d" ;;
  esac
  echo "$f"
}

generate() {
  mkdir -p "$dir"
  : > "$dir/manifest.txt"
  for ex in $benchmarks; do
    for ty in $types; do
      local policies="tf32"
      [ $ty = f32 ] && [ "${SPLIT:-1}" != 0 ] && policies="tf32 exact"
      for policy in $policies; do
        # Under exact only the split-TF32 rows are new.
        local units=${UNITS:-cuda-core tc sptc} suffix="" prefix=c
        if [ $policy = exact ]; then
          units=$(tr ' ' '\n' <<< "$units" | grep -v cuda-core | tr '\n' ' ')
          suffix=" split-tf32" prefix=s
          [ -z "${units// }" ] && continue
        fi
        local explain="$dir/$ex.$ty.$policy.explain"
        "$stencilc" "$(src_of "$ex")" --type=$ty --precision=$policy \
          --explain > "$explain" || { echo "EXPLAIN FAIL $ex.$ty"; continue; }
        local n=0
        # Candidate rows start with a target name.
        grep -E "^  ($(xargs <<< "$units" | tr ' ' '|')) " "$explain" |
          sed -E "s/^  ((cuda-core|tc|sptc)( [a-z0-9-]+(\([0-9]+,[0-9]+\))?)? t=[0-9]+($suffix)?).*/\1/" |
          while read -r label; do
            n=$((n + 1))
            local v="$ex.$ty.$prefix$n"
            # shellcheck disable=SC2046
            "$stencilc" "$(src_of "$ex")" --type=$ty --precision=$policy \
              $(flags_of "$label") --emit-main -o "$dir/$v.cu" ||
              { echo "GENERATE FAIL $v $label"; continue; }
            echo "$v $ex $ty $label" >> "$dir/manifest.txt"
          done
      done
    done
  done
  echo "generated $(wc -l < "$dir/manifest.txt") variants in $dir"
}

run() {
  cd "$dir"
  local log=${RESULTS:-results.txt} probe=${PROBE:-probe.hw}
  # PART=k/n times every n-th variant from the k-th (a run fits the
  # device's 10-minute limit); the probe runs with part 1.
  local part=${PART:-1/1}
  awk -v k="${part%/*}" -v n="${part#*/}" '(NR - k) % n == 0' manifest.txt > part.txt
  : > "$log"
  # The probe first, while nothing else runs.
  if [ "${part%/*}" = 1 ] && [ -f "$root/tools/stencil-probe/stencil-probe.cu" ]; then
    nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 \
      -gencode arch=compute_80,code=sm_80 \
      "$root/tools/stencil-probe/stencil-probe.cu" -o stencil-probe &&
      ./stencil-probe -o "$probe" 2> probe.log; cat probe.log
  fi
  echo "building $(wc -l < part.txt) variants"
  cut -d' ' -f1 part.txt | xargs -P "$(nproc)" -I{} sh -c \
    'nvcc -O3 -gencode arch=compute_90,code=sm_90 {}.cu -o {} 2> {}.build.log || echo "BUILD FAIL {}"'
  while read -r v ex ty label; do
    [ -x "$v" ] || { echo "RESULT variant=$v status=NOBUILD" >> "$log"; continue; }
    local d; d=$(grep -m1 -o 'f[0-9]*\[[123]\]' "$(src_of "$ex")" | grep -o '[123]\]' | tr -d ']')
    if ./"$v" --reps=5 --min-time=0.2 --size=$(bench_size "$d") --steps=8 \
        < /dev/null > "$v.out" 2>&1 && grep -q '^RESULT' "$v.out"; then
      sed "s/^RESULT /RESULT variant=$v /" "$v.out" | grep '^RESULT' >> "$log"
    else
      echo "RESULT variant=$v status=FAIL $(tail -c 300 "$v.out" | tr '\n' ' ')" >> "$log"
    fi
  done < part.txt
  echo "timed $(grep -c gstencils= "$log") of $(wc -l < part.txt) variants"
}

case $mode in
  generate) generate ;;
  run) run ;;
  *) echo "usage: $0 generate|run DIR" >&2; exit 2 ;;
esac
