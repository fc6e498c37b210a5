#!/usr/bin/env bash
# The GPU tests of runtime/include/stencilc/hopper.cuh (issue 25, item 2),
# on one Hopper GPU (sm_90): builds each program of test/gpu/hopper/ with
# nvcc for sm_90a, warnings as errors, runs it, and prints one line
#
#   HOPPER <name> PASS|FAIL
#
# per program, after the program's own lines (one per case checked).
#   tma-probe     runs first: one launch per step (a-e: mbarrier alone; a
#                 plain cp.async.bulk with expect_tx; one tensor load; the
#                 same through TmaPipeline<3>; one tensor store; f-k: zero
#                 fill at every edge, tma-tile's maps and shared-memory
#                 layout, its warp-specialized kernel on one box, 3-D and
#                 the other types, cluster-halo's multicast; h is h1
#                 (loads), h2a (+ prefetch), h2b (+ store at non-negative
#                 coordinates)), printing
#                 PROBE <step> PASS|FAIL and stopping at the first failure,
#                 so that the first step to break shows. After a failure
#                 (its error sticks to the process) each step of --list it
#                 did not reach (no PROBE line of its own; h1, h2a, h2b
#                 each count apart) runs alone in a fresh process
#                 (PROBE-SOLO lines).
#                 Then its limits run, each alone (PROBE-LIMIT lines, for
#                 information, never failing the run): copies that
#                 hopper.cuh forbids, whose innermost coordinate is no
#                 multiple of 16 bytes, and h2c-h2e, h's TMA store at a
#                 negative y, x, and both; FAIL there (an illegal
#                 instruction) confirms the rule, PASS refutes it.
#   tma-tile      2-D (f32, f64, f16, bf16) and 3-D (f32, f64, f16) boxes,
#                 many across the array's edges, through TmaPipeline<3>
#                 (warp-specialized: a producer warp, four consumer warps),
#                 loaded by TMA, stored by TMA where a box starts at
#                 non-negative coordinates and does not overhang the end
#                 of a row that is no whole number of 16-byte units (by
#                 each thread where not), bit for bit against the CPU.
#   cluster-halo  halo strips through DSMEM in clusters of 2, 4 and 8
#                 blocks, and multicast loads in clusters of 2 and 4.
#
#   test/gpu/hopper.sh [DIR]      (DIR: where to build; default .gpu-hopper)
# NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc);
# BUILD_ONLY=1 stops after building; MEMCHECK=1 also runs each program
# under compute-sanitizer (memcheck, then racecheck), a failure there
# failing the program; TIMEOUT (default 120 s) kills a program that hangs,
# as one whose mbarrier phases are wrong would. Exits 1 if any failed.
set -uo pipefail
dir=${1:-.gpu-hopper}
root=$(cd "$(dirname "$0")/../.." && pwd)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$dir"
failed=0

# tma-probe first: its lines say which step breaks when the others fail.
srcs=("$root/test/gpu/hopper/tma-probe.cu")
for src in "$root"/test/gpu/hopper/*.cu; do
  [ "$(basename "$src")" = tma-probe.cu ] || srcs+=("$src")
done
for src in "${srcs[@]}"; do
  name=$(basename "$src" .cu)
  exe="$dir/$name"
  if ! "$nvcc" -std=c++17 -O2 -lineinfo -Werror all-warnings \
      -gencode arch=compute_90a,code=sm_90a -I"$root/runtime/include" \
      "$src" -o "$exe" > "$dir/$name.build.txt" 2>&1; then
    cat "$dir/$name.build.txt"
    echo "HOPPER $name FAIL (build)"
    failed=1
    continue
  fi
  if [ "${BUILD_ONLY:-0}" = 1 ]; then
    echo "HOPPER $name BUILT"
    continue
  fi
  timeout "${TIMEOUT:-120}" "$exe" | tee "$dir/$name.out"
  rc=${PIPESTATUS[0]}
  if [ "$name" = tma-probe ]; then
    if [ $rc -ne 0 ]; then
      for step in $("$exe" --list); do
        grep -q "^PROBE $step[0-9]*-" "$dir/$name.out" ||
          timeout "${TIMEOUT:-120}" "$exe" "$step"
      done
    fi
    for limit in $("$exe" --limits); do
      timeout "${TIMEOUT:-120}" "$exe" "$limit" ||
        echo "  tma-probe $limit: exit status $? (for information)"
    done
  fi
  if [ $rc -eq 0 ] && [ "${MEMCHECK:-0}" = 1 ]; then
    for tool in memcheck racecheck; do
      if ! timeout 600 compute-sanitizer --tool "$tool" --error-exitcode 3 \
          "$exe" > "$dir/$name.$tool.txt" 2>&1; then
        tail -20 "$dir/$name.$tool.txt"
        echo "  $name: compute-sanitizer --tool $tool failed"
        rc=3
      fi
    done
  fi
  if [ $rc -eq 0 ]; then
    echo "HOPPER $name PASS"
  else
    [ $rc -eq 124 ] && echo "  $name: timed out after ${TIMEOUT:-120} s"
    echo "HOPPER $name FAIL"
    failed=1
  fi
done
exit $failed
