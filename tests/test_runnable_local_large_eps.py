"""Runnable local randomizers at very large ε (docs/methods/local-randomizers.md, "Very large ε").

In float64, e^ε/(e^ε+1) rounds to 1.0 from ε ≈ 36.7 and e^ε overflows from ε ≈ 709.8: before the fix PrivUnit's check
failed from ε = 37, one-bit, randomized response, k-RR and PatternRR had infinite log ratios, density subset
selection raised OverflowError and ℓ2 sampling ValueError. Every randomizer is now released at
``release_level(ε, k) = min{ε, k·36}`` (k randomized responses composed), its guarantee is the claimed ε, and the
mechanism of ``rate`` is rebuilt at the released level, so its certified risk is the bound there.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from boundcalc.mechanisms import local_runnable as LR
from boundcalc.mechanisms.large_eps import EPS_CAP, flip_probability, release_level
from boundcalc.mechanisms.runnable import Guarantee

from test_runnable_local import CONFIGS, mechanisms

LARGE = (37.0, 40.0, 75.0, 800.0, 1000.0)
#: the verdict's own allowance for the rounding of the probabilities (a relative 1e-9 on e^ε)
SLACK = math.log1p(LR.RATIO_MARGIN)


def _records(mech, kw, rng, n=40):
    d = int(kw.get("d", 1))
    if mech.problem == "multinomial":
        return rng.integers(0, d, n)
    if mech.problem == "density":
        return rng.random(n)
    if mech.problem == "sparse-bernoulli":
        return (rng.random((n, d)) < 0.2).astype(float)
    x = rng.uniform(-0.5, 0.5, (n, d))
    if mech.problem == "linear":
        x /= np.linalg.norm(x, axis=1, keepdims=True) if kw["geometry"] == "l2" else np.abs(x).max(axis=1, keepdims=True)
        x *= 0.9 * kw["M"]
    return x[:, 0] if d == 1 and mech.problem == "mean" else x


@pytest.mark.parametrize("eps", LARGE)
@pytest.mark.parametrize("problem, kw", CONFIGS)
def test_every_mechanism_stays_private_and_runs_at_large_eps(problem, kw, eps):
    kw = {**kw, "eps": eps}
    rng = np.random.default_rng(1)
    for u, mech in mechanisms(problem, **kw):
        assert mech.guarantee.eps == eps and mech.eps <= eps, u.name
        v = mech.check_privacy()
        assert v["passed"] and math.isfinite(v["log_ratio"]) and v["log_ratio"] <= eps + SLACK, (u.name, v)
        # the certified risk is that of what runs: the bound at the released level, at least the bound at ε
        assert mech.certified_risk >= u.value * (1 - 1e-9), (u.name, mech.certified_risk, u.value)
        if mech.eps < eps:
            assert any("released at ε'" in note for note in mech.notes), u.name
        est = mech.estimate(mech.privatize_all(_records(mech, kw, rng), rng))
        assert np.all(np.isfinite(np.asarray(est, float))), (u.name, est)


def test_the_rebuilt_mechanism_is_the_one_of_the_released_level():
    """At ε = 800 PrivUnit (one release) runs at 36: the same bound's mechanism and value as rate at ε = 36."""
    at36 = {u.name: (u, m) for u, m in mechanisms("mean", n=500, d=3, r=1.0, k=2.0, eps=36.0, ball="l2")}
    for u, mech in mechanisms("mean", n=500, d=3, r=1.0, k=2.0, eps=800.0, ball="l2"):
        if u.name in ("privunit", "l2-sampling"):
            u36, m36 = at36[u.name]
            assert mech.eps == EPS_CAP and mech.certified_risk == u36.value
            assert mech.parameters == m36.parameters


def test_release_level_and_flip_probability():
    assert release_level(800.0) == EPS_CAP and release_level(20.0) == 20.0
    assert release_level(800.0, 3) == 3 * EPS_CAP and release_level(800.0, math.inf) == 800.0
    assert flip_probability(36.0) == pytest.approx(1 / (math.exp(36.0) + 1), rel=1e-15)
    assert flip_probability(1000.0) == 0.0 and flip_probability(0.0) == 0.5


@pytest.mark.parametrize("eps", (20.0, 800.0))
def test_privacy_check_fails_when_the_level_is_understated_at_large_eps(eps):
    """Built at a large ε, every kind of check passes at the claim and fails when the claim is below the level
    actually released (0.9 of it)."""
    common = dict(problem="p", label="x", name="x", n=10, certified_risk=None, parameters={})
    built = [LR.DiscreteRandomizer("krr", 5, eps, **common), LR.DiscreteRandomizer("subset", 40, eps, s=5, **common),
             LR.DiscreteRandomizer("rr", 30, eps, **common), LR.DiscreteRandomizer("rr", 4, eps, **common),
             LR.ScalarRandomizer("one-bit", 1.0, eps, **common), LR.ScalarRandomizer("levels-rr", 1.0, eps, m=2, **common),
             LR.VectorRandomizer("privunit", 1.0, "l2", 5, eps, **common),
             LR.VectorRandomizer("l2-sampling", 1.0, "l2", 5, eps, **common),
             LR.VectorRandomizer("linf-sampling", 1.0, "linf", 4, eps, **common),
             LR.VectorRandomizer("linf-sampling", 1.0, "linf", 14, eps, **common),
             LR.VectorRandomizer("coordinate-subsampling", 1.0, "linf", 4, eps, k=2, **common),
             LR.PatternRRRandomizer(6, 2.0, eps, **common)]
    for m in built:
        v = m.check_privacy()
        assert v["passed"] and math.isfinite(v["log_ratio"]) and v["log_ratio"] <= eps + SLACK, (type(m).__name__, v)
        m.guarantee = Guarantee("local", 0.9 * m.eps, None, m.guarantee.neighbouring)
        assert not m.check_privacy()["passed"], (type(m).__name__, getattr(m, "family", ""))
