#!/bin/sh
# A stand-in for nvcc in check-script tests: the "program" it builds
# prints a passing RESULT line, as a generated main's --check does.
while [ $# -gt 0 ]; do
  case $1 in
    -o) out=$2; shift ;;
  esac
  shift
done
printf '#!/bin/sh\necho "RESULT stencil=fake type=f32 size=1 steps=1 err=0 bound=1 status=PASS"\n' > "$out"
chmod +x "$out"
