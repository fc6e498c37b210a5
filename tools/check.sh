#!/usr/bin/env bash
# The README's second command: set up, build and run every test (lit tests,
# the examples, and the GoogleTest unit tests through lit). Ends with a line
# "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh || exit 1
export PATH=/usr/local/cuda/bin:$PATH
log=build/check.log
cmake --build build --target check-stencilc 2>&1 | tee $log
rc=${PIPESTATUS[0]}
passed=$(grep -E '^ +Passed *:' $log | awk -F: '{s += $2} END {print s + 0}')
failed=$(grep -E '^ +(Failed|Unresolved|Timed Out|Unexpectedly Passed) *:' $log \
  | awk -F: '{s += $2} END {print s + 0}')
unsupported=$(grep -E '^ +Unsupported *:' $log | awk -F: '{s += $2} END {print s + 0}')
echo "$passed passed, $failed failed, $unsupported skipped"
exit $rc
