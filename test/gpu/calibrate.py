#!/usr/bin/env python3
"""The cost model against the GPU (docs/cost-model.md, "Calibration").

Reads test/gpu/calibrate.sh's manifest and measurements, asks stencilc for
the model's resource times of every candidate (--explain=FILE.tsv), and

  --fit    fits the weights of each unit, kernel kind and element width
           (CostWeights in compiler/include/stencilc/Analysis/Hardware.h):
           non-negative
           least squares of the relative time error, measured time per
           point ~ w_dram t_dram + w_shared t_shared + w_compute t_compute;
           prints them as description-file lines, checks that stencilc given
           those lines predicts what the fit does, and scores a hold-out fit
           (half of the examples fitted, the other half scored);
  --kinds  with --fit: fit only the kinds that this regular expression
           finds (cuda-core\.star\.); every other kind keeps the weights
           it has (the description's, else CalibratedWeights.inc's), as a
           kind that the results do not time does in any fit;
  always   reports, per case (example x type x precision policy), every
           candidate predicted against measured, whether the automatic
           choice is within 10% of the fastest measured candidate the policy
           allows, and the median absolute error of the prediction.

  calibrate.py --dir .cal --hw probe.hw --results r1.txt r2.txt [--fit]
               [--kinds REGEX]
               [--write-inc compiler/lib/Analysis/CalibratedWeights.inc]
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile

# The benchmark set, in the order the hold-out halves alternate over; the
# shapes of dsl-examples/an5d/ (AN5D's suite) follow in the order the
# results name them.
BENCHMARKS = ["heat-1d", "1d5p", "heat-2d", "box-2d9p", "star-2d13p",
              "box-2d49p", "heat-3d", "box-3d27p"]
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def source(ex, root=ROOT):
    """An example's .st: dsl-examples/, else dsl-examples/an5d/."""
    path = os.path.join(root, "dsl-examples", ex + ".st")
    if os.path.exists(path):
        return path
    return os.path.join(root, "dsl-examples", "an5d", ex + ".st")


def dims(ex):
    """The grid's dimension, from its declaration (f32[3])."""
    m = re.search(r"f\d+\[([123])\]", open(source(ex)).read())
    return int(m.group(1))
RES = ("dram", "shared", "compute")


def tsv(args, ex, ty, hw, policy):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "x.tsv")
        subprocess.run([args.stencilc,
                        source(ex, args.root),
                        "--type=" + ty, "--precision=" + policy, "--hw=" + hw,
                        "--explain=" + out], check=True,
                       stdout=subprocess.DEVNULL)
        lines = open(out).read().splitlines()
    head = lines[0].split("\t")
    rows = {}
    for line in lines[1:]:
        r = dict(zip(head, line.split("\t")))
        for k in ("predicted", "t_dram", "t_shared", "t_compute",
                  "t_split"):
            r[k] = float(r[k])
        rows[r["candidate"]] = r
    return rows


def load(args):
    measured = {}
    for path in args.results:
        for line in open(path):
            f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
            if "gstencils" in f:
                measured[f["variant"]] = float(f["gstencils"])
    cases = {}
    for line in open(os.path.join(args.dir, "manifest.txt")):
        v, ex, ty, label = line.split(None, 3)
        cases.setdefault((ex, ty), {})[label.strip()] = measured.get(v)
    return cases


WIDTH = {"f16": "half", "bf16": "half", "f32": "f32", "f64": "f64"}


def group(ex, ty, label, row):
    """The CostWeights kind of a candidate: unit.kernel.width.dimension.
    The dimension, first for CUDA cores only, was added for the tensor
    cores in session 10, when the hold-out check favoured it there too
    (docs/cost-model.md)."""
    kind = "%s.%s.%s" % (label.split()[0], row["kernel"], WIDTH[ty])
    return kind + ".%dd" % dims(ex)


def features(r):
    return [r["t_dram"], r["t_shared"], r["t_compute"]]


def nnls(xs, ys):
    """Weights w >= 0 minimising sum((x.w - y) / y)^2, by coordinate
    descent (the problem is convex; 3 unknowns)."""
    a = [[x / y for x in xr] for xr, y in zip(xs, ys)]
    w = [1.0, 1.0, 1.0]
    for _ in range(500):
        for j in range(3):
            num = den = 0.0
            for row in a:
                rest = sum(row[k] * w[k] for k in range(3) if k != j)
                num += row[j] * (1 - rest)
                den += row[j] * row[j]
            w[j] = max(0.0, num / den) if den > 0 else 0.0
    return w


def fit(cases, model, examples, kinds=None):
    data = {}
    for (ex, ty), got in cases.items():
        if ex not in examples:
            continue
        rows = model[(ex, ty, "tf32" if ty == "f32" else "exact")]
        for label, m in got.items():
            if m and label in rows:
                k = group(ex, ty, label, rows[label])
                if kinds and not re.search(kinds, k):
                    continue
                g = data.setdefault(k, ([], []))
                g[0].append(features(rows[label]))
                g[1].append(1.0 / m)
    return {g: nnls(xs, ys) for g, (xs, ys) in data.items()}


def predict(r, ex, ty, label, weights):
    """The prediction with the fitted weights of the candidate's kind, as
    CostModel.cpp's finish() makes it (split-TF32's extra products weigh
    at least 1); a kind not fitted keeps the model's own prediction."""
    w = weights.get(group(ex, ty, label, r))
    if w is None:
        return r["predicted"]
    t = sum(a * b for a, b in zip(w, features(r)))
    t += max(w[2], 1.0) * r["t_split"]
    return 1.0 / t if t > 0 else 0.0


def score(cases, model, weights, examples):
    verdicts, errors = [], []
    for (ex, ty, pol), rows in sorted(model.items()):
        if ex not in examples:
            continue
        got = cases[(ex, ty)]
        allowed = {l: r for l, r in rows.items() if r["allowed"] == "yes"}
        pred = {l: (predict(r, ex, ty, l, weights) if weights is not None
                    else r["predicted"]) for l, r in allowed.items()}
        timed = {l: got[l] for l in allowed if got.get(l)}
        if not timed:
            continue
        chosen = max(pred, key=pred.get)
        best = max(timed, key=timed.get)
        ok = chosen in timed and timed[chosen] >= 0.9 * timed[best]
        verdicts.append(((ex, ty, pol), chosen, timed.get(chosen), best,
                         timed[best], ok))
        for l, m in timed.items():
            errors.append((abs(pred[l] - m) / m, ex, ty, pol, l, pred[l], m,
                           allowed[l]["bound"]))
    return verdicts, errors


def base_weights(hw, root):
    """The weights a description gives, else the built-in ones
    (CalibratedWeights.inc): a description's weight lines are a set."""
    got = {}
    for line in open(hw):
        m = re.match(r"weight\.(\S+)\.(dram|shared|compute)\s*=\s*(\S+)",
                     line)
        if m:
            got.setdefault(m.group(1), [0.0, 0.0, 0.0])[
                RES.index(m.group(2))] = float(m.group(3))
    if got:
        return got
    inc = os.path.join(root, "compiler", "lib", "Analysis",
                       "CalibratedWeights.inc")
    for line in open(inc):
        m = re.match(r'\{"([^"]+)", \{([^}]*)\}\},', line)
        if m:
            got[m.group(1)] = [float(v) for v in m.group(2).split(",")]
    return got


def hw_with(hw, weights):
    text = "".join(l for l in open(hw) if not l.startswith("weight."))
    for k, w in sorted(weights.items()):
        for r, v in zip(RES, w):
            text += "weight.%s.%s = %.6g\n" % (k, r, v)
    f = tempfile.NamedTemporaryFile("w", suffix=".hw", delete=False)
    f.write(text)
    f.close()
    return f.name


def models(args, cases, hw):
    out = {}
    for (ex, ty) in cases:
        for pol in (["exact", "tf32"] if ty == "f32" else ["exact"]):
            out[(ex, ty, pol)] = tsv(args, ex, ty, hw, pol)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--hw", required=True)
    ap.add_argument("--results", nargs="+", required=True)
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--stencilc")
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--kinds", help="with --fit: a regular expression of "
                    "the kinds to fit (unit.kernel.width.Nd)")
    ap.add_argument("--write-inc", help="with --fit: write the weights as "
                    "compiler/lib/Analysis/CalibratedWeights.inc")
    args = ap.parse_args()
    args.stencilc = args.stencilc or os.path.join(
        args.root, "build", "tools", "stencilc", "stencilc")
    cases = load(args)
    named = [ex for ex, _ in cases]
    examples = [e for e in BENCHMARKS if e in named]
    examples += sorted({e for e in named if e not in BENCHMARKS})
    hw = args.hw
    if args.fit:
        model = models(args, cases, hw)
        weights = fit(cases, model, examples, args.kinds)
        # Every kind: the fitted ones, and the others as they stand.
        every = dict(base_weights(args.hw, args.root), **weights)
        print("Fitted weights (description-file lines):\n\n```")
        for k, w in sorted(weights.items()):
            for r, v in zip(RES, w):
                print("weight.%s.%s = %.4g" % (k, r, v))
        print("```\n")
        if args.write_inc:
            with open(args.write_inc, "w") as f:
                f.write("// Written by test/gpu/calibrate.py --fit "
                        "(docs/cost-model.md): the\n// weights of DRAM, "
                        "shared memory and compute per unit, kernel kind\n"
                        "// and width, fitted on %s%s.\n" % (", ".join(
                            os.path.basename(r) for r in args.results),
                            "" if not args.kinds else
                            "\n// (the kinds matching %s; the others as "
                            "they stood)" % args.kinds))
                for k, w in sorted(every.items()):
                    f.write('{"%s", {%.4g, %.4g, %.4g}},\n' % ((k,) + tuple(w)))
        halves = [examples[0::2], examples[1::2]]
        for train, test in (halves, halves[::-1]):
            v, e = score(cases, model, fit(cases, model, train, args.kinds),
                         test)
            print("Hold-out: fitted on %s; on %s the choice is within 10%% "
                  "in %d of %d cases, median |error| %.0f%%.\n" % (
                      ", ".join(train), ", ".join(test),
                      sum(x[-1] for x in v), len(v),
                      100 * statistics.median(x[0] for x in e)))
        hw = hw_with(args.hw, every)
        # stencilc itself must predict what the fit does.
        check = models(args, cases, hw)
        for key, rows in check.items():
            for l, r in rows.items():
                p = predict(model[key][l], key[0], key[1], l, weights)
                assert abs(r["predicted"] - p) <= 0.01 * p + 0.1, (key, l)
    model = models(args, cases, hw)
    verdicts, errors = score(cases, model, None, examples)
    print("| case | candidate | predicted | measured | error | bound |")
    print("|---|---|---|---|---|---|")
    for err, ex, ty, pol, l, p, m, bound in errors:
        print("| %s %s %s | %s | %.0f | %.0f | %+.0f%% | %s |" % (
            ex, ty, pol, l, p, m, 100 * (p - m) / m, bound))
    print("\n| case | chosen | measured | fastest | measured | within 10% |")
    print("|---|---|---|---|---|---|")
    for case, chosen, cm, best, bm, ok in verdicts:
        print("| %s | %s | %s | %s | %.0f | %s |" % (
            " ".join(case), chosen, "%.0f" % cm if cm else "not timed", best,
            bm, "yes" if ok else "**no**"))
    n = len(verdicts)
    good = sum(v[-1] for v in verdicts)
    print("\nCases: %d; the choice is within 10%% of the fastest measured in "
          "%d (%.0f%%). Median |predicted - measured| / measured over %d "
          "timed candidates: %.1f%%." % (
              n, good, 100.0 * good / max(1, n), len(errors),
              100 * statistics.median(x[0] for x in errors)))
    untimed = sorted("%s %s %s" % (ex, ty, l) for (ex, ty), got in
                     cases.items() for l, m in got.items() if not m)
    if untimed:
        print("\nNot timed (failed or missing): " + "; ".join(untimed) + ".")


if __name__ == "__main__":
    main()
