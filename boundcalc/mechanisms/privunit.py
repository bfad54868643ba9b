"""PrivUnit (Bhowmick, Duchi, Freudiger, Kapoor & Rogers 2018): an ε-LDP unbiased view of a point of the
ℓ2 ball of radius T in ℝ^d, d >= 2 (docs/problems/mean.md).

Mechanism (one user, x with ‖x‖ <= T):

1. Ṽ = s x/‖x‖ with s = ±1, P(s = +1) = 1/2 + ‖x‖/(2T) (any unit direction when x = 0), so
   E[T Ṽ] = x (the first step of ℓ2 sampling).
2. Cap step on the unit direction u = Ṽ: with γ ∈ [0, 1) fixed, let W = ⟨V, u⟩ for V uniform on the unit
   sphere, C = P(W >= γ) = (1/2) I_{1-γ²}((d-1)/2, 1/2) (regularised incomplete beta). Release V drawn
   uniformly from the cap {⟨v,u⟩ >= γ} with probability p and uniformly from its complement otherwise,
   p = e^ε C/(e^ε C + 1 - C).
3. Output Z = T V/m with m = E⟨V, u⟩ (the same for every u), so E[Z | Ṽ] = T Ṽ and E Z = x.

Privacy: the density of V (with respect to the uniform law on the sphere) is p/C on the cap of u and
(1-p)/(1-C) off it; p/C ÷ (1-p)/(1-C) = e^ε by the choice of p, so for any two inputs (hence any two
mixtures over step 1) the densities at every v are within e^ε: ε-LDP.

Second moment: ‖Z‖ = T/m always, so E‖Z‖² = T²/m² exactly, with
``m = A (p/C - (1-p)/(1-C))``, ``A = E[W; W >= γ] = (1-γ²)^{(d-1)/2} / ((d-1) B(1/2, (d-1)/2))``
(W has density ∝ (1-w²)^{(d-3)/2} on [-1, 1]; E W = 0, so E[W; W < γ] = -A). Any γ gives a valid
mechanism; boundcalc uses the best γ on a fixed grid (:func:`privunit_m`), computed in logs (large d,
large ε). Checked in tests/test_local_mechanisms.py: C and A against quadrature, the privacy ratio, and
unbiasedness and ‖Z‖ by simulation of the sampler. Asi, Feldman & Talwar (2022) show PrivUnit is the
optimal unbiased ℓ2 mechanism (recalled); at ε = 3 its E‖Z‖² is 2.6 times below ℓ2 sampling's for large d.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ..core import symbolic as S

#: grid of cap thresholds γ (dense near 0 for large d, and near 1 for large ε)
def _sorted_distinct(x):
    """``np.unique`` of a float array without NaN (sort, drop repeats), which under numpy 2 imports ``numpy.ma``:
    17 ms of every ``rate`` that loads this module."""
    x = np.sort(x)
    return x[np.concatenate(([True], x[1:] != x[:-1]))]


_GAMMA = _sorted_distinct(np.concatenate([np.linspace(0.0, 0.999, 2001), 1.0 - np.logspace(-14, -3, 300),
                                          np.logspace(-6, -1, 400)]))


def _log_cap(d, g):
    """log C(γ) = log P(W >= γ), γ >= 0 (vectorised over γ for one d)."""
    from ..methods.sphere_cap import _log_cap_numpy

    return _log_cap_numpy(np.full_like(g, float(d)), np.sqrt(np.clip(1.0 - g ** 2, 0.0, 1.0)))


def _log_A(d, g):
    """log E[W; W >= γ] = ((d-1)/2) log(1-γ²) - log(d-1) - log B(1/2, (d-1)/2)."""
    from scipy import special

    a = (d - 1) / 2.0
    with np.errstate(divide="ignore"):
        return a * np.log1p(-g ** 2) - math.log(d - 1) - special.betaln(0.5, a)


def m_values(d: int, eps: float, gamma):
    """m(γ) = E⟨V, u⟩ of PrivUnit at threshold γ (numpy, vectorised over γ), the best p for that γ."""
    g = np.asarray(gamma, float)
    lc = _log_cap(d, g)
    lA = _log_A(d, g)
    l1c = np.log1p(-np.exp(lc))
    # p/C = 1/(C + (1-C) e^{-ε});  (1-p)/(1-C) = 1/((1-C) + C e^ε)
    t1 = np.exp(lA - np.logaddexp(lc, l1c - eps))
    t2 = np.exp(lA - np.logaddexp(l1c, lc + eps))
    return t1 - t2


def privunit_parameters(d: int, eps: float):
    """(m, γ, p, C): the grid γ maximising m (a valid, not necessarily optimal, choice)."""
    d, eps = int(d), float(eps)
    with np.errstate(all="ignore"):
        m = m_values(d, eps, _GAMMA)
    m = np.where(np.isfinite(m), m, -np.inf)
    i = int(np.argmax(m))
    g = float(_GAMMA[i])
    lcv = _log_cap(d, np.array([g]))[0]
    C, lc = float(np.exp(lcv)), float(lcv)
    # p = e^ε C/(e^ε C + 1 - C); from log C where C underflows (it is not 1 there: e^ε C can still be moderate)
    p = 1.0 / (1.0 + math.exp(min(700.0, math.log1p(-C) - (math.log(C) if C > 0 else lc) - eps)))
    return float(m[i]), g, p, C


_CACHE: dict = {}


def privunit_factor_value(d: float, eps: float) -> float:
    """1/m² (E‖Z‖² = T²/m²), cached per (d, ε)."""
    key = (int(round(d)), float(eps))
    if key not in _CACHE:
        if key[0] < 2:
            _CACHE[key] = math.nan
        else:
            m = privunit_parameters(*key)[0]
            _CACHE[key] = 1.0 / m ** 2 if m > 0 else math.nan
    return _CACHE[key]




class PrivUnitFactor(S.ScalarFunction):
    """``PrivUnitFactor(d, ε) = 1/m²``: E‖Z‖² = T² PrivUnitFactor(d, ε) for PrivUnit on the ball of radius T
    (m at the best grid threshold γ; computed numerically with incomplete beta functions)."""

    nargs = 2
    scalar_value = staticmethod(privunit_factor_value)
    latex = r"m_{{\mathrm{{PU}}}}({0}, {1})^{{-2}}"
    nan_unless_finite = True


# ------------------------------------------------------------ working precision (the certification path)

_MP_CACHE: dict = {}


def moments_mp(d: float, eps: float):
    """(m, E W²) of PrivUnit at the float64 grid threshold γ of :func:`privunit_parameters` (the mechanism's
    parameter), computed from the definitions at mpmath's working precision: C = (1/2) I_{1-γ²}((d-1)/2, 1/2) and
    C_{d+2} by :func:`boundcalc.methods.sphere_cap._log_cap_mpmath`, A = (1-γ²)^{(d-1)/2}/((d-1) B(1/2, (d-1)/2)),
    p/C = 1/a₁ and (1-p)/(1-C) = 1/a₂ with a₁ = C + (1-C)e^{-ε}, a₂ = (1-C) + C e^ε, and
    m = A (a₂ - a₁)/(a₁ a₂), a₂ - a₁ = C expm1(ε) - (1-C) expm1(-ε) (two positive terms: the float64 form
    t₁ - t₂ cancels at small ε), E W² = tail/a₁ + (1/d - tail)/a₂, tail = γA + C_{d+2}/d. (None, None) for d < 2 or
    a cap of 0 or 1; memoised per (d, ε, precision)."""
    import mpmath

    from ..methods.sphere_cap import _log_cap_mpmath

    dd, e = int(round(float(d))), float(eps)
    key = (dd, e, mpmath.mp.prec)
    if key in _MP_CACHE:
        return _MP_CACHE[key]
    out = (None, None)
    if dd >= 2 and math.isfinite(e) and e > 0:
        g = mpmath.mpf(privunit_parameters(dd, e)[1])
        x = 1 - g * g  # exact: γ is a float64 number, the working precision holds 2 × 53 bits
        t = mpmath.sqrt(x)
        C = mpmath.exp(_log_cap_mpmath(mpmath.mpf(dd), t))
        C2 = mpmath.exp(_log_cap_mpmath(mpmath.mpf(dd + 2), t))
        if 0 < C < 1:
            h = mpmath.mpf(dd - 1) / 2
            A = mpmath.exp(h * mpmath.log(x) - mpmath.log(dd - 1) - mpmath.log(mpmath.beta(mpmath.mpf(0.5), h))) \
                if x > 0 else mpmath.mpf(0)
            E = mpmath.mpf(e)
            a1 = C + (1 - C) * mpmath.exp(-E)
            a2 = (1 - C) + C * mpmath.exp(E)
            m = A * (C * mpmath.expm1(E) - (1 - C) * mpmath.expm1(-E)) / (a1 * a2)
            tail = g * A + C2 / dd
            out = (m, tail / a1 + (mpmath.mpf(1) / dd - tail) / a2)
    _MP_CACHE[key] = out
    return out


def _factor_mpmath(d, eps):
    import mpmath

    m = moments_mp(d, eps)[0]
    return 1 / m ** 2 if m is not None and m > 0 else mpmath.mpf("nan")


def _inner_mpmath(d, eps):
    import mpmath

    ew2 = moments_mp(d, eps)[1]
    return ew2 if ew2 is not None else mpmath.mpf("nan")


S.MPMATH_IMPL["PrivUnitFactor"] = _factor_mpmath
S.HIGH_PRECISION.add("PrivUnitFactor")


def sq_inner_moment(d: float, eps: float) -> float:
    """E W² for W = ⟨V, u⟩ (the same for every input; nan for d < 2). E W² = (p/C) E[W²; W >= γ]
    + ((1-p)/(1-C)) (1/d - E[W²; W >= γ]), and integrating w · w(1-w²)^{(d-3)/2} by parts gives
    E[W²; W >= γ] = γ A(γ) + C_{d+2}(γ)/d (C_{d+2}: the cap probability in dimension d+2; the normalisers
    satisfy B(1/2, (d+1)/2)/B(1/2, (d-1)/2) = (d-1)/d). Cached per (d, ε)."""
    key = ("ew2", int(round(d)), float(eps))
    if key not in _CACHE:
        dd, e = key[1], key[2]
        _CACHE[key] = math.nan
        if dd >= 2:
            _, g, p, C = privunit_parameters(dd, e)
            ga = np.array([g])
            tail = g * float(np.exp(_log_A(dd, ga)[0])) + float(np.exp(_log_cap(dd + 2, ga)[0])) / dd
            if 0 < C < 1:
                _CACHE[key] = p / C * tail + (1 - p) / (1 - C) * (1.0 / dd - tail)
            if not math.isfinite(_CACHE[key]):  # C below the float range (large d and ε): the same in logs
                _CACHE[key] = _sq_inner_moment_logs(dd, e, g)
    return _CACHE[key]


def _sq_inner_moment_logs(d: int, eps: float, g: float) -> float:
    """E W² = tail/a₁ + (1/d - tail)/a₂ (a₁ = C + (1-C)e^{-ε} = C/p, a₂ = (1-C) + C e^ε = (1-C)/(1-p),
    tail = γA + C_{d+2}/d) with log C, log A, log tail and log a₁, log a₂ kept in logs: finite where C (and A)
    underflow, at d = 10⁵ and ε >= 750 for instance; nan if it still is not finite."""
    ga = np.array([g])
    with np.errstate(all="ignore"):
        lc = float(_log_cap(d, ga)[0])
        lc2 = float(_log_cap(d + 2, ga)[0]) - math.log(d)
        l1c = math.log1p(-math.exp(lc))
        ltail = float(np.logaddexp(math.log(g) + float(_log_A(d, ga)[0]), lc2)) if g > 0 else lc2
        la1 = float(np.logaddexp(lc, l1c - eps))
        la2 = float(np.logaddexp(l1c, lc + eps))
        v = math.exp(ltail - la1) + (1.0 / d - math.exp(ltail)) * math.exp(-la2)
    return v if math.isfinite(v) else math.nan


def axis_moment_value(d: float, eps: float, kind: str = "max") -> float:
    """max (``kind="max"``) or min (``"min"``) over unit vectors e and inputs of E⟨V, e⟩² (V the unit-sphere
    release; Z = T V/m). With V = W u + √(1-W²) ξ (ξ uniform on the unit sphere of u^⊥, independent of W) and
    c = ⟨u, e⟩, E⟨V, e⟩² = c² E W² + (1 - c²)(1 - E W²)/(d-1), between the min and the max of E W² and
    (1 - E W²)/(d-1) (:func:`sq_inner_moment`)."""
    ew2 = sq_inner_moment(d, eps)
    if not math.isfinite(ew2):
        return math.nan
    pair = (ew2, (1 - ew2) / (int(round(d)) - 1))
    return max(pair) if kind == "max" else min(pair)


def _axis_numpy(d, eps, kind):
    d, eps, kind = np.broadcast_arrays(np.asarray(d, float), np.asarray(eps, float), np.asarray(kind, float))
    out = np.empty(d.shape)
    for ix in np.ndindex(d.shape):
        out[ix] = axis_moment_value(float(d[ix]), float(eps[ix]), "max" if kind[ix] > 0 else "min")
    return out if out.ndim else float(out)


def _axis_mpmath(d, eps, kind):
    """:func:`axis_moment_value` from E W² at the working precision (:func:`moments_mp`)."""
    import mpmath

    ew2 = moments_mp(d, eps)[1]
    if ew2 is None:
        return mpmath.mpf("nan")
    pair = (ew2, (1 - ew2) / (int(round(float(d))) - 1))
    return max(pair) if float(kind) > 0 else min(pair)


class PrivUnitAxisMoment(sp.Function):
    """``PrivUnitAxisMoment(d, ε, k)``: ``max_e E⟨V, e⟩²`` (k = 1) or ``min_e`` (k = -1) over unit vectors e and
    inputs: E⟨Z, e⟩² = T² m⁻² E⟨V, e⟩² for PrivUnit on the ball of radius T (:func:`axis_moment_value`)."""

    nargs = 3

    def _latex(self, printer, exp=None):
        dd, e, k = (printer._print(a) for a in self.args)
        base = rf"w_{{\mathrm{{PU}}}}({dd}, {e}, {k})"
        return base if exp is None else rf"\left({base}\right)^{{{printer._print(exp)}}}"


S.NUMPY_IMPL["PrivUnitAxisMoment"] = _axis_numpy
S.MPMATH_IMPL["PrivUnitAxisMoment"] = _axis_mpmath
S.HIGH_PRECISION.add("PrivUnitAxisMoment")  # E W² at the working precision (moments_mp)


def axis_second_moment(T, eps, d, kind="max"):
    """max (or min) over unit e and inputs of E⟨Z, e⟩² = T² m⁻² E⟨V, e⟩² (sympy)."""
    return second_moment(T, eps, d) * PrivUnitAxisMoment(d, eps, 1 if kind == "max" else -1)


def second_moment(T, eps, d):
    """E‖Z‖² = T²/m² (sympy)."""
    return T ** 2 * PrivUnitFactor(d, eps)


# --------------------------------------------------------------------------- sampler

def privunit(v, r, eps, rng: np.random.Generator):
    """PrivUnit of the rows of v (shape (k, d), ‖v_i‖ <= r). Returns Z (k, d)."""
    from scipy import special

    v = np.atleast_2d(np.asarray(v, float))
    k, d = v.shape
    m, g, p, C = privunit_parameters(d, eps)
    norms = np.linalg.norm(v, axis=1)
    u = np.where(norms[:, None] > 0, v / np.where(norms > 0, norms, 1.0)[:, None], 0.0)
    u[norms == 0, 0] = 1.0
    sign = np.where(rng.random(k) < 0.5 + norms / (2 * r), 1.0, -1.0)
    u = sign[:, None] * u
    a = (d - 1) / 2.0
    # W = 1 - 2B', B' ~ Beta(a, a); W >= γ  <=>  B' <= (1-γ)/2
    F0 = special.betainc(a, a, (1.0 - g) / 2.0)
    in_cap = rng.random(k) < p
    U = rng.random(k)
    q = np.where(in_cap, U * F0, F0 + U * (1.0 - F0))
    W = 1.0 - 2.0 * special.betaincinv(a, a, q)
    xi = rng.standard_normal((k, d))
    xi -= np.einsum("ij,ij->i", xi, u)[:, None] * u
    xi /= np.linalg.norm(xi, axis=1, keepdims=True)
    V = W[:, None] * u + np.sqrt(np.clip(1.0 - W ** 2, 0.0, 1.0))[:, None] * xi
    return (r / m) * V
