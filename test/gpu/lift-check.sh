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
inputs=${INPUTS:-$all_inputs}

generate() {
  mkdir -p "$dir"
  cp "$inputs_dir/harness.h" "$dir/"
  for name in $inputs; do
    cp "$inputs_dir/$name.cpp" "$dir/$name.orig.cpp"
    "$build/tools/stencil-lift/stencil-lift" "$inputs_dir/$name.cpp" \
      -o "$dir/$name.st" --rewrite-output="$dir/$name.cpp" || return 1
    "$build/tools/stencilc/stencilc" "$dir/$name.st" -o "$dir/$name.cu" ||
      return 1
  done
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
  echo "generated $(echo $inputs | wc -w) programs in $dir"
}

build() {
  cd "$dir" || return 1
  local failed=0
  for name in $inputs; do
    nvcc -O3 -gencode arch=compute_90,code=sm_90 -DSTENCIL_LIFT_HARNESS -I. \
      "$name.cpp" "$name.cu" -o "$name.gpu" 2> "$name.gpu.log" &&
    nvcc -O3 -DSTENCIL_LIFT_HARNESS -I. -x c++ "$name.orig.cpp" \
      -o "$name.cpu" 2> "$name.cpu.log" ||
      { echo "BUILD FAIL $name (see $dir/$name.*.log)"; failed=1; }
  done
  nvcc -O2 -x c++ lift-compare.cpp -o lift-compare || failed=1
  cd - > /dev/null
  return $failed
}

run() {
  build || { echo "lift-check: FAIL"; return 1; }
  cd "$dir" || return 1
  local passed=0 failed=0
  for name in $inputs; do
    local args="--size=${size[$name]} --steps=${steps[$name]} --seed=7 --ints"
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
    echo "$name size=${size[$name]} steps=${steps[$name]}: $result"
    case $result in PASS*) passed=$((passed + 1)) ;; *) failed=$((failed + 1)) ;; esac
  done
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
  *) echo "usage: $0 generate|build|run|all DIR [BUILD]"; exit 2 ;;
esac
