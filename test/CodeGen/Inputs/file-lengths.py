"""Prints the files of DIR longer than LIMIT lines and exits 1, or a count."""
import glob
import os
import sys

d, limit = sys.argv[1], int(sys.argv[2])
files = sorted(glob.glob(os.path.join(d, "*.cpp")) +
               glob.glob(os.path.join(d, "*.h")))
long = [(f, n) for f in files
        for n in [sum(1 for _ in open(f, encoding="utf-8"))] if n > limit]
for f, n in long:
    print("%s: %d lines, more than %d" % (os.path.basename(f), n, limit))
if long or not files:
    sys.exit(1)
print("%d files, each at most %d lines" % (len(files), limit))
