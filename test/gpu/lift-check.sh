#!/usr/bin/env bash
# The GPU check of stencil-lift: lifts and rewrites the inputs of
# test/Lift/Inputs, builds each rewritten program together with the CUDA
# that stencilc generates from its lifted .st file, runs it on the GPU and
# the original loop on the CPU from the same data, and compares the host
# buffers both leave behind (last step, step before, padding and ghost
# cells), byte for byte. The data are small integers (the harness's --ints)
# and the weights powers of two, so the results are exact whatever order
# the GPU adds in and whether it fuses multiplies and adds; box-2d49p's
# weight 1/49 is not, and it is compared within a relative 1e-5 instead.
#
#   test/gpu/lift-check.sh generate DIR [BUILD]  here: needs stencil-lift
#                                                and stencilc built in BUILD
#                                                (default: build)
#   test/gpu/lift-check.sh build DIR             compiles what generate
#                                                wrote (needs nvcc only)
#   test/gpu/lift-check.sh run DIR               build, then run and compare
#                                                (on the GPU machine)
#   test/gpu/lift-check.sh all DIR [BUILD]       all three
#   test/gpu/lift-check.sh emulate DIR [BUILD]   generate, then build and run
#                                                here, the kernels on the CPU
#                                                through test/emulation (no
#                                                GPU; smaller sizes)
#
# The PolyBench-style inputs (pb-jacobi-2d, pb-heat-3d, pitch-macro-3d,
# edges-differ-2d: the real-code idioms in our own words, see
# test/Lift/polybench-style.test) are lifted once and built at two sizes
# each (-D options: the rewrite must follow them), and pb-jacobi-2d and
# edges-differ-2d run with equal and with different edges (the rewritten
# code runs the original loop for the latter). pb-jacobi-2d's weight 0.2 is
# not a power of two: with equal edges it is compared within a relative
# 1e-12; everything else byte for byte.
#
# INPUTS="heat-2d heat-3d" limits the inputs. DIR is self-contained after
# generate: carry it to the GPU machine and call run there. Prints one line
# per input and ends with `lift-check: PASS` or `lift-check: FAIL`.
set -uo pipefail
mode=${1:-all}
dir=${2:-.gpu/lift}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${3:-$root/build}
case $build in /*) ;; *) build=$root/$build ;; esac
inputs_dir=$root/test/Lift/Inputs

# input -> size, steps (odd: the buffers end swapped), comparison
declare -A size=([heat-1d]=1000003 [1d5p]=1000003 [heat-2d]=2000x60
  [box-2d9p]=777x555 [star-2d13p]=1000x999 [box-2d49p]=40x35
  [heat-3d]=67x45x71 [box-3d27p]=60x16x22 [varcoef-2d]=500x433)
declare -A steps=([heat-1d]=9 [1d5p]=5 [heat-2d]=9 [box-2d9p]=5
  [star-2d13p]=7 [box-2d49p]=5 [heat-3d]=9 [box-3d27p]=3 [varcoef-2d]=7)
declare -A type=([heat-1d]=f64 [1d5p]=f32 [heat-2d]=f64 [box-2d9p]=f32
  [star-2d13p]=f64 [box-2d49p]=f32 [heat-3d]=f64 [box-3d27p]=f32
  [varcoef-2d]=f64)
declare -A tolerance=([box-2d49p]=1e-5)
all_inputs="heat-1d 1d5p heat-2d box-2d9p star-2d13p box-2d49p heat-3d box-3d27p varcoef-2d"
pb_all="pb-jacobi-2d pb-heat-3d pitch-macro-3d edges-differ-2d"
declare -A pb_ext=([pb-jacobi-2d]=c [pb-heat-3d]=c [pitch-macro-3d]=c
  [edges-differ-2d]=cpp)
# Two builds of each: -D options; edges-differ-2d takes its sizes at run time.
declare -A pb_defs=([pb-jacobi-2d]="-DGRID_N=600 -DTRIPS=20|-DGRID_N=1001 -DTRIPS=7"
  [pb-heat-3d]="-DN=90 -DTSTEPS=4|-DN=131 -DTSTEPS=3"
  [pitch-macro-3d]="-DN=100 -DSTEPS=5|-DN=67 -DSTEPS=4" [edges-differ-2d]="")
declare -A pb_args=([pb-jacobi-2d]="same|differ" [pb-heat-3d]="" [pitch-macro-3d]=""
  [edges-differ-2d]="700 9 same|700 9 differ|333 4 differ")
# The emulation runs the kernels as host threads: smaller sizes.
declare -A emu_size=([heat-1d]=1001 [1d5p]=777 [heat-2d]=37x29 [box-2d9p]=53x41
  [star-2d13p]=49x33 [box-2d49p]=40x35 [heat-3d]=13x11x9 [box-3d27p]=9x13x17
  [varcoef-2d]=31x27)
declare -A emu_defs=([pb-jacobi-2d]="-DGRID_N=24 -DTRIPS=3|-DGRID_N=37 -DTRIPS=4"
  [pb-heat-3d]="-DN=10 -DTSTEPS=3|-DN=13 -DTSTEPS=2"
  [pitch-macro-3d]="-DN=11 -DSTEPS=3|-DN=6 -DSTEPS=1" [edges-differ-2d]="")
declare -A emu_args=([edges-differ-2d]="19 5 same|19 5 differ|26 4 differ")
if [ -n "${INPUTS:-}" ]; then
  inputs="" pb_inputs=""
  for name in $INPUTS; do
    if [ -n "${pb_ext[$name]:-}" ]; then pb_inputs+=" $name"; else inputs+=" $name"; fi
  done
else
  inputs=$all_inputs pb_inputs=$pb_all
fi
emulate=0
stencilc_flags=""

generate() {
  mkdir -p "$dir"
  cp "$inputs_dir/harness.h" "$dir/"
  for name in $inputs; do
    cp "$inputs_dir/$name.cpp" "$dir/$name.orig.cpp"
    "$build/tools/stencil-lift/stencil-lift" "$inputs_dir/$name.cpp" \
      -o "$dir/$name.st" --rewrite-output="$dir/$name.cpp" 2> "$dir/$name.lift.log" ||
      { cat "$dir/$name.lift.log"; return 1; }
    # shellcheck disable=SC2086
    "$build/tools/stencilc/stencilc" "$dir/$name.st" $stencilc_flags -o "$dir/$name.cu" ||
      return 1
  done
  for name in $pb_inputs; do
    local ext=${pb_ext[$name]}
    cp "$inputs_dir/$name.$ext" "$dir/$name.orig.$ext"
    "$build/tools/stencil-lift/stencil-lift" "$inputs_dir/$name.$ext" \
      -o "$dir/$name.st" --rewrite-output="$dir/$name.cpp" 2> "$dir/$name.lift.log" ||
      { cat "$dir/$name.lift.log"; return 1; }
    # shellcheck disable=SC2086
    "$build/tools/stencilc/stencilc" "$dir/$name.st" $stencilc_flags -o "$dir/$name.cu" ||
      return 1
  done
  # What the emulate mode builds with.
  mkdir -p "$dir/emulation"
  cp -r "$root/test/emulation/stencilc" "$dir/emulation/"
  cp "$inputs_dir/memcpy2d-emulation.cpp" "$dir/emulation/"
  cp -r "$root/runtime/include/." "$dir/emulation/"
  # A comparison that allows a relative error, for weights that are not
  # powers of two: max |gpu - cpu| / max |cpu| over the whole dump.
  cat > "$dir/lift-compare.cpp" <<'CPP'
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
template <typename T> static std::vector<T> load(const char *path) {
  std::vector<T> v;
  if (FILE *f = std::fopen(path, "rb")) {
    T x;
    while (std::fread(&x, sizeof x, 1, f) == 1)
      v.push_back(x);
    std::fclose(f);
  }
  return v;
}
template <typename T> static int compare(const char *a, const char *b, double tol) {
  std::vector<T> x = load<T>(a), y = load<T>(b);
  if (x.empty() || x.size() != y.size()) {
    std::printf("sizes differ: %zu and %zu\n", x.size(), y.size());
    return 1;
  }
  double diff = 0, scale = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) || std::isnan(y[i])) {
      if (std::isnan(x[i]) != std::isnan(y[i])) {
        std::printf("NaN at %zu in one dump only\n", i);
        return 1;
      }
      continue;
    }
    diff = std::fmax(diff, std::fabs(double(x[i]) - double(y[i])));
    scale = std::fmax(scale, std::fabs(double(y[i])));
  }
  double err = scale > 0 ? diff / scale : diff;
  std::printf("max relative difference %.3g (bound %.3g)\n", err, tol);
  return err <= tol ? 0 : 1;
}
int main(int argc, char **argv) {
  if (argc != 5)
    return 2;
  double tol = std::atof(argv[4]);
  return std::strcmp(argv[1], "f32") == 0 ? compare<float>(argv[2], argv[3], tol)
                                          : compare<double>(argv[2], argv[3], tol);
}
CPP
  echo "generated $(echo $inputs $pb_inputs | wc -w) programs in $dir"
}

# The compilers: nvcc for the GPU, or the CUDA emulation of test/emulation
# (g++, the kernels as host threads) with the host compiler for the loops.
# Either way the generated .cu is compiled on its own (the programs' -D
# options would rename its template parameters).
cu_compile() { # .cu object
  if [ $emulate = 1 ]; then
    g++ -std=c++20 -O1 -x c++ -DSTENCILC_EMULATE \
      -include emulation/stencilc/emulation.h -I"$cuda_inc" -Iemulation \
      -pthread -c "$1" -o "$2"
  else
    nvcc -O3 -gencode arch=compute_90,code=sm_90 -c "$1" -o "$2"
  fi
}
gpu_link() { # rewritten.cpp cu.o out [flags...]
  local src=$1 obj=$2 out=$3
  shift 3
  if [ $emulate = 1 ]; then
    g++ -std=c++20 -O1 -x c++ -DSTENCILC_EMULATE \
      -include emulation/stencilc/emulation.h -I"$cuda_inc" -Iemulation \
      -pthread -I. "$@" "$src" emulation/memcpy2d-emulation.cpp -x none "$obj" -o "$out"
  else
    nvcc -O3 -gencode arch=compute_90,code=sm_90 -I. "$@" "$src" "$obj" -o "$out"
  fi
}
cpu_build() { # source out [flags...]
  local src=$1 out=$2
  shift 2
  local lang=c++
  case $src in *.c) lang=c ;; esac
  if [ $emulate = 1 ]; then
    if [ $lang = c ]; then ${CC:-cc} -O2 -std=c99 "$@" "$src" -o "$out"
    else ${CXX:-g++} -O2 -std=c++17 "$@" "$src" -o "$out"; fi
  else
    nvcc -O3 -x $lang "$@" "$src" -o "$out"
  fi
}

build() {
  cd "$dir" || return 1
  local failed=0
  for name in $inputs; do
    cu_compile "$name.cu" "$name.cu.o" 2> "$name.gpu.log" &&
    gpu_link "$name.cpp" "$name.cu.o" "$name.gpu" -DSTENCIL_LIFT_HARNESS \
      2>> "$name.gpu.log" &&
    cpu_build "$name.orig.cpp" "$name.cpu" -DSTENCIL_LIFT_HARNESS -I. \
      2> "$name.cpu.log" ||
      { echo "BUILD FAIL $name (see $dir/$name.*.log)"; failed=1; }
  done
  for name in $pb_inputs; do
    local defs=${pb_defs[$name]} k=0
    [ $emulate = 1 ] && defs=${emu_defs[$name]}
    cu_compile "$name.cu" "$name.cu.o" 2> "$name.gpu.log" ||
      { echo "BUILD FAIL $name (see $dir/$name.gpu.log)"; failed=1; continue; }
    local IFS_save=$IFS
    IFS='|'
    local builds=($defs)
    IFS=$IFS_save
    [ ${#builds[@]} = 0 ] && builds=("")
    for d in "${builds[@]}"; do
      # shellcheck disable=SC2086
      gpu_link "$name.cpp" "$name.cu.o" "$name.$k.gpu" $d 2>> "$name.gpu.log" &&
      cpu_build "$name.orig.${pb_ext[$name]}" "$name.$k.cpu" $d 2>> "$name.cpu.log" ||
        { echo "BUILD FAIL $name $d (see $dir/$name.*.log)"; failed=1; }
      k=$((k + 1))
    done
  done
  if [ $emulate = 1 ]; then ${CXX:-g++} -O2 -x c++ lift-compare.cpp -o lift-compare || failed=1
  else nvcc -O2 -x c++ lift-compare.cpp -o lift-compare || failed=1; fi
  cd - > /dev/null
  return $failed
}

# The PolyBench-style programs: each build, each argument list; prints a
# result line per run and counts into passed/failed.
run_pb() {
  for name in $pb_inputs; do
    local defs=${pb_defs[$name]} args=${pb_args[$name]}
    if [ $emulate = 1 ]; then
      defs=${emu_defs[$name]}
      args=${emu_args[$name]:-${pb_args[$name]}}
    fi
    local IFS_save=$IFS
    IFS='|'
    local builds=($defs) arglists=($args)
    IFS=$IFS_save
    [ ${#builds[@]} = 0 ] && builds=("")
    [ ${#arglists[@]} = 0 ] && arglists=("")
    local k=0
    for d in "${builds[@]}"; do
      for a in "${arglists[@]}"; do
        local result
        # shellcheck disable=SC2086
        if ./"$name.$k.gpu" "$name.gpu.bin" $a > "$name.gpu.out" 2>&1 &&
           ./"$name.$k.cpu" "$name.cpu.bin" $a > "$name.cpu.out" 2>&1; then
          local path="stencil"
          grep -q "running the original loop" "$name.gpu.out" && path="fallback to the loop"
          if [ "$name" = pb-jacobi-2d ] && [ "$path" = stencil ]; then
            result=$(./lift-compare f64 "$name.gpu.bin" "$name.cpu.bin" 1e-12) &&
              result="PASS ($path) $result" || result="FAIL ($path) $result"
          elif cmp -s "$name.gpu.bin" "$name.cpu.bin"; then
            result="PASS ($path) identical ($(stat -c %s "$name.cpu.bin") bytes)"
          else
            result="FAIL ($path) the dumps differ: $(cmp "$name.gpu.bin" "$name.cpu.bin" 2>&1 | head -1)"
          fi
          # Equal edges must run the stencil, different ones the loop.
          case "$a" in
            *differ*) [ "$path" = stencil ] && result="FAIL the edges differ but the stencil ran" ;;
            *) [ "$path" = stencil ] || result="FAIL the edges are equal but the loop ran" ;;
          esac
        else
          result="FAIL the program failed: $(tail -1 "$name.gpu.out" "$name.cpu.out" | tr '\n' ' ')"
        fi
        echo "$name ${d:-} ${a:-}: $result"
        case $result in PASS*) passed=$((passed + 1)) ;; *) failed=$((failed + 1)) ;; esac
      done
      k=$((k + 1))
    done
  done
}

run() {
  build || { echo "lift-check: FAIL"; return 1; }
  cd "$dir" || return 1
  local passed=0 failed=0
  for name in $inputs; do
    local sz=${size[$name]}
    [ $emulate = 1 ] && sz=${emu_size[$name]}
    local args="--size=$sz --steps=${steps[$name]} --seed=7 --ints"
    local result
    if ./"$name.gpu" $args --dump="$name.gpu.bin" > "$name.gpu.out" 2>&1 &&
       ./"$name.cpu" $args --dump="$name.cpu.bin" > "$name.cpu.out" 2>&1; then
      if [ -n "${tolerance[$name]:-}" ]; then
        result=$(./lift-compare "${type[$name]}" "$name.gpu.bin" "$name.cpu.bin" \
                 "${tolerance[$name]}") && result="PASS $result" ||
          result="FAIL $result"
      elif cmp -s "$name.gpu.bin" "$name.cpu.bin"; then
        result="PASS identical ($(stat -c %s "$name.cpu.bin") bytes)"
      else
        result="FAIL the dumps differ: $(cmp "$name.gpu.bin" "$name.cpu.bin" 2>&1 | head -1)"
      fi
    else
      result="FAIL the program failed: $(tail -1 "$name.gpu.out" "$name.cpu.out" | tr '\n' ' ')"
    fi
    echo "$name size=$sz steps=${steps[$name]}: $result"
    case $result in PASS*) passed=$((passed + 1)) ;; *) failed=$((failed + 1)) ;; esac
  done
  run_pb
  cd - > /dev/null
  echo "lift-check: $passed passed, $failed failed"
  if [ "$failed" -eq 0 ]; then echo "lift-check: PASS"; else echo "lift-check: FAIL"; fi
  [ "$failed" -eq 0 ]
}

case $mode in
  generate) generate ;;
  build) build ;;
  run) run ;;
  all) generate && run ;;
  emulate)
    emulate=1
    # The emulation runs CUDA-core kernels only.
    stencilc_flags="--target=cuda-core"
    cuda_inc=${CUDA_INCLUDE:-/usr/local/cuda/include}
    generate && run ;;
  *) echo "usage: $0 generate|build|run|all|emulate DIR [BUILD]"; exit 2 ;;
esac
