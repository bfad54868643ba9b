"""Assouad with a shared information budget (docs/methods/shared-budget-assouad.md; sparse Bernoulli under ε-LDP,
docs/problems/sparse-bernoulli.md). Valid for sequentially interactive protocols.

**Family.** k <= d coordinates with θ_j ∈ {θ₋, θ₊} by v ∈ {±1}^k (the others 0), 0 <= θ₋ < θ₊ <= min{1, s/k}
(Σθ <= s); τ = θ₊ - θ₋, η = τ/2; v uniform.

**Bound.** ``minimax >= η² (k - min{k, L n β})`` with

- L = sup_t (t-1)²/((t+1) f(t)), f(t) = t log t - t + 1 (so that the triangular discrimination
  LC(P, Q) = Σ (p-q)²/(p+q) is at most L KL(P ‖ Q)); certified on cells below as at most :data:`L_UPPER`;
- β = E_N min{G(1 + τ(e^ε-1)) h(N), N KL(Bern θ₊ ‖ Bern θ₋)}, N ~ Bin(k, ½), G(t) = t f(t)/(t-1)²,
  h(N) = sup_{a ∈ [e^{-ε}, 1]} min{A(a), N C(a)}, A(a) = α²(a e^ε - 1)(1 - a), α² = τ²/(θ₊(1-θ₊)),
  C(a) = τ²(e^ε-1)² a².

**Proof.** (1) The Bayes risk is the posterior variance ``η² Σ_j (1 - E v̂_j²)``, v̂_j = E[v_j | Z], and
E v̂_j² = ½ LC(M₊ⱼ, M₋ⱼ) for the two mixtures of transcript laws. (2) Pair each v with v_j = + with v ⊕ j:
LC is jointly convex, and LC <= L KL taken from the plus vertex, so ``Σ_j E v̂_j² <= L E_v Σ_{j ∈ S₊(v)}
KL(M_v ‖ M_{v⊕j})``. (3) The KL chain rule, from the one vertex v for every j (the past drawn from M_v), splits this
into one term per report: interaction costs nothing. (4) One report: the likelihood ratio M_v(z)/M_{v⊕j}(z) lies in
[1/(1+τ(e^ε-1)), 1+τ(e^ε-1)], and KL = Σ_z G(t_z)(p-q)²/p <= G(t_max) χ² (G increasing:
G(t) = ∫_0^1 t(1-u)/(1+u(t-1)) du). (5) M_v(z) - M_{v⊕j}(z) = E_v[W φ_j], W = Q(z | X), φ_j = τ(X_j - θ₊)/(θ₊(1-θ₊));
the φ_j are orthogonal with E φ_j² = α², so Bessel and the Bhatia–Davis bound (W within a factor e^ε of its
minimum a E W) give at most ``M_v(z) A(a_z)``, and coordinate by coordinate at most ``M_v(z) N C(a_z)``; summing
over z: h(N) per report. Data processing gives the N KL(Bern θ₊ ‖ Bern θ₋) term. (6) |S₊(V)| ~ Bin(k, ½).

**Numerics.** h has a closed form: A peaks at a* = (e^ε+1)/(2e^ε) with A(a*) = α²(e^ε-1)²/(4e^ε); if N C(a*) < A(a*)
the supremum is at the crossing a_c = ((e^ε+1) + sqrt((e^ε-1)² - 4ρ))/(2(e^ε+ρ)), ρ = N (e^ε-1)² θ₊(1-θ₊), and
h = N C(a_c). E_N is exact for k <= 256; beyond, N outside mean ± 12 sd is charged at its bucket's top, and the
middle is cut into 96 buckets, each charged at its top (the integrand is nondecreasing in N). The result is widened
by 1e-9 relatively: float64 arithmetic with stable forms (KL as a sum of non-negative φ̃ terms, G through the
φ̃ series below 10^-2); it is listed among the float64 parts of the high-precision check.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp

from ..core import symbolic as S

#: L rounded up (the supremum is 1.1159123... at t = 0.2234; :func:`certified_l_upper` checks it on cells)
L_UPPER = sp.Rational(111592, 100000)


def _f(t):
    t = np.asarray(t, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(t > 0, t * np.log(np.where(t > 0, t, 1.0)) - t + 1, 1.0)


def certified_l_upper(width: float = 1e-6) -> float:
    """An upper bound on L = sup_{t > 0} r(t), r(t) = (t-1)²/((t+1) f(t)), by regions:
    (0, 1e-3]: r <= 1/f(1e-3) (numerator <= 1, f decreasing on (0, 1)); [1e-3, 0.8] and [1.25, e³]: cells of the
    given width, each term at its worst end ((t-1)², t+1 and f are monotone on each side of 1); [0.8, 1.25]:
    f(t) >= (t-1)²/(2 max{t, 1}) (f'' = 1/s, Taylor's remainder), so r <= 2 max{t, 1}/(t+1) <= 1.25·2/2.25;
    [e³, ∞): f(t) >= t(log t - 1), so r <= 1/(log t - 1) <= 1/2. Rounded up by 1e-12 relatively."""
    out = [1.0 / float(_f(1e-3)), 2.5 / 2.25, 0.5]
    lo = np.arange(1e-3, 0.8, width)
    hi = np.minimum(lo + width, 0.8)
    out.append(float(np.max((lo - 1) ** 2 / ((lo + 1) * _f(hi)))))  # t < 1: (t-1)² and f decrease
    lo = np.arange(1.25, math.exp(3), width * 10)
    hi = np.minimum(lo + width * 10, math.exp(3))
    out.append(float(np.max((hi - 1) ** 2 / ((lo + 1) * _f(lo)))))  # t > 1: (t-1)² and f increase
    return max(out) * (1 + 1e-12)


def _phi_tilde(x):
    from .ldp_mutual_info import _phi_tilde as pt

    return pt(x)


def _kl_bern(p, q):
    """KL(Bern p ‖ Bern q) = q φ̃(p/q - 1) + (1-q) φ̃((1-p)/(1-q) - 1), a sum of non-negative terms (+inf when q = 0 <
    p or q = 1 > p)."""
    p, q = np.broadcast_arrays(np.asarray(p, float), np.asarray(q, float))
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(q > 0, q * _phi_tilde(np.where(q > 0, (p - q) / np.where(q > 0, q, 1.0), 0.0)), np.where(p > 0, np.inf, 0.0))
        t2 = np.where(q < 1, (1 - q) * _phi_tilde(np.where(q < 1, (q - p) / np.where(q < 1, 1 - q, 1.0), 0.0)),
                      np.where(p < 1, np.inf, 0.0))
    return t1 + t2


def _G(x):
    """G(1 + x) = (1+x) φ̃(x)/x² (1/2 at x = 0)."""
    x = np.asarray(x, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, (1 + x) * _phi_tilde(x) / np.where(x > 0, x * x, 1.0), 0.5)


def h_over_scale(N, tp, eps):
    """h(N)/(τ²(e^ε-1)²) (vectorised): N a_c² below the threshold, 1/(4 e^ε θ₊(1-θ₊)) beyond (module docstring)."""
    N, tp = np.broadcast_arrays(np.asarray(N, float), np.asarray(tp, float))
    E = math.exp(eps)
    em1 = math.expm1(eps)
    var = tp * (1 - tp)
    rho = N * em1 * em1 * var
    thresh = E * em1 * em1 / (E + 1) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        disc = np.maximum(em1 * em1 - 4 * rho, 0.0)
        ac = ((E + 1) + np.sqrt(disc)) / (2 * (E + rho))
        peak = np.where(var > 0, 1 / (4 * E * np.where(var > 0, var, 1.0)), np.inf)
    return np.where(rho < thresh, N * ac * ac, peak)


@functools.lru_cache(maxsize=2048)
def _buckets(k: int):
    """(tops, probabilities) for N ~ Bin(k, ½): every value for k <= 256; else two tails and 96 middle buckets,
    each charged at its largest N."""
    from scipy import special, stats

    if k <= 256:
        N = np.arange(k + 1, dtype=float)
        return N, stats.binom.pmf(N, k, 0.5)
    sd = math.sqrt(k) / 2
    lo, hi = max(0, int(math.floor(k / 2 - 12 * sd))), min(k, int(math.ceil(k / 2 + 12 * sd)))
    mid = np.arange(lo, hi + 1, dtype=float)
    pm = stats.binom.pmf(mid, k, 0.5)
    edges = np.unique(np.linspace(0, mid.size, 97).astype(int))
    tops = [float(lo - 1)] if lo > 0 else []
    probs = [float(special.bdtr(lo - 1, k, 0.5))] if lo > 0 else []
    for a, b in zip(edges[:-1], edges[1:]):
        tops.append(float(mid[b - 1]))
        probs.append(float(pm[a:b].sum()))
    if hi < k:
        tops.append(float(k))
        probs.append(float(special.bdtrc(hi, k, 0.5)))
    return np.array(tops), np.array(probs)


def shared_budget_beta(k, tp, tm, eps) -> np.ndarray:
    """β = E_N min{G(1 + τ(e^ε-1)) h(N), N KL(Bern θ₊ ‖ Bern θ₋)} (vectorised; module docstring), widened by 1e-9."""
    k, tp, tm, eps = np.broadcast_arrays(*(np.asarray(a, float) for a in (k, tp, tm, eps)))
    out = np.full(k.shape, np.nan)
    ok = np.isfinite(k) & (k >= 1) & (tp > tm) & (tm >= 0) & (tp <= 1) & (eps > 0) & np.isfinite(eps)
    if not ok.any():
        return out
    ki = np.floor(k).astype(np.int64)
    for kk in np.unique(ki[ok]):
        sel = ok & (ki == kk)
        tops, probs = _buckets(int(kk))
        p, q, e = tp[sel], tm[sel], eps[sel]
        tau = p - q
        res = np.empty(p.shape)
        for e0 in np.unique(e):
            s2 = e == e0
            em1 = math.expm1(float(e0))
            scale = (tau[s2] * em1) ** 2 * _G(tau[s2] * em1)
            up, inv = np.unique(p[s2], return_inverse=True)  # h depends on θ₊ only (not on θ₋): once per value
            hv = h_over_scale(tops[None, :], up[:, None], float(e0))[inv.ravel()] * scale[:, None]
            kl = _kl_bern(p[s2], q[s2])[:, None]
            with np.errstate(invalid="ignore"):  # N = 0: no flip, no information (not 0·inf)
                dp = np.where(tops[None, :] > 0, tops[None, :] * kl, 0.0)
            integrand = np.minimum(hv, dp)
            res[s2] = (integrand * probs[None, :]).sum(axis=1)
        out[sel] = res * (1 + 1e-9)
    return out


def _beta_numpy(k, tp, tm, eps):
    out = shared_budget_beta(k, tp, tm, eps)
    return out if out.ndim else float(out)


def _beta_mpmath(k, tp, tm, eps):
    import mpmath

    v = float(shared_budget_beta(float(k), float(tp), float(tm), float(eps)))
    return mpmath.mpf(v) if math.isfinite(v) else mpmath.mpf("nan")


class SharedBudgetInfo(sp.Function):
    """``SharedBudgetInfo(k, θ₊, θ₋, ε) = β``: the per-report bound on E_v Σ_{j ∈ S₊(v)} KL(M_v ‖ M_{v⊕j}) of the
    shared-budget Assouad bound (module docstring)."""

    nargs = 4

    def _latex(self, printer, exp=None):
        args = ", ".join(printer._print(a) for a in self.args)
        base = rf"\beta\left({args}\right)"
        return base if exp is None else rf"\left({base}\right)^{{{exp}}}"


S.NUMPY_IMPL["SharedBudgetInfo"] = _beta_numpy
S.MPMATH_IMPL["SharedBudgetInfo"] = _beta_mpmath


def shared_budget_bound(n, eps, k, tp, tm):
    """sympy: η² (k - min{k, L n β}), η = (θ₊ - θ₋)/2."""
    eta2 = (tp - tm) ** 2 / 4
    return eta2 * (k - S.Min(k, L_UPPER * n * SharedBudgetInfo(k, tp, tm, eps)))
