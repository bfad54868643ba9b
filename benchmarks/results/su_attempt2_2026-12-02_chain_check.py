"""Monte Carlo check of the inequality chain of benchmarks/results/su_attempt2_2026-12-02.md on concrete
mechanisms (not part of the package; float64; seconds).

On the atom family, for the Gaussian mechanism (Balle & Wang 2018 analytic sigma for the replace-one
sensitivity 2 sqrt(d)/n of the normalised records) followed by a scalar inflation/shrink (1 + gamma) and
clipping to the box, it prints
  - the simulated Sum_l E A_l and a2 E<p, M> (the score identity says they are equal),
  - LHS(rho) = a2(d t - nu sqrt(rho)) at the simulated rho (must be <= Sum_l E A_l),
  - RHS(rho) = T1 + T2 + T3 at the simulated rho (must be >= Sum_l E A_l for every (eps,delta)-DP mechanism).
Rows with the noise scaled below the calibrated sigma are NOT (eps,delta)-DP and may (and with no noise
at all, at the third setting, do) violate the last inequality: the check can fail.
"""
import importlib.util
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from boundcalc.core.gauss_calibration import sigma_analytic_scalar  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "su2", os.path.join(os.path.dirname(__file__), "su_attempt2_2026-12-02.py"))
su2 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(su2)

rng = np.random.default_rng(1)


def sim(n, d, eps, delta, t, m, gamma, noise_scale, reps=400):
    a = (1 - t) / (2 * t)
    sig = sigma_analytic_scalar(eps, delta) * 2 * math.sqrt(d) / n * noise_scale
    S = SP = R = 0.0
    for _ in range(reps):
        p = 2 * rng.beta(a, a, size=d) - 1
        Z = np.where(rng.random((m, d)) < (1 + p) / 2, 1.0, -1.0)
        K = np.bincount(rng.integers(0, m, size=n), minlength=m)
        zbar = Z.mean(0)
        emp = (K[:, None] * Z).sum(0) / n
        M = np.clip((1 + gamma) * emp + sig * rng.standard_normal(d), -1, 1)
        W = Z - p
        c = zbar[None, :] - W / m
        S += ((M[None, :] - c) * W).sum()
        R += ((M - zbar) ** 2).sum()
        SP += 2 * a * (p * M).sum()
    return S / reps, SP / reps, R / reps


if __name__ == "__main__":
    for (n, d, eps, delta, t, m, ks) in [(400, 200, 1.0, 1e-6, 0.08, 50, 16), (1000, 300, 1.0, 1e-6, 0.08, 60, 14),
                                         (2000, 300, 0.3, 1e-6, 0.08, 80, 60)]:
        lhs, rhs = su2.terms(n, d, eps, delta, t, m, 1.0, ks)
        print(f"n={n} d={d} eps={eps} delta={delta} t={t} m={m} K*={ks}: bound rho* = "
              f"{su2.rho_star(n, d, eps, delta, t, m, 1.0, ks):.4f}")
        for gamma, ns in [(0.0, 1.0), (-0.3, 1.0), (0.3, 1.0), (0.0, 0.5), (0.0, 0.0)]:
            SA, SP, rho = sim(n, d, eps, delta, t, m, gamma, ns)
            R = rhs(rho)[0]
            tag = "DP    " if ns >= 1 else "NOT DP"
            print(f"  gamma={gamma:+.1f} noise x{ns:.1f} {tag} sum E A_l {SA:8.1f}  a2 E<p,M> {SP:8.1f}  "
                  f"LHS(rho) {lhs(rho):8.1f}  RHS(rho) {R:10.1f}  rho {rho:7.3f}  chain holds: {SA <= R}")
