"""Consistency (hypothesis): certified lower <= upper, lower monotone as the problem gets harder, upper never
above the trivial estimator's risk, for support, point models and densities."""
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import boundcalc as bc

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOL = 1e-3  # the solver's optimum is a grid search: allow this relative slack in monotonicity


def _vals(problem, privacy, **kw):
    r = bc.rate(problem, privacy, **kw)
    return r.lower.value if r.lower else 0.0, r.upper.value


@SETTINGS
@given(n=st.integers(5, 10 ** 8), eps=st.floats(0.01, 5.0), theta0=st.floats(0.1, 10.0),
       loss=st.sampled_from(["abs", "squared"]), privacy=st.sampled_from(["pure", "approx", "tv", "kl"]))
def test_support_consistency(n, eps, theta0, loss, privacy):
    if privacy in ("tv", "kl"):
        eps = min(eps, 0.9)
    lo, up = _vals("support", privacy, n=n, eps=eps, theta0=theta0, loss=loss)
    assert 0 <= lo <= up
    trivial = theta0 / 2 if loss == "abs" else theta0 ** 2 / 4
    assert up <= trivial * (1 + 1e-12)
    # harder: fewer samples, smaller privacy level
    lo_n, _ = _vals("support", privacy, n=max(1, n // 3), eps=eps, theta0=theta0, loss=loss)
    lo_e, _ = _vals("support", privacy, n=n, eps=eps / 2, theta0=theta0, loss=loss)
    assert lo_n >= lo * (1 - TOL) and lo_e >= lo * (1 - TOL)


@SETTINGS
@given(n=st.integers(20, 10 ** 7), eps=st.floats(0.02, 3.0),
       model=st.sampled_from(["bernoulli", "poisson", "exponential", "normal-mean", "normal-var"]),
       privacy=st.sampled_from(["none", "pure", "approx"]))
def test_point_consistency(n, eps, model, privacy):
    kw = {} if privacy == "none" else {"eps": eps}
    r = bc.rate("point", privacy, n=n, model=model, **kw)
    assert r.lower is not None and r.lower.value <= r.upper.value
    const = next(u for u in r.uppers if u.name == "constant-neighbourhood")
    assert r.upper.value <= const.value * (1 + 1e-12)
    if privacy != "none":
        r2 = bc.rate("point", privacy, n=n, model=model, eps=eps / 2)
        assert r2.lower.value >= r.lower.value * (1 - TOL)


@SETTINGS
@given(n=st.integers(2, 10 ** 8), eps=st.floats(0.01, 5.0), L=st.floats(0.05, 20.0),
       privacy=st.sampled_from(["none", "pure", "local"]))
def test_density_consistency(n, eps, L, privacy):
    kw = {} if privacy == "none" else {"eps": eps}
    r = bc.rate("density", privacy, n=n, L=L, **kw)
    assert r.lower is not None and r.lower.certified
    assert r.lower.value <= r.upper.value
    assert r.upper.value <= L ** 2 / 12 * (1 + 1e-12)
    r_l = bc.rate("density", privacy, n=n, L=L * 1.5, **kw)  # a larger class is harder
    assert r_l.lower.value >= r.lower.value * (1 - TOL)
    r_n = bc.rate("density", privacy, n=max(1, n // 4), L=L, **kw)
    assert r_n.lower.value >= r.lower.value * (1 - TOL)
