#!/usr/bin/env python3
"""Replays one warp's shared-memory B loads of a rolling tensor-core kernel.

  bank-conflicts.py FILE.cu

Reads the generated kernel's constants (kTcR1, sc_lane, sc_lx, tcSwizzle)
and every scalar B load `sc_b[...]` / `sc_b1[...]`, computes the word each
lane (g = lane / 4, t = lane % 4) reads, and prints for the warm-up (the
loads before the pass loop) and for the pass loop the number of loads and
of wavefronts: a load takes as many as the most distinct words that meet
in one of the 32 banks. A uniform shift (the buffer, the warp's first row)
moves every lane alike and changes no count, so the box starts at word 0.
"""
import re
import sys
from collections import defaultdict

text = open(sys.argv[1]).read()
kernel = text[text.index("_tc_kernel(const TcArgs a)"):]
r1 = int(re.search(r"kTcR1 = (\d+)", text).group(1))


def ternary(name):
    m = re.search(r"const int %s = t == 0 \? (-?\d+) : t == 1 \? (-?\d+) : "
                  r"t == 2 \? (-?\d+) : (-?\d+);" % name, kernel)
    return [int(v) for v in m.groups()] if m else None


lane = ternary("sc_lane")
lx = ternary("sc_lx")
m = re.search(r"int tcSwizzle\(int x\) \{ return (?:x < (\d+) \? )?x \^ "
              r"\(x >> 3 & 0xC\)", text)
end = int(m.group(1)) if m and m.group(1) else None


def swizzle(x):
    if not m or (end is not None and x >= end):
        return x
    return x ^ (x >> 3 & 0xC)


def words(load):
    """The 32 lanes' word addresses of one load's index expression."""
    sw = re.fullmatch(r"(-?\d+) \+ tcSwizzle\(sc_x \+ (-?\d+)\)", load)
    out = []
    for l in range(32):
        g, t = l >> 2, l & 3
        if sw:
            out.append(lane[t] + int(sw.group(1)) +
                       swizzle(g * r1 + lx[t] + int(sw.group(2))))
        else:
            out.append(g * r1 + lane[t] + int(load))
    return out


def wavefronts(addrs):
    banks = defaultdict(set)
    for a in addrs:
        banks[a % 32].add(a)
    return max(len(v) for v in banks.values())


if "for (int sc_i = 0;" not in kernel:
    sys.exit("no rolling kernel")
loop = kernel.index("for (int sc_i = 0;")
stats = {"warm-up": [0, 0, 0], "pass": [0, 0, 0]}
for lm in re.finditer(r"sc_b1?\[([^\]]+)\]", kernel):
    part = stats["warm-up" if lm.start() < loop else "pass"]
    w = wavefronts(words(lm.group(1)))
    part[0] += 1
    part[1] += w
    part[2] = max(part[2], w)
for name, (n, w, worst) in stats.items():
    print("%s: %d loads, %d wavefronts, at most %d-way" % (name, n, w, worst))
