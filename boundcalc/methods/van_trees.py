"""The van Trees inequality with the optimal box prior (Gill & Levit 1995; docs/methods/van-trees.md).

For a prior μ on Θ ⊂ ℝ^k and any estimator from Z_{1:n}:
``sup_θ E‖θ̂ - θ‖² >= ∫ E_θ‖θ̂ - θ‖² μ(dθ) >= k² / (∫ Tr I_{Z^n}(θ) μ(dθ) + J(μ))``,
``J(μ) = ∫ ‖∇ log μ‖² dμ``. Chain rule: ``Tr I_{Z^n} = Σ_i E Tr I_{Z_i | Z^{i-1}} <= n T`` when T bounds
the one-sample trace for every (sequentially interactive) ε-LDP channel (see :mod:`.fisher`).

Box prior: on ``[c - w, c + w]`` the density ``(1/w) cos²(π(θ-c)/(2w))`` has ``J = π²/w²`` (the
smallest J among priors on an interval of half-width w); the product prior on a box of half-widths
``w_j`` has ``J = Σ_j π²/w_j²``. Checked symbolically in tests/test_local_methods.py.

Linear reparametrisations: if the quantity of interest is ``μ = A θ`` with ``‖A x‖² >= a ‖x‖²``... we
only need the scalar case ``μ = cθ`` (``E‖μ̂-μ‖² >= c² × bound``) and the "paired" case of the
multinomial (``‖p̂ - p‖² >= (2/d²)‖θ̂-θ‖²``, stated where used).
"""
from __future__ import annotations

import sympy as sp

from ..core import symbolic as S


def box_prior_density(theta, center, half_width):
    """(1/w) cos²(π(θ - c)/(2w)) on [c - w, c + w]."""
    return sp.cos(sp.pi * (theta - center) / (2 * half_width)) ** 2 / half_width


def box_prior_information(half_width, k=1):
    """J of the product cos² prior on a box with ``k`` equal half-widths: k π²/w²."""
    return k * sp.pi ** 2 / half_width ** 2


def prior_information_symbolic(half_width):
    """J computed by sympy from the density (for the test): ∫ (μ')²/μ over the interval."""
    th = sp.Symbol("theta_v", real=True)
    w = half_width
    mu = box_prior_density(th, 0, w)
    # (μ')²/μ = (π/w)² sin²(πθ/w)... integrate the simplified form
    integrand = S.simplify(S.diff(mu, th) ** 2 / mu)
    return S.simplify(S.integrate(integrand, (th, -w, w)))


@S.cached_expression
def van_trees(k, n, one_sample_trace, J):
    """k² / (n T + J): lower bound on sup_θ E‖θ̂-θ‖² (sympy)."""
    return k ** 2 / (n * one_sample_trace + J)
