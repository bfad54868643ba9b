"""The largest privacy level a local randomizer is released at, and its small probabilities computed directly
(docs/methods/local-randomizers.md, "Very large ε").

In float64, e^ε/(e^ε + 1) rounds to 1.0 from ε ≈ 36.7 (randomized response would then never flip: not private at
any level), and e^ε overflows from ε ≈ 709.8. Every local randomizer therefore releases each of its randomized
responses at a level of at most :data:`EPS_CAP`: a mechanism of ``k`` releases at ε/k (basic composition) runs at
:func:`release_level` (ε, k) = min{ε, k·EPS_CAP}. A mechanism that is ε'-LDP with ε' <= ε is ε-LDP, so the guarantee
is stated (and checked) at the claimed ε; the risk is that of the mechanism at the released level (the runnable
mechanisms of ``rate`` report the certified upper bound evaluated there, boundcalc.app.api).

The probability of the unlikely answer, 1/(e^ℓ + 1), is taken from :func:`flip_probability` (never as 1 minus the
likely one, which loses all its digits near ℓ = 36), so the likelihood ratios stay exact to a few roundings.
"""
from __future__ import annotations

import math

#: the largest level of one randomized response (below ε ≈ 36.7, where e^ε/(e^ε + 1) rounds to 1 in float64); the
#: block OUE risk bound is computed at this level too (boundcalc.mechanisms.block_oue)
EPS_CAP = 36.0


def release_level(eps: float, releases: float = 1) -> float:
    """The level a mechanism claimed at ``eps`` is released at: min{ε, releases · EPS_CAP}, ``releases`` the number
    of randomized responses at level ε/releases it composes (math.inf: no randomized response, as for Laplace
    noise, whose calibration is exact at every ε)."""
    eps = float(eps)
    return eps if releases == math.inf else min(eps, float(releases) * EPS_CAP)


def flip_probability(level: float) -> float:
    """1/(e^ℓ + 1) = e^{-ℓ}/(1 + e^{-ℓ}), the probability of the unlikely answer of randomized response at level ℓ
    (>= 0), computed without cancellation (its complement is e^ℓ/(e^ℓ + 1) = 1 - this, only ever rounded)."""
    t = math.exp(-float(level))
    return t / (1.0 + t)
