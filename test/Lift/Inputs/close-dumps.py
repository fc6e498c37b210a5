"""Compares two --dump files of the lift harness as float32 arrays (float64
with --f64 before the files, then within a relative 1e-12): the same
length, NaN (the harness's poison) at the same places, and every other value
within a relative 1e-6 (values of about 1 or less: absolute). Prints the
verdict; exits 1 when they differ."""
import array
import math
import sys

args = sys.argv[1:]
kind, bound = "f", 1e-6
if args and args[0] == "--f64":
    kind, bound = "d", 1e-12
    args = args[1:]
a, b = array.array(kind), array.array(kind)
a.frombytes(open(args[0], "rb").read())
b.frombytes(open(args[1], "rb").read())
if len(a) != len(b):
    sys.exit(f"dumps differ in length: {len(a)} and {len(b)}")
worst = 0.0
for x, y in zip(a, b):
    if math.isnan(x) or math.isnan(y):
        if not (math.isnan(x) and math.isnan(y)):
            sys.exit("a value is NaN in one dump only")
        continue
    worst = max(worst, abs(x - y) / max(1.0, abs(y)))
print(f"close: {len(a)} values, largest difference {worst:.1e}")
sys.exit(0 if worst <= bound else 1)
