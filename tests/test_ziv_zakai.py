"""The Ziv–Zakai ℓ1 bound of the multinomial pair family under ε-LDP (boundcalc/methods/ziv_zakai.py,
docs/methods/ziv-zakai.md): below exact Bayes risks of the uniform prior (every transcript enumerated, the
posterior median computed on a fine grid of θ) for binary and k-ary randomized response, extreme-point and
random ε-LDP channels and random sequentially interactive protocols; its float64 Riemann sum against an mpmath
re-evaluation of the same sum; a lower sum of the integral, and close to it; monotone in n, ε and m; below the
certified upper bound."""
import itertools
import math

import mpmath as mp
import numpy as np
import pytest

import boundcalc as bc
from boundcalc.methods import ldp as LDP
from boundcalc.methods import ziv_zakai as ZZ
from boundcalc.methods.hellinger_contraction import hellinger_factor_float


# ------------------------------------------------------------------------------------ exact Bayes risks

def _transcript_laws(P, channel, n, nz):
    """(grid points, nz^n): the law of every transcript under each input law P[g] when user i's channel is
    channel(earlier reports)."""
    cols = []
    for zs in itertools.product(range(nz), repeat=n):
        pr = np.ones(P.shape[0])
        for i in range(n):
            pr = pr * (P @ channel(zs[:i])[:, zs[i]])
        cols.append(pr)
    return np.array(cols).T


def _median_risk(theta, W):
    """Σ_z min_c Σ_g W[g, z] |theta[g] - c| (the minimum is at a weighted median)."""
    tot = 0.0
    for w in W.T:
        c = np.cumsum(w)
        if c[-1] <= 0:
            continue
        med = theta[min(np.searchsorted(c, c[-1] / 2), len(theta) - 1)]
        tot += float(np.sum(w * np.abs(theta - med)))
    return tot


def bayes_l1(m, A, d, channel, n, nz, grid=None):
    """Exact Bayes ℓ1 risk (up to the θ-quadrature, midpoint rule) of the pair family on 2m <= d symbols with
    θ_j i.i.d. uniform on [-A, A], for the protocol ``channel``: the optimal estimator is the coordinate-wise
    posterior median, and Σ_x E|p̂_x - p_x| = (1/m) Σ_j E|θ_j - med_j| (the symbols of pair j move by ±θ_j/(2m))."""
    G = grid or (20001 if m == 1 else 161)
    th = -A + (np.arange(G) + 0.5) * (2 * A / G)
    pts = np.array(list(itertools.product(th, repeat=m)))  # (G^m, m)
    P = np.zeros((len(pts), d))
    for j in range(m):
        P[:, 2 * j] = (1 + pts[:, j]) / (2 * m)
        P[:, 2 * j + 1] = (1 - pts[:, j]) / (2 * m)
    W = _transcript_laws(P, channel, n, nz) / len(pts)
    total = 0.0
    for j in range(m):
        # marginal posterior weights of θ_j: sum the grid over the other coordinates
        Wj = W.reshape((G,) * m + (W.shape[1],))
        Wj = np.moveaxis(Wj, j, 0).reshape(G, -1, W.shape[1]).sum(axis=1)
        total += _median_risk(th, Wj)
    return total / m


def rr2(eps, d=2):
    """Binary randomized response of the indicator of symbol 0 (the other symbols answer like symbol 1)."""
    e = math.exp(eps)
    K = np.tile([1.0, e], (d, 1))
    K[0] = [e, 1.0]
    return K / (1 + e)


def krr(k, eps):
    K = np.ones((k, k)) + np.eye(k) * math.expm1(eps)
    return K / K.sum(axis=1, keepdims=True)


def _extreme_channel(nx, nz, eps, rng):
    from scipy.optimize import nnls

    for _ in range(200):
        B = rng.integers(0, 2, (nx, nz))
        A = np.exp(eps * B)
        a, res = nnls(A, np.ones(nx))
        if res < 1e-10 and (a > 0).sum() >= 2:
            K = (A * a[None, :])[:, a > 0]
            return K / K.sum(axis=1, keepdims=True)
    return krr(nx, eps)


def _lb(n, eps, m, A):
    return ZZ.lower_sum(n, eps, m, A) * (1 - ZZ.WIDEN)


def test_one_pair_below_exact_bayes_risk_of_randomized_response():
    """d = 2 (m = 1): binary randomized response is the best ε-LDP channel for one user (the Bayes risk is concave
    in the channel, so its minimum is at an extreme point, and with two inputs those are randomized response or
    constant); n <= 3, ε from 0.1 to 10, several A and the tuned A. The bound reaches > 0.95 of the risk somewhere:
    5% too large would fail."""
    worst = 0.0
    for eps in (0.1, 0.3, 1.0, 2.0, 4.0, 10.0):
        for n in (1, 2, 3):
            for A in sorted({0.3, 0.6, 1.0, ZZ.best_amplitude(n, eps, 1)}):
                lb = _lb(n, eps, 1, A)
                br = bayes_l1(1, A, 2, lambda hist: rr2(eps), n, 2)
                assert lb <= br * (1 + 1e-6), (eps, n, A, lb, br)
                worst = max(worst, lb / br)
            A = ZZ.best_amplitude(n, eps, 1)
            assert ZZ.zz_pair_l1(n, eps, 1) <= bayes_l1(1, A, 2, lambda hist: rr2(eps), n, 2)
    assert worst > 0.95, worst


def test_one_pair_below_exact_bayes_risk_of_other_channels():
    """d = 3 (one pair and an empty symbol): 3-ary k-RR, extreme points of the ε-LDP polytope and random channels
    at their exact level, n <= 3."""
    rng = np.random.default_rng(7)
    for trial in range(24):
        n = int(rng.integers(1, 4))
        if trial % 3 == 0:
            eps = float(rng.choice([0.5, 2.0, 6.0]))
            K = krr(3, eps)
        elif trial % 3 == 1:
            eps = float(rng.choice([0.5, 1.5, 5.0]))
            K = _extreme_channel(3, int(rng.integers(2, 5)), eps, rng)
        else:
            K, _ = LDP.random_channel(3, int(rng.integers(2, 5)), rng, float(rng.choice([0.3, 1.0, 3.0])),
                                      bool(rng.integers(2)))
        eps = LDP.privacy_level(K)
        for A in (0.5, 1.0):
            br = bayes_l1(1, A, 3, lambda hist: K, n, K.shape[1], grid=8001)
            assert _lb(n, eps, 1, A) <= br * (1 + 1e-6), (trial, eps, n, A)


def test_two_pairs_below_exact_bayes_risk_of_interactive_protocols():
    """d = 4 (m = 2): 4-ary k-RR and random sequentially interactive protocols (every user's channel an extreme
    point of the ε-LDP polytope chosen from the earlier reports), n <= 3."""
    rng = np.random.default_rng(11)
    for trial in range(8):
        eps = float(rng.choice([0.5, 1.0, 3.0]))
        n = int(rng.integers(1, 4))
        A = float(rng.choice([0.5, 1.0]))
        if trial % 2 == 0:
            K = krr(4, eps)
            br = bayes_l1(2, A, 4, lambda hist: K, n, 4)
        else:
            table = {}

            def channel(hist):
                if hist not in table:
                    K = None
                    while K is None or K.shape[1] != 3:
                        K = _extreme_channel(4, 3, eps, rng)
                    table[hist] = K
                return table[hist]

            br = bayes_l1(2, A, 4, channel, n, 3)
        assert _lb(n, eps, 2, A) <= br * (1 + 1e-6), (trial, eps, n, A)


# ------------------------------------------------------------------------------------ the numerics

def _mp_lower_sum(n, eps, m, A, cells):
    """The same lower Riemann sum as :func:`ZZ.lower_sum`, in mpmath at 40 digits (naive forms)."""
    with mp.workdps(40):
        n, eps, A = mp.mpf(n), mp.mpf(eps), mp.mpf(A)
        he = (mp.exp(eps) - 1) ** 2 / (4 * (mp.exp(eps) + 1))
        nh, nphi = cells
        c2 = min(he / (4 * m * m), mp.mpf(1) / (8 * m))
        H = min(2 * A, mp.sqrt(20 / (n * c2)))

        def G(k):
            if k >= 1:
                return mp.mpf(0)
            B = (1 - k) ** (2 * n)
            return 1 - mp.sqrt(1 - B)

        def h2(phi, h):
            return (2 - mp.sqrt((1 + phi) * (1 + phi + h)) - mp.sqrt((1 - phi) * (1 - phi - h))) / (2 * m)

        tot = mp.mpf(0)
        for k in range(1, nh + 1):
            h1 = H * k / nh
            priv = he * h1 ** 2 / (4 * m * m)
            length = 2 * A - h1
            if 2 * he <= m:
                tot += H / nh * length * G(priv)
                continue
            ends = [-h1 / 2 + mp.mpf(i) / nphi * length / 2 for i in range(nphi + 1)]
            d2 = [h2(e, h1) for e in ends]
            for i in range(nphi):
                tot += H / nh * length / nphi * G(min(priv, max(d2[i], d2[i + 1])))
        return tot / (4 * A)


@pytest.mark.parametrize("n,eps,m,A", [(5000, 2.0, 10, 1.0), (1e7, 0.1, 2, 1.0), (3, 8.0, 1, 0.9),
                                       (1e4, 4.0, 2, 0.27), (10, 0.5, 500000, 1.0), (2e6, 6.0, 3, 0.1)])
def test_float_sum_agrees_with_mpmath(n, eps, m, A):
    cells = (60, 6)
    f = ZZ.lower_sum(n, eps, m, A, cells)
    h = _mp_lower_sum(n, eps, m, A, cells)
    assert abs(f - float(h)) <= 1e-11 * float(h), (f, h)


@pytest.mark.parametrize("n,eps,m", [(5000, 2.0, 10), (100, 1.0, 2), (1e4, 4.0, 2), (3, 8.0, 1), (1e6, 0.5, 50)])
def test_lower_sum_below_the_integral_and_close(n, eps, m):
    """The fine sum is below a much finer midpoint quadrature of the same integral and within 1% of it."""
    A = ZZ.best_amplitude(n, eps, m)
    he = hellinger_factor_float(eps)
    H = 2 * A
    K = 40000 if 2 * he <= m else 4000
    h = (np.arange(K) + 0.5) * H / K
    if 2 * he <= m:
        inner = (2 * A - h) * ZZ.le_cam_factor(he * h * h / (4 * m * m), n)
    else:
        J = 2000
        u = (np.arange(J) + 0.5) / J
        phi = -A + u[None, :] * (2 * A - h)[:, None]
        kap = np.minimum(he * (h * h / (4 * m * m))[:, None], ZZ.pair_h2(phi, h[:, None], m))
        inner = (2 * A - h) * ZZ.le_cam_factor(kap, n).mean(axis=1)
    integral = float(np.sum(inner) * H / K / (4 * A))
    v = ZZ.zz_pair_l1(n, eps, m)
    assert v <= integral
    assert v >= 0.99 * integral, (v, integral)


def test_monotone_in_n_eps_and_m():
    """Non-increasing in n and ε, non-decreasing in m (the tuned A: up to 1e-3 in ε and m)."""
    ns = [1, 2, 3, 5, 10, 30, 100, 300, 1000, 3000, 1e4, 3e4, 1e5, 1e6, 1e7]
    for eps in (0.1, 1.0, 3.0, 6.0):
        for m in (1, 3, 10):
            vals = [ZZ.zz_pair_l1(n, eps, m) for n in ns]
            assert all(b <= a * (1 + 1e-9) for a, b in zip(vals, vals[1:])), (eps, m, vals)
    for n in (1, 10, 1000, 1e6):
        for m in (1, 3, 10):
            vals = [ZZ.zz_pair_l1(n, e, m) for e in (0.1, 0.3, 1.0, 2.0, 3.0, 5.0, 8.0)]  # more budget, less risk
            assert all(b <= a * (1 + 1e-3) for a, b in zip(vals, vals[1:])), (n, m, vals)
        vals = [ZZ.zz_pair_l1(n, 2.0, m) for m in (1, 2, 3, 5, 10, 100)]
        assert all(b >= a * (1 - 1e-3) for a, b in zip(vals, vals[1:])), (n, vals)


def test_middle_regime_constant():
    """For large n (m fixed, privacy binding) the bound tends to c m/√(2n h_ε) with c = ∫_0^∞ (1 - √(1-e^{-u²}))du
    ≈ 0.63 (derived independently here by quadrature), up to the Riemann sum's loss."""
    from scipy import integrate

    c = integrate.quad(lambda u: 1 - math.sqrt(-math.expm1(-u * u)), 0, 12)[0]
    n, eps, m = 1e7, 1.0, 5
    v = ZZ.zz_pair_l1(n, eps, m)
    pred = c * m / math.sqrt(2 * n * hellinger_factor_float(eps))
    assert 0.99 * pred <= v <= pred, (v, pred)


@pytest.mark.parametrize("d,eps,n", [(4, 1.0, 100), (20, 2.0, 5000), (20, 4.0, 1000), (3, 0.5, 1000),
                                     (100, 1.0, 1e5), (4, 4.0, 1e4)])
def test_below_certified_upper_and_reported(d, eps, n):
    r = bc.rate("multinomial", "local", d=d, eps=eps, loss="l1", n=n).to_dict()
    zz = next(b for b in r["lowers"] if b["name"] == "ziv-zakai")
    assert zz["certified"] and zz["value"] == pytest.approx(ZZ.zz_pair_l1(n, eps, d // 2), rel=1e-12)
    assert zz["value"] <= r["upper"]["value"]
    assert r["lower"]["value"] >= zz["value"]


def test_data_processing_term_below_exact_bayes_risk_without_privacy():
    """At ε beyond the float range h_ε is infinite and κ = H² (data processing only): the bound must then stay below
    the exact Bayes risk of the raw data (identity channel) for d = 2 and d = 4, n <= 3."""
    worst = 0.0
    for n in (1, 2, 3):
        for A in (0.4, 1.0):
            lb = _lb(n, 800.0, 1, A)
            br = bayes_l1(1, A, 2, lambda hist: np.eye(2), n, 2)
            assert lb <= br * (1 + 1e-6), (n, A, lb, br)
            worst = max(worst, lb / br)
        lb2 = _lb(n, 800.0, 2, 1.0)
        assert lb2 <= bayes_l1(2, 1.0, 4, lambda hist: np.eye(4), n, 4) * (1 + 1e-6)
    assert worst > 0.5, worst


@pytest.mark.parametrize("d,n", [(2, 1), (3, 10), (4, 100), (20, 5000), (1000, 1e6)])
def test_nonprivate_row_below_upper(d, n):
    """Without privacy the same bound with h_ε = ∞ is registered: certified, below the empirical frequencies'
    bound, and the value of the κ = H² sum."""
    r = bc.rate("multinomial", "none", d=d, loss="l1", n=n).to_dict()
    zz = next(b for b in r["lowers"] if b["name"] == "ziv-zakai")
    assert zz["certified"] and zz["value"] == pytest.approx(ZZ.zz_pair_l1(n, math.inf, d // 2), rel=1e-12)
    assert zz["value"] <= r["upper"]["value"]
