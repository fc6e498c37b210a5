#!/usr/bin/env bash
# Installs what stencilc needs from Debian's packages (only what is missing),
# then configures and builds it in build/. Safe to run again: it only
# rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

# One pinned LLVM: Debian's 14. nvcc comes with the CUDA toolkit, which is
# not a Debian package here; without it the tests that compile generated
# code are reported as unsupported, not failed. OpenMPI runs the distributed
# tests: several MPI processes on the CPU, each rank's kernels emulated.
packages=(cmake ninja-build python3 clang-14 llvm-14-dev llvm-14-tools
          libclang-rt-14-dev libclang-14-dev libfmt-dev libgtest-dev
          zlib1g-dev libtinfo-dev libz3-dev ccache openmpi-bin libopenmpi-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
    || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "stencilc setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
command -v nvcc >/dev/null || echo "stencilc setup: nvcc not found; CUDA compile tests will be skipped"

if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DSTENCILC_ENABLE_FUZZER=ON >/dev/null
fi
cmake --build build
