"""Relative accuracy of boost's binomial tails (scipy ``_binom_sf``/``_binom_cdf``, the tails behind
boundcalc/mechanisms/subset_tail.py) at n = 1e8 .. 1e15 and small success probabilities, against the >= 40-digit
quadrature reference of benchmarks/scipy_tail_accuracy.py (validated there).

It sets the n-dependent rounding slack of the subset-selection routes (subset_tail.round_slack): the slack must
exceed every relative error measured here by a factor of at least 3 up to the largest n the routes evaluate.

Usage: python benchmarks/boost_binomial_large_n.py [out.txt]
"""
from __future__ import annotations

import math
import os
import sys
import time

import numpy as np
from scipy.special import _ufuncs as U

sys.path.insert(0, os.path.dirname(__file__))
from scipy_tail_accuracy import binom_ref, binom_sum_ref, kgrid, relerr  # noqa: E402

U53 = 2.0 ** -53

PS = [1e-12, 1e-9, 1e-6, 1e-4, 1e-3, 0.01, 0.3, 0.5, 0.9]


def small_means(out, seed=20261205, per_n=60):
    """The failure mode found on the grid: at small means the lower tail of boost's cdf carries a relative error
    of about n times the rounding of 1 - p. Random p with mean n p in [1, 60], k from 0 to about the mean, against
    the exact pmf sums (mpmath); reports the largest |err| / (n u), u = 2^-53 (the routes' slack is 2 (n + 2) u)."""
    rng = np.random.default_rng(seed)
    out()
    out(f"small means: p = m/n, m log-uniform in [1, 60], k uniform in 0..ceil(m); {per_n} (p, k) pairs per n;"
        f" cdf and sf against exact pmf sums")
    out(f"  {'n':6s} {'max|err|':>9s} {'max|err|/(n u)':>15s}  worst (arguments)")
    for dec in range(5, 13):
        n = 10 ** dec
        worst = (0.0, "")
        for _ in range(per_n):
            m = float(np.exp(rng.uniform(0.0, math.log(60.0))))
            p = m / n
            k = int(rng.integers(0, math.ceil(m) + 1))
            for which, fn in (("sf", U._binom_sf), ("cdf", U._binom_cdf)):
                ref = binom_sum_ref(k, n, p, which)
                if ref <= 1e-300:
                    continue
                e = relerr(fn(float(k), float(n), p), ref)
                if e is not None and abs(e) > worst[0]:
                    worst = (abs(e), f"{which} k={k} p={p:.6g}")
        out(f"  1e{dec:<4d} {worst[0]:9.2e} {worst[0] / (n * U53):15.3f}  {worst[1]}")


def main(path):
    lines = []

    def out(s=""):
        print(s, flush=True)
        lines.append(s)

    out(f"boost binomial tails, rel err = float64 / reference - 1; p in {PS}; z in 0..30 both sides;"
        f" points with mean < 1 or reference <= 1e-300 skipped")
    out(f"  {'n':6s} {'pts':>4s} {'max|err|':>9s} {'med|err|':>9s}  worst (arguments)")
    worst_all = {}
    for dec in range(8, 16):
        t0 = time.time()
        n = 10 ** dec
        errs = []
        for p in PS:
            mean, sd = n * p, math.sqrt(n * p * (1 - p))
            if mean < 1:
                continue
            for k, z in kgrid(mean, sd, n):
                for which, fn in (("sf", U._binom_sf), ("cdf", U._binom_cdf)):
                    ref = binom_ref(k, n, p, which)
                    if ref <= 1e-300:
                        continue
                    e = relerr(fn(float(k), float(n), p), ref)
                    if e is None:
                        continue
                    errs.append((abs(e) if np.isfinite(e) else math.inf, f"{which} k={k} p={p} z={z:+g}"))
        e_max = max(errs)
        worst_all[dec] = e_max[0]
        out(f"  1e{dec:<4d} {len(errs):4d} {e_max[0]:9.2e} {float(np.median([e for e, _ in errs])):9.2e}  {e_max[1]}"
            f"  ({time.time() - t0:.0f} s)  max|err|/(n u) = {e_max[0] / (n * U53):.2e}")
    small_means(out)
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return worst_all


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results/boost_binomial_large_n_2026-12-05.txt")
