#!/usr/bin/env bash
# Fuzzes stencilc for $1 seconds per target (default 60): the compile fuzzer
# (front end and every back end, CompileFuzzer.cpp) and the options fuzzer
# (the driver's command line, OptionsFuzzer.cpp). Each starts from its
# corpus, test/fuzz/corpus/<name>/, copied to build/fuzz-corpus/<name>/ so
# that the repository is not modified. Exits non-zero on any crash,
# sanitizer report or hang (an input that takes over 30 s).
#
#   test/fuzz/run.sh --merge   minimizes what build/fuzz-corpus/ found into
#                              test/fuzz/corpus/ (libFuzzer's -merge=1: the
#                              smallest set with the same coverage)
set -euo pipefail
cd "$(dirname "$0")/../.."
# Absolute paths: the options fuzzer works inside a directory of its own
# (and -merge=1 starts it again from there).
root=$(pwd)
merge=0
if [ "${1:-}" = "--merge" ]; then
  merge=1
  shift
fi
seconds=${1:-60}
status=0
for name in compile options; do
  fuzzer=$root/build/test/fuzz/stencilc-$name-fuzzer
  [ -x $fuzzer ] || { echo "fuzz: $fuzzer was not built (needs clang)"; exit 1; }
  corpus=$root/build/fuzz-corpus/$name
  dict=$root/test/fuzz/st.dict
  [ $name = options ] && dict=$root/test/fuzz/options.dict
  if [ $merge = 1 ]; then
    fresh=$root/build/fuzz-corpus/$name-merged
    rm -rf $fresh && mkdir -p $fresh $corpus
    $fuzzer -merge=1 -close_fd_mask=3 -timeout=30 $fresh \
      $root/test/fuzz/corpus/$name $corpus 2>&1 | tail -2
    rm -rf test/fuzz/corpus/$name && mv $fresh test/fuzz/corpus/$name
    continue
  fi
  mkdir -p $corpus
  cp test/fuzz/corpus/$name/* $corpus/
  # Standard output and error are closed (-close_fd_mask=3): the driver
  # prints what it generates; libFuzzer's own report still comes through.
  if ! $fuzzer -max_total_time="$seconds" -timeout=30 -max_len=8192 \
      -close_fd_mask=3 -dict=$dict -artifact_prefix=$root/build/fuzz-$name- \
      -print_final_stats=1 $corpus > build/fuzz-$name.log 2>&1; then
    tail -40 build/fuzz-$name.log
    echo "fuzz: $name found a crash, sanitizer report or hang (build/fuzz-$name-*)"
    status=1
    continue
  fi
  tail -12 build/fuzz-$name.log
  echo "fuzz: $name: ${seconds}s without a crash, hang or sanitizer report"
done
exit $status
