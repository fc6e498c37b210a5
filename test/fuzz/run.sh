#!/usr/bin/env bash
# Fuzzes the front end for $1 seconds (default 60), seeded with every
# dsl-examples/*.st. Exits non-zero on any crash, sanitizer report or hang.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
fuzzer=build/test/fuzz/stencilc-parser-fuzzer
[ -x $fuzzer ] || { echo "fuzz: $fuzzer was not built (needs clang)"; exit 1; }
corpus=build/fuzz-corpus
mkdir -p $corpus
cp dsl-examples/*.st $corpus/
$fuzzer -max_total_time="$seconds" -timeout=10 -max_len=8192 \
  -dict=test/fuzz/st.dict -print_final_stats=1 $corpus 2>&1 | tail -15
echo "fuzz: ${seconds}s without a crash, hang or sanitizer report"
