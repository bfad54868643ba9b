"""Two-point coupling under central (ε,δ)-differential privacy (group privacy + maximal coupling).

Derivation written for boundcalc; see ``docs/methods/group-coupling.md``. Group privacy is standard
(Dwork & Roth, *The Algorithmic Foundations of Differential Privacy*, 2014, Thm 2.2 / its (ε,δ) form);
the averaging over a maximal coupling follows the two-point arguments of Barber & Duchi (2014,
arXiv 1412.4451) and Karwa & Vadhan (2018, arXiv 1711.03908).

**Group privacy.** If M is (ε,δ)-DP for datasets differing in one entry, then for datasets D, D' at
Hamming distance h and every event A

    P(M(D) ∈ A) <= e^{hε} P(M(D') ∈ A) + δ_h,     δ_h = δ (e^{hε} - 1)/(e^ε - 1).

Proof: walk D = D_0, D_1, ..., D_h = D' changing one entry at a time. Induction:
P(M(D_0)∈A) <= e^ε P(M(D_1)∈A) + δ <= e^ε (e^{(h-1)ε} P(M(D_h)∈A) + δ_{h-1}) + δ, and
e^ε δ_{h-1} + δ = δ (e^{hε} - e^ε + e^ε - 1)/(e^ε - 1) = δ_h.

**(a) Testing bound.** Couple P_0^n and P_1^n entry by entry with the maximal coupling of (P_0, P_1):
each pair of entries differs with probability t = TV(P_0, P_1), independently, so the Hamming distance
is H ~ Bin(n, t). Fix a test (reject with probability g(D) given the output; g is post-processing so
it is itself an (ε,δ)-DP binary mechanism). For a coupled pair (D_0, D_1) at distance h, with
g_0 = g(D_0), g_1 = g(D_1), group privacy applied to the event "accept":
1 - g_0 <= e^{hε}(1 - g_1) + δ_h, i.e. 1 - g_1 >= e^{-hε}(1 - g_0 - δ_h). Hence

    g_0 + (1 - g_1) >= g_0 (1 - e^{-hε}) + e^{-hε} - e^{-hε} δ_h >= e^{-hε} - δ (1 - e^{-hε})/(e^ε - 1)
                     = (1 + c) e^{-hε} - c,        c = δ/(e^ε - 1).

Type I + type II = E[g_0 + 1 - g_1] over the coupling, and E e^{-εH} = (1 - t(1 - e^{-ε}))^n, so

    type I + type II >= (1 + c)(1 - t(1 - e^{-ε}))^n - c.                       (testing_bound)

A sharper pointwise form (used by :func:`testing_bound_exact`): applying group privacy in both
directions, a = g_0, b = 1 - g_1 satisfy 1 - a <= e^{hε} b + δ_h and 1 - b <= e^{hε} a + δ_h; adding,
a + b >= 2(1 - δ_h)/(1 + e^{hε}) (attained at a = b), and a + b >= 0. Average over H exactly.

**(b) Point-mass version.** If P_0 = δ_{x_0} (the sample under P_0 is the fixed x_0^n) and
P_v = (1 - p) δ_{x_0} + p Q_v, the sample under P_v differs from x_0^n in H ~ Bin(n, p) entries, so
P_v(A) = E[P(M(D_v) ∈ A)] <= E[e^{Hε}] P_0(A) + δ E[(e^{Hε} - 1)]/(e^ε - 1), with
E e^{Hε} = (1 + p(e^ε - 1))^n =: G:

    P_v(A) <= G P_0(A) + δ (G - 1)/(e^ε - 1).                                    (point_mass_bound)

Both are equalities for some mechanisms: (b) for M(D) = 1 w.p. min(1, e^{ε|D|} g + δ_{|D|}),
(a) is not tight in general (the exact optimum is larger), but the exponent ε cannot be lowered
(see tests/test_group_coupling.py, which checks both by linear programming over all (ε,δ)-DP binary
mechanisms on {0,1}^n, n <= 4).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from .. import symbolic as S


def _delta_const(eps, delta):
    """c = δ/(e^ε - 1) (sympy)."""
    return delta / S.expm1(eps)


def coupling_mgf_neg(n, t, eps):
    """E e^{-εH} for H ~ Bin(n, t): (1 - t(1 - e^{-ε}))^n, written as exp(n log1p(t expm1(-ε)))."""
    return sp.exp(n * S.log1p(t * S.expm1(-eps)))


def testing_bound(n, t, eps, delta=None):
    """Sympy lower bound on type I + type II error of any test built on an (ε,δ)-DP mechanism,
    for n i.i.d. entries from P_0 versus P_1 with TV(P_0, P_1) = t (see the module docstring):

        max{0, (1 + δ/(e^ε-1)) (1 - t(1-e^{-ε}))^n - δ/(e^ε-1)}.

    ``delta=None`` is pure DP.
    """
    m = coupling_mgf_neg(n, t, eps)
    if delta is None:
        return m
    c = _delta_const(eps, delta)
    return sp.Max(0, (1 + c) * m - c)


def testing_bound_jensen(n, t, eps, delta=None):
    """Sympy lower bound from the two-sided pointwise form by Jensen:

        max{0, 2(1 + 2c)/(1 + e^{ε n t}) - 2c},   c = δ/(e^ε - 1).

    Derivation: with x = hε, 2(1 - δ_h)/(1 + e^x) = 2((1+c) - c e^x)/(1 + e^x) = 2(1+2c)/(1+e^x) - 2c,
    convex in x >= 0 (d²/dx² 1/(1+e^x) = e^x(e^x-1)/(1+e^x)³ >= 0), and max{0, ·} keeps convexity;
    Jensen with E H = nt. Better than :func:`testing_bound` when εnt is of order 1 (2/(1+e^x) >= e^{-x}).
    """
    c = sp.Integer(0) if delta is None else _delta_const(eps, delta)
    return sp.Max(0, 2 * (1 + 2 * c) / (1 + sp.exp(eps * n * t)) - 2 * c)


def growth_factor(n, p, eps):
    """G = E e^{εH} = (1 + p(e^ε - 1))^n for H ~ Bin(n, p) (sympy), as exp(n log1p(p expm1(ε)))."""
    return sp.exp(n * S.log1p(p * S.expm1(eps)))


def point_mass_bound(n, p, eps, delta=None, p0_event=None):
    """Sympy upper bound on P_v(A) given P_0(A) (``p0_event``; a symbol if None):

        P_v(A) <= G P_0(A) + δ (G - 1)/(e^ε - 1),   G = (1 + p(e^ε - 1))^n.

    Returns (bound, G, additive δ term) so callers can use the pieces (e.g. sphere-cap packings).
    """
    G = growth_factor(n, p, eps)
    a = sp.Symbol("a", nonnegative=True) if p0_event is None else p0_event
    add = sp.Integer(0) if delta is None else delta * (G - 1) / S.expm1(eps)
    return G * a + add, G, add


def point_mass_additive(n, p, eps, delta):
    """The additive term δ (G - 1)/(e^ε - 1) alone (sympy); written with expm1 for small p, ε:
    G - 1 = expm1(n log1p(p expm1(ε)))."""
    return delta * S.expm1(n * S.log1p(p * S.expm1(eps))) / S.expm1(eps)


# ------------------------------------------------------------------ numerical helpers (floats)

def testing_bound_value(n: int, t: float, eps: float, delta: float = 0.0) -> float:
    """Float value of :func:`testing_bound` (the same formula, evaluated stably)."""
    m = math.exp(n * math.log1p(t * math.expm1(-eps)))
    c = delta / math.expm1(eps)
    return max(0.0, (1 + c) * m - c)


def testing_bound_exact(n: int, t: float, eps: float, delta: float = 0.0) -> float:
    """Sharper form: E[max{0, 2(1 - δ_H)/(1 + e^{εH})}] with H ~ Bin(n, t) summed exactly
    (over the support where the binomial mass exceeds 1e-18 of the total; the dropped mass only
    lowers the value, so the result stays a valid lower bound)."""
    from scipy import stats

    n = int(n)
    lo, hi = stats.binom.ppf([1e-18, 1 - 1e-18], n, t)
    h = np.arange(max(0, int(lo) - 1), min(n, int(hi) + 1) + 1, dtype=float)
    pmf = stats.binom.pmf(h, n, t)
    with np.errstate(over="ignore"):
        eh = np.exp(np.minimum(h * eps, 700.0))
        dh = delta * np.expm1(np.minimum(h * eps, 700.0)) / math.expm1(eps)
    vals = np.maximum(0.0, 2 * (1 - dh) / (1 + eh))
    return float(np.sum(pmf * vals))
