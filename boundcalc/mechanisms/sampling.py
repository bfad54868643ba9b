"""ℓ2 and ℓ∞ sampling mechanisms (Duchi, Jordan & Wainwright, JASA 2018; THEOREMS.md §2.4),
plus two coordinate mechanisms for d-dimensional bounded vectors.

All mechanisms are ε-LDP and *unbiased*: ``E[Z | v] = v``. They are written for a datum v in a ball
of radius r (ℓ2: ||v||₂ <= r; ℓ∞: ||v||_∞ <= r) and exact constants are sympy expressions in d, ε, r.

**ℓ2 sampling.** ``Ṽ = ± r v/||v||`` with ``P(+) = 1/2 + ||v||/(2r)`` (so ``E Ṽ = v``); with probability
``π_ε = e^ε/(e^ε+1)`` draw Z uniform on the sphere of radius B in ``{⟨z,Ṽ⟩ > 0}``, else in
``{⟨z,Ṽ⟩ <= 0}``. For u uniform on the unit sphere, ``E|u_1| = Γ(d/2)/(√π Γ((d+1)/2))``, so
``E[Z|Ṽ] = B (2π_ε - 1) E|u_1| Ṽ/r``; unbiasedness forces
``B = r coth(ε/2) √π Γ((d+1)/2)/Γ(d/2)``  (coth(ε/2) = (e^ε+1)/(e^ε-1) = 1/(2π_ε - 1)).
Privacy: the density of Z given Ṽ is π_ε/A or (1-π_ε)/A (A half the sphere's area): ratio <= e^ε.
``E||Z||² = B²``.

**ℓ∞ sampling.** ``Ṽ_j ∈ {±r}`` independent with ``P(+r) = 1/2 + v_j/(2r)``; with probability π_ε draw
Z uniform on ``H+ = {z ∈ {±B}^d : ⟨z,Ṽ⟩ >= 0}``, else on ``H- = {⟨z,Ṽ⟩ <= 0}`` (the boundary is in
both). By the sign symmetry ``E[Z|Ṽ] = B (2π_ε-1) m_d Ṽ/r`` with ``m_d = E[w_1 | w uniform on
{w ∈ {±1}^d: Σw >= 0}]``. Counting (w_1 = ±1, the other d-1 signs summing to S'):
d odd: ``m_d = binom(d-1, (d-1)/2)/2^{d-1}``; d even: ``m_d = binom(d-1, d/2)/(2^{d-1} + binom(d,d/2)/2)``.
So ``B = r coth(ε/2) C_d`` with ``C_d = 1/m_d`` (B is *divided* by the binomial expression m_d).
Privacy: P(z | Ṽ) is π_ε/|H+| (strictly inside H+), (1-π_ε)/|H+| (strictly inside H-), 1/|H+| on the
boundary (|H+| = |H-|): ratio <= e^ε. ``E||Z||² = d B²``.
Checked by exact enumeration over {±1}^d for d <= 10 (tests/test_local_mechanisms.py).

**Coordinate splitting.** Pick J uniform in [d]; release J and the one-bit value (local_scalar) of
v_J at level ε; ``Z = d·Y·e_J``. ``E Z = v``, ``||Z||² = d² r² coth²(ε/2)``.

**Coordinate composition.** Release every coordinate with the one-bit mechanism at level ε/d
(basic composition of d ε/d-LDP releases is ε-LDP). ``||Z||² = d r² coth²(ε/(2d))``.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from .. import symbolic as S
from .local_scalar import coth_half, coth_half_np


# --------------------------------------------------------------------------- exact constants

def l2_gamma_ratio_np(d):
    """√π Γ((d+1)/2)/Γ(d/2) = 1/E|u_1| (u uniform on the unit sphere of ℝ^d), vectorised."""
    from scipy import special

    d = np.asarray(d, float)
    return np.sqrt(np.pi) * np.exp(special.gammaln((d + 1) / 2) - special.gammaln(d / 2))


def linf_C_np(d):
    """C_d = 1/m_d of the ℓ∞ sampling mechanism (vectorised; log-space binomials, any d)."""
    from scipy import special

    d = np.asarray(d, float)
    dd = np.floor(d)
    lb = special.gammaln  # log binom(a, b) = lb(a+1) - lb(b+1) - lb(a-b+1)

    def logbinom(a, b):
        return lb(a + 1) - lb(b + 1) - lb(a - b + 1)

    odd = np.mod(dd, 2) == 1
    # odd: m = binom(d-1, (d-1)/2) / 2^{d-1}
    log_m_odd = logbinom(dd - 1, (dd - 1) / 2) - (dd - 1) * math.log(2)
    # even: m = binom(d-1, d/2) / (2^{d-1} + binom(d, d/2)/2)
    log_den = np.logaddexp((dd - 1) * math.log(2), logbinom(dd, dd / 2) - math.log(2))
    log_m_even = logbinom(dd - 1, dd / 2) - log_den
    return np.exp(-np.where(odd, log_m_odd, log_m_even))


def linf_m_exact(d: int):
    """m_d as an exact sympy Rational (for the enumeration test)."""
    if d % 2 == 1:
        return sp.Rational(math.comb(d - 1, (d - 1) // 2), 2 ** (d - 1))
    return sp.Rational(math.comb(d - 1, d // 2), 1) / (2 ** (d - 1) + sp.Rational(math.comb(d, d // 2), 2))


class L2SphereConst(sp.Function):
    """``L2SphereConst(d) = √π Γ((d+1)/2)/Γ(d/2)``: B = r coth(ε/2) · L2SphereConst(d) (ℓ2 sampling)."""

    nargs = 1

    @staticmethod
    def _imp_(d):
        return _float_out(l2_gamma_ratio_np(_float_in(d)))

    def _eval_evalf(self, prec):
        return sp.Float(float(l2_gamma_ratio_np(float(self.args[0]))), prec)

    def _latex(self, printer):
        a = printer._print(self.args[0])
        return rf"\frac{{\sqrt{{\pi}}\,\Gamma(\frac{{{a}+1}}{{2}})}}{{\Gamma(\frac{{{a}}}{{2}})}}"


class LinfSamplingC(sp.Function):
    """``LinfSamplingC(d) = C_d``: 1/C_d = binom(d-1,(d-1)/2)/2^{d-1} (d odd) or
    binom(d-1,d/2)/(2^{d-1} + binom(d,d/2)/2) (d even); B = r coth(ε/2) C_d (ℓ∞ sampling)."""

    nargs = 1

    @staticmethod
    def _imp_(d):
        return _float_out(linf_C_np(_float_in(d)))

    def _eval_evalf(self, prec):
        return sp.Float(float(linf_C_np(float(self.args[0]))), prec)

    def _latex(self, printer):
        return rf"C_{{{printer._print(self.args[0])}}}"


def _float_in(x):
    try:
        return np.asarray(x, float)
    except TypeError:
        return float(x)


def _float_out(y):
    y = np.asarray(y, float)
    return float(y) if y.ndim == 0 else y


def l2_B(r, eps, d):
    """Sympy B of ℓ2 sampling."""
    return r * coth_half(eps) * L2SphereConst(d)


def linf_B(r, eps, d):
    """Sympy B of ℓ∞ sampling."""
    return r * coth_half(eps) * LinfSamplingC(d)


def second_moments(r, eps, d):
    """E||Z||² of each d-dimensional mechanism (sympy), keyed by mechanism name."""
    return {
        "l2-sampling": l2_B(r, eps, d) ** 2,
        "linf-sampling": d * linf_B(r, eps, d) ** 2,
        "coordinate-splitting": d ** 2 * r ** 2 * coth_half(eps) ** 2,
        "coordinate-composition": d * r ** 2 * coth_half(eps / d) ** 2,
    }


# --------------------------------------------------------------------------- samplers

def _pi(eps):
    return 1.0 / (1.0 + math.exp(-eps))  # e^ε/(e^ε+1)


def l2_sampling(v, r, eps, rng: np.random.Generator):
    """ℓ2 sampling of the rows of v (shape (m, d), ||v_i||₂ <= r). Returns Z (m, d)."""
    v = np.atleast_2d(np.asarray(v, float))
    m, d = v.shape
    norms = np.linalg.norm(v, axis=1)
    # direction of v (arbitrary unit vector when v = 0; then P(+) = 1/2 and E Ṽ = 0)
    u = np.where(norms[:, None] > 0, v / np.where(norms > 0, norms, 1.0)[:, None], 0.0)
    u[norms == 0, 0] = 1.0
    sign = np.where(rng.random(m) < 0.5 + norms / (2 * r), 1.0, -1.0)
    vt = sign[:, None] * u  # Ṽ / r
    g = rng.standard_normal((m, d))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    side = np.einsum("ij,ij->i", g, vt)
    want_pos = rng.random(m) < _pi(eps)
    flip = (side > 0) != want_pos  # reflect to the wanted half (uniform on each half by symmetry)
    g[flip] *= -1.0
    B = r * float(coth_half_np(eps)) * float(l2_gamma_ratio_np(d))
    return B * g


def linf_sampling(v, r, eps, rng: np.random.Generator):
    """ℓ∞ sampling of the rows of v (shape (m, d), ||v_i||_∞ <= r). Returns Z (m, d).

    Uniform on a closed half cube {w: ⟨w,s⟩ >= 0} (s = sign Ṽ) by reflection: draw w uniform on
    {±1}^d; if it is strictly on the wrong side, flip it (a bijection between the strict halves).
    Then each strict point has probability 2/2^d and each boundary point (d even) 1/2^d, so strict
    points are accepted with probability 1/2 (and the rejected rows redrawn) when d is even.
    """
    v = np.atleast_2d(np.asarray(v, float))
    m, d = v.shape
    s = np.where(rng.random((m, d)) < 0.5 + v / (2 * r), 1.0, -1.0)  # sign of Ṽ
    want_pos = rng.random(m) < _pi(eps)
    w = np.empty((m, d))
    todo = np.arange(m)
    while todo.size:
        ww = np.where(rng.random((todo.size, d)) < 0.5, 1.0, -1.0)
        t = np.einsum("ij,ij->i", ww, s[todo])
        wp = want_pos[todo]
        wrong = np.where(wp, t < 0, t > 0)
        ww[wrong] *= -1.0
        if d % 2 == 1:
            accept = np.ones(todo.size, bool)  # no boundary: reflection alone is uniform
        else:
            accept = (t == 0) | (rng.random(todo.size) < 0.5)
        w[todo[accept]] = ww[accept]
        todo = todo[~accept]
    B = r * float(coth_half_np(eps)) * float(linf_C_np(d))
    return B * w


def linf_sampling_law(vt_sign, eps):
    """Exact law of W = Z/B given sign(Ṽ) (a ±1 vector): (list of w, probabilities). For tests."""
    import itertools

    d = len(vt_sign)
    pts = np.array(list(itertools.product([-1.0, 1.0], repeat=d)))
    t = pts @ np.asarray(vt_sign, float)
    pos, neg = t >= 0, t <= 0
    pi = _pi(eps)
    prob = pi * pos / pos.sum() + (1 - pi) * neg / neg.sum()
    return pts, prob


def coordinate_splitting(v, r, eps, rng: np.random.Generator):
    """Z = d·Y·e_J, J uniform, Y the one-bit release of v_J at level ε (rows of v in [-r,r]^d)."""
    v = np.atleast_2d(np.asarray(v, float))
    m, d = v.shape
    J = rng.integers(0, d, size=m)
    vj = v[np.arange(m), J]
    c = float(coth_half_np(eps))
    y = np.where(rng.random(m) < 0.5 + vj / (2 * r * c), r * c, -r * c)
    Z = np.zeros((m, d))
    Z[np.arange(m), J] = d * y
    return Z


def coordinate_composition(v, r, eps, rng: np.random.Generator):
    """Every coordinate released by the one-bit mechanism at level ε/d."""
    v = np.atleast_2d(np.asarray(v, float))
    m, d = v.shape
    c = float(coth_half_np(eps / d))
    return np.where(rng.random((m, d)) < 0.5 + v / (2 * r * c), r * c, -r * c)


SAMPLERS = {"l2-sampling": l2_sampling, "linf-sampling": linf_sampling,
            "coordinate-splitting": coordinate_splitting, "coordinate-composition": coordinate_composition}
