"""Derived TV levels are rounded up (boundcalc.privacy_relations.relations.privacy_levels): the nearest float of
tanh(ε/2) and the like can sit below the exact level, the unsafe side for the lower bounds that use it."""
from __future__ import annotations

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
