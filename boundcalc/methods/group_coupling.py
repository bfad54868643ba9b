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


@S.cached_expression
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
    return S.Max(0, (1 + c) * m - c)


@S.cached_expression
def testing_bound_jensen(n, t, eps, delta=None):
    """Sympy lower bound from the two-sided pointwise form by Jensen:

        max{0, 2(1 + 2c)/(1 + e^{ε n t}) - 2c},   c = δ/(e^ε - 1).

    Derivation: with x = hε, 2(1 - δ_h)/(1 + e^x) = 2((1+c) - c e^x)/(1 + e^x) = 2(1+2c)/(1+e^x) - 2c,
    convex in x >= 0 (d²/dx² 1/(1+e^x) = e^x(e^x-1)/(1+e^x)³ >= 0), and max{0, ·} keeps convexity;
    Jensen with E H = nt. Better than :func:`testing_bound` when εnt is of order 1 (2/(1+e^x) >= e^{-x}).
    """
    c = sp.Integer(0) if delta is None else _delta_const(eps, delta)
    return S.Max(0, 2 * (1 + 2 * c) / (1 + sp.exp(eps * n * t)) - 2 * c)


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


# ------------------------------------------------------------------ (c) truncated point-mass coupling

def _coupling_min_numpy(n, p, eps, loga, delta):
    """E_H min{1, e^{εH}(a + δ') - δ'}, H ~ Bin(n, p), a = exp(loga), δ' = δ/(e^ε - 1) (numpy, vectorised).

    With h0 = ceil(log((1 + δ')/(a + δ'))/ε) (the first h where the min is 1) and the tilted binomial
    H' ~ Bin(n, p'), p' = p e^ε/(1 + p(e^ε - 1)) (P(H' = h) = P(H = h) e^{εh}/G, G = E e^{εH}):

        E = P(H >= h0) + (a + δ') G P(H' <= h0 - 1) - δ' P(H <= h0 - 1).

    The middle term is a sum of pmf(h)·(value < 1) over h < h0, so it is at most P(H <= h0 - 1): where the
    tilted tail underflows (and its log is not finite) that cap is used, which can only raise E (a valid
    upper bound on the success probability). The result is rounded up by a relative 1e-12.
    """
    from scipy import special

    from ..symbolic import _binom_cdf, _binom_sf

    n, p, eps, loga, delta = np.broadcast_arrays(*(np.asarray(x, float) for x in (n, p, eps, loga, delta)))
    with np.errstate(all="ignore"):
        em1 = np.expm1(eps)
        dp = delta / em1
        log_apd = np.logaddexp(loga, np.log(np.where(dp > 0, dp, 1e-320)))
        log_apd = np.where(dp > 0, log_apd, loga)
        x = (np.log1p(dp) - log_apd) / eps
        h0 = np.clip(np.ceil(x - 1e-12), 0.0, n + 1.0)
        log_g = n * np.log1p(p * em1)
        # 1 - p' = (1 - p)/(1 + p(e^ε - 1)) computed directly: p' itself rounds to 1 for large pe^ε, and
        # P(H' <= j) = P(Bin(n, 1 - p') >= n - j) then keeps its relative accuracy
        qt = (1 - p) / (1 + p * em1)
        j = h0 - 1.0
        sf = _binom_sf(j, n, p)  # P(H >= h0)
        cdf = _binom_cdf(j, n, p)  # P(H <= h0 - 1)
        cdf_t = _binom_sf(n - j - 1.0, n, qt)  # P(H' <= h0 - 1)
        mid = np.exp(log_apd + log_g + np.log(cdf_t)) - dp * cdf
        bad = ~np.isfinite(mid) | (cdf_t < 1e-290)
        mid = np.where(bad, cdf, np.clip(mid, 0.0, cdf))
        out = sf + mid
    return np.clip(out * (1 + 1e-12), 0.0, 1.0)


def _coupling_min_mpmath(n, p, eps, loga, delta):
    from ..symbolic import mpmath_float

    return mpmath_float(_coupling_min_numpy(float(n), float(p), float(eps), float(loga), float(delta)))


class CouplingMin(sp.Function):
    """``CouplingMin(n, p, ε, log a, δ) = E min{1, e^{εH} a + δ_H}``, H ~ Bin(n, p), δ_H = δ(e^{εH}-1)/(e^ε-1):
    the sharpest consequence of group privacy for P_v(A) given P_0(A) = a (see :func:`truncated_point_mass`)."""

    nargs = 5

    def _latex(self, printer, exp=None):
        nn, pp, ee, la, dd = (printer._print(x) for x in self.args)
        return (rf"\mathbb{{E}}_{{H\sim\mathrm{{Bin}}({nn},{pp})}}\min\left\{{1, e^{{{ee} H + {la}}}"
                rf" + {dd}\tfrac{{e^{{{ee} H}}-1}}{{e^{{{ee}}}-1}}\right\}}")


S.NUMPY_IMPL["CouplingMin"] = _coupling_min_numpy
S.MPMATH_IMPL["CouplingMin"] = _coupling_min_mpmath


def truncated_point_mass(n, p, eps, log_a, delta=None):
    """Sympy upper bound on P_v(A) (averaged over any family of events) given the reference probability a:

        P_v(A) <= f(a) := E_H min{1, e^{εH} a + δ (e^{εH} - 1)/(e^ε - 1)},   H ~ Bin(n, p).

    Derivation. Under P_v = (1-p) P_0 + p Q_v with P_0 = δ_{x_0} (or any base law shared by all v), draw
    the base sample B and an independent set S of entries (each with probability p) that are redrawn
    from Q_v: the sample D_v differs from B in at most |S| = H entries. Group privacy
    (module docstring) gives P(M(D_v) ∈ A | B, S) <= e^{εH} P(M(B) ∈ A) + δ_H, and a probability is at
    most 1: so P(M(D_v) ∈ A | B, S) <= min{1, e^{εH} P(M(B) ∈ A) + δ_H}. For fixed H the right side is
    concave and non-decreasing in P(M(B) ∈ A); average over B (independent of S, Jensen) and then over H:
    P_v(A) <= f(P_0(A)). f is concave and non-decreasing, so for events A_v and any averaging over v,
    avg_v P_v(A_v) <= f(avg_v P_0(A_v)). Since min{1, G a + ...} <= G a + ..., f(a) <= G a + δ(G-1)/(e^ε-1)
    (:func:`point_mass_bound`); the truncation at 1 is what turns the exponent p(e^ε - 1) of log G
    into about pε when the binomial concentrates.
    """
    dl = sp.Integer(0) if delta is None else delta
    return CouplingMin(n, p, eps, log_a, dl)


def truncated_point_mass_value(n: int, p: float, eps: float, a: float, delta: float = 0.0) -> float:
    """Float value of f(a) by direct summation over the binomial (used by tests to check the closed form)."""
    from scipy import stats

    h = np.arange(0, int(n) + 1, dtype=float)
    pmf = stats.binom.pmf(h, int(n), p)
    with np.errstate(over="ignore"):
        dh = delta * np.expm1(np.minimum(h * eps, 700.0)) / math.expm1(eps)
        vals = np.minimum(1.0, np.exp(np.minimum(h * eps, 700.0)) * a + dh)
    return float(np.sum(pmf * vals))


# ------------------------------------------------------------------ (d) coupling with a dependent count

def _threshold_coupling_numpy(n, p, eps, loga, delta, zs=np.linspace(-6.0, 10.0, 17)):
    """min over thresholds M of {P(H > M) + e^{εM} a + δ(e^{εM} - 1)/(e^ε - 1)}, clipped to [0, 1], H ~ Bin(n, p)
    (numpy, vectorised). The thresholds tried are M = max(0, round(np + z sqrt(np(1-p)))) for a grid of z and
    the point where e^{εM} a = 1; every M gives a valid bound, so the choice only affects tightness."""
    from ..symbolic import _binom_sf

    n, p, eps, loga, delta = np.broadcast_arrays(*(np.asarray(x, float) for x in (n, p, eps, loga, delta)))
    if np.all(delta == 0):  # pure DP: the exact knapsack value where reliable, thresholds only elsewhere
        knap, ok = _knapsack_pure(n, p, eps, loga)
        if np.all(ok):
            return np.clip(knap * (1 + 1e-9) * (1 + 1e-12), 0.0, 1.0)
    mu = n * p
    sd = np.sqrt(np.maximum(n * p * (1 - p), 0.0))
    best = np.ones(n.shape)
    cands = [np.round(mu + z * sd) for z in zs] + [np.floor(-loga / eps), np.floor(-loga / eps) - 1]
    with np.errstate(all="ignore"):
        em1 = np.expm1(eps)
        for m in cands:
            m = np.clip(m, 0.0, n)
            val = _binom_sf(m, n, p) + np.exp(np.minimum(eps * m + loga, 700.0)) \
                + delta * np.expm1(np.minimum(eps * m, 700.0)) / em1
            best = np.minimum(best, np.where(np.isfinite(val), val, 1.0))
        # pure DP: the exact worst case over dependent counts (fractional knapsack), where it is reliable
        knap, ok = _knapsack_pure(n, p, eps, loga)
        use = ok & (delta == 0)
        best = np.where(use, np.minimum(best, knap * (1 + 1e-9)), best)
    return np.clip(best * (1 + 1e-12), 0.0, 1.0)


def _knapsack_pure(n, p, eps, loga, iters=None):
    """δ = 0: max of E min{1, e^{εH} g} over 0 <= g with E g = a, g any function of the sample (vectorised).

    Greedy (fractional knapsack): a unit of g at level h buys e^{εh} of success, and level h saturates at
    g = e^{-εh}; fill the levels from h = n down. With W(j) = E[e^{-εH}; H >= j] = G₋ P(H'' >= j)
    (G₋ = E e^{-εH}, H'' ~ Bin(n, p e^{-ε}/(1 - p + p e^{-ε}))) and j* the smallest j with W(j) <= a,
    the maximum is P(H >= j*) + e^{ε(j*-1)} (a - W(j*)). j* is found by bisection in logs. Returns (value,
    reliable): unreliable where log a < -700 or a tail underflows (the caller keeps the threshold form)."""
    from ..symbolic import _binom_sf

    with np.errstate(all="ignore"):
        log_gm = n * np.log1p(p * np.expm1(-eps))
        q = p * np.exp(-eps) / (1 - p + p * np.exp(-eps))

        def log_w(j):  # log W(j) = log G₋ + log P(H'' >= j)
            return log_gm + np.log(_binom_sf(j - 1, n, q))

        lo = np.zeros(n.shape)  # W(0) = G₋ ... may exceed a
        hi = n + 1.0  # W(n+1) = 0 <= a
        steps = int(np.ceil(np.log2(np.max(n) + 2))) + 1 if iters is None else iters
        for _ in range(steps):
            mid = np.floor((lo + hi) / 2)
            good = log_w(mid) <= loga
            hi = np.where(good, mid, hi)
            lo = np.where(good, lo, mid)
        j = np.where(log_w(lo) <= loga, lo, hi)
        wj = np.exp(log_w(j))
        val = _binom_sf(j - 1, n, p) + np.exp(np.minimum(eps * (j - 1) + loga, 700.0)) * np.clip(
            1 - wj / np.exp(loga), 0.0, 1.0)
        tail = _binom_sf(j - 2, n, q)
        ok = (loga > -700) & np.isfinite(val) & (tail > 1e-290) | (j <= 0)
    return np.clip(val, 0.0, 1.0), ok


def _threshold_coupling_mpmath(n, p, eps, loga, delta):
    from ..symbolic import mpmath_float

    return mpmath_float(_threshold_coupling_numpy(float(n), float(p), float(eps), float(loga), float(delta)))


class ThresholdCoupling(sp.Function):
    """``ThresholdCoupling(n, p, ε, log a, δ) = min_M {P(Bin(n,p) > M) + e^{εM} a + δ_M}`` (clipped at 1): the
    bound on P_v(A) given P_0(A) = a when the number H of changed entries may depend on the reference sample
    (see :func:`threshold_point_mass`)."""

    nargs = 5

    def _latex(self, printer, exp=None):
        nn, pp, ee, la, dd = (printer._print(x) for x in self.args)
        return (rf"\min_M\left\{{\Pr[\mathrm{{Bin}}({nn},{pp}) > M] + e^{{{ee} M + {la}}}"
                rf" + {dd}\tfrac{{e^{{{ee} M}}-1}}{{e^{{{ee}}}-1}}\right\}}")


S.NUMPY_IMPL["ThresholdCoupling"] = _threshold_coupling_numpy
S.MPMATH_IMPL["ThresholdCoupling"] = _threshold_coupling_mpmath


def threshold_point_mass(n, p, eps, log_a, delta=None):
    """Sympy upper bound on P_v(A) given the reference probability a = P(M(B) ∈ A), B the reference sample,
    when the sample D_v = T_v(B) differs from B in H(B) ~ Bin(n, p) entries (H may depend on B):

        P_v(A) <= φ(a) := min over integers M >= 0 of {P(H > M) + e^{εM} a + δ (e^{εM} - 1)/(e^ε - 1)}.

    Derivation: pointwise, P(M(D_v) ∈ A | B) <= min{1, e^{εH} g(B) + δ_H} (group privacy, g(B) = P(M(B) ∈ A)),
    and min{1, e^{εH} g + δ_H} <= 1{H > M} + e^{εM} g + δ_M (if H <= M, e^{εH} <= e^{εM}, δ_H <= δ_M). Take the
    expectation over B: no independence between H and g(B) is needed. Each bracket is affine and
    non-decreasing in a, so φ (their minimum) is concave and non-decreasing: averages over v pass inside
    (Jensen), as for :func:`truncated_point_mass`.
    """
    dl = sp.Integer(0) if delta is None else delta
    return ThresholdCoupling(n, p, eps, log_a, dl)
