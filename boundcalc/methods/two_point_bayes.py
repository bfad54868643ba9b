"""Two-point Bayes bound through the privacy affinity of coupled samples (derivation: docs/methods/two-point-bayes.md).

Setting (:class:`CoupledPairFamily`): two hypotheses P_± whose parameters are ±ρu (||u|| = 1), loss ||θ̂ - θ||²,
and an entry-wise coupling of P_+ and P_- under which two coupled observations differ with probability t,
independently: the coupled samples differ in H ~ Bin(n, t) entries. m_± are the densities of what the estimator
outputs under P_±^n (any mechanism, any estimator).

1. **Posterior variance.** With the prior ½/½ the Bayes risk is ``E Var(θ | output) = 2ρ² ∫ m₊m₋/(m₊+m₋)``.
2. **Coupling.** (a, b) ↦ ab/(a+b) is jointly concave and 1-homogeneous, so, m_± being averages over the
   coupling of the output densities a_D, b_D' of coupled samples, ``∫ m₊m₋/(m₊+m₋) >= E_H ∫ ab/(a+b)`` where the
   inner pair belongs to two samples at Hamming distance H.
3. **Affinity of an indistinguishable pair.** ``ab/(a+b) = (a+b)/4 - (a-b)²/(4(a+b))``, so ``∫ ab/(a+b) = 1/2 -
   Δ/4`` with Δ the triangular discrimination, an f-divergence (f(x) = (x-1)²/(x+1)).

   * (ε,δ)-DP: samples at distance h are (hε, δ_h)-indistinguishable, δ_h = δ(e^{hε} - 1)/(e^ε - 1) (group
     privacy). Every (ε',δ')-indistinguishable pair is a post-processing of the four-point pair of Kairouz, Oh &
     Viswanath (2015, Theorem 2.1/the privacy region), whose Δ is 2δ' + 2(1-δ') tanh²(ε'/2); f-divergences
     only decrease under post-processing, so ``∫ ab/(a+b) >= (1-δ')₊ sech²(ε'/2)/2``.
   * α-TV privacy: ab/(a+b) >= min(a, b)/2 and TV <= min{1, αh} (triangle inequality along the path), so
     ``∫ ab/(a+b) >= (1 - αh)₊/2``.
   * α-KL privacy (KL <= α both ways): ``(√a-√b)² <= (a-b) log(a/b)/4`` gives 1 - BC <= α/4 for neighbours, the
     Bhattacharyya angle arccos BC is a metric (great-circle distance of √a, √b on the unit sphere of L²), so
     BC_h >= cos(min{π/2, hθ}), θ = arccos(1 - α/4) = 2 arcsin(√(α/8)); by Cauchy–Schwarz
     ``∫ 2ab/(a+b) >= BC²``, so ``∫ ab/(a+b) >= cos²(min{π/2, hθ})/2``.

4. Together: ``minimax >= Bayes risk >= ρ² E_H g(H)`` with g the bracket of step 3.

Sources: the posterior-variance form and the coupling are those of Barber & Duchi (2014, arXiv 1412.4451) two-point
mixtures; group privacy: Dwork & Roth (2014); the privacy region: Kairouz, Oh & Viswanath (2015, "The composition
theorem for differential privacy", Theorem 2.1).

**Evaluation (a certified lower bound in floating point).** g is non-increasing in h and non-negative, so for any
integers t_1 < ... < t_J (Abel summation; g(t_{J+1}) := 0)

    E g(H) >= Σ_j (g(t_j) - g(t_{j+1})) P(H <= t_j),

a sum of non-negative terms (the mass of H above t_J is dropped, and every count in (t_{j-1}, t_j] is given the
value g(t_j) <= g(count)); with every integer of the window it is E g(H) restricted to the window. The thresholds
are every integer of the window of H (within WINDOW_SD standard deviations of np, cut where g vanishes or falls
below 1e-30) when it has at most MAX_THRESHOLDS counts, else MAX_THRESHOLDS integers spread over it. The binomial
cdf comes from the regularised incomplete beta function (scipy's betaincc) and is lowered by TAIL_REL_ERR; each
difference of g is lowered by G_REL_ERR times g(t_j) plus G_ABS_ERR; the sum by SUM_REL_ERR. The high-precision
check of the package evaluates this same float64 function (it is named in ``float64_parts``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..core import symbolic as S
from ..core.bounds import Bound, Method, register_method

#: half-width of the window of H, in standard deviations (plus as many counts, for the Poisson-like tails)
WINDOW_SD = 12.0
#: largest number of thresholds t_j per point (the window's counts when it has fewer)
MAX_THRESHOLDS = 512
#: g is cut where it falls below this (only lowers the bound)
G_FLOOR = 1e-30
#: relative error allowed for one binomial cdf from scipy.special.betaincc (the package's measured bound for
#: n up to 1e12 was 2.6e-11; see boundcalc.methods.group_coupling.TAIL_REL_ERR)
TAIL_REL_ERR = 1e-9
#: relative and absolute error allowed for one float64 value of g (an exp/cos of an argument below 100 in absolute
#: value, times 1 - δ_h: a relative 1e-14 and an absolute 1e-14 cover both with room)
G_REL_ERR, G_ABS_ERR = 5e-14, 5e-14
#: relative error allowed for the sum of at most MAX_THRESHOLDS non-negative terms
SUM_REL_ERR = 1e-12

KIND_DP, KIND_TV, KIND_KL = 0, 1, 2


def _g(kind: int, h, x, y):
    """g(h) (numpy; h an array, x and y floats or arrays broadcastable to it):
    DP: x = ε, y = δ: (1 - δ_h)₊ sech²(εh/2); TV: x = α: (1 - αh)₊; KL: x = α: cos²(min{π/2, hθ})."""
    with np.errstate(all="ignore"):
        if kind == KIND_DP:
            e = np.exp(-np.minimum(x * h, 1400.0))
            sech2 = 4.0 * e / (1.0 + e) ** 2
            dh = np.where(y > 0, y * np.expm1(np.minimum(x * h, 700.0)) / np.expm1(x), 0.0)
            return np.maximum(0.0, 1.0 - dh) * sech2
        if kind == KIND_TV:
            return np.maximum(0.0, 1.0 - x * h)
        theta = 2.0 * np.arcsin(np.minimum(1.0, np.sqrt(x / 8.0)))
        return np.cos(np.minimum(math.pi / 2, h * theta)) ** 2


def _h_cut(kind: int, x, y):
    """A count beyond which g is 0 or below G_FLOOR (numpy): the window stops there."""
    with np.errstate(all="ignore"):
        if kind == KIND_DP:
            cut = (math.log(4.0 / G_FLOOR)) / x  # sech²(z/2) <= 4e^{-z}
            # δ_h >= 1 from h >= log1p((e^ε - 1)/δ)/ε on
            dcut = np.where(y > 0, np.log1p(np.expm1(x) / np.where(y > 0, y, 1.0)) / x, np.inf)
            return np.ceil(np.minimum(cut, dcut)) + 1.0
        if kind == KIND_TV:
            return np.floor(1.0 / x) + 1.0
        theta = 2.0 * np.arcsin(np.minimum(1.0, np.sqrt(x / 8.0)))
        return np.floor(math.pi / 2 / theta) + 1.0


def affinity_lower(kind: int, n, p, x, y):
    """A certified lower bound on E g(H), H ~ Bin(n, p) (numpy, broadcast; a float for scalar input); see the module
    docstring for the method and its error margins."""
    from scipy import special

    shape = np.broadcast_shapes(*(np.shape(a) for a in (n, p, x, y)))
    nn, pp, xx, yy = (np.broadcast_to(np.asarray(a, float), shape).ravel() for a in (n, p, x, y))
    out = np.zeros(nn.shape)
    rows = []  # (i, lo, length) of the elements whose window is every count lo, ..., hi: computed together below
    cuts = {}  # the window's end from the level, once per (x, y): the same float
    for i in range(nn.size):
        if (xx[i], yy[i]) not in cuts:
            cuts[(xx[i], yy[i])] = float(_h_cut(kind, xx[i], yy[i])) if xx[i] > 0 and yy[i] >= 0 else math.nan
        window = _window(kind, nn[i], pp[i], xx[i], yy[i], cuts[(xx[i], yy[i])])
        if window is None or pp[i] >= 1.0 or window[1] - window[0] + 1 > MAX_THRESHOLDS:
            out[i] = _affinity_one(kind, nn[i], pp[i], xx[i], yy[i], special)
        else:
            rows.append((i, window[0], int(window[1] - window[0]) + 1))
    if rows:
        _affinity_rows(kind, rows, nn, pp, xx, yy, special, out)
    return out.reshape(shape) if shape else float(out[0])


def _window(kind, n, p, x, y, h_cut):
    """The counts lo..hi summed over (None: the value is nan or 0 without a sum); ``h_cut`` = _h_cut(kind, x, y)."""
    if not (n >= 0 and 0 <= p <= 1 and x > 0 and y >= 0):
        return None
    mu = n * p
    sd = math.sqrt(max(mu * (1.0 - p), 0.0))
    lo = max(0.0, math.floor(mu - WINDOW_SD * sd - WINDOW_SD))
    hi = min(n, math.ceil(mu + WINDOW_SD * sd + WINDOW_SD), h_cut)
    return None if hi < lo else (lo, hi)


def _affinity_rows(kind, rows, nn, pp, xx, yy, special, out):
    """The sums of :func:`_affinity_one` for many elements at once (the same elementwise operations on the same
    counts, so the same floats; each row's sum is numpy's sum of exactly its own terms, as there)."""
    idx = np.array([r[0] for r in rows])
    lo = np.array([r[1] for r in rows])
    length = np.array([r[2] for r in rows])
    width = int(length.max())
    t = lo[:, None] + np.arange(width, dtype=float)[None, :]
    x, y, n, p = xx[idx][:, None], yy[idx][:, None], nn[idx][:, None], pp[idx][:, None]
    g = _g(kind, t, x, y)
    g_next = np.concatenate([g[:, 1:], np.zeros((len(rows), 1))], axis=1)
    g_next[np.arange(len(rows)), length - 1] = 0.0
    dec = np.maximum(0.0, (g - g_next) - G_REL_ERR * g - G_ABS_ERR)
    with np.errstate(all="ignore"):
        cdf = np.where(t >= n, 1.0, _cdf_where_used(t, n, p, dec, np.arange(width)[None, :] < length[:, None]))
    terms = dec * cdf
    for r, (i, _, m) in enumerate(rows):
        out[i] = max(0.0, float(np.sum(terms[r, :m])) * (1.0 - SUM_REL_ERR))


def _cdf_where_used(t, n, p, dec, inside):
    """``np.where(isfinite(tail), tail, 0)`` with ``tail = betaincc(t + 1, max(n - t, 1e-300), p) (1 - TAIL_REL_ERR)``,
    the lowered P(H <= t) of the sum, computed only where the sum reads it: inside a row's window (``inside``), where
    the decrement ``dec`` is not 0 and where t < n (from t = n on the cdf is 1). Elsewhere it is 0: a term
    ``dec * cdf`` with dec = +0 is +0 whatever the (finite, non-negative) cdf, and adding +0 to a partial sum of
    non-negative terms gives that sum, so numpy's sum of the row is the same float. betaincc is elementwise, so
    each computed element is the float of the full array. Where g decays below the absolute allowance G_ABS_ERR
    (sech²(εh/2) < 5e-14 from εh ≈ 32 on, half the window at ε = 1) and beyond a row's own length, nothing is
    computed."""
    from scipy import special

    t, n, p, dec, inside = np.broadcast_arrays(t, n, p, dec, inside)
    need = inside & (dec != 0) & ~(t >= n)  # NaN kept where it was computed (dec != 0, and not t >= n)
    out = np.zeros(t.shape)
    tn = t[need]
    tail = special.betaincc(tn + 1.0, np.maximum(n[need] - tn, 1e-300), p[need]) * (1.0 - TAIL_REL_ERR)
    out[need] = np.where(np.isfinite(tail), tail, 0.0)
    return out


def _affinity_one(kind, n, p, x, y, special):
    if not (n >= 0 and 0 <= p <= 1 and x > 0 and y >= 0):
        return float("nan")
    mu = n * p
    sd = math.sqrt(max(mu * (1.0 - p), 0.0))
    lo = max(0.0, math.floor(mu - WINDOW_SD * sd - WINDOW_SD))
    hi = min(n, math.ceil(mu + WINDOW_SD * sd + WINDOW_SD), float(_h_cut(kind, x, y)))
    if p >= 1.0:
        lo = hi = n if n <= hi else -1.0
    if hi < lo:
        return 0.0
    if hi - lo + 1 <= MAX_THRESHOLDS:
        t = np.arange(lo, hi + 1.0)
    else:
        t = np.unique(np.round(np.linspace(lo, hi, MAX_THRESHOLDS)))
    g = _g(kind, t, x, y)
    g_next = np.append(g[1:], 0.0)
    dec = np.maximum(0.0, (g - g_next) - G_REL_ERR * g - G_ABS_ERR)
    with np.errstate(all="ignore"):
        if p >= 1.0:
            cdf = np.where(t >= n, 1.0, 0.0)
        else:  # P(H <= t) (exactly 1 from t = n on), lowered by its error allowance
            cdf = np.where(t >= n, 1.0, _cdf_where_used(t, n, p, dec, True))
    return max(0.0, float(np.sum(dec * cdf)) * (1.0 - SUM_REL_ERR))


def _mp_value(kind):
    def impl(n, p, x, y):
        import mpmath

        v = affinity_lower(kind, float(n), float(p), float(x), float(y))
        return mpmath.mpf("nan") if math.isnan(v) else mpmath.mpf(v)

    return impl


class DPAffinity(sp.Function):
    """``DPAffinity(n, p, ε, δ)``: a certified lower bound on E[(1 - δ_H)₊ sech²(εH/2)], H ~ Bin(n, p),
    δ_H = δ(e^{εH} - 1)/(e^ε - 1)."""

    nargs = 4

    def _latex(self, printer, exp=None):
        nn, pp, ee, dd = (printer._print(a) for a in self.args)
        base = (rf"\mathbb{{E}}_{{H\sim\mathrm{{Bin}}({nn},{pp})}}\left[\left(1 - {dd}\tfrac{{e^{{{ee}H}}-1}}"
                rf"{{e^{{{ee}}}-1}}\right)_+ \operatorname{{sech}}^2({ee}H/2)\right]")
        return base if exp is None else rf"\left({base}\right)^{{{exp}}}"


class TVAffinity(sp.Function):
    """``TVAffinity(n, p, α)``: a certified lower bound on E[(1 - αH)₊], H ~ Bin(n, p)."""

    nargs = 3

    def _latex(self, printer, exp=None):
        nn, pp, aa = (printer._print(a) for a in self.args)
        base = rf"\mathbb{{E}}_{{H\sim\mathrm{{Bin}}({nn},{pp})}}\left(1 - {aa} H\right)_+"
        return base if exp is None else rf"\left({base}\right)^{{{exp}}}"


class KLAffinity(sp.Function):
    """``KLAffinity(n, p, α)``: a certified lower bound on E cos²(min{π/2, Hθ}), H ~ Bin(n, p),
    θ = arccos(1 - α/4)."""

    nargs = 3

    def _latex(self, printer, exp=None):
        nn, pp, aa = (printer._print(a) for a in self.args)
        base = (rf"\mathbb{{E}}_{{H\sim\mathrm{{Bin}}({nn},{pp})}}\cos^2\left(\min\left\{{\tfrac{{\pi}}{{2}}, "
                rf"H\arccos(1 - {aa}/4)\right\}}\right)")
        return base if exp is None else rf"\left({base}\right)^{{{exp}}}"


S.NUMPY_IMPL["DPAffinity"] = lambda n, p, e, d: affinity_lower(KIND_DP, n, p, e, d)
S.NUMPY_IMPL["TVAffinity"] = lambda n, p, a: affinity_lower(KIND_TV, n, p, a, 0.0)
S.NUMPY_IMPL["KLAffinity"] = lambda n, p, a: affinity_lower(KIND_KL, n, p, a, 0.0)
_MP_DP, _MP_TV, _MP_KL = _mp_value(KIND_DP), _mp_value(KIND_TV), _mp_value(KIND_KL)
S.MPMATH_IMPL["DPAffinity"] = _MP_DP
S.MPMATH_IMPL["TVAffinity"] = lambda n, p, a: _MP_TV(n, p, a, 0)
S.MPMATH_IMPL["KLAffinity"] = lambda n, p, a: _MP_KL(n, p, a, 0)


def affinity_expr(privacy: str, n, t):
    """The bracket E_H g(H) of the privacy model (sympy), H ~ Bin(n, t)."""
    if privacy in ("pure", "smooth"):
        return DPAffinity(n, t, S.eps, sp.Integer(0))
    if privacy == "approx":
        return DPAffinity(n, t, S.eps, S.delta)
    if privacy == "tv":
        return TVAffinity(n, t, S.alpha)
    if privacy == "kl":
        return KLAffinity(n, t, S.alpha)
    raise ValueError(f"no two-point Bayes affinity for privacy {privacy!r}")


#: the affinity step of each privacy model, as printed in a bound's derivation
AFFINITY_TEXT = {
    "pure": "a pair at Hamming distance h is hε-indistinguishable, so ∫ab/(a+b) >= sech²(hε/2)/2",
    "smooth": "smooth DP implies ε-DP; a pair at Hamming distance h is hε-indistinguishable, so ∫ab/(a+b) >= "
              "sech²(hε/2)/2",
    "approx": "a pair at Hamming distance h is (hε, δ_h)-indistinguishable, δ_h = δ(e^{hε}-1)/(e^ε-1) (group "
              "privacy), and the four-point pair of Kairouz–Oh–Viswanath dominates it, so ∫ab/(a+b) >= "
              "(1-δ_h)₊ sech²(hε/2)/2",
    "tv": "ab/(a+b) >= min(a,b)/2 and a pair at Hamming distance h has TV <= min{1, αh}, so ∫ab/(a+b) >= (1-αh)₊/2",
    "kl": "1 - BC <= α/4 for neighbours ((√a-√b)² <= (a-b)log(a/b)/4), the Bhattacharyya angle is a metric, so at "
          "distance h BC >= cos(min{π/2, hθ}), θ = arccos(1-α/4), and ∫2ab/(a+b) >= BC² (Cauchy–Schwarz)",
}


@dataclass(frozen=True)
class CoupledPairFamily:
    """A family shape: P_± with parameters ±ρu under the loss ||θ̂ - θ||², and an entry-wise coupling of P_+, P_-
    whose entries differ with probability ``t`` (sympy). ``rho_sq``: ρ² (sympy). The rest as in
    :class:`boundcalc.core.bounds.TwoPointFamily`."""

    name: str
    title: str
    rho_sq: object
    t: object
    source: str = ""
    derivation: str = ""
    free: tuple = ()


@register_method
class TwoPointBayes(Method):
    """minimax >= ρ² E_H g(H), H ~ Bin(n, t) (module docstring)."""

    name, shape, privacies = "two-point-bayes", CoupledPairFamily, ("pure", "smooth", "approx", "tv", "kl")

    def bounds(self, family, privacy):
        expr = family.rho_sq * affinity_expr(privacy, S.n, family.t)
        derivation = (family.derivation + " Prior ½/½: Bayes risk = 2ρ² ∫ m₊m₋/(m₊+m₋) (posterior variance); "
                      "(a,b) ↦ ab/(a+b) is jointly concave and 1-homogeneous, so over the coupling it is at least "
                      "2ρ² E_H ∫ab/(a+b) for the output densities a, b of two samples H entries apart; "
                      + AFFINITY_TEXT[privacy] + ". Risk >= ρ² E_H[2∫ab/(a+b)].")
        return [Bound(side="lower", name=family.name, label=family.title, expr=expr,
                      source=family.source + "; docs/methods/two-point-bayes.md", derivation=derivation,
                      free=family.free)]
