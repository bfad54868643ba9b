"""Numbers for benchmarks/results/su_attempt2_2026-12-02.md (not part of the package; plain float64
numerics with scipy quadrature, NOT certified). The derived lower bound of that note for the central
(eps, delta) mean, squared l2 loss, replace-one neighbours, records with E||X||^k <= r^k (r = 1):

  minimax >= q^{2(k-1)/k} rho*/d,  rho* = inf{rho >= 0 : LHS(rho) <= T1(rho) + T2(rho) + T3(rho)}

  LHS(rho) = a2 (d t - nu sqrt(rho)),      a2 = (1-t)/t,  nu = m/(a2+m) sqrt(d(t + (1-t)/m))
  T1(rho)  = sqrt(m Psi) sqrt(m rho + 2 kappa sqrt(rho) + d(1-t)/m),  kappa = a2/(a2+m) sqrt(d(t+(1-t)/m))
  T2(rho)  = sqrt(m Dlt) sqrt(Lambda(rho)) + Dlt d (1-t)
  T3(rho)  = E|H| d(1-t)/m + sqrt(rho) sqrt(E|H| d (1-t))
  Psi = E[1{1<=K<=K*} psi(K eps)^2],  Dlt = E[1{K<=K*} delta_K],  E|H| = m P(K > K*),  K ~ Bin(n, q/m)
  psi(L) = sqrt(2L) + e^L sqrt(2 pi) Qbar(sqrt(2L)),  delta_K = delta (e^{K eps} - 1)/(e^eps - 1)
  Lambda(rho) = min_{tau >= d} [tau rho + 4 d E(lambda_max - tau)_+],
      E(lambda_max - tau)_+ <= int_tau^inf m exp(-(x log(x/d) - x + d)/(4m)) dx   (matrix Chernoff)

free: t in (0,1) (Beta(a,a) prior, t = 1/(2a+1)), integer m >= 1 atoms, q in (0,1] (q = 1 for k = inf),
integer K* >= 1 (atoms seen more than K* times are traced for free).

Usage: python su_attempt2_2026-12-02.py [delta]     (prints the optimised bound at the d >= 300 cells;
about 6 CPU minutes; compare with `python -m boundcalc.cli rate --problem mean --privacy approx ...`)
"""
import functools
import itertools
import math
import sys

import numpy as np
from scipy import integrate
from scipy.stats import binom, norm


def psi(L):
    x = np.sqrt(2 * np.asarray(L, float))
    return x + np.exp(L + norm.logsf(x)) * math.sqrt(2 * math.pi)


@functools.lru_cache(maxsize=None)
def opnorm_excess(d, m, tau):
    """Upper bound on E(lambda_max(W W^T) - tau)_+ for tau >= d (matrix Chernoff, R = 4m, mu <= d)."""
    R = 4.0 * m
    f = lambda x: m * math.exp(-(x * math.log(x / d) - x + d) / R)
    return integrate.quad(f, tau, np.inf, limit=200)[0]


def k_parts(n, pi, eps, delta, kstar):
    K = np.arange(0, kstar + 1)
    w = binom.pmf(K, n, pi)
    ps = psi(K * eps)
    ps[0] = 0.0
    with np.errstate(over="ignore"):
        dK = delta * np.expm1(K * eps) / math.expm1(eps)
    Psi = float(np.sum(w[1:] * ps[1:] ** 2))
    Dlt = float(np.sum(np.where(w > 0, w * dK, 0.0)))
    return Psi, Dlt, float(binom.sf(kstar, n, pi))


TAUS = tuple(float(x) for x in (1.5, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25, 30, 40, 60, 100))


def terms(n, d, eps, delta, t, m, q, kstar):
    Psi, Dlt, PH = k_parts(n, q / m, eps, delta, kstar)
    a2 = (1 - t) / t
    base = d * (t + (1 - t) / m)
    nu = m / (a2 + m) * math.sqrt(base)
    kap = a2 / (a2 + m) * math.sqrt(base)
    EH = m * PH
    exc = {tau: opnorm_excess(d, m, tau * d) for tau in TAUS}

    def lhs(r):
        return a2 * (d * t - nu * math.sqrt(r))

    def rhs(r):
        T1 = math.sqrt(m * Psi) * math.sqrt(m * r + 2 * math.sqrt(r) * kap + d * (1 - t) / m)
        lam = min(tau * d * r + 4 * d * exc[tau] for tau in TAUS)
        T2 = math.sqrt(m * Dlt) * math.sqrt(lam) + Dlt * d * (1 - t)
        T3 = EH * d * (1 - t) / m + math.sqrt(r) * math.sqrt(EH * d * (1 - t))
        return T1 + T2 + T3, (T1, T2, T3)

    return lhs, rhs


def rho_star(n, d, eps, delta, t, m, q, kstar):
    lhs, rhs = terms(n, d, eps, delta, t, m, q, kstar)
    if not lhs(0.0) > rhs(0.0)[0]:
        return 0.0
    lo, hi = 0.0, 4.0 * d
    for _ in range(80):
        mid = (lo + hi) / 2
        if lhs(mid) > rhs(mid)[0]:
            lo = mid
        else:
            hi = mid
    return lo


def risk(n, d, eps, delta, t, m, q, kstar, k):
    expo = 1.0 if math.isinf(k) else (k - 1) / k
    return q ** (2 * expo) * rho_star(n, d, eps, delta, t, m, q, kstar) / d


def best(n, d, eps, delta, k):
    out = (0.0, None)
    ms = sorted({int(round(x)) for x in np.geomspace(2, 3e4, 22)})
    qs = [1.0] if math.isinf(k) else list(np.geomspace(1e-3, 1, 16))
    for m in ms:
        for q in qs:
            if q / m > 1:
                continue
            lam = n * q / m
            ks = {max(1, int(lam * f)) for f in (1.0, 1.5, 2.0, 3.0)}
            ks |= {max(1, int(lam + c * math.sqrt(lam))) for c in (1, 2, 3)}
            for t in (0.04, 0.08, 0.12, 0.16, 0.24):
                for kstar in sorted(ks):
                    v = risk(n, d, eps, delta, t, m, q, kstar, k)
                    if v > out[0]:
                        out = (v, (m, float(q), t, kstar))
    return out


if __name__ == "__main__":
    delta = float(sys.argv[1]) if len(sys.argv) > 1 else 1e-6
    for d, n, k, eps in itertools.product((300, 1000), (10**3, 10**4, 10**5), (2.0, 4.0, math.inf), (0.1, 1.0)):
        v, par = best(n, d, eps, delta, k)
        print(d, n, k, eps, "%.4e" % v, par, flush=True)
