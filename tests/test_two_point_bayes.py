"""The two-point Bayes bound through the privacy affinity (boundcalc.methods.two_point_bayes;
docs/methods/two-point-bayes.md): the evaluation of E_H g(H) against a direct binomial sum, and the bound against the
exact Bayes risk of random private mechanisms on small sample spaces (which it must never exceed)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from boundcalc.methods import two_point_bayes as T


def _g_exact(kind, h, x, y):
    if kind == T.KIND_DP:
        if x * h > 600:
            return 0.0
        dh = y * math.expm1(x * h) / math.expm1(x) if y > 0 else 0.0
        return max(0.0, 1 - dh) / math.cosh(x * h / 2) ** 2
    if kind == T.KIND_TV:
        return max(0.0, 1 - x * h)
    theta = math.acos(1 - x / 4)
    return math.cos(min(math.pi / 2, h * theta)) ** 2


@pytest.mark.parametrize("kind,x,y", [(T.KIND_DP, 0.1, 0.0), (T.KIND_DP, 1.0, 1e-3), (T.KIND_DP, 3.0, 0.0),
                                      (T.KIND_TV, 0.05, 0.0), (T.KIND_TV, 0.5, 0.0), (T.KIND_KL, 0.1, 0.0),
                                      (T.KIND_KL, 2.0, 0.0)])
def test_affinity_matches_direct_sum(kind, x, y):
    """E g(H) by the Abel sum equals the pmf-weighted sum over every count (n <= 2000), and never exceeds it."""
    for n, p in [(1, 1.0), (5, 0.3), (200, 0.02), (2000, 0.004), (2000, 0.3)]:
        h = np.arange(n + 1)
        pmf = stats.binom.pmf(h, n, p)
        exact = float(sum(w * _g_exact(kind, int(k), x, y) for k, w in zip(h, pmf)))
        got = T.affinity_lower(kind, n, p, x, y)
        assert got <= exact * (1 + 1e-12) + 1e-300
        assert got >= exact * (1 - 1e-7) - 1e-11, (n, p, got, exact)


def test_affinity_wide_window_is_lower():
    """Beyond MAX_THRESHOLDS counts the thresholds are spread: still below the exact expectation, and close."""
    n, p, eps = 10**6, 1e-3, 1e-3  # window of about 780 counts
    got = T.affinity_lower(T.KIND_DP, n, p, eps, 0.0)
    # exact by a direct sum over the central window (the rest of the mass is below 1e-30)
    h = np.arange(0, 3000)
    exact = float(np.sum(stats.binom.pmf(h, n, p) / np.cosh(eps * h / 2) ** 2))
    assert exact * 0.999 <= got <= exact


def test_randomized_response_attains_the_bound():
    """n = 1, p = 1 (P_± = δ_{±ρ}): randomized response with level ε has Bayes risk ρ² sech²(ε/2), the bound."""
    for eps in (0.1, 1.0, 3.0):
        q = math.exp(eps) / (1 + math.exp(eps))
        bayes = 2 * (2 * q * (1 - q) / 1.0)  # ρ = 1: 2 Σ_y m₊m₋/(m₊+m₋), two outputs of mass 1 each
        bound = T.affinity_lower(T.KIND_DP, 1, 1.0, eps, 0.0)
        assert bound <= bayes * (1 + 1e-12)
        assert bound == pytest.approx(bayes, rel=1e-9)


def _random_mechanism(rng, n, kind):
    """A random channel from {-1, 0, 1}^n to a finite output set, of the exponential-mechanism type
    M(D)(y) ∝ exp(Σ_i φ_i(D_i, y)) (any scores); the privacy levels are measured exactly afterwards."""
    outputs = int(rng.integers(2, 6))
    scale = float(rng.choice([0.05, 0.3, 1.0, 3.0]))
    phi = rng.uniform(-scale, scale, size=(n, 3, outputs))
    data = list(itertools.product(range(3), repeat=n))
    chan = {}
    for D in data:
        s = sum(phi[i, D[i]] for i in range(n))
        w = np.exp(s - s.max())
        chan[D] = w / w.sum()
    if kind == "mix":  # with probability m, release the data itself: an (ε, δ) mechanism with δ > 0
        m = float(rng.choice([1e-3, 0.02, 0.1]))
        ext = {}
        for D in data:
            release = np.zeros(len(data))
            release[data.index(D)] = 1.0
            ext[D] = np.concatenate([(1 - m) * chan[D], m * release])
        chan = ext
    return data, chan


def _levels(data, chan, eps):
    """Exact (pure ε, δ at the given ε, TV, KL) levels of the channel over replace-one neighbours."""
    pure, delta, tv, kl = 0.0, 0.0, 0.0, 0.0
    for D in data:
        for E in data:
            if sum(a != b for a, b in zip(D, E)) != 1:
                continue
            a, b = chan[D], chan[E]
            with np.errstate(all="ignore"):
                ratio = np.where(b > 0, np.log(np.where(a > 0, a, 1e-300) / np.where(b > 0, b, 1)), np.inf)
            pure = max(pure, float(np.max(np.where(a > 0, ratio, -np.inf))))
            delta = max(delta, float(np.sum(np.maximum(0.0, a - math.exp(eps) * b))))
            tv = max(tv, float(0.5 * np.sum(np.abs(a - b))))
            pos = a > 0
            kl = max(kl, float(np.sum(a[pos] * np.log(a[pos] / b[pos]))) if np.all(b[pos] > 0) else math.inf)
    return pure, delta, tv, kl


def _bayes_risk(data, chan, n, p):
    """Exact Bayes risk (ρ = 1) of the two-point prior P_± = (1-p)δ_0 + p δ_{±1} through the channel."""
    vals = (-1, 0, 1)
    mp = 0.0
    mm = 0.0
    for D in data:
        wp = math.prod((1 - p) if vals[x] == 0 else (p if vals[x] == 1 else 0.0) for x in D)
        wm = math.prod((1 - p) if vals[x] == 0 else (p if vals[x] == -1 else 0.0) for x in D)
        mp = mp + wp * chan[D]
        mm = mm + wm * chan[D]
    s = mp + mm
    return float(2 * np.sum(np.where(s > 0, mp * mm / np.where(s > 0, s, 1), 0.0)))


def test_never_above_the_exact_bayes_risk_of_random_mechanisms():
    """150 random channels on {-1, 0, 1}^n (n <= 3), each bound at the channel's exact privacy levels: the bound
    never exceeds the exact Bayes risk (the closest approach is recorded in the assertion message)."""
    rng = np.random.default_rng(7)
    closest = 0.0
    for trial in range(150):
        n = int(rng.integers(1, 4))
        kind = "mix" if trial % 3 == 0 else "pure"
        data, chan = _random_mechanism(rng, n, kind)
        eps_ref = float(rng.choice([0.2, 1.0, 2.0]))
        pure, delta, tv, kl = _levels(data, chan, eps_ref)
        for p in (0.1, 0.5, 1.0):
            risk = _bayes_risk(data, chan, n, p)
            bounds = []
            if math.isfinite(pure) and pure > 0:
                bounds.append(T.affinity_lower(T.KIND_DP, n, p, pure, 0.0))
            if 0 < delta < 1:
                bounds.append(T.affinity_lower(T.KIND_DP, n, p, eps_ref, delta))
            if 0 < tv < 1:
                bounds.append(T.affinity_lower(T.KIND_TV, n, p, tv, 0.0))
            if 0 < kl < math.inf:
                bounds.append(T.affinity_lower(T.KIND_KL, n, p, kl, 0.0))
            for b in bounds:
                assert b <= risk * (1 + 1e-12) + 1e-15, (trial, n, p, b, risk)
                if risk > 0:
                    closest = max(closest, b / risk)
    assert closest > 0.9, closest  # the test reaches close to the bound somewhere (randomized-response-like channels)


def test_mean_bound_below_laplace_risk_and_listed():
    """The mean entry lists the bound, certified, below the entry's certified upper at every privacy model."""
    from boundcalc.app import api

    for priv, lvl in [("pure", dict(eps=0.1)), ("smooth", dict(eps=1.0)), ("approx", dict(eps=1.0, delta=1e-6)),
                      ("tv", dict(alpha=0.05)), ("kl", dict(alpha=0.1))]:
        for k in ((2.0,) if priv != "pure" else (2.0, math.inf)):
            res = api.rate("mean", priv, n=1000, d=1, r=1.0, k=k, **lvl)
            row = [b for b in res.lowers if b.name == "two-point-bayes"]
            assert row and row[0].certified and row[0].value > 0
            assert row[0].value <= res.upper.value


def test_vectorised_rows_give_the_floats_of_one_element_at_a_time():
    """affinity_lower sums many elements' windows at once; each value must be the very float of the element's own
    computation (_affinity_one), for every privacy kind, over random n, levels and mixture weights."""
    import numpy as np

    from boundcalc.methods import two_point_bayes as T
    from scipy import special

    rng = np.random.default_rng(5)
    for _ in range(60):
        kind = int(rng.integers(0, 3))
        n = float(rng.choice([0, 1, 7, 100, 1e4, 1e6, 1e9]))
        x = float(10 ** rng.uniform(-3, 1.3)) if kind == T.KIND_DP else float(10 ** rng.uniform(-4, -0.1))
        y = float(rng.choice([0.0, 1e-6, 1e-3])) if kind == T.KIND_DP else 0.0
        p = np.concatenate([10 ** rng.uniform(-12, 0, size=20), [0.0, 0.5, 1.0]])
        got = T.affinity_lower(kind, n, p, x, y)
        want = np.array([T._affinity_one(kind, n, q, x, y, special) for q in p])
        assert np.array_equal(got, want, equal_nan=True), (kind, n, x, y)


def _plain_affinity_one(T, kind, n, p, x, y):
    """The single-element sum as it was before the cdf was computed only where read: betaincc at every count of
    the window (the plain path the faster one must match bit for bit)."""
    import numpy as np
    from scipy import special

    if not (n >= 0 and 0 <= p <= 1 and x > 0 and y >= 0):
        return float("nan")
    mu = n * p
    sd = math.sqrt(max(mu * (1.0 - p), 0.0))
    lo = max(0.0, math.floor(mu - T.WINDOW_SD * sd - T.WINDOW_SD))
    hi = min(n, math.ceil(mu + T.WINDOW_SD * sd + T.WINDOW_SD), float(T._h_cut(kind, x, y)))
    if p >= 1.0:
        lo = hi = n if n <= hi else -1.0
    if hi < lo:
        return 0.0
    t = np.arange(lo, hi + 1.0) if hi - lo + 1 <= T.MAX_THRESHOLDS else np.unique(np.round(np.linspace(lo, hi, T.MAX_THRESHOLDS)))
    g = T._g(kind, t, x, y)
    dec = np.maximum(0.0, (g - np.append(g[1:], 0.0)) - T.G_REL_ERR * g - T.G_ABS_ERR)
    with np.errstate(all="ignore"):
        if p >= 1.0:
            cdf = np.where(t >= n, 1.0, 0.0)
        else:
            tail = special.betaincc(t + 1.0, np.maximum(n - t, 1e-300), p) * (1.0 - T.TAIL_REL_ERR)
            cdf = np.where(t >= n, 1.0, np.where(np.isfinite(tail), tail, 0.0))
    return max(0.0, float(np.sum(dec * cdf)) * (1.0 - T.SUM_REL_ERR))


def test_cdf_only_where_read_gives_the_plain_floats(monkeypatch):
    """The binomial cdf is computed only where a term reads it (inside the row, decrement not 0, t < n): every
    value of affinity_lower (rows and single elements) must be the float of the plain sum that computes it at
    every count, over random kinds, n, levels and weights, including windows where g falls below its absolute
    allowance (most of the window) and where t reaches n. A planted change of one computed cdf by one ulp must
    be seen, so the comparison can fail."""
    import numpy as np

    from boundcalc.methods import two_point_bayes as T

    rng = np.random.default_rng(17)
    skipped = 0
    for _ in range(60):
        kind = int(rng.integers(0, 3))
        n = float(rng.choice([0, 1, 7, 40, 100, 1e4, 1e6, 1e9]))
        x = float(10 ** rng.uniform(-3, 1.3)) if kind == T.KIND_DP else float(10 ** rng.uniform(-4, -0.1))
        y = float(rng.choice([0.0, 1e-6, 1e-3])) if kind == T.KIND_DP else 0.0
        p = np.concatenate([10 ** rng.uniform(-12, 0, size=20), [0.0, 0.5, 1.0]])
        want = np.array([_plain_affinity_one(T, kind, n, q, x, y) for q in p])
        assert np.array_equal(T.affinity_lower(kind, n, p, x, y), want, equal_nan=True), (kind, n, x, y)
        for q, w in zip(p[:4], want[:4]):
            got = T.affinity_lower(kind, n, float(q), x, y)
            assert np.float64(got).tobytes() == np.float64(w).tobytes() or (math.isnan(got) and math.isnan(w))
    # windows where the fast path skips counts: pure DP at eps = 1 and n = 100 (g < 5e-14 beyond h ~ 32)
    t = np.arange(0.0, 80.0)
    g = T._g(T.KIND_DP, t, 1.0, 0.0)
    dec = np.maximum(0.0, (g - np.append(g[1:], 0.0)) - T.G_REL_ERR * g - T.G_ABS_ERR)
    skipped = int(np.sum(dec == 0))
    assert skipped > 20
    p = np.linspace(0.05, 0.6, 12)
    want = np.array([_plain_affinity_one(T, T.KIND_DP, 100.0, q, 1.0, 0.0) for q in p])
    assert np.array_equal(T.affinity_lower(T.KIND_DP, 100.0, p, 1.0, 0.0), want)
    # planted: every computed cdf one ulp up changes the values, so the comparison above can fail
    real = T._cdf_where_used

    def planted(t, n, p, dec, inside):
        out = real(t, n, p, dec, inside)
        return np.where(out > 0, np.nextafter(out, 2.0), out)

    monkeypatch.setattr(T, "_cdf_where_used", planted)
    got = T.affinity_lower(T.KIND_DP, 100.0, p, 1.0, 0.0)
    assert not np.array_equal(got, want)
