#!/usr/bin/env python3
"""Turns a results file of test/gpu/check.sh into the markdown tables of
docs/benchmarks.md: correctness per example and type, and GStencils/s with
the roofline bound and the anchors of ANCHORS.md.

usage: test/gpu/report.py RESULTS.txt
"""
import collections
import sys

# Measured on the lent H200 (ANCHORS.md): copy bandwidth and FP32 SGEMM.
# FP64 on CUDA cores was not measured there: the datasheet's 34 TFLOP/s.
BANDWIDTH = 4.26e12
PEAK = {"f32": 51e12, "f16": 51e12, "bf16": 51e12, "f64": 34e12}
BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8}
# Taps per point of the benchmark set.
TAPS = {"heat-1d": 3, "1d5p": 5, "heat-2d": 5, "box-2d9p": 9,
        "star-2d13p": 13, "box-2d49p": 49, "heat-3d": 7, "box-3d27p": 27}
# EBISU at 10240^2 / 1000 steps, and cuDNN (ANCHORS.md), f32, GStencils/s.
EBISU = {"heat-2d": 751, "star-2d13p": 458}
EBISU_TUNED = {"heat-2d": 902, "box-2d9p": 855, "star-2d13p": 583,
               "box-2d49p": 309}
CUDNN = {"heat-2d": 116, "box-2d9p": 116, "star-2d13p": 30, "box-2d49p": 30,
         "heat-3d": 23, "box-3d27p": 23}


def parse(path):
    rows = []
    for line in open(path):
        if not line.startswith("RESULT "):
            continue
        f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
        rows.append(f)
    return rows


def main(path):
    rows = parse(path)
    checks = [r for r in rows if "status" in r]
    # INCONCLUSIVE: the derived bound was too large to tell (docs/
    # benchmarks.md, "Error bounds"); counted apart, neither passed nor
    # failed, and left out of the closest-to-bound table.
    inconclusive = sum(r["status"] == "INCONCLUSIVE" for r in checks)
    failed = sum(r["status"] not in ("PASS", "INCONCLUSIVE") for r in checks)
    print(f"Checks: {len(checks)} run, {failed} failed, "
          f"{inconclusive} inconclusive.\n")
    # Per example and type: the check closest to its bound.
    worst = collections.defaultdict(lambda: [-1.0, 0.0, 0.0, 0])
    for r in checks:
        if r["status"] == "INCONCLUSIVE":
            continue
        ex = r["variant"].split(".")[0]
        w = worst[(ex, r.get("type", "?"))]
        err, bound = float(r.get("err", "inf")), float(r.get("bound", 0))
        if bound and err / bound > w[0]:
            w[:3] = [err / bound, err, bound]
        w[3] += 1
    print("| example | type | checks | worst max rel. error | its bound |")
    print("|---|---|---|---|---|")
    for (ex, ty), (_, err, bound, n) in sorted(worst.items()):
        print(f"| {ex} | {ty} | {n} | {err:.2e} | {bound:.1e} |")
    print()
    print("| variant | t | GStencils/s | roofline bound | fraction | "
          "vs EBISU (10240², tuned) | vs cuDNN |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        if "gstencils" not in r:
            continue
        ex, ty, _ = r["variant"].split(".")
        g, t = float(r["gstencils"]), int(r["fuse"])
        bound, frac = "-", "-"
        if ex in TAPS:
            mem = t * BANDWIDTH / (2 * BYTES[ty]) / 1e9
            comp = PEAK[ty] / (2 * TAPS[ex]) / 1e9
            b = min(mem, comp)
            bound = f"{b:.0f} ({'memory' if mem < comp else 'compute'})"
            frac = f"{g / b:.0%}"
        anchor = "-"
        if ty == "f32" and ex in EBISU_TUNED:
            parts = []
            if ex in EBISU:
                parts.append(f"{g / EBISU[ex]:.2f}x")
            parts.append(f"{g / EBISU_TUNED[ex]:.2f}x")
            anchor = " / ".join(parts)
        cudnn = f"{g / CUDNN[ex]:.1f}x" if ty == "f32" and ex in CUDNN else "-"
        print(f"| {r['variant']} | {t} | {g:.0f} | {bound} | {frac} | "
              f"{anchor} | {cudnn} |")


if __name__ == "__main__":
    main(sys.argv[1])
