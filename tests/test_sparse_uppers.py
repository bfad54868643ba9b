"""Sparse Bernoulli upper bounds under ε-LDP: projected truncated randomized response, truncated centred PrivUnit
and its projection (boundcalc/mechanisms/sparse_binary.py, docs/problems/sparse-bernoulli.md).

Every step that is not textbook is checked against an independent computation (exact enumeration, brute-force
Poisson sums, optimality conditions), and each certified upper bound against a seeded simulation of its
mechanism on hard instances, at several truncation levels K."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import boundcalc as bc
from boundcalc.mechanisms import privunit as PU
from boundcalc.mechanisms import sparse_binary as SB
from boundcalc.problems import sparse_bernoulli as SBP
import mpmath
from scipy import optimize, sparse, special, stats
from boundcalc.methods import fingerprinting as fp

NAMES = ("projected-truncated-rr", "truncated-privunit", "projected-privunit")


def _poisson_binomial(theta):
    """Exact law of Σ_j Bern(θ_j) (convolution)."""
    law = np.array([1.0])
    for p in theta:
        law = np.convolve(law, [1 - p, p])
    return law


@pytest.mark.parametrize("s", [0.3, 1.0, 2.0, 5.0, 17.5])
def test_poisson_excess_against_brute_force_sum(s):
    import mpmath

    k = np.arange(0, 400)
    pmf = np.exp(k * math.log(s) - s - np.array([math.lgamma(x + 1) for x in k]))
    for K in (0, 1, 2, 3, 5, 8, 20, 40):
        brute = float(np.sum(np.maximum(k - K, 0) * pmf))
        assert SB.poisson_excess_np(s, K) == pytest.approx(brute, rel=1e-9, abs=1e-300)
        with mpmath.workdps(30):
            assert float(SB.poisson_excess_mp(s, K)) == pytest.approx(brute, rel=1e-9, abs=1e-300)


def test_truncation_bias_below_poisson_excess():
    """‖b‖₁ = E(|X| - K)₊ (exact Poisson-binomial law) <= E(Poi(s) - K)₊ for random θ with Σθ <= s, and the bound
    is attained in the limit of many small θ_j (so the convex-order step is not vacuous)."""
    rng = np.random.default_rng(3)
    for _ in range(300):
        d = int(rng.integers(2, 30))
        theta = rng.random(d) ** rng.uniform(0.5, 4)
        s = float(theta.sum()) * rng.uniform(1.0, 1.3)
        law = _poisson_binomial(theta)
        for K in range(0, 8):
            exact = float(np.sum(np.maximum(np.arange(law.size) - K, 0) * law))
            assert exact <= SB.poisson_excess_np(s, K) * (1 + 1e-12) + 1e-15
    law = _poisson_binomial(np.full(4000, 2.0 / 4000))
    exact = float(np.sum(np.maximum(np.arange(law.size) - 3, 0) * law))
    assert exact == pytest.approx(SB.poisson_excess_np(2.0, 3), rel=2e-3)


def test_projection_onto_capped_simplex_satisfies_the_optimality_conditions():
    """Π = Π_C(y) lies in C and ⟨y - Π, c - Π⟩ <= 0 for every c ∈ C (checked at the vertices of C, which suffices
    as the map c ↦ ⟨y - Π, c - Π⟩ is linear)."""
    rng = np.random.default_rng(4)
    d, s = 6, 2.5
    verts = []
    for ones in itertools.product([0, 1], repeat=d):
        v = np.array(ones, float)
        if v.sum() <= s:
            verts.append(v)
        if v.sum() == math.floor(s):  # plus a fractional coordinate
            for j in np.flatnonzero(v == 0):
                w = v.copy()
                w[j] = s - math.floor(s)
                verts.append(w)
    V = np.array(verts)
    Y = rng.normal(0.3, 0.8, size=(500, d))
    P = SB.project_capped_simplex(Y, s)
    assert P.min() >= 0 and P.max() <= 1 and P.sum(axis=1).max() <= s + 1e-12
    gaps = np.einsum("ij,kj->ik", Y - P, V) - np.sum((Y - P) * P, axis=1)[:, None]
    assert gaps.max() <= 1e-9


def test_truncated_rr_is_eps_ldp_by_enumeration():
    """Exact output law of truncation + RR at level ε/(2K) for d = 4: every likelihood ratio <= e^ε (and the
    worst ratio reaches e^ε, so the level is not wasted when two inputs differ in 2K bits)."""
    d, eps = 4, 1.3
    xs = [np.array(x) for x in itertools.product([0, 1], repeat=d)]
    for K in (1, 2):
        q = 1 / (1 + math.exp(-eps / (2 * K)))

        def law(x):
            ones = np.flatnonzero(x)
            kept = [x] if ones.size <= K else []
            if ones.size > K:
                for sub in itertools.combinations(ones, K):
                    y = np.zeros(d, int)
                    y[list(sub)] = 1
                    kept.append(y)
            out = np.zeros(2 ** d)
            for y in kept:
                for iz, z in enumerate(xs):
                    out[iz] += np.prod(np.where(z == y, q, 1 - q)) / len(kept)
            return out

        laws = np.array([law(x) for x in xs])
        ratio = (laws[:, None, :] / laws[None, :, :]).max()
        assert ratio <= math.exp(eps) * (1 + 1e-12)
        assert ratio >= math.exp(eps) * (1 - 1e-9)


def test_privunit_centring_radius_and_axis_bound_by_enumeration():
    """r² = K̃ - K̃²/d is max ‖x' - κ1‖² over |x'| <= K, and E⟨u, e_j⟩² <= θ_j + 1/d for u = (x' - κ1)/‖x' - κ1‖,
    with the exact law of the truncated vector x' (d = 7, random θ)."""
    d = 7
    xs = [np.array(x, float) for x in itertools.product([0, 1], repeat=d)]
    rng = np.random.default_rng(6)
    for K in range(1, d + 1):
        Kt = min(K, d / 2)
        kappa, r2 = Kt / d, Kt - Kt ** 2 / d
        norms = [np.sum((x - kappa) ** 2) for x in xs if x.sum() <= K]
        assert max(norms) == pytest.approx(r2, rel=1e-12)
        for _ in range(5):
            theta = rng.random(d) * rng.uniform(0.1, 1)
            Eu2 = np.zeros(d)
            for x in xs:
                px = np.prod(np.where(x == 1, theta, 1 - theta))
                ones = np.flatnonzero(x)
                subs = [ones] if ones.size <= K else [np.array(c) for c in itertools.combinations(ones, K)]
                for sub in subs:
                    y = np.zeros(d)
                    y[sub] = 1
                    v = y - kappa
                    Eu2 += px / len(subs) * v ** 2 / np.sum(v ** 2)
            assert np.all(Eu2 <= theta + 1 / d + 1e-12)


@pytest.mark.parametrize("d,eps,K", [(12, 1.0, 2), (30, 2.0, 3)])
def test_privunit_coordinate_variance_and_increment_bound(d, eps, K):
    """The Bennett inputs of projected-privunit, against the sampler: per user Z_j - E Z_j <= r/m + κ always, and
    E Z_j² <= (r/m)²(w⊥ + (θ_j + 1/d)(E W² - w⊥)₊) coordinatewise (θ: s ones plus a spread part)."""
    rng = np.random.default_rng(8)
    theta = np.full(d, 0.05)
    theta[:2] = 1.0
    Kt = min(K, d / 2)
    kappa, r = Kt / d, math.sqrt(Kt - Kt * Kt / d)
    m2inv = PU.privunit_factor_value(d, eps)
    ew2 = PU.sq_inner_moment(d, eps)
    wp = (1 - ew2) / (d - 1)
    bound = r * r * m2inv * (wp + (theta + 1 / d) * max(ew2 - wp, 0))
    X = SB.truncate_ones(rng.random((60000, d)) < theta, K, rng)
    Z = PU.privunit(X - kappa, r, eps, rng)
    EZ = X.mean(axis=0) - kappa  # E Z = θ' - κ (unbiased); its estimate suffices for the one-sided check
    assert np.max(Z - EZ) <= r * math.sqrt(m2inv) + kappa + 1e-9
    se = np.std(Z ** 2, axis=0) / math.sqrt(Z.shape[0])
    assert np.all(np.mean(Z ** 2, axis=0) <= bound + 4 * se)
    assert np.max(np.mean(Z ** 2, axis=0) / bound) > 0.5  # the bound is not vacuous on the heavy coordinates


def _instances(d, s):
    heavy = np.zeros(d)
    heavy[:int(s)] = 1.0
    half = np.zeros(d)
    half[:int(2 * s)] = 0.5
    return {"ones": heavy, "spread": np.full(d, s / d), "half": half}


def _bound_at(name, values, free):
    b = {x.name: x for x in SBP.SparseBernoulli().bounds_local(values)}[name]
    return float(b.evaluate(values, free))


@pytest.mark.parametrize("n,d,s,eps", [(150, 20, 2.0, 1.0), (100, 12, 3.0, 2.0)])
def test_simulated_risk_below_certified_bounds(n, d, s, eps):
    """Seeded simulation of each mechanism on three hard instances, at the solver's K, at K = 1, 2 (where the
    truncation bias matters) and at K = d (no truncation: the unprojected bound is then nearly an identity, so an
    error of a few percent in PrivUnit's constant would show): the 99.9% lower confidence end of the simulated risk
    stays below the bound."""
    rng = np.random.default_rng(11)
    values = {"n": n, "d": d, "s": s, "eps": eps}
    res = bc.rate("sparse-bernoulli", "local", **values)
    ups = {b.name: b for b in res.uppers}
    reps = 80
    worst = {}
    for name in NAMES:
        sampler, k_name, projected, _ = SBP.VECTOR_SIMULATORS[name]
        free = dict(ups[name].free_parameters)
        assert ups[name].certified and ups[name].value == pytest.approx(_bound_at(name, values, free), rel=1e-9)
        for K in sorted({int(free[k_name]), 1, 2, d}):
            f = {**free, k_name: K}
            bound = _bound_at(name, values, f)
            for iname, theta in _instances(d, s).items():
                r_ = 400 if (name, K) == ("truncated-privunit", d) else reps  # the sharp case: a tight interval
                y = getattr(SB, sampler)(theta, n, K, eps, r_, rng)
                if projected:
                    y = SB.project_capped_simplex(y, s)
                err = np.sum((y - theta) ** 2, axis=1)
                low = err.mean() - 3.3 * err.std(ddof=1) / math.sqrt(r_)
                assert low <= bound, (name, K, iname, err.mean(), bound)
                worst[name] = max(worst.get(name, 0), err.mean() / bound)
    # without truncation the unprojected PrivUnit bound is an identity up to ‖θ - κ1‖²/n: it must be nearly attained
    assert worst["truncated-privunit"] > 0.9


def test_bounds_monotone_in_n_and_above_lower():
    for d, s, eps in [(200, 5.0, 2.0), (1000, 2.0, 3.0), (10, 2.0, 0.5)]:
        prev = {}
        for n in (10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6):
            res = bc.rate("sparse-bernoulli", "local", n=n, d=d, s=s, eps=eps)
            for b in res.uppers:
                if b.name in NAMES:
                    assert b.certified and b.value >= res.lower.value
                    assert b.value <= prev.get(b.name, math.inf) * (1 + 1e-9), (b.name, n)
                    prev[b.name] = b.value


def test_new_uppers_help_where_the_zero_estimator_was_best():
    """At the cell where θ̂ = 0 was the best certified upper (n = 1e3, ε = 3, d = 1000, s = 2) and at d = 200, s = 5."""
    res = bc.rate("sparse-bernoulli", "local", n=1000, d=1000, s=2, eps=3.0)
    assert res.upper.name in NAMES + ("block-oue",) and res.upper.value < 0.7
    res = bc.rate("sparse-bernoulli", "local", n=1000, d=200, s=5, eps=2.0)
    assert res.upper.name in NAMES + ("block-oue",) and res.upper.value < 2.2


def test_privunit_bounds_need_d_at_least_2():
    res = bc.rate("sparse-bernoulli", "local", n=1000, d=1, s=0.5, eps=1.0)
    ups = {b.name: b for b in res.uppers}
    assert not ups["truncated-privunit"].usable and not ups["projected-privunit"].usable
    assert ups["projected-truncated-rr"].usable and math.isfinite(ups["projected-truncated-rr"].value)


# ----------------------------------------------------------------------------------------------------
# The certified sparse Bernoulli formulas re-implemented independently (formerly in test_audit_fingerprinting_sparse.py)
#
# Sparse Bernoulli (docs/problems/sparse-bernoulli.md), written independently of the code they check: the three certified formulas re-implemented from the docs page (Poisson excess by direct
# summation, PrivUnit's m and E W² in mpmath) at the solver's reported parameters; PrivUnit's realised privacy
# loss with the true cap mass.

def _poisson_excess(s, K):
    k = np.arange(0, int(K + 20 * s + 200))
    return float(np.sum(np.maximum(k - K, 0) * stats.poisson.pmf(k, s)))


def _top(s, log_S, lam):
    L = log_S - math.log(s)
    return s / lam * min(math.exp(L - 1), max(L, 1.0))


def _quad(b2, A):
    return ((b2 + math.sqrt(b2 * b2 + 4 * A)) / 2) ** 2


def _privunit_m_ew2(d, eps):
    """m = E<V, u> and E W² of the implemented PrivUnit (its γ and p), from the cap mass in mpmath."""
    _, g, p, _ = PU.privunit_parameters(d, eps)
    with mpmath.workdps(40):
        gg, a, pm = mpmath.mpf(g), mpmath.mpf(d - 1) / 2, mpmath.mpf(p)
        C = mpmath.betainc(a, mpmath.mpf(1) / 2, 0, 1 - gg ** 2, regularized=True) / 2 if g > 0 else mpmath.mpf(1) / 2
        A = (1 - gg ** 2) ** a / ((d - 1) * mpmath.beta(mpmath.mpf(1) / 2, a))
        m = A * (pm / C - (1 - pm) / (1 - C))
        norm = mpmath.quad(lambda f: mpmath.sin(f) ** (d - 2), [0, mpmath.pi / 2, mpmath.pi])
        t2 = mpmath.quad(lambda f: mpmath.cos(f) ** 2 * mpmath.sin(f) ** (d - 2), [0, mpmath.acos(gg)]) / norm
        ew2 = pm / C * t2 + (1 - pm) / (1 - C) * (mpmath.mpf(1) / d - t2)
        loss = mpmath.log(pm / C) - mpmath.log((1 - pm) / (1 - C))
    return float(m), float(ew2), float(loss)


@pytest.mark.parametrize("n,d,s,eps", [(1000, 100, 2.0, 1.0), (10, 7, 0.5, 4.0), (10**5, 1000, 6.0, 0.3)])
def test_sparse_uppers_match_independent_formulas(n, d, s, eps):
    res = bc.rate("sparse-bernoulli", privacy="local", n=n, d=d, s=s, eps=eps)
    ub = {b.name: b for b in res.uppers}
    m, ew2, loss = _privunit_m_ew2(d, eps)
    assert loss <= eps * (1 + 1e-8)  # PrivUnit at the implemented (γ, p) is ε-LDP
    b = ub["projected-truncated-rr"]
    K, ell = int(b.free_parameters["K_prr"]), b.free_parameters["ell_prr"]
    beta = _poisson_excess(s, K)
    sv = 1 / math.tanh(eps / (4 * K)) / (2 * math.sqrt(n))
    mine = _quad(min(beta, math.sqrt(beta)), _top(s, math.log(d) + ell ** 2 / 2, ell / sv))
    assert b.value == pytest.approx(mine, rel=1e-8)
    for name in ("truncated-privunit", "projected-privunit"):
        b = ub[name]
        K = int(b.free_parameters["K_pu"])
        beta = _poisson_excess(s, K)
        Kt = min(K, d / 2)
        rm2, kappa = (Kt - Kt * Kt / d) / m ** 2, Kt / d
        if name == "truncated-privunit":
            mine = min(beta ** 2, beta) + rm2 / n
        else:
            u = b.free_parameters["u_pu"]
            wp = (1 - ew2) / (d - 1)
            gap = max(ew2 - wp, 0.0)
            bb = math.sqrt(rm2) + kappa
            h = n * (math.expm1(u) - u) / bb ** 2
            log_S = h * rm2 * (wp + gap / d) + math.log(d + s * math.expm1(h * rm2 * gap))
            mine = _quad(min(beta, math.sqrt(beta)), _top(s, log_S, u * n / bb))
        assert b.value == pytest.approx(mine, rel=1e-6)
