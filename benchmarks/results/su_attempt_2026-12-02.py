"""Numbers for benchmarks/results/su_attempt_2026-12-02.md (not part of the package; plain float64 numerics,
NOT certified). The derived lower bound of that note for the central (eps,delta) mean, k = inf / finite k:

  minimax >= r^2 q^{2(k-1)/k} rho / d,   sqrt(rho) = [d(1-t) - sqrt(Psi2 d(1-t))]_+ / (sqrt(d/t)(1-t) + sqrt(Psi2) m)

  Psi2 = E[ 1{K>=1} min( psi(K eps) + sqrt(delta_K d(1-t)), sqrt(d(1-t)) )^2 ],  K ~ Bin(n, q/m),
  psi(L) = sqrt(2L) + e^L sqrt(2 pi) Qbar(sqrt(2L)),  delta_K = delta (e^{K eps} - 1)/(e^eps - 1),

free: t in (0,1) (Beta(a,a) prior, t = 1/(2a+1)), m >= 1 atoms (integer), q in (0, 1], q/m <= 1.

Usage: python su_attempt_2026-12-02.py [delta]   (prints the bound at the tightness cells d >= 300)
"""
import math
import sys

import numpy as np
from scipy.stats import binom, norm


def psi(L):
    L = np.asarray(L, float)
    x = np.sqrt(2 * L)
    return x + np.exp(L + norm.logsf(x)) * math.sqrt(2 * math.pi)


def psi2(n, d, eps, delta, pi, t):
    mu = n * pi
    sd = math.sqrt(n * pi * (1 - pi)) + 1
    lo, hi = max(1, int(mu - 14 * sd - 5)), min(n, int(mu + 14 * sd + 10))
    K = np.arange(lo, hi + 1)
    w = binom.pmf(K, n, pi)
    dK = np.minimum(delta * np.expm1(np.minimum(K * eps, 700)) / math.expm1(eps), 1e300)
    cap = math.sqrt(d * (1 - t))
    phi = np.minimum(psi(K * eps) + np.sqrt(dK * d * (1 - t)), cap)
    return float(np.sum(w * phi ** 2)) + binom.sf(hi, n, pi) * cap ** 2   # mass above hi: the cap


def bound(n, d, eps, delta, t, m, q, expo=1.0):
    s = math.sqrt(psi2(n, d, eps, delta, q / m, t))
    num = d * (1 - t) - s * math.sqrt(d * (1 - t))
    if num <= 0:
        return 0.0
    den = math.sqrt(d / t) * (1 - t) + s * m
    return q ** (2 * expo) * (num / den) ** 2 / d


def best(n, d, eps, delta, k=math.inf, ts=(0.04, 0.06, 0.08, 0.12, 0.16, 0.2, 0.3), nm=25, nq=25):
    expo = 1.0 if math.isinf(k) else (k - 1) / k
    out = (0.0, None)
    for m in sorted({int(round(x)) for x in np.geomspace(1, 1e6, nm)}):
        for q in np.geomspace(1e-6, 1, nq):
            if q / m > 1:
                continue
            for t in ts:
                v = bound(n, d, eps, delta, t, m, q, expo)
                if v > out[0]:
                    out = (v, (m, float(q), t))
    return out


if __name__ == "__main__":
    delta = float(sys.argv[1]) if len(sys.argv) > 1 else 1e-6
    for d in (300, 1000):
        for n in (10**3, 10**4, 10**5, 10**7):
            for eps in (0.1, 1.0):
                for k in (math.inf, 4.0):
                    v, par = best(n, d, eps, delta, k)
                    print(d, n, eps, k, "%.4e" % v, par, flush=True)
