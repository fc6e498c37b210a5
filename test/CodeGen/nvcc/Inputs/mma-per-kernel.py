#!/usr/bin/env python3
"""Counts the tensor-core instructions of each tensor-core kernel in PTX.

  mma-per-kernel.py FILE.ptx

prints one line per split-TF32 kernel instantiation, in the order of the
file: "kernel stores=S alo=L mma=N cvt=M", where S and L are the template
arguments kTcStores16 and kTcALo (0 or 1), N counts its mma instructions
(mma.sync and mma.sp) and M its cvt.rna.tf32.f32 conversions.
"""
import re
import sys

entry = re.compile(r"\.entry\s+(\S+?)\(")
args = re.compile(r"_tc_kernelILb([01])ELb([01])E")
current, counts = None, []
for line in open(sys.argv[1]):
    m = entry.search(line)
    if m:
        a = args.search(m.group(1))
        current = [a.group(1), a.group(2), 0, 0] if a else None
        if current:
            counts.append(current)
        continue
    if current is None:
        continue
    if re.search(r"\bmma\.(sync|sp)", line):
        current[2] += 1
    if "cvt.rna.tf32.f32" in line:
        current[3] += 1
for s, l, n, c in counts:
    print("kernel stores=%s alo=%s mma=%d cvt=%d" % (s, l, n, c))
