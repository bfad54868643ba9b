"""Point models: the TV slope K of the threshold Bayes bound, and the bound against concrete estimators."""
import math

import numpy as np
import pytest
import sympy as sp
from scipy import integrate, stats

import boundcalc as bc
from boundcalc.core import symbolic
from boundcalc.problems import point

LOW = sp.Symbol("low", positive=True)


def _k(model, low, sigma=1.0):
    expr = point.tv_slope_bound(model, LOW).subs(point.SIG, sigma)
    return float(symbolic.numpy_lambdify([LOW], expr)(low))


def _half_mean_abs_score(model, th, sigma=1.0):
    """(1/2) E_θ|∂_θ log p_θ(X)| by direct summation / quadrature (independent of the closed forms)."""
    if model == "bernoulli":
        return 0.5 * (th * abs(1 / th) + (1 - th) * abs(-1 / (1 - th)))
    if model == "poisson":
        x = np.arange(0, int(th + 60 * math.sqrt(th) + 60))
        return 0.5 * float(np.sum(stats.poisson.pmf(x, th) * np.abs(x / th - 1)))
    if model == "exponential":
        f = lambda x: th * math.exp(-th * x) * abs(1 / th - x)  # noqa: E731
        return 0.5 * (integrate.quad(f, 0, 1 / th)[0] + integrate.quad(f, 1 / th, np.inf)[0])
    if model == "normal-mean":
        return 0.5 * integrate.quad(lambda x: stats.norm.pdf(x, th, sigma) * abs((x - th) / sigma ** 2),
                                    -np.inf, np.inf)[0]
    if model == "normal-var":
        return 0.5 * integrate.quad(lambda x: stats.norm.pdf(x, 0, math.sqrt(th))
                                    * abs((x * x - th) / (2 * th * th)), -np.inf, np.inf)[0]


def _tv(model, a, b, sigma=1.0):
    if model == "bernoulli":
        return abs(a - b)
    if model == "poisson":
        x = np.arange(0, int(max(a, b) + 80 * math.sqrt(max(a, b)) + 80))
        return 0.5 * float(np.sum(np.abs(stats.poisson.pmf(x, a) - stats.poisson.pmf(x, b))))
    if model == "exponential":
        return 0.5 * integrate.quad(lambda x: abs(a * math.exp(-a * x) - b * math.exp(-b * x)), 0, np.inf)[0]
    if model == "normal-mean":
        return 2 * stats.norm.cdf(abs(a - b) / (2 * sigma)) - 1
    if model == "normal-var":
        return 0.5 * integrate.quad(lambda x: abs(stats.norm.pdf(x, 0, math.sqrt(a))
                                                  - stats.norm.pdf(x, 0, math.sqrt(b))), -np.inf, np.inf)[0]


GRID = {"bernoulli": [0.05, 0.3, 0.5, 0.9], "poisson": [0.2, 0.99, 1.0, 1.5, 2.0, 7.3, 40.0],
        "exponential": [0.1, 1.0, 3.0], "normal-mean": [-2.0, 0.0, 1.0], "normal-var": [0.2, 1.0, 4.0]}


@pytest.mark.parametrize("model", list(GRID))
def test_tv_slope_is_half_mean_abs_score_and_decreasing(model):
    sigma = 1.7
    for th in GRID[model]:
        direct = _half_mean_abs_score(model, th, sigma)
        assert _k(model, th, sigma) == pytest.approx(direct, rel=1e-6)
        # the supremum over [th, ∞) is attained at th: sample larger values
        for th2 in (th * 1.01 + 1e-3, th + 0.37, th * 2 + 0.5):
            if model == "bernoulli" and th2 >= 1:
                continue
            assert _half_mean_abs_score(model, th2, sigma) <= _k(model, th, sigma) * (1 + 1e-9)


@pytest.mark.parametrize("model", list(GRID))
def test_tv_slope_bounds_exact_tv(model):
    for a in GRID[model]:
        for gap in (1e-3, 0.1, 0.4):
            b = a + gap
            if model == "bernoulli" and b >= 1:
                continue
            assert _tv(model, a, b) <= _k(model, a) * gap * (1 + 1e-7) + 1e-12


@pytest.mark.parametrize("n,eps,theta", [(20, 0.5, 0.3), (50, 1.0, 0.5), (200, 0.1, 0.2), (1000, 2.0, 0.5)])
def test_bernoulli_lower_below_clipped_laplace_mean(n, eps, theta):
    """θ̂ = clip(X̄ + Laplace(1/(nε)), 0, 1) is ε-DP with risk <= θ'(1-θ')/n + 2/(nε)² at every θ'."""
    res = bc.rate("point", "pure", model="bernoulli", n=n, eps=eps, theta=theta)
    v = {"n": n, "model": "bernoulli", "theta": theta, "lam": "auto", "sigma": 1.0, "mu0": 0.0, "radius": "auto"}
    point.Point().validate(v)
    d = point.Point().derived(v)
    lo_n, hi_n = d["theta_lo"], d["theta_hi"]
    p = min(max(0.5, lo_n), hi_n)
    risk = p * (1 - p) / n + 2 / (n * eps) ** 2
    for b in res.lowers:
        if b.certified and b.value is not None:
            assert b.value <= risk, b.name


@pytest.mark.parametrize("model", list(GRID))
@pytest.mark.parametrize("n,eps", [(50, 0.1), (1000, 1.0), (10 ** 5, 0.1)])
def test_threshold_lower_below_certified_upper(model, n, eps):
    res = bc.rate("point", "pure", model=model, n=n, eps=eps)
    thr = next(b for b in res.lowers if b.name == "threshold-bayes")
    assert thr.value <= res.upper.value


@pytest.mark.parametrize("model", list(GRID))
@pytest.mark.parametrize("n,eps", [(1000, 0.1), (1000, 1.0), (20000, 0.3)])
def test_local_clip_upper_covers_exact_mse(model, n, eps):
    """The local-clip certified bound at the solver's k is >= the exact MSE (closed-form block moments) of the
    mechanism it describes (clip to [a', b'], Laplace((b'-a')/(kε))) at θ_lo, θ and θ_hi."""
    from boundcalc.mechanisms import subsample_aggregate as sa

    res = bc.rate("point", "pure", model=model, n=n, eps=eps)
    ub = next(u for u in res.uppers if u.name == "local-clip-laplace")
    k = int(ub.free_parameters["blocks"])
    v = {"n": n, "model": model, "theta": "auto", "lam": "auto", "sigma": 1.0, "mu0": 0.0, "radius": "auto"}
    point.Point().validate(v)
    d = point.Point().derived(v)
    m = point.get_point_model(model)
    extra = {"sigma": 1.0} if m.name == "normal-mean" else {}
    t = n // k
    vt = float(sp.lambdify([point.LO, point.HI, point.SIG], point.variance_max_expr(m.name, sp.Integer(t)))(
        d["theta_lo"], d["theta_hi"], 1.0))
    a2 = max(d["a"], d["theta_lo"] - point.Z_CLIP * math.sqrt(vt))
    b2 = min(d["b"], d["theta_hi"] + point.Z_CLIP * math.sqrt(vt))
    for th in (d["theta_lo"], float(v["theta"]), d["theta_hi"]):
        if not (m.natural_space[0] < th < m.natural_space[1]):
            continue
        exact = float(sa.mse_exact(m.name, n, np.array([k]), eps, th, a2, b2, extra)[0])
        assert exact <= ub.value * (1 + 1e-9)
