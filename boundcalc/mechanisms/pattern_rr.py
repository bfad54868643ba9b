"""k-ary randomized response on the whole pattern x ∈ {0,1}^d (docs/problems/sparse-bernoulli.md, "pattern-rr").

The mechanism (Warner 1965; k-RR as in Kairouz, Bonawitz & Ramage 2016, "Discrete distribution estimation under
local privacy", with the 2^d binary patterns as the alphabet): a user with record x ∈ {0,1}^d reports Y = x with
probability p = e^ε/(e^ε + 2^d - 1) and otherwise a pattern drawn uniformly from the 2^d - 1 others (each with
probability q = 1/(e^ε + 2^d - 1)). Every output has probability p or q under every input, so the likelihood
ratio is at most p/q = e^ε: ε-LDP.

Unbiased estimator. Each coordinate is 1 in 2^{d-1} patterns, so
E[Y_j | x] = q·2^{d-1} + (p - q) x_j (the patterns other than x contribute 2^{d-1} - x_j ones). With
a = p - q and c = q 2^{d-1}: θ̂_j = (Ȳ_j - c)/a is unbiased for θ_j.

Risk. Y_j is a Bernoulli variable with mean μ_j = c + aθ_j, so
E‖θ̂ - θ‖² = Σ_j μ_j(1 - μ_j)/(n a²). h(x) = x(1 - x) is concave and increasing on [0, 1/2], so under
Σθ_j <= s (Jensen, then monotonicity) Σ_j h(μ_j) <= d h(μ̄) <= d h(min{1/2, c + a s/d}), μ̄ the mean of the μ_j:

    risk <= d h(min{1/2, c + a s/d}) / (n a²).

With a = 1, c = 0 this is the sample mean's bound d h(min{1/2, s/d})/n = min{s(1 - s/d), d/4}/n; as ε → ∞,
a → 1 and c → 0, so the bound tends to the non-private one (the reason for this mechanism: randomized
response bit by bit, at level ε/(2K) per bit, keeps a noise term of order d/sinh²(ε/(4K)) at every fixed ε).

Floating point: with u = 2^d e^{-ε} and D = 1 + u - e^{-ε} = (e^ε + 2^d - 1)/e^ε,
a = (1 - e^{-ε})/D and c = (u/2)/D, finite while d log 2 - ε <= 700 (the bound's condition).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ..core import symbolic as S

#: the bound needs u = 2^d e^{-ε} in float range: d log 2 - ε <= LOG_U_MAX
LOG_U_MAX = 700.0


def variance_bound(a, c, n, d, s):
    """d h(min{1/2, c + a s/d})/(n a²), h(x) = x(1 - x): the risk of (Ȳ - c)/a when Y_j ~ Bern(c + aθ_j)
    independently over users and Σθ_j <= s (a = 1, c = 0: the sample mean). Works on sympy and float inputs."""
    numeric = all(isinstance(v, (int, float)) for v in (a, c, n, d, s))
    mn = min(0.5, c + a * s / d) if numeric else S.Min(sp.Rational(1, 2), c + a * s / d)
    return d * mn * (1 - mn) / (n * a ** 2)


def coefficients_expr(eps=S.eps, d=S.d):
    """(a, c) of the debiasing, symbolic: a = (1 - e^{-ε})/D, c = (u/2)/D, u = exp(d log 2 - ε), D = 1 + u - e^{-ε}."""
    u = sp.exp(d * sp.log(2) - eps)
    D = 1 + u - sp.exp(-eps)
    return -S.expm1(-eps) / D, (u / 2) / D


def risk_expr(n=S.n, eps=S.eps, d=S.d, s=sp.Symbol("s", positive=True)):
    a, c = coefficients_expr(eps, d)
    return variance_bound(a, c, n, d, s)


def _log_others(d: int) -> float:
    """log(2^d - 1) without overflow."""
    return d * math.log(2.0) + math.log(-math.expm1(-d * math.log(2.0)))


def change_probability(eps: float, d: int) -> float:
    """P(Y != x) = (2^d - 1)/(e^ε + 2^d - 1) = u'/(1 + u'), u' = (2^d - 1)e^{-ε}, computed in logs."""
    log_u = _log_others(d) - eps
    if log_u > 0:
        return 1.0 / (1.0 + math.exp(-log_u))
    v = math.exp(log_u)
    return v / (1.0 + v)


def coefficients(q_change: float, d: int) -> tuple[float, float]:
    """(a, c) of the implemented channel: keep probability p = 1 - q_change, each other pattern q = q_change/(2^d-1)."""
    q = math.exp(math.log(q_change) - _log_others(d)) if q_change > 0 else 0.0
    return (1.0 - q_change) - q, q_change / (2.0 * -math.expm1(-d * math.log(2.0)))


def log_ratio(q_change: float, d: int) -> float:
    """log(p/q) of the implemented channel, p = 1 - q_change, q = q_change/(2^d - 1) (the privacy level it has)."""
    if q_change <= 0.0:
        return math.inf
    return math.log1p(-q_change) + _log_others(d) - math.log(q_change)


def privatize(x: np.ndarray, q_change: float, rng: np.random.Generator) -> np.ndarray:
    """Rows of 0/1 records -> reports: a row is kept w.p. 1 - q_change, else replaced by a uniformly random other
    pattern (uniform on {0,1}^d, redrawn while equal to the record: exactly uniform on the 2^d - 1 others)."""
    x = np.asarray(x).astype(np.int8)
    y = x.copy()
    change = np.flatnonzero(rng.random(x.shape[0]) < q_change)
    while change.size:
        draw = rng.integers(0, 2, size=(change.size, x.shape[1]), dtype=np.int8)
        y[change] = draw
        change = change[np.all(draw == x[change], axis=1)]
    return y


def simulate_means(theta, n: int, q_change: float, rng: np.random.Generator, reps: int) -> np.ndarray:
    """(reps, d) report means Ȳ for X_ij ~ Bern(θ_j) independently, user by user (the privatize code)."""
    theta = np.asarray(theta, float)
    out = np.empty((int(reps), theta.size))
    for r in range(int(reps)):
        x = (rng.random((int(n), theta.size)) < theta).astype(np.int8)
        out[r] = privatize(x, q_change, rng).mean(axis=0)
    return out
