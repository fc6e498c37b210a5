#!/usr/bin/env python3
"""nvcc-compiles the CUDA that stencilc generates for a sample of the fuzz
corpus and for every dsl-examples/*.st (test/CodeGen/nvcc/fuzz-corpus.test).

  nvcc-sample.py <stencilc> <nvcc and its flags, one string> <repo> <workdir> [N]

The sources come from test/fuzz/corpus/: a compile-corpus file is three
header bytes (CompileFuzzer.cpp's Config) and a .st source, an options-corpus
file is argument lines, an empty line and a .st source. Each distinct source
that stencilc accepts under its header's target and type (the compile
corpus) or with default options (the options corpus) is a candidate; N of
them (default 24), the first by SHA-1 of their text, so the sample is the
same on every run, are generated for sm_80 and sm_90 and compiled with
`nvcc -c` for that architecture. Sources whose CUDA holds a non-finite
literal (inff, nanf) are skipped: rejecting those is the finite-value checks'
work, not this test's. Prints one line per compile and a summary; exits 1
on the first nvcc failure.
"""
import concurrent.futures
import glob
import hashlib
import os
import re
import subprocess
import sys

TARGETS = [[], ["--target=cuda-core"], ["--target=tc"], ["--target=sptc"]]
TYPES = [[], ["--type=f16"], ["--type=bf16"], ["--type=f32"], ["--type=f64"],
         [], [], []]
NONFINITE = re.compile(rb"\b(inff?|nanf?|INFINITY|NAN)\b")


def candidates(repo):
    """(name, source bytes, stencilc flags) of every corpus file."""
    out = []
    for path in sorted(glob.glob(os.path.join(repo, "test/fuzz/corpus/compile/*"))):
        data = open(path, "rb").read()
        if len(data) < 3:
            continue
        flags = TARGETS[data[0] & 3] + TYPES[(data[0] >> 4) & 7]
        if data[0] & 3 >= 2:
            flags.append("--precision=tf32")
        out.append((os.path.basename(path), data[3:], flags))
    for path in sorted(glob.glob(os.path.join(repo, "test/fuzz/corpus/options/*"))):
        data = open(path, "rb").read()
        source = data.split(b"\n\n", 1)[1] if b"\n\n" in data else b""
        out.append((os.path.basename(path), source, []))
    return out


def generate(stencilc, work, name, source, flags, arch):
    """The .cu stencilc writes for `source`, or None where it refuses it."""
    st = os.path.join(work, name + ".st")
    with open(st, "wb") as f:
        f.write(source)
    cu = os.path.join(work, "%s-%s.cu" % (name, arch))
    r = subprocess.run([stencilc, st, "--arch=" + arch, "-o", cu] + flags,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=120)
    return cu if r.returncode == 0 else None


def compile_one(nvcc, cu, arch):
    num = arch[3:]
    cmd = nvcc.split() + ["-gencode", "arch=compute_%s,code=sm_%s" % (num, num),
                          "-c", cu, "-o", cu + ".o"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return cu, arch, r.returncode, r.stdout + r.stderr


def main():
    stencilc, nvcc, repo, work = sys.argv[1:5]
    n = int(sys.argv[5]) if len(sys.argv) > 5 else 24
    os.makedirs(work, exist_ok=True)
    seen, accepted, skipped = set(), [], 0
    pool = sorted(candidates(repo),
                  key=lambda c: hashlib.sha1(c[1] + b"\0".join(
                      f.encode() for f in c[2])).hexdigest())
    for name, source, flags in pool:
        key = (source, tuple(flags))
        if key in seen or len(accepted) >= n:
            continue
        seen.add(key)
        cus = [generate(stencilc, work, name, source, flags, arch)
               for arch in ("sm_80", "sm_90")]
        if None in cus:
            continue
        if any(NONFINITE.search(open(cu, "rb").read()) for cu in cus):
            skipped += 1
            continue
        accepted.append(list(zip(cus, ("sm_80", "sm_90"))))
    for path in sorted(glob.glob(os.path.join(repo, "dsl-examples/*.st"))):
        name = "example-" + os.path.basename(path)[:-3]
        source = open(path, "rb").read()
        cus = [generate(stencilc, work, name, source, [], arch)
               for arch in ("sm_80", "sm_90")]
        if None in cus:
            print("FAIL: stencilc refuses %s" % path)
            return 1
        accepted.append(list(zip(cus, ("sm_80", "sm_90"))))
    jobs = [job for pair in accepted for job in pair]
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        for cu, arch, rc, text in ex.map(lambda j: compile_one(nvcc, *j), jobs):
            print("%s %s: %s" % (os.path.basename(cu), arch,
                                 "ok" if rc == 0 else "FAILED"))
            if rc != 0:
                failed += 1
                print(text)
    print("%d sources (%d corpus, %d examples), %d compiles, %d failed, "
          "%d skipped for non-finite literals"
          % (len(accepted), len(accepted) - len(glob.glob(
              os.path.join(repo, "dsl-examples/*.st"))),
             len(glob.glob(os.path.join(repo, "dsl-examples/*.st"))),
             len(jobs), failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
