#!/bin/sh
# A stand-in for nvcc in --tune tests: the "binary" it builds prints the
# RESULT line of a generated main, at 100 GStencils/s per fused step of the
# CUDA-core kernel, so the deepest fusion is the fastest, plus an eighth of
# the tile's last extent, so that of the tile shapes --tune tries next the
# one twice as wide wins. FAKE_FLAT_TILES=1 leaves the tile out: the
# plan's own shape then stays. FAKE_REQUIRE=TEXT fails the build of a
# source without TEXT (a candidate planned without a flag it should have).
# FAKE_CHECK=1 builds programs whose every run passes its --check, for
# test/gpu/check.sh (test/Tools/gpu-check-lists.test).
while [ $# -gt 0 ]; do
  case $1 in
    -o) out=$2; shift ;;
    *.cu) in=$1 ;;
  esac
  shift
done
if [ -n "${FAKE_REQUIRE:-}" ] && ! grep -q "$FAKE_REQUIRE" "$in"; then
  echo "fake nvcc: $in lacks '$FAKE_REQUIRE'" >&2
  exit 1
fi
t=$(grep -o 'constexpr int kFuse = [0-9]*' "$in" | head -n 1 | grep -o '[0-9]*$')
w=$(grep -o 'constexpr int kT0 = [0-9, kT=]*;' "$in" | head -n 1 | grep -o '[0-9]*;$' | tr -d ';')
[ "${FAKE_FLAT_TILES:-0}" = 1 ] && w=0
if [ "${FAKE_CHECK:-0}" = 1 ]; then
  printf '#!/bin/sh\necho "RESULT stencil=fake status=PASS"\n' > "$out"
  chmod +x "$out"
  exit 0
fi
printf '#!/bin/sh\necho "RESULT stencil=fake gstencils=%s"\n' "$((t * 100 + w / 8))" > "$out"
chmod +x "$out"
