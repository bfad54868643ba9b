"""The staircase mechanism for one real query (Geng & Viswanath, "The optimal noise-adding mechanism in differential
privacy", IEEE Trans. Information Theory 62(2), 2016; arXiv 1212.1186): closed-form moments, the density, the optimal step
parameter γ, and a vectorised seeded sampler. Docs: docs/methods/staircase.md.

The noise, for a query of sensitivity Δ (|q(D) - q(D')| <= Δ for neighbours), level ε, b = e^{-ε} and a step
parameter γ ∈ (0, 1]: the symmetric density

    f(x) = a b^k        for |x| ∈ [kΔ, (k+γ)Δ),
    f(x) = a b^{k+1}    for |x| ∈ [(k+γ)Δ, (k+1)Δ),          k = 0, 1, 2, ...,
    a = (1 - b) / (2Δ(γ + (1-γ)b)).

Normalisation: each step k carries mass 2 a b^k Δ (γ + (1-γ)b) (both signs), and Σ_k b^k = 1/(1-b).

Privacy (every γ ∈ (0, 1], every shift |t| <= Δ): f(x) = a b^{s(|x|/Δ)} with s(y) = ⌊y⌋ + 1{y - ⌊y⌋ >= γ}, a
non-decreasing step function with s(y + 1) = s(y) + 1. For |t| <= Δ, ||x + t| - |x|| <= Δ, so both |x|/Δ and
|x + t|/Δ lie in an interval [y, y + 1], where s takes the values s(y) and s(y) + 1 only: the exponents differ by
at most 1 and f(x)/f(x + t) <= 1/b = e^ε. So q(D) + W is ε-DP whatever γ is (γ = 1: the "geometric staircase"
with steps of width Δ; ε-DP does not hold for shifts larger than Δ). Because any γ is valid, γ can be tuned
freely; :func:`optimal_gamma` is its exact minimiser for E W², and a risk bound that is non-decreasing in E W² (the
projected mean's) is smallest there for every value of its other parameters, so no search over γ is needed.

Moments (Δ = 1; multiply E|W| by Δ and E W² by Δ²). With the geometric sums Σ b^k = 1/(1-b), Σ k b^k = b/(1-b)²,
Σ k² b^k = b(1+b)/(1-b)³ and the integrals over one step

    ∫_k^{k+γ} x dx = γk + γ²/2,                ∫_{k+γ}^{k+1} x dx = (1-γ)k + (1-γ²)/2,
    ∫_k^{k+γ} x² dx = γk² + γ²k + γ³/3,         ∫_{k+γ}^{k+1} x² dx = (1-γ)k² + (1-γ²)k + (1-γ³)/3,

E W² = 2a Σ_k b^k [∫_k^{k+γ} x² + b ∫_{k+γ}^{k+1} x²] gives, with g = γ + (1-γ)b (so 2a = (1-b)/g),

    E W²/Δ² = b(1+b)/(1-b)² + [b(γ² + b(1-γ²))/(1-b) + (γ³ + b(1-γ³))/3] / g,
    E|W|/Δ  = b/(1-b) + (γ² + b(1-γ²)) / (2g).

Every term is positive (no cancellation), and 1 - b = -expm1(-ε) is exact for small ε, so the expression
evaluates to full precision in float64 and in mpmath alike. At γ = 1 (steps of width Δ) E W²/Δ² =
b(1+b)/(1-b)² + b/(1-b) + 1/3; as ε -> 0 the ratio to the Laplace mechanism's 2Δ²/ε² tends to 1, and for large ε
the optimum E W² ≈ (b/2)^{2/3} Δ² (γ ≈ (b/2)^{1/3}) is exponentially smaller than 2Δ²/ε² (Geng & Viswanath:
Θ(Δ² e^{-2ε/3})).

Optimal γ for E W²: Geng & Viswanath (2016) give the minimiser for the cost x² in closed form,
γ* = -b/(1-b) + (b - 2b² + 2b⁴ - b⁵)^{1/3} / (2^{1/3}(1-b)²); with b - 2b² + 2b⁴ - b⁵ = b(1-b)³(1+b) this is
γ* = ((b(1+b)/2)^{1/3} - b)/(1-b) (tested against a numerical minimisation of the quadrature second moment).
"""
from __future__ import annotations

import math

import numpy as np


# ------------------------------------------------------------------ closed forms: one body, two number systems
# Each formula is written once, over a namespace of exp, expm1 and cube root: sympy's (the certified path, which
# evaluates in float64 and mpmath) or math's (float64, for the sampler, the check and the tests).

def _sympy_ops():
    import sympy as sp

    from ..core import symbolic as S

    return sp.exp, S.expm1, sp.cbrt


def _math_ops():
    return math.exp, math.expm1, lambda x: x ** (1 / 3)


def _second_moment(gamma, eps, ops):
    exp, expm1, _ = ops
    b = exp(-eps)
    omb = -expm1(-eps)  # 1 - b, exact for small ε
    g = gamma + (1 - gamma) * b
    return (b * (1 + b) / omb ** 2
            + (b * (gamma ** 2 + b * (1 - gamma ** 2)) / omb + (gamma ** 3 + b * (1 - gamma ** 3)) / 3) / g)


def _first_moment(gamma, eps, ops):
    exp, expm1, _ = ops
    b = exp(-eps)
    g = gamma + (1 - gamma) * b
    return b / -expm1(-eps) + (gamma ** 2 + b * (1 - gamma ** 2)) / (2 * g)


def _optimal_gamma(eps, ops):
    exp, _, cbrt = ops
    b = exp(-eps)
    h = cbrt((1 + b) / 2)
    return exp(-eps / 3) * (1 + 2 * b) / (2 * (h ** 2 + h * exp(-2 * eps / 3) + exp(-4 * eps / 3)))


def second_moment_expr(gamma, eps):
    """E W² / Δ² of the staircase noise at step parameter ``gamma`` and level ``eps`` (sympy; see the module
    docstring for the derivation). Evaluates in float64 and mpmath (exp, expm1, rational arithmetic only)."""
    return _second_moment(gamma, eps, _sympy_ops())


def first_moment_expr(gamma, eps):
    """E|W| / Δ of the staircase noise (sympy; module docstring)."""
    return _first_moment(gamma, eps, _sympy_ops())


def optimal_gamma_expr(eps):
    """γ*(ε), the minimiser of E W² over γ (sympy), in a form without cancellation: with b = e^{-ε},
    u = b(1+b)/2 and h = ((1+b)/2)^{1/3}, γ* = (u^{1/3} - b)/(1-b) and u - b³ = b(1-b)(1+2b)/2, so
    γ* = b(1+2b)/(2(u^{2/3} + u^{1/3}b + b²)) = e^{-ε/3}(1+2b)/(2(h² + h e^{-2ε/3} + e^{-4ε/3})) (divide by b^{2/3}):
    1/2 at ε -> 0, (b/2)^{1/3} for large ε, and no float64 underflow of b^{2/3} before b itself underflows."""
    return _optimal_gamma(eps, _sympy_ops())


def second_moment(gamma: float, eps: float, sens: float = 1.0) -> float:
    """E W² in float64 (the formula of :func:`second_moment_expr`)."""
    return sens ** 2 * _second_moment(gamma, eps, _math_ops())


def optimal_gamma(eps: float) -> float:
    """γ* in float64 (for a given ε; :func:`optimal_gamma_expr`)."""
    return _optimal_gamma(eps, _math_ops())


def density(x, sens: float, eps: float, gamma: float) -> np.ndarray:
    """The staircase density at the points ``x`` (vectorised)."""
    y = np.abs(np.asarray(x, dtype=float)) / sens
    k = np.floor(y)
    step = k + (y - k >= gamma)
    b = math.exp(-eps)
    a = -math.expm1(-eps) / (2 * sens * (gamma + (1 - gamma) * b))
    return a * np.exp(-eps * step)


def sample(rng: np.random.Generator, reps: int, d: int, scale: float, *, eps: float, gamma: float) -> np.ndarray:
    """``reps`` draws of the staircase noise of sensitivity ``scale`` (Δ), level ``eps`` and step ``gamma``, shape
    (reps, 1): a random sign; the step k >= 0 geometric, P(k) = (1-b) b^k; the inner part [k, k+γ) with probability
    γ/(γ + (1-γ)b), else the outer part [k+γ, k+1); uniform within the part; times Δ. One dimension only."""
    if int(d) != 1:
        raise ValueError("the staircase noise is for one real query (d = 1)")
    reps = int(reps)
    b = math.exp(-eps)
    k = rng.geometric(-math.expm1(-eps), size=reps) - 1.0  # numpy counts trials: 1, 2, ...
    inner = rng.random(reps) < gamma / (gamma + (1 - gamma) * b)
    u = rng.random(reps)
    y = np.where(inner, k + gamma * u, k + gamma + (1 - gamma) * u)
    sign = np.where(rng.random(reps) < 0.5, -1.0, 1.0)
    return (sign * scale * y).reshape(reps, 1)


def achieved_eps(eps: float, sens_noise: float, sens_query: float, rel_tol: float = 1e-9) -> float:
    """The ε the staircase noise of level ``eps`` built for sensitivity ``sens_noise`` gives a query of sensitivity
    ``sens_query``: ``eps`` when sens_query <= sens_noise (module docstring), else ε ⌈sens_query/sens_noise⌉ (a shift
    of at most m steps moves the exponent by at most m)."""
    if sens_query <= sens_noise * (1 + rel_tol):
        return float(eps)
    return float(eps) * math.ceil(sens_query / sens_noise)
