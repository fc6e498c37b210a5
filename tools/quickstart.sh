#!/usr/bin/env bash
# The README's first command: set up, build, compile dsl-examples/heat.st to
# CUDA and show it; where a GPU is present, also build the generated code
# with its standalone driver and run it with --check.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
export PATH=/usr/local/cuda/bin:$PATH
out=build/quickstart
mkdir -p $out
build/tools/stencilc/stencilc dsl-examples/heat.st -o $out/heat.cu
echo
echo "== stencilc dsl-examples/heat.st -o $out/heat.cu wrote:"
ls -l $out/heat.cu $out/heat.h
echo
echo "== the entry point, from $out/heat.h:"
sed -n '/struct Params/,/const Scratch &scratch = Scratch());/p' $out/heat.h
if command -v nvcc >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo
  echo "== GPU found: building with --emit-main and running --check"
  build/tools/stencilc/stencilc dsl-examples/heat.st --emit-main -o $out/heat_main.cu
  nvcc -std=c++17 -O3 -arch=sm_90 $out/heat_main.cu -o $out/heat
  $out/heat --check --size=2048x2048 --steps=50
else
  echo
  echo "== no GPU here: to run it on one, build the driver with"
  echo "   build/tools/stencilc/stencilc dsl-examples/heat.st --emit-main -o heat_main.cu"
  echo "   nvcc -std=c++17 -O3 -arch=sm_90 heat_main.cu -o heat && ./heat --check"
fi
