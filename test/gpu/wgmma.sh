#!/usr/bin/env bash
# The GPU check of runtime/include/stencilc/wgmma.cuh (issue 25): builds
# test/gpu/hopper/wgmma-gemm.cu for sm_90a and runs it on the GPU in hand,
# which must be a Hopper (sm_90) GPU. The program prints
# `WGMMA <case> PASS|FAIL max_err=...` for each case (dense f16, bf16 and
# tf32 at N = 8, 64, 128, 2:4-sparse f16 and bf16; no swizzle and 128B
# swizzle) and exits non-zero on any failure; so does this script.
#
#   test/gpu/wgmma.sh [DIR]      (DIR: build directory, default .gpu/wgmma)
#
# NVCC names the compiler (default: nvcc on PATH). MEMCHECK=1 also runs the
# program under compute-sanitizer. Where cuobjdump exists, the script
# counts the HGMMA instructions of the binary (none would mean that the
# wgmma did not reach the tensor cores' warpgroup path).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$root/.gpu/wgmma}
nvcc=${NVCC:-nvcc}
mkdir -p "$dir"
exe=$dir/wgmma-gemm

if ! "$nvcc" -std=c++17 -O2 -Werror all-warnings \
    -gencode arch=compute_90a,code=sm_90a -I"$root/runtime/include" \
    -Xptxas -v "$root/test/gpu/hopper/wgmma-gemm.cu" -o "$exe" \
    2> "$dir/build.log"; then
  cat "$dir/build.log"
  echo "WGMMA BUILD FAIL"
  exit 1
fi
if grep -q "[1-9][0-9]* bytes spill" "$dir/build.log"; then
  echo "WGMMA note: ptxas reports spills (see $dir/build.log)"
fi
if command -v cuobjdump > /dev/null; then
  echo "WGMMA SASS: $(cuobjdump --dump-sass "$exe" | grep -c HGMMA || true) HGMMA instructions"
fi

status=0
"$exe" || status=$?
if [ "${MEMCHECK:-0}" = 1 ] && command -v compute-sanitizer > /dev/null; then
  compute-sanitizer --error-exitcode 3 "$exe" > "$dir/memcheck.log" 2>&1 \
    || { status=$?; tail -20 "$dir/memcheck.log"; echo "WGMMA MEMCHECK FAIL"; }
fi
exit "$status"
