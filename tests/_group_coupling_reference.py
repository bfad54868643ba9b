"""The CouplingMin window sum and the ThresholdCoupling / knapsack functions of
``boundcalc/methods/group_coupling.py`` as they were before the shared pmf windows and the per-distinct-point
thresholds, copied verbatim (only the relative imports made absolute): the references that
``tests/test_coupling_shared_windows.py`` compares the faster code with, bit for bit. The helpers they call
(``binom_pmf``, ``_binom_sf``, ``_log_delta_h``, ``_log_expm1``) are unchanged and imported from the package."""
import numpy as np

from boundcalc.methods.group_coupling import DIRECT_TERMS, GAP_ABS_ERR, PMF_REL_ERR, _log_delta_h  # noqa: F401


def _gap_direct(n, p, eps, loga, delta, lo, hi):
    """(gap, hit) over h in [lo, hi] (1-D arrays): gap = Σ_h P(H = h) max{0, 1 - v_h}, a lower bound on 1 - f
    (the terms left out are >= 0), and hit = Σ_h P(H = h) min{1, v_h}, to which the mass of H outside the
    window is added for an upper bound on f. Both are sums of positive terms (no cancellation), rounded
    outward by PMF_REL_ERR (covers the pmf and the summation of at most DIRECT_TERMS terms) and by
    GAP_ABS_ERR per term."""
    from boundcalc.core.distributions import binom_pmf  # scipy.stats.binom.pmf's values, without importing scipy.stats

    out = np.zeros(n.shape)
    hit = np.zeros(n.shape)
    width = int(np.max(hi - lo)) + 1 if n.size else 0
    if width <= 0:
        return out, hit
    k = np.arange(width, dtype=float)
    step = max(1, 400_000 // width)  # elements per chunk: at most ~4e5 terms in memory at once
    for s in range(0, n.size, step):
        sl = slice(s, s + step)
        h = lo[sl, None] + k[None, :]
        inside = h <= hi[sl, None]
        h = np.where(inside, h, lo[sl, None])
        e = eps[sl, None]
        with np.errstate(all="ignore"):
            pmf = binom_pmf(h, n[sl, None], p[sl, None])
            v1 = np.exp(np.minimum(loga[sl, None] + e * h, 1.0))
            v2 = np.exp(np.minimum(_log_delta_h(h, e, delta[sl, None]), 1.0))
            gap = 1.0 - v1 - v2
            val = np.minimum(1.0, (v1 + v2) * (1 + GAP_ABS_ERR))
        terms = np.where(inside & np.isfinite(pmf), pmf * np.maximum(0.0, gap - GAP_ABS_ERR), 0.0)
        out[sl] = np.sum(terms, axis=1) * (1 - PMF_REL_ERR)
        hit[sl] = np.sum(np.where(inside & np.isfinite(pmf), pmf * val, 0.0), axis=1) * (1 + PMF_REL_ERR)
    return np.maximum(out, 0.0), hit


def _threshold_coupling_numpy(n, p, eps, loga, delta, zs=np.linspace(-6.0, 10.0, 17)):
    """min over thresholds M of {P(H > M) + e^{εM} a + δ(e^{εM} - 1)/(e^ε - 1)}, clipped to [0, 1], H ~ Bin(n, p)
    (numpy, vectorised). The thresholds tried are M = max(0, round(np + z sqrt(np(1-p)))) for a grid of z and
    the point where e^{εM} a = 1; every M gives a valid bound, so the choice only affects tightness."""
    from boundcalc.core.symbolic import _binom_sf

    n, p, eps, loga, delta = np.broadcast_arrays(*(np.asarray(x, float) for x in (n, p, eps, loga, delta)))
    if np.all(delta == 0):  # pure DP: the exact knapsack value where reliable, thresholds only elsewhere
        knap, ok = _knapsack_pure(n, p, eps, loga)
        if np.all(ok):
            return np.clip(knap * (1 + 1e-9) * (1 + 1e-12), 0.0, 1.0)
    mu = n * p
    sd = np.sqrt(np.maximum(n * p * (1 - p), 0.0))
    best = np.ones(n.shape)
    cands = [np.round(mu + z * sd) for z in zs] + [np.floor(-loga / eps), np.floor(-loga / eps) - 1]
    with np.errstate(all="ignore"):
        em1 = np.expm1(eps)
        for m in cands:
            m = np.clip(m, 0.0, n)
            val = _binom_sf(m, n, p) + np.exp(np.minimum(eps * m + loga, 700.0)) \
                + delta * np.expm1(np.minimum(eps * m, 700.0)) / em1
            best = np.minimum(best, np.where(np.isfinite(val), val, 1.0))
        # pure DP: the exact worst case over dependent counts (fractional knapsack), where it is reliable
        knap, ok = _knapsack_pure(n, p, eps, loga)
        use = ok & (delta == 0)
        best = np.where(use, np.minimum(best, knap * (1 + 1e-9)), best)
    return np.clip(best * (1 + 1e-12), 0.0, 1.0)


def _knapsack_pure(n, p, eps, loga, iters=None):
    """δ = 0: max of E min{1, e^{εH} g} over 0 <= g with E g = a, g any function of the sample (vectorised).

    Greedy (fractional knapsack): a unit of g at level h buys e^{εh} of success, and level h saturates at
    g = e^{-εh}; fill the levels from h = n down. With W(j) = E[e^{-εH}; H >= j] = G₋ P(H'' >= j)
    (G₋ = E e^{-εH}, H'' ~ Bin(n, p e^{-ε}/(1 - p + p e^{-ε}))) and j* the smallest j with W(j) <= a,
    the maximum is P(H >= j*) + e^{ε(j*-1)} (a - W(j*)). j* is found by bisection in logs. Returns (value,
    reliable): unreliable where log a < -700 or a tail underflows (the caller keeps the threshold form)."""
    from boundcalc.core.symbolic import _binom_sf

    with np.errstate(all="ignore"):
        log_gm = n * np.log1p(p * np.expm1(-eps))
        q = p * np.exp(-eps) / (1 - p + p * np.exp(-eps))

        def log_w(j):  # log W(j) = log G₋ + log P(H'' >= j)
            return log_gm + np.log(_binom_sf(j - 1, n, q))

        lo = np.zeros(n.shape)  # W(0) = G₋ ... may exceed a
        hi = n + 1.0  # W(n+1) = 0 <= a
        steps = int(np.ceil(np.log2(np.max(n) + 2))) + 1 if iters is None else iters
        for _ in range(steps):
            mid = np.floor((lo + hi) / 2)
            good = log_w(mid) <= loga
            hi = np.where(good, mid, hi)
            lo = np.where(good, lo, mid)
        j = np.where(log_w(lo) <= loga, lo, hi)
        wj = np.exp(log_w(j))
        val = _binom_sf(j - 1, n, p) + np.exp(np.minimum(eps * (j - 1) + loga, 700.0)) * np.clip(
            1 - wj / np.exp(loga), 0.0, 1.0)
        tail = _binom_sf(j - 2, n, q)
        ok = (loga > -700) & np.isfinite(val) & (tail > 1e-290) | (j <= 0)
    return np.clip(val, 0.0, 1.0), ok
