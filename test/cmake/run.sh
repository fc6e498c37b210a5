#!/usr/bin/env bash
# The CMake package test (issue 7): installs the stencilc of build dir $1
# (default build) into a scratch prefix, then configures and builds the
# downstream project of test/cmake with Ninja and nvcc, against the installed
# package (find_package) and against this source tree (add_subdirectory).
# For each, it proves from the commands Ninja runs (ninja -v) that
#   - touching one .st reruns only that file's stencilc, and, since its
#     outputs are unchanged (--write-if-changed), nothing else;
#   - editing one .st reruns only that file's stencilc and the compile of its
#     .cu (then the archive and the link), not the other file's, and not
#     main.cpp when the generated header is unchanged;
#   - a rebuild with no change does nothing.
# Needs nvcc; nothing here runs on a GPU.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
export PATH=/usr/local/cuda/bin:$PATH
command -v nvcc >/dev/null || { echo "cmake test: nvcc not found"; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

fail() { echo "cmake test: FAIL: $*"; exit 1; }

# Runs ninja -v in $1 and leaves the commands it ran, one a line, in $cmds.
rebuild() {
  ninja -C "$1" -v >"$scratch/log" 2>&1 || { cat "$scratch/log"; fail "build of $1"; }
  grep -E '^\[[0-9]+/[0-9]+\] ' "$scratch/log" >"$scratch/cmds" || true
  cmds=$scratch/cmds
}
# The compiler's own tools/stencilc/main.cpp is built too under
# add_subdirectory: it is not the downstream project's main.cpp.
ran() { grep -E -- "$1" "$cmds" | grep -cv 'tools/stencilc/main\.cpp' || true; }
expect() { # expect <what> <count> <regex>
  local n
  n=$(ran "$3")
  [ "$n" -eq "$2" ] || { cat "$cmds"; fail "$1: expected $2 command(s) matching '$3', saw $n"; }
}

# check <label> <downstream build dir> <downstream source dir>
check() {
  local label=$1 bin=$2 src=$3
  rebuild "$bin"
  [ -x "$bin/demo" ] || fail "$label: demo was not linked"
  expect "$label: first build" 2 'stencilc .*\.st -o .*--write-if-changed'
  expect "$label: first build" 2 'nvcc .* -c .*stencils\.stencilc/(heat|waves)\.cu'
  expect "$label: first build" 1 '-c [^ ]*main\.cpp'

  rebuild "$bin"
  grep -q 'ninja: no work to do' "$scratch/log" || { cat "$scratch/log"; fail "$label: rebuild after no change did work"; }

  # touch: only heat.st's stencilc runs; its outputs keep their timestamps.
  local before after
  before=$(stat -c %Y "$bin"/stencils.stencilc/heat.{cu,h})
  sleep 1
  touch "$src/heat.st"
  rebuild "$bin"
  expect "$label: touch heat.st" 1 '.'
  expect "$label: touch heat.st" 1 'stencilc .*/heat\.st -o'
  after=$(stat -c %Y "$bin"/stencils.stencilc/heat.{cu,h})
  [ "$before" = "$after" ] || fail "$label: touch heat.st rewrote heat.cu or heat.h"

  # edit: the update changes, the interface does not.
  sed -i 's/alpha \* (/alpha * 0.5 * (/' "$src/heat.st"
  rebuild "$bin"
  expect "$label: edit heat.st" 1 'stencilc .*/heat\.st -o'
  expect "$label: edit heat.st" 1 'nvcc .* -c .*/heat\.cu'
  expect "$label: edit heat.st" 0 'waves\.st|-c [^ ]*waves\.cu'
  expect "$label: edit heat.st" 0 '-c [^ ]*main\.cpp'
  expect "$label: edit heat.st" 4 '.'   # stencilc, nvcc, archive, link

  rebuild "$bin"
  grep -q 'ninja: no work to do' "$scratch/log" || { cat "$scratch/log"; fail "$label: no-op rebuild did work"; }
  echo "cmake test: $label: ok (first build, touch, edit and no-op rebuild)"
}

# 1. The installed package.
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
for f in bin/stencilc include/stencilc/runtime.cuh include/stencilc/driver.cuh \
         include/stencilc/distributed.h include/stencilc/distributed.cuh \
         include/stencilc/distributed_driver.cuh include/stencilc/wgmma.cuh \
         include/stencilc/hopper.cuh \
         lib/cmake/Stencilc/StencilcConfig.cmake \
         lib/cmake/Stencilc/StencilcConfigVersion.cmake \
         lib/cmake/Stencilc/StencilcHelpers.cmake; do
  [ -e "$scratch/prefix/$f" ] || fail "cmake --install did not install $f"
done
cp -r "$repo/test/cmake" "$scratch/src"
cmake -S "$scratch/src" -B "$scratch/installed" -G Ninja \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_CUDA_COMPILER=nvcc >/dev/null
check "find_package" "$scratch/installed" "$scratch/src"

# STENCILC_EXECUTABLE replaces the imported stencilc.
cat >"$scratch/stencilc-wrapper" <<EOF
#!/bin/sh
echo "\$@" >>"$scratch/wrapper.log"
exec "$scratch/prefix/bin/stencilc" "\$@"
EOF
chmod +x "$scratch/stencilc-wrapper"
cmake "$scratch/installed" -DSTENCILC_EXECUTABLE="$scratch/stencilc-wrapper" >/dev/null
rebuild "$scratch/installed"
[ "$(grep -c -- '--write-if-changed' "$scratch/wrapper.log")" -eq 2 ] \
  || fail "STENCILC_EXECUTABLE was not used for both sources"
echo "cmake test: STENCILC_EXECUTABLE: ok"

# ARCH and keywords, configure only: several archs give the oldest one's
# code built for each (sm_80; sm_89 for sm_120 and sm_89); no ARCH gives
# sm_90; TARGET (auto included), PRECISION and OPTIONS pass through;
# unknown keywords warn; unknown ARCH, TARGET and PRECISION values stop the
# configure with a message.
mkdir -p "$scratch/args"
cp "$repo/test/cmake/heat.st" "$scratch/args/"
cat >"$scratch/args/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(args LANGUAGES CXX CUDA)
find_package(Stencilc REQUIRED)
stencilc_add_library(both SOURCES heat.st ARCH sm_80 sm_90 OPTIONS --fuse=3)
stencilc_add_library(later SOURCES heat.st BOGUS 1 TARGET sptc PRECISION tf32)
stencilc_add_library(chosen SOURCES heat.st TARGET auto)
stencilc_add_library(newer SOURCES heat.st ARCH sm_120 sm_89)
CMAKE
cmake -S "$scratch/args" -B "$scratch/args/b" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DCMAKE_CUDA_COMPILER=nvcc >"$scratch/args.log" 2>&1 || { cat "$scratch/args.log"; fail "ARCH project"; }
ninja_file=$scratch/args/b/build.ninja
grep -q -- 'heat.st -o [^ ]*/both.stencilc/heat.cu --arch=sm_80 .*--write-if-changed --fuse=3' \
  "$ninja_file" || fail "ARCH sm_80 sm_90: stencilc not run with --arch=sm_80"
grep -q 'arch=compute_80,code=\[compute_80,sm_80\].*arch=compute_90,code=\[compute_90,sm_90\]' \
  "$ninja_file" || fail "ARCH sm_80 sm_90: CUDA_ARCHITECTURES is not 80;90"
grep -q -- 'heat.st -o [^ ]*/later.stencilc/heat.cu --arch=sm_90 --target=sptc --precision=tf32 -MD' "$ninja_file" \
  || fail "no ARCH / TARGET sptc PRECISION tf32: stencilc not run with --arch=sm_90 --target=sptc --precision=tf32"
grep -q -- 'heat.st -o [^ ]*/chosen.stencilc/heat.cu --arch=sm_90 --target=auto -MD' "$ninja_file" \
  || fail "TARGET auto: stencilc not run with --target=auto"
grep -q -- 'heat.st -o [^ ]*/newer.stencilc/heat.cu --arch=sm_89 -MD' "$ninja_file" \
  || fail "ARCH sm_120 sm_89: stencilc not run with --arch=sm_89"
grep -q 'arch=compute_89,code=\[compute_89,sm_89\].*arch=compute_120,code=\[compute_120,sm_120\]' \
  "$ninja_file" || fail "ARCH sm_120 sm_89: CUDA_ARCHITECTURES is not 89;120"
grep -q 'unknown keyword BOGUS' "$scratch/args.log" || fail "no warning on BOGUS"
for bad in "TARGET gpu" "PRECISION fast" "ARCH sm_75"; do
  dir=$scratch/bad-${bad// /-}
  mkdir -p "$dir"
  cp "$repo/test/cmake/heat.st" "$dir/"
  printf 'cmake_minimum_required(VERSION 3.20)\nproject(bad LANGUAGES CXX CUDA)\nfind_package(Stencilc REQUIRED)\nstencilc_add_library(x SOURCES heat.st %s)\n' "$bad" \
    >"$dir/CMakeLists.txt"
  if cmake -S "$dir" -B "$dir/b" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" \
      -DCMAKE_CUDA_COMPILER=nvcc >"$dir.log" 2>&1; then
    fail "$bad was accepted"
  fi
done
grep -q "unknown TARGET 'gpu'" "$scratch/bad-TARGET-gpu.log" || fail "no message for TARGET gpu"
grep -q "unknown PRECISION 'fast'" "$scratch/bad-PRECISION-fast.log" || fail "no message for PRECISION fast"
# CMake wraps the message: the first line's part.
grep -q "unsupported ARCH 'sm_75'; expected sm_80, sm_86," "$scratch/bad-ARCH-sm_75.log" \
  || fail "no message for ARCH sm_75"
echo "cmake test: ARCH and keywords: ok"

# The distributed program of docs/user-guide.md, as the guide writes it:
# stencilc_add_library(... DISTRIBUTED) with find_package(MPI), against the
# installed package (needs MPI; NCCL is linked where CMake finds it).
if command -v mpicxx >/dev/null; then
  mkdir -p "$scratch/dist"
  python3 "$repo/test/Driver/Inputs/check-doc-examples.py" files \
    "$repo/docs/user-guide.md" "$scratch/dist" >/dev/null
  cp "$repo/dsl-examples/heat.st" "$scratch/dist/distributed/"
  cmake -S "$scratch/dist/distributed" -B "$scratch/dist/b" -G Ninja \
    -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_CUDA_COMPILER=nvcc \
    >"$scratch/dist.log" 2>&1 || { cat "$scratch/dist.log"; fail "distributed example: configure"; }
  rebuild "$scratch/dist/b"
  [ -x "$scratch/dist/b/heat_mpi" ] || fail "distributed example: heat_mpi was not linked"
  expect "distributed example" 1 'stencilc .*heat\.st -o .*--distributed'
  grep -q 'STENCILC_WITH_NCCL' "$scratch/dist/b/build.ninja" && nccl="with NCCL" || nccl="without NCCL"
  echo "cmake test: the distributed example of the user guide: ok ($nccl)"
else
  echo "cmake test: no MPI (mpicxx): the distributed example is not built"
fi

# 2. add_subdirectory of this source tree (tests off; ccache where the
# main build has it).
rm -rf "$scratch/src" && cp -r "$repo/test/cmake" "$scratch/src"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cxx=$(grep -E '^CMAKE_CXX_COMPILER:' "$build/CMakeCache.txt" | cut -d= -f2)
cmake -S "$scratch/src" -B "$scratch/subdir" -G Ninja \
  -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" -DCMAKE_CUDA_COMPILER=nvcc \
  -DSTENCILC_SOURCE_DIR="$repo" >/dev/null
check "add_subdirectory" "$scratch/subdir" "$scratch/src"
echo "cmake test: passed"
