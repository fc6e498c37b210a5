#!/usr/bin/env python3
"""Checks the error bound that an --emit-main driver prints with
--reference-only (docs/benchmarks.md, "Error bounds") for error-bound.test.

  error-bound.py closed-form TYPE STEPS OUT
      OUT is avg_TYPE's output (0.5 u[-1] + 0.5 u[1], periodic, data in
      [0, 1)); its relative bound must equal the closed form of the docs.
  error-bound.py closed-form-tc T STEPS OUT
      OUT is avg_f64's output on tensor cores with passes of T steps; its
      relative bound must equal the closed form with the tensor cores' term.
  error-bound.py above TYPE STEPS OUT
      the relative bound exceeds avg_TYPE's closed form on CUDA cores.
  error-bound.py grows OUT...
      the relative bounds of OUT... (increasing step counts) increase.
  error-bound.py linear OUT_N OUT_2N
      doubling the steps doubles the bound (within 1%).
  error-bound.py rate L OUT_N OUT_M
      between the two step counts, the bound grows by L per step (within
      1%).
"""
import re
import sys


def read(path):
    """(steps, max|ref|, relative bound) of a --reference-only output."""
    text = open(path).read()
    steps = int(re.search(r" steps=(\d+)", text).group(1))
    m = re.search(r"^bound: \S+ max\|ref\| (\S+) max bound (\S+) relative (\S+)$",
                  text, re.M)
    return steps, float(m.group(1)), float(m.group(3))


def gamma(n, u):
    return n * u / (1 - n * u)


UNIT = {"f16": 2.0**-11, "f32": 2.0**-24, "f64": 2.0**-53}
UNDERFLOW = {"f16": 2.0**-25}
UD = 2.0**-53


def closed_form(ty, n, max_ref):
    """The docs' closed form for 0.5 u[-1] + 0.5 u[1] after n steps.

    Per step, E' = A E + rho A|u|, with A the stencil (A|u| = u on data
    that is not negative) and rho = gamma_2(u_c) (the GPU's tap sum of two
    products) + 2 u_d (the reference's two roundings), so E_n = n rho u_n.
    f16 rounds each step's result to f16 as well: E' = (1 + u_E) pre +
    u_E u + eta_E, which gives E_n = e_n u_n + h_n with the geometric sums
    below.
    """
    uc = UNIT["f32"] if ty == "f16" else UNIT[ty]
    rho = gamma(2, uc) + 2 * UD
    if ty != "f16":
        return n * rho
    ue, eta = UNIT["f16"], UNDERFLOW["f16"]
    a = 1 + ue
    e = (a * rho + ue) * (a**n - 1) / ue
    h = eta * (a**n - 1) / ue
    return e + h / max_ref


def closed_form_tc(t, n):
    """avg_f64 on tensor cores, full passes of t steps.

    The fused kernel of two halves is binomial: t + 1 taps, all positive,
    each evaluated in double through t - 1 levels of one product and one
    addition, so its error is (t - 1) gamma_2(u_d) of its weight. With the
    accumulation's gamma_{2M+1}(2 u_c), M = t + 1 products, a pass rounds
    by rho_tc = (t - 1) gamma_2(u_d) + gamma_{2t+3}(2 u_c) of Sum W|u|,
    charged at its first step instead of the strips' gamma_2(u_c): each of
    the n // t full passes adds rho_tc - gamma_2(u_c) to n rho.
    """
    uc = UD
    rho = gamma(2, uc) + 2 * UD
    rho_tc = (t - 1) * gamma(2, UD) + gamma(2 * (t + 1) + 1, 2 * uc)
    return n * rho + (n // t) * (rho_tc - gamma(2, uc))


def main(argv):
    cmd = argv[1]
    if cmd == "closed-form":
        ty, n = argv[2], int(argv[3])
        steps, max_ref, got = read(argv[4])
        assert steps == n, (steps, n)
        want = closed_form(ty, n, max_ref)
        ok = abs(got - want) <= 1e-9 * want
        print(f"closed form {ty} n={n}: printed {got:.12e} expected "
              f"{want:.12e} {'OK' if ok else 'MISMATCH'}")
    elif cmd == "closed-form-tc":
        t, n = int(argv[2]), int(argv[3])
        steps, _, got = read(argv[4])
        assert steps == n, (steps, n)
        want = closed_form_tc(t, n)
        ok = abs(got - want) <= 1e-9 * want
        print(f"closed form f64 tensor cores t={t} n={n}: printed {got:.12e} "
              f"expected {want:.12e} {'OK' if ok else 'MISMATCH'}")
    elif cmd == "above":
        ty, n = argv[2], int(argv[3])
        steps, max_ref, got = read(argv[4])
        cuda = closed_form(ty, n, max_ref)
        ok = got > cuda * (1 + 1e-9)
        print(f"above {ty} n={n}: printed {got:.12e} CUDA cores "
              f"{cuda:.12e} {'OK' if ok else 'NOT ABOVE'}")
    elif cmd == "grows":
        runs = [read(p) for p in argv[2:]]
        ok = all(a[0] < b[0] and a[2] < b[2] for a, b in zip(runs, runs[1:]))
        print("grows: " + " -> ".join(f"{s} steps {r:.3e}" for s, _, r in runs)
              + (" OK" if ok else " NOT INCREASING"))
    elif cmd == "linear":
        (n1, _, r1), (n2, _, r2) = read(argv[2]), read(argv[3])
        assert n2 == 2 * n1, (n1, n2)
        ok = abs(r2 / r1 - 2) <= 0.02
        print(f"linear: x{r2 / r1:.4f} from {n1} to {n2} steps "
              f"{'OK' if ok else 'NOT LINEAR'}")
    elif cmd == "rate":
        want = float(argv[2])
        (n1, _, r1), (n2, _, r2) = read(argv[3]), read(argv[4])
        rate = (r2 / r1) ** (1.0 / (n2 - n1))
        ok = abs(rate - want) <= 0.01 * want
        print(f"rate: x{rate:.4f} per step from {n1} to {n2} steps "
              f"{'OK' if ok else 'WRONG RATE'}")
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
