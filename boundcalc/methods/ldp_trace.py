"""Multinomial trace bound on the Fisher information of ε-LDP outputs (docs/methods/ldp-trace.md).

**Lemma (L4).** For d symbols, p in the simplex interior, tangent coordinates p = p₀ + h (Σh = 0) with an
orthonormal basis of {h : Σh = 0}, and any ε-LDP channel q(z|x):
``tr I_Z(p) <= sinh²(ε/2) / min_x p_x``.

Proof (re-derived). Let c_z = Σ_x p_x q(z|x) and r_{zx} = q(z|x)/c_z. The score of one output along
h is Σ_x h_x q(z|x)/c_z, so tr I_Z = Σ_z (1/c_z) ‖Π q(z|·)‖² with Π the projection onto 1^⊥, i.e.
tr I_Z = Σ_z c_z Σ_x (r_{zx} - r̄_z)² (r̄_z the unweighted mean over x). Since the unweighted mean
minimises Σ_x (r_{zx} - a)², Σ_x (r_{zx} - r̄_z)² <= Σ_x (r_{zx} - 1)² <= (1/p_min) Σ_x p_x (r_{zx}-1)²
= Var_p(r_z)/p_min, because E_p r_z = 1. r_z takes values in [m, M] with M <= e^ε m (ε-LDP), and
Bhatia–Davis gives Var_p(r_z) <= (M - 1)(1 - m) <= max_m (e^ε m - 1)(1 - m) = (e^ε-1)²/(4e^ε)
= sinh²(ε/2). Finally Σ_z c_z = 1.

Used by :mod:`.dirichlet_van_trees` (in a version for p near the simplex boundary) for the multinomial's
full-simplex van Trees bound.

Tests: tests/test_ldp_trace.py (exact Fisher trace of random and near-extreme channels at random p;
subset selection attains equality at the uniform p for (d, s) = (4, 1), (6, 2)).
"""
from __future__ import annotations

import sympy as sp


def trace_fisher_bound(eps, p_min):
    """sympy: sinh²(ε/2)/p_min, an upper bound on tr I_Z(p) for one ε-LDP output."""
    return sp.sinh(eps / 2) ** 2 / p_min
