"""Density estimation (problem ``density``): bias constants (Lipschitz and Sobolev), the exact risk
decomposition of private histograms, the series mechanisms, integer solver vs brute force, rates,
the simulation checks and the CLI."""
import json
import math
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boundcalc as bc
from boundcalc.app.catalog import get_entry
from boundcalc.mechanisms import histogram as H
from boundcalc.mechanisms import series as SER
from boundcalc.problems import density as DEN
from boundcalc.core.solver import brute_force_integer


def run(*args):
    return subprocess.run(["boundcalc", *args], capture_output=True, text=True, timeout=300)


def bin_bias_1d(f, bins, pts=4000):
    """∫(f - f̄)² over [0,1] for `bins` equal bins, by a fine midpoint rule inside each bin."""
    x = (np.arange(bins * pts) + 0.5) / (bins * pts)
    v = f(x).reshape(bins, pts)
    return float(np.sum((v - v.mean(axis=1, keepdims=True)) ** 2) / (bins * pts))


# ---------------------------------------------------------------------- bias constants
def test_lipschitz_bias_sharp_1d():
    L, rng = 1.7, np.random.default_rng(0)
    for bins in (1, 3, 10):
        h = 1 / bins
        # linear density attains L²h²/12
        assert bin_bias_1d(lambda x: 1 + L * (x - 0.5), bins) == pytest.approx(L ** 2 * h ** 2 / 12, rel=1e-5)
        # random piecewise-linear L-Lipschitz functions stay below
        for _ in range(30):
            knots = np.sort(np.concatenate([[0, 1], rng.random(12)]))
            slopes = rng.uniform(-L, L, size=knots.size - 1)
            vals = np.concatenate([[0], np.cumsum(slopes * np.diff(knots))])
            f = lambda x: np.interp(x, knots, vals)
            assert bin_bias_1d(f, bins) <= L ** 2 * h ** 2 / 12 * (1 + 1e-6)
    # the pointwise Lipschitz bound's L²h² (d = 1) is 12 times the sharp constant
    assert float(H.bias_lipschitz(1, 1, 1)) == pytest.approx(1 / 12)


def test_lipschitz_bias_sharp_2d():
    """d = 2: additive linear density attains 2L²h²/12; random coordinate-Lipschitz functions stay below."""
    L, rng = 1.0, np.random.default_rng(1)
    for bins in (2, 5):
        h, pts = 1 / bins, 200
        g = (np.arange(bins * pts) + 0.5) / (bins * pts)
        X, Y = np.meshgrid(g, g, indexing="ij")

        def bias(F):
            v = F.reshape(bins, pts, bins, pts)
            return float(np.sum((v - v.mean(axis=(1, 3), keepdims=True)) ** 2) / (bins * pts) ** 2)

        assert bias(1 + L * (X - 0.5) + L * (Y - 0.5)) == pytest.approx(2 * L ** 2 * h ** 2 / 12, rel=1e-4)
        for _ in range(10):
            w1, w2, w3 = rng.uniform(1, 15, 3)
            p1, p2 = rng.uniform(0, 6, 2)
            # |∂_x F| <= L/2 + L/2 and the same for y
            F = (L / (2 * w1)) * np.sin(w1 * X + p1) + (L / (2 * w2)) * np.sin(w2 * Y + p2) \
                + (L / (2 * w3)) * np.sin(w3 * X) * np.sin(w3 * Y)
            assert bias(F) <= 2 * L ** 2 * h ** 2 / 12 * (1 + 1e-6)


def test_sobolev_bias_poincare():
    """∫(f - f̄)² <= h²/π² ∫f'²: equality for cos(π m x) (half a period per bin), below for random f."""
    rng = np.random.default_rng(2)
    for bins in (1, 4, 9):
        h = 1 / bins
        f = lambda x: math.sqrt(2) * np.cos(math.pi * bins * x)
        fp2 = (math.pi * bins) ** 2  # ∫f'²
        assert bin_bias_1d(f, bins) == pytest.approx(h ** 2 / math.pi ** 2 * fp2, rel=1e-5)
        for _ in range(20):
            j = np.arange(1, 30)
            c = rng.normal(size=j.size) / j ** 1.5
            f = lambda x: (math.sqrt(2) * np.cos(math.pi * np.outer(x, j))) @ c
            fp2 = float(np.sum((math.pi * j * c) ** 2))
            assert bin_bias_1d(f, bins, pts=2000) <= h ** 2 / math.pi ** 2 * fp2 * (1 + 1e-6)


def test_lipschitz_in_cosine_sobolev_ball():
    """A Lipschitz density's cosine coefficients satisfy Σ(πj)²c_j² <= L² (S_1(L) ⊇ Lip(L))."""
    rng = np.random.default_rng(3)
    x = (np.arange(40000) + 0.5) / 40000
    j = np.arange(1, 200)
    for _ in range(5):
        knots = np.sort(np.concatenate([[0, 1], rng.random(8)]))
        slopes = rng.uniform(-1, 1, size=knots.size - 1)
        vals = np.concatenate([[0], np.cumsum(slopes * np.diff(knots))])
        f = np.interp(x, knots, vals)
        c = (math.sqrt(2) * np.cos(math.pi * np.outer(j, x))) @ f / x.size
        assert np.sum((math.pi * j * c) ** 2) <= 1.0 + 1e-6


# ---------------------------------------------------------------------- histogram risk decomposition
@pytest.mark.parametrize("eps", [None, 0.5])
def test_central_histogram_exact_risk_by_simulation(eps):
    rng = np.random.default_rng(4)
    n, bins = 500, 7
    gb, ig2 = DEN.cos_instance(0.2, 1, bins)
    p, if2 = DEN._additive_instance(gb, ig2, 1, 1 / bins)
    err = H.ise(H.central_counts(rng, n, p, 40000, eps), p, if2, n, 1 / bins)
    exact = H.exact_risk(p, if2, n, 8 / eps ** 2 if eps else 0.0, 1 / bins)
    assert err.mean() == pytest.approx(exact, rel=4 * err.std() / math.sqrt(err.size) / exact)
    # and the certified bound dominates it
    v = {"n": n, "d": 1, "L": 0.2 * math.sqrt(2) * math.pi, "eps": eps or 1.0, "privacy": "pure" if eps else "none"}
    b = next(x for x in DEN.Density().bounds(v) if x.side == "upper")
    assert exact <= float(b.evaluate(v, {"b": bins}))


@pytest.mark.parametrize("d", [1, 2])
def test_sawtooth_attains_the_bound(d):
    """The sawtooth of the bin width with slope L has exact risk equal to the certified bound."""
    n, eps, L, bins = 2000, 0.7, 0.8, 6
    gb, ig2 = DEN.sawtooth_instance(L, bins)
    p, if2 = DEN._additive_instance(gb, ig2, d, 1 / bins)
    exact = H.exact_risk(p, if2, n, 8 / eps ** 2, (1 / bins) ** d)
    v = {"n": n, "d": d, "L": L, "eps": eps, "privacy": "pure"}
    b = next(x for x in DEN.Density().bounds(v) if x.side == "upper")
    assert exact == pytest.approx(float(b.evaluate(v, {"b": bins})), rel=1e-12)


@pytest.mark.parametrize("mech", ["laplace", "rr"])
def test_local_histogram_exact_risk_by_simulation(mech):
    rng = np.random.default_rng(5)
    n, bins, eps = 800, 5, 1.2
    gb, ig2 = DEN.cos_instance(0.15, 1, bins)
    p, if2 = DEN._additive_instance(gb, ig2, 1, 1 / bins)
    err = H.ise(H.local_counts(rng, n, p, 40000, eps, mech), p, if2, n, 1 / bins)
    q = H.rr_flip_probability(eps)
    nv = n * (8 / eps ** 2 if mech == "laplace" else q * (1 - q) / (1 - 2 * q) ** 2)
    exact = H.exact_risk(p, if2, n, nv, 1 / bins)
    assert err.mean() == pytest.approx(exact, rel=4 * err.std() / math.sqrt(err.size) / exact)
    assert q * (1 - q) / (1 - 2 * q) ** 2 == pytest.approx(math.exp(eps / 2) / math.expm1(eps / 2) ** 2)


def test_rr_one_hot_is_eps_ldp():
    """Bit-flip probability q = 1/(1+e^{ε/2}) on a one-hot vector: worst likelihood ratio exactly e^ε."""
    import itertools

    eps, m = 0.9, 4
    q = H.rr_flip_probability(eps)
    onehots = np.eye(m)
    worst = 0.0
    for y in itertools.product([0, 1], repeat=m):
        y = np.array(y)
        probs = [np.prod(np.where(y == oh, 1 - q, q)) for oh in onehots]
        worst = max(worst, max(probs) / min(probs))
    assert worst == pytest.approx(math.exp(eps), rel=1e-12)


# ---------------------------------------------------------------------- series
def test_series_tail_attained_and_estimator_unbiased():
    rng = np.random.default_rng(6)
    K, eps, L, beta = 3, 1.0, 1.0, 1.0
    a = L / (math.pi * (K + 1)) ** beta
    assert float(SER.tail_bias(L, beta, K)) == pytest.approx(a ** 2)
    x = DEN.sample_cos_density(rng, 0.3, 2, (400, 300))
    for mech in ("linf", "laplace"):
        chat = SER.estimate_coefficients(x, K, eps, mech, rng)
        se = chat.std(axis=0) / math.sqrt(chat.shape[0])
        assert np.all(np.abs(chat.mean(axis=0) - np.array([0, 0.3, 0])) < 4 * se)
        var_sum = chat.var(axis=0).sum()
        bound = float((SER.linf_variance(K, 300, eps) if mech == "linf" else SER.laplace_variance(K, 300, eps)))
        assert var_sum <= bound * 1.1


def test_laplace_series_has_the_slower_rate():
    """Optimised over K, series-linf ∝ (nε²)^{-2β/(2β+2)} and series-laplace ∝ (nε²)^{-2β/(2β+3)}."""
    for beta in (1.0, 2.0):
        ns = [10 ** 12, 10 ** 14]
        vals = {}
        for mech in ("series-linf", "series-laplace"):
            vals[mech] = [bc.rate("density", "local", n=n, beta=beta, family="sobolev", mechanism=mech,
                                  eps=0.5).upper.value for n in ns]
        slope = lambda v: math.log(v[1] / v[0]) / math.log(ns[1] / ns[0])
        assert slope(vals["series-linf"]) == pytest.approx(-2 * beta / (2 * beta + 2), abs=0.03)
        assert slope(vals["series-laplace"]) == pytest.approx(-2 * beta / (2 * beta + 3), abs=0.03)
        assert vals["series-laplace"][1] > 2 * vals["series-linf"][1]


def test_local_histogram_rate():
    ns = [10 ** 8, 10 ** 10]
    v = [bc.rate("density", "local", n=n, eps=0.5, mechanism="hist-rr").upper.value for n in ns]
    assert math.log(v[1] / v[0]) / math.log(100) == pytest.approx(-0.5, abs=0.02)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_central_private_term_rate(d):
    """With ε small the private term dominates: the optimised bound ∝ (nε)^{-2/(1+d)}."""
    a = bc.rate("density", "pure", n=10 ** 9, d=d, eps=1e-5).upper.value
    b = bc.rate("density", "pure", n=10 ** 9, d=d, eps=1e-3).upper.value
    assert math.log(b / a) / math.log(100) == pytest.approx(-2 / (1 + d), abs=0.06)
    # and the statistical part ∝ n^{-2/(2+d)} without privacy
    a = bc.rate("density", "none", n=10 ** 8, d=d).upper.value
    b = bc.rate("density", "none", n=10 ** 10, d=d).upper.value
    assert math.log(b / a) / math.log(100) == pytest.approx(-2 / (2 + d), abs=0.06)


# ---------------------------------------------------------------------- solver vs brute force
CENTRAL_CASES = [(1000, 1, 1.0, 1.0), (10 ** 5, 1, 0.1, 2.0), (5000, 2, 1.0, 1.0), (10 ** 6, 3, 0.5, 0.5),
                 (50, 2, 5.0, 1.0), (10 ** 7, 1, 1e-3, 1.0)]


@pytest.mark.parametrize("n,d,eps,L", CENTRAL_CASES)
def test_central_bins_match_brute_force(n, d, eps, L):
    for priv in ("pure", "none"):
        res = bc.rate("density", priv, n=n, d=d, L=L, **({"eps": eps} if priv == "pure" else {}))
        hist = next(u for u in res.uppers if u.name.startswith("histogram"))
        bsol = hist.free_parameters["b"]
        assert isinstance(bsol, int)
        v = {"n": n, "d": d, "L": L, "eps": eps, "privacy": priv}
        bound = next(x for x in DEN.Density().bounds(v) if x.side == "upper" and x.free)
        hi = DEN.b_max(v)
        kb, val = brute_force_integer(lambda ks: bound.evaluate(v, {"b": ks.astype(float)}), 1, hi)
        assert hist.value == pytest.approx(val, rel=1e-12)
        assert bsol == kb


LOCAL_CASES = [(1000, 1.0, 1.0, "auto"), (10 ** 5, 0.5, 1.0, "sobolev"), (10 ** 6, 1.0, 2.0, "sobolev"),
               (3 * 10 ** 4, 2.0, 1.5, "sobolev")]


@pytest.mark.parametrize("n,eps,beta,fam", LOCAL_CASES)
def test_local_bins_and_terms_match_brute_force(n, eps, beta, fam):
    vals = {"n": n, "eps": eps, "beta": beta, "L": 1.0, "family": fam, "mechanism": "all", "privacy": "local"}
    res = bc.rate("density", "local", n=n, eps=eps, beta=beta, family=fam)
    by_name = {b.name: b for b in res.uppers}
    for bound in get_entry("density", "local").bounds(vals):
        if bound.side != "upper" or not bound.free:
            continue
        fp = bound.free[0]
        hi = int(fp.high(vals))
        kb, val = brute_force_integer(lambda ks: bound.evaluate(vals, {fp.name: ks.astype(float)}), 1, hi)
        got = by_name[bound.name]
        if got.value is None:
            continue
        assert got.free_parameters[fp.name] == kb, bound.name
        assert got.value == pytest.approx(val, rel=1e-12)


# ---------------------------------------------------------------------- properties and output
@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 10 ** 12), e=st.floats(1e-4, 20), d=st.integers(1, 4), L=st.floats(0.01, 10))
def test_central_upper_finite_and_not_above_trivial(n, e, d, L):
    res = bc.rate("density", "pure", n=n, eps=e, d=d, L=L)
    up = res.upper.value
    assert 0 < up <= d * L ** 2 / 12 * (1 + 1e-12)
    if d == 1:  # certified Assouad / two-point lower bounds (tests/test_density_lower.py)
        assert res.lower is not None and res.lower.value <= up
    else:  # the bump family is derived for d = 1 only
        assert res.lower is None and res.to_dict()["ratio"] is None


def test_local_output_lists_laplace_series_and_nonprivate():
    d = bc.rate("density", "local", n=10 ** 6, eps=0.5).to_dict()
    names = {u["name"]: u for u in d["uppers"]}
    assert set(names) == {"hist-laplace", "hist-rr", "hist-subset", "series-linf", "series-laplace", "uniform"}
    assert names["series-laplace"]["value"] > names["series-linf"]["value"]
    assert d["lower"]["certified"] and d["lower"]["value"] <= d["upper"]["value"]
    assert any(b["name"] == "order" and b["certified"] is False for b in d["lowers"])
    assert d["nonprivate"]["value"] < d["upper"]["value"]
    assert any("slower" in note for note in d["notes"])
    assert isinstance(d["upper"]["free_parameters"].get("m", d["upper"]["free_parameters"].get("K")), int)


def test_checks_pass():
    for kw in ({"privacy": "pure", "d": 2}, {"privacy": "none"},
               {"privacy": "local", "mechanism": "hist-laplace"}, {"privacy": "local", "family": "sobolev"}):
        res = bc.check("density", reps=100, seed=1, ns=[1000, 10000, 100000] if kw["privacy"] == "local"
                       else [100, 1000, 10000], **kw)
        assert res.passed, (kw, res.failures)
    res = bc.check("density", "local", mechanism="series-linf", ns=[1000, 10000], reps=60, seed=2)
    assert res.passed, res.failures


def test_cli_rate_and_check_json():
    out = run("rate", "--problem", "density", "--privacy", "pure", "--json")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["upper"]["certified"] and isinstance(d["upper"]["free_parameters"]["b"], int)
    assert d["lower"]["certified"] and isinstance(d["lower"]["free_parameters"]["m_b"], int)
    assert 1 <= d["ratio"] < 30
    out = run("check", "--problem", "density", "--privacy", "local", "--beta", "1", "--L", "1", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["passed"] is True


@pytest.mark.parametrize("args", [["--privacy", "local", "--beta", "0"], ["--privacy", "pure", "--d", "1.5"],
                                  ["--privacy", "local", "--family", "lipschitz", "--beta", "2"],
                                  ["--privacy", "local", "--mechanism", "kernel"]])
def test_cli_bad_input(args):
    out = run("rate", "--problem", "density", *args)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr


def test_vectorised_curves_are_valid_choices():
    ns = np.array([100, 10 ** 4, 10 ** 6, 10 ** 9, 10 ** 12])
    for priv, kw in (("pure", {"d": 2}), ("none", {}), ("local", {}), ("local", {"beta": 2.5})):
        cur = bc.evaluate_curve("density", priv, n=ns, **kw)
        for n, c in zip(ns, cur):
            best = bc.rate("density", priv, n=int(n), **kw).upper.value
            assert best <= c * (1 + 1e-12) and c <= 1.5 * best


# ---------------------------------------------------------------------- audit additions (appended)
@pytest.mark.parametrize("mech", ["hist-laplace", "hist-rr"])
@pytest.mark.parametrize("n,eps,bins", [(800, 1.2, 5), (10 ** 4, 0.3, 12), (300, 4.0, 3)])
def test_local_histogram_bound_dominates_exact_risk_and_is_attained(mech, n, eps, bins):
    """The certified local histogram bounds against the exact risk decomposition (H.exact_risk, checked by
    simulation above), with the per-bin noise variance derived here: Laplace(2/ε) on each coordinate of each
    user's one-hot vector gives 8n/ε² per bin; randomized response with flip probability q = 1/(1+e^{ε/2}),
    debiased by (Y-q)/(1-2q), gives n q(1-q)/(1-2q)². The sawtooth with slope L attains the bound exactly
    (uniform bin masses: sampling variance (m-1)/n; bin bias L²h²/12); smooth cosine densities stay below."""
    L = 0.7
    q = 1 / (1 + math.exp(eps / 2))
    nv = n * (8 / eps ** 2 if mech == "hist-laplace" else q * (1 - q) / (1 - 2 * q) ** 2)
    vals = {"n": n, "eps": eps, "beta": 1.0, "L": L, "family": "lipschitz", "mechanism": "all", "privacy": "local"}
    b = next(x for x in get_entry("density", "local").bounds(vals) if x.name == mech)
    bound = float(b.evaluate(vals, {"m": float(bins)}))
    gb, ig2 = DEN.sawtooth_instance(L, bins)
    p, if2 = DEN._additive_instance(gb, ig2, 1, 1 / bins)
    assert H.exact_risk(p, if2, n, nv, 1 / bins) == pytest.approx(bound, rel=1e-12)
    for amp in (0.05, L / (math.sqrt(2) * math.pi)):  # cosine densities with Lipschitz constant <= L
        gb, ig2 = DEN.cos_instance(amp, 1, bins)
        p, if2 = DEN._additive_instance(gb, ig2, 1, 1 / bins)
        assert H.exact_risk(p, if2, n, nv, 1 / bins) <= bound * (1 + 1e-12)
