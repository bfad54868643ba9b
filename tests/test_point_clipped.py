"""Point models: the clipped-statistic Laplace estimator (clip-stat-laplace) and the van-trees-chord bound.

Checks, each against an independent computation:
- the exact clipped moments E ψ, E ψ² against numerical quadrature / direct summation of the model law;
- the slope |m'| against a finite difference of the moments, and its minimum over N at an end point (dense grid);
- the certified risk above the seeded simulated MSE of the mechanism at θ_lo, θ and θ_hi;
- the variance supremum (grid + Lipschitz term) above the variance on a 20x finer grid;
- the chord bound on ∫ I dμ above the quadrature value, and E|θ - c| = w(1/2 - 2/π²) for the cos² prior;
- the new lower bound below the certified upper bounds and below the simulated risk of the mechanism.
"""
import math

import numpy as np
import pytest
from scipy import integrate, stats

import boundcalc as bc
from boundcalc.mechanisms import clipped_statistic as cs
from boundcalc.problems import point

MODELS = ["exponential", "poisson", "normal-mean", "normal-var"]


def _pos(model, x):
    """The lower clipping end: at least 0 where T >= 0 (as in clipped_statistic.interval)."""
    return x if model == "normal-mean" else max(x, 0.0)
THETAS = {"exponential": [0.4, 1.0, 2.5], "poisson": [0.7, 2.0, 9.0], "normal-mean": [-1.0, 0.5],
          "normal-var": [0.3, 1.0, 3.0]}


def _quad_pieces(f, lo, hi, cuts):
    pts = [lo] + sorted(c for c in cuts if lo < c < hi) + [hi]
    return sum(integrate.quad(f, a, b, limit=200, epsabs=1e-13, epsrel=1e-11)[0] for a, b in zip(pts[:-1], pts[1:]))


def _law_expect(model, th, g, sigma=1.3, cuts=()):
    """E_θ g(T) by quadrature / summation over the model law (T = X, or (X - μ0)² for normal-var), split at the
    clipping ends ``cuts`` (the integrand has kinks there)."""
    if model == "exponential":
        return _quad_pieces(lambda x: th * math.exp(-th * x) * g(x), 0, np.inf, cuts)
    if model == "poisson":
        x = np.arange(0, int(th + 60 * math.sqrt(th) + 60))
        return float(np.sum(stats.poisson.pmf(x, th) * g(x.astype(float))))
    if model == "normal-mean":
        return _quad_pieces(lambda x: stats.norm.pdf(x, th, sigma) * g(x), -np.inf, np.inf, cuts)
    if model == "normal-var":
        r = [math.sqrt(c) for c in cuts if c > 0]
        return 2 * _quad_pieces(lambda x: stats.norm.pdf(x, 0, math.sqrt(th)) * g(x * x), 0, np.inf, r)


@pytest.mark.parametrize("model", MODELS)
def test_clip_moments_match_quadrature(model):
    sigma = 1.3
    for th in THETAS[model]:
        c, s = cs.reference(model, th, sigma)
        for l, u in [(_pos(model, c - 0.7 * s), c + 0.9 * s), (_pos(model, c - 2 * s), c + 3.3 * s),
                     (c + 0.1 * s, c + 0.15 * s)]:
            m1, m2 = cs.clip_moments(model, th, l, u, sigma)
            e1 = _law_expect(model, th, lambda t: np.clip(t, l, u), sigma, (l, u))
            e2 = _law_expect(model, th, lambda t: np.clip(t, l, u) ** 2, sigma, (l, u))
            assert float(m1) == pytest.approx(e1, rel=1e-7, abs=1e-10)
            assert float(m2) == pytest.approx(e2, rel=1e-7, abs=1e-10)


@pytest.mark.parametrize("model", MODELS)
def test_slope_is_derivative_and_minimal_at_an_end(model):
    sigma = 1.3
    for th in THETAS[model]:
        c, s = cs.reference(model, th, sigma)
        for l, u in [(_pos(model, c - 0.7 * s), c + 0.9 * s), (_pos(model, c - 3 * s), c + 0.2 * s),
                     (c + 1.2 * s, c + 4 * s)]:
            h = 1e-5 * max(abs(th), 1.0)
            fd = (cs.clip_moments(model, th + h, l, u, sigma)[0] - cs.clip_moments(model, th - h, l, u, sigma)[0]) / (2 * h)
            assert float(cs.slope(model, th, l, u, sigma)) == pytest.approx(abs(float(fd)), rel=1e-5)
            lo, hi = 0.5 * th if model != "normal-mean" else th - 2.0, 1.8 * th if model != "normal-mean" else th + 2.5
            grid = np.linspace(lo, hi, 801)
            inner = cs.slope(model, grid, l, u, sigma)
            ends = min(float(cs.slope(model, lo, l, u, sigma)), float(cs.slope(model, hi, l, u, sigma)))
            assert inner.min() >= ends * (1 - 1e-12)


@pytest.mark.parametrize("model", MODELS)
def test_variance_supremum_covers_a_finer_grid(model):
    for th in THETAS[model][:2]:
        lo, hi = (0.7 * th, 1.4 * th) if model != "normal-mean" else (th - 0.5, th + 0.5)
        for alpha, beta in [(-1.0, 2.0), (0.0, 0.3), (-3.0, 6.0)]:
            l, u = cs.interval(model, 0.5 * (lo + hi), alpha, beta)
            fine = np.linspace(lo, hi, 20 * cs.GRID)
            m1, m2 = cs.clip_moments(model, fine, l, u)
            vmax_fine = float(np.max(m2 - m1 * m1))
            # recover V_N from the certified risk with ε = ∞ (no noise) and the slope removed
            n = 1.0
            sN = min(float(cs.slope(model, lo, l, u)), float(cs.slope(model, hi, l, u)))
            v_cert = float(cs.certified_risk(model, n, math.inf, lo, hi, alpha, beta)) * sN ** 2 * n
            assert v_cert >= vmax_fine


CASES = [("exponential", 1000, 0.1), ("exponential", 300, 1.0), ("poisson", 1000, 0.1), ("normal-mean", 1000, 0.1),
         ("normal-var", 1000, 0.1), ("normal-var", 500, 1.0)]


@pytest.mark.parametrize("model,n,eps", CASES)
def test_certified_risk_above_simulation(model, n, eps):
    res = bc.rate("point", privacy="pure", model=model, n=n, eps=eps)
    b = next(u for u in res.uppers if u.name == "clip-stat-laplace")
    vals = dict(res.params)
    point.Point().validate(vals)
    d = point.Point().derived(vals)
    lo, hi = d["theta_lo"], d["theta_hi"]
    a, bb = b.free_parameters["alpha_clip"], b.free_parameters["beta_clip"]
    for j, th in enumerate((lo, 0.5 * (lo + hi), hi)):
        est = cs.simulate(model, n, eps, th, lo, hi, a, bb, reps=4000, seed=100 + j)
        err = (est - th) ** 2
        mse, se = err.mean(), err.std(ddof=1) / math.sqrt(err.size)
        assert mse - 3 * se <= b.value, (th, mse, se, b.value)
        assert mse <= 1.2 * b.value  # not merely within noise: the bound is an upper bound on this risk
    # the certified lower bounds stay below the simulated risk of this private estimator
    assert res.lower.value <= b.value


def test_cos2_prior_mean_abs_deviation_and_chord_bound():
    w = 0.37
    f = lambda x: math.cos(math.pi * x / (2 * w)) ** 2 / w  # noqa: E731
    assert integrate.quad(f, -w, w)[0] == pytest.approx(1.0)
    ead = integrate.quad(lambda x: abs(x) * f(x), -w, w)[0]
    assert ead == pytest.approx(w * float(point.KAPPA_COS2), rel=1e-10)
    info = {"exponential": lambda t: 1 / t ** 2, "poisson": lambda t: 1 / t, "normal-var": lambda t: 1 / (2 * t * t),
            "bernoulli": lambda t: 1 / (t * (1 - t))}
    k = float(point.KAPPA_COS2)
    for name, fi in info.items():
        for c in (0.45, 0.6):
            exact = integrate.quad(lambda x: fi(c + x) * f(x), -w, w)[0]
            chord = fi(c) + k * ((fi(c - w) + fi(c + w)) / 2 - fi(c))
            assert chord >= exact


@pytest.mark.parametrize("model", ["bernoulli", "poisson", "exponential", "normal-mean", "normal-var"])
def test_van_trees_chord_beats_old_and_stays_below_uppers(model):
    for n, eps in [(1000, 0.1), (10 ** 5, 1.0)]:
        res = bc.rate("point", privacy="pure", model=model, n=n, eps=eps)
        lows = {b.name: b.value for b in res.lowers}
        assert lows["van-trees-chord"] >= lows["van-trees"] * (1 - 1e-9)
        for u in res.uppers:
            if u.certified and np.isfinite(u.value):
                assert lows["van-trees-chord"] <= u.value


# ---------------------------------------------------------------------- the simulation check of clip-stat-laplace
FAST_CASES = [("exponential", 0.8), ("poisson", 0.7), ("poisson", 9.0), ("normal-mean", -1.0), ("normal-var", 2.0),
              ("bernoulli", 0.3)]


@pytest.mark.parametrize("model,th", FAST_CASES)
@pytest.mark.parametrize("method", ["fast", "raw"])
def test_simulated_clipped_average_has_the_exact_moments(model, th, method):
    """The average of ψ = clip(T, l, u) drawn by simulate's two samplers (counts / scaled float32 draws, and the
    model's raw sampler) has mean E ψ and variance Var ψ / n from the exact (quadrature-checked) moments."""
    n, reps, sigma, mu0 = 40, 6000, 1.3, 0.4
    l, u = cs.interval(model, th, -0.6, 1.7, sigma)
    l, u = float(l), float(u)
    rng = np.random.default_rng(7)
    if method == "fast":
        avg = cs._clipped_means_fast(model, rng, th, n, reps, l, u, sigma)
    else:
        if model == "bernoulli":
            pytest.skip("bernoulli has no clip-stat bound registered; its fast sampler is checked above")
        avg = cs._clipped_means_raw(model, rng, th, n, reps, l, u, sigma, mu0)
    m1, m2 = (float(x) for x in cs.clip_moments(model, th, l, u, sigma))
    var = (m2 - m1 * m1) / n
    assert abs(avg.mean() - m1) <= 4.5 * math.sqrt(var / reps)
    # sample variance of reps near-normal averages: relative s.d. sqrt(2/reps) ≈ 1.8%
    assert avg.var(ddof=1) == pytest.approx(var, rel=0.1)


@pytest.mark.parametrize("model", MODELS)
def test_fast_and_raw_simulation_give_the_same_risk(model):
    n, eps, reps = 400, 0.5, 3000
    res = bc.rate("point", privacy="pure", model=model, n=n, eps=eps)
    b = next(u for u in res.uppers if u.name == "clip-stat-laplace")
    vals = dict(res.params)
    point.Point().validate(vals)
    d = point.Point().derived(vals)
    lo, hi = d["theta_lo"], d["theta_hi"]
    a, bb = b.free_parameters["alpha_clip"], b.free_parameters["beta_clip"]
    errs = [(cs.simulate(model, n, eps, hi, lo, hi, a, bb, reps=reps, seed=11 + k, method=meth) - hi) ** 2
            for k, meth in enumerate(("fast", "raw"))]
    diff = errs[0].mean() - errs[1].mean()
    se = math.sqrt(errs[0].var(ddof=1) / reps + errs[1].var(ddof=1) / reps)
    assert abs(diff) <= 4 * se


@pytest.mark.parametrize("model", ["exponential", "poisson", "normal-mean", "normal-var", "bernoulli"])
@pytest.mark.parametrize("privacy", ["pure", "approx"])
def test_check_simulates_clip_stat_against_its_certified_bound(model, privacy):
    from boundcalc.app.simulate import check

    ns = ["1000", "10000"]
    r = check("point", privacy, reps=200, seed=3, ns=ns, model=model)
    assert r.passed, r.failures
    for row in r.rows:
        clip = [i for i in row.instances if i.mechanism == "clip-stat-laplace"]
        res = bc.rate("point", privacy=privacy, model=model, n=row.n, eps=1.0)
        cb = [u for u in res.uppers if u.name == "clip-stat-laplace"]
        if model == "bernoulli":
            assert not clip and not cb
            continue
        assert len(clip) == 3
        cb = cb[0]
        # the check compares with the certified bound at the solver's optimum, recomputed here from (α, β)
        vals = dict(res.params)
        point.Point().validate(vals)
        d = point.Point().derived(vals)
        again = float(cs.certified_risk(model, row.n, 1.0, d["theta_lo"], d["theta_hi"], cb.free_parameters["alpha_clip"],
                                        cb.free_parameters["beta_clip"], 1.0))
        assert again == pytest.approx(cb.value, rel=1e-9)
        for inst in clip:
            assert inst.upper == pytest.approx(cb.value, rel=1e-12)
            assert inst.ci_low <= inst.upper
            assert inst.risk <= 1.5 * inst.upper  # the simulated risk sits below its certified upper bound
        assert "clip-stat-laplace" in r.to_text()
        # the row's worst case and slope are the row mechanism's (subsample and aggregate) only
        assert row.worst.upper is None


def test_check_flags_an_instance_above_its_own_upper_bound():
    """The per-instance upper bound is enforced: a row whose other-mechanism instance exceeds its own bound fails,
    even when the row's bound is larger."""
    from boundcalc.app.simulate import CheckRow, InstanceRisk

    ok = InstanceRisk("theta=1", 1.0, 0.9, 1.1)
    other = InstanceRisk("theta=1", 1.0, 0.9, 1.1, upper=0.5, mechanism="clip-stat-laplace")
    row = CheckRow(100, None, 2.0, [ok, other])
    assert any("clip-stat-laplace" in f for f in row.failures())
    row2 = CheckRow(100, None, 2.0, [ok, InstanceRisk("theta=1", 1.0, 0.9, 1.1, upper=1.0, mechanism="x")])
    assert not row2.failures()
