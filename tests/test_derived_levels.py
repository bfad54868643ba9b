"""Derived TV levels are rounded up (boundcalc.privacy_relations.relations.privacy_levels): the nearest float of
tanh(ε/2) and the like can sit below the exact level, the unsafe side for the lower bounds that use it."""
from __future__ import annotations

from fractions import Fraction
import math

import mpmath
import numpy as np

from boundcalc.privacy_relations import relations


def _exact(priv, eps, delta):
    with mpmath.workdps(50):
        e = mpmath.mpf(eps)
        if priv in ("pure", "smooth"):
            return mpmath.tanh(e / 2)
        if priv == "approx":
            return min(mpmath.mpf(1), (mpmath.expm1(e) + 2 * mpmath.mpf(delta)) / (mpmath.exp(e) + 1))
        return min(mpmath.sqrt(e / 2), mpmath.sqrt(-mpmath.expm1(-e)))  # kl


def test_derived_tv_level_never_below_the_exact_level():
    rng = np.random.default_rng(3)
    eps_values = np.concatenate([10 ** rng.uniform(-9, 1.7, 400), [1e-8, 0.1, 1.0, 2e-8, 0.3, 5.0]])
    below_nearest = 0
    for priv in ("pure", "smooth", "approx", "kl"):
        for eps in eps_values:
            eps = float(eps)
            delta = float(10 ** rng.uniform(-12, -1)) if priv == "approx" else None
            vals = {"privacy": priv, "eps": eps, **({"delta": delta} if delta is not None else {})}
            level = relations.privacy_levels(vals)["alpha_TV"]
            exact = _exact(priv, eps, delta)
            assert mpmath.mpf(level) >= exact, (priv, eps, delta, level, exact)
            assert level <= float(exact) * (1 + 1e-13) + 5e-324  # and only just above it
            nearest = float(relations.tv_level(priv, eps, delta))
            below_nearest += mpmath.mpf(nearest) < exact
    assert below_nearest > 0  # the float64 level itself does fall below the exact one somewhere (the hole)


def test_tv_model_level_is_exact():
    assert relations.privacy_levels({"privacy": "tv", "eps": 0.3})["alpha_TV"] == 0.3


def test_subsample_size_is_the_exact_floor():
    from fractions import Fraction

    from boundcalc.methods.subsample_size import floor_product, subsample_level

    assert 0.03 * 300000 == 9000.0 and floor_product(0.03, 300000.0) == 8999.0  # the float product rounds up
    assert floor_product(0.99, 1000.0) == 989.0 and floor_product(0.5, 1000.0) == 500.0
    rng = np.random.default_rng(5)
    for _ in range(3000):
        a = float(rng.choice([rng.uniform(0, 1), round(float(rng.uniform(0, 1)), int(rng.integers(1, 4)))]))
        n = float(rng.choice([rng.integers(1, 10**7), 10 ** int(rng.integers(1, 12))]))
        assert floor_product(a, n) == math.floor(Fraction(a) * Fraction(n))
        m = float(rng.integers(1, int(n) + 1))
        lvl = subsample_level(a, n, m)
        exact = min(Fraction(1), Fraction(a) * Fraction(n) / Fraction(m))
        assert Fraction(lvl) <= exact and (lvl == 1.0) == (exact == 1)


def test_tv_subsample_uppers_certified_where_the_float_product_rounds_up():
    """0.03 · 300000 rounds to 9000 in float64: both subsample uppers of the tv mean are certified there (their float64
    and 40-digit values agree) and the shrunk subsample's value is the one of m = 8999."""
    from boundcalc.app import api

    res = api.rate("mean", "tv", n=300000, d=200, k=2.0, alpha=0.03)
    ups = {u.name: u for u in res.uppers}
    for name in ("subsample-shrunk-tv", "subsample-gauss-tv"):
        assert ups[name].certified, (name, ups[name].extra.get("why_not_certified"))
    assert ups["subsample-shrunk-tv"].value >= 1.0 / (1 + math.sqrt(8999)) ** 2
    assert res.upper.value < 1.2e-4


def test_subsample_level_the_same_float_on_both_paths():
    """The high-precision path of SubsampleLevel returns the float64 level the mechanism runs at (rounded down below
    1), not the exact quotient: near 1 the Gaussian noise term erfinv(level)^-2 is ill-conditioned, and at α = 1e-6,
    n = 1e6, m = 1 the exact quotient 1 - 4.5e-17 against the float 1 - 1.1e-16 moved subsample-gauss-tv by 1e-3, so
    it was listed as not certified."""
    import mpmath

    import boundcalc as bc
    from boundcalc.methods.subsample_size import _level_mpmath, subsample_level

    for a, n, m in ((1e-6, 1e6, 1.0), (0.03, 3e5, 9000.0), (0.5, 1e3, 7.0), (0.2, 10.0, 3.0)):
        f = subsample_level(a, n, m)
        assert _level_mpmath(mpmath.mpf(a), mpmath.mpf(n), mpmath.mpf(m)) == f
        assert f <= min(1, Fraction(a) * Fraction(n) / Fraction(m))
    res = bc.rate("mean", "tv", n=1e6, eps=1e-6, d=1000, r=1e6, k=2)
    up = next(b for b in res.uppers if b.name == "subsample-gauss-tv")
    assert up.certified, up.note
