"""Threshold (Bayes) lower bound for a one-parameter family under central pure ε-DP.

Docs: ``docs/methods/threshold-bayes.md``. Ingredients: the pairwise DP testing bound of
Barber & Duchi (2014, Prop. 1 / Section 2) applied through an entry-wise maximal coupling, and the
layer-cake decomposition of |θ̂ - θ| and (θ̂ - θ)² into threshold tests.

**Lemma (pairwise coupled test).** Let P, Q be laws with TV(P, Q) = t and D ~ Pⁿ, D' ~ Qⁿ coupled entry
by entry with the maximal coupling, so the number H of differing entries is Bin(n, t). For any ε-DP
mechanism and any test ψ, with g(x) = P(ψ(M(x)) = 1): for fixed data at Hamming distance h, group privacy
gives g(D') <= e^{εh} g(D) and 1 - g(D) <= e^{εh}(1 - g(D')); minimising g(D) + 1 - g(D') under these two
constraints gives 2/(1 + e^{εh}) (attained at g(D) = 1/(1+e^{εh})). Averaging over the coupling,
type I + type II >= E[2/(1 + e^{εH})] >= 2/(1 + e^{ε n t}) (Jensen: h -> 2/(1+e^{εh}) is convex on h >= 0,
its second derivative is 2ε² e^{εh}(e^{εh}-1)/(1+e^{εh})³ >= 0).

**Lemma (threshold decomposition).** Let θ ~ Uniform[A, B], W = B - A, and suppose that for every
s ∈ [A, B] and 0 <= u <= m(s) = min(s - A, B - s), TV(P_{s-u}, P_{s+u}) <= κ u/(ε n) (for instance
κ = 2εnK with K >= sup_ξ (1/2) E_ξ|∂_ξ log p_ξ|, since TV(P_a, P_b) <= ∫_a^b (1/2)∫|∂_ξ p_ξ| dξ).
For any estimator, |θ̂ - θ| = ∫ 1{s lies between θ̂ and θ} ds, so with ψ_s = 1{θ̂ > s}
    E|θ̂ - θ| >= (1/W) ∫_A^B ds ∫_0^{m(s)} [P_{s-u}(ψ_s = 1) + P_{s+u}(ψ_s = 0)] du
             >= (1/W) ∫_A^B ds ∫_0^{m(s)} 2/(1 + e^{κu}) du = (4/(W κ²)) J₀(κW/2),
and (θ̂ - θ)² = ∫ 2|θ - s| 1{s between θ̂ and θ} ds gives in the same way
    E(θ̂ - θ)² >= (1/W) ∫_A^B ds ∫_0^{m(s)} 2u · 2/(1 + e^{κu}) du = (8/(W κ³)) J₁(κW/2),
with I_k(y) = ∫_0^y x^k/(1+e^x) dx, J₀(y) = y I₀(y) - I₁(y) = ∫_0^y (y-x)/(1+e^x) dx and
J₁(y) = y I₁(y) - I₂(y) = ∫_0^y (y-x) x/(1+e^x) dx. (The s-integral: m(s) = min(s-A, B-s) takes each
value x ∈ [0, W/2] twice, so (1/W)∫ds φ(m(s)) = (2/W)∫_0^{W/2} φ(x) dx.) The max risk over [A, B] is at
least this Bayes risk. As W -> ∞: |·| ≈ 2 ln2/κ, squared ≈ π²/(3κ²) (Le Cam's two points give 0.28/κ and
0.48/κ²: 5-7 times less).

Closed forms (checked against mpmath quadrature in tests/test_threshold_bayes.py):
I₀(y) = ln 2 - ln(1 + e^{-y});
I₁(y) = π²/12 - y ln(1 + e^{-y}) + Li₂(-e^{-y});
I₂(y) = 3ζ(3)/2 - y² ln(1 + e^{-y}) + 2y Li₂(-e^{-y}) + 2 Li₃(-e^{-y}).
For y >= 2 the polylogarithms are summed as power series in z = e^{-y} <= e^{-2} (40 terms, remainder
below 1e-30); for y < 2 the integrals are computed by 40-point Gauss–Legendre quadrature (the integrand
is analytic in the strip |Im x| < π, so the error is below 1e-30 as well).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ..core import symbolic as S

ZETA3 = 1.2020569031595942853997
_Y_SWITCH = 2.0
_NTERMS = 40


_J = np.arange(1, _NTERMS + 1, dtype=float)
_J_POW = {2: _J ** 2, 3: _J ** 3}  # j^s of the series, computed once (the same array every call)
_LEGGAUSS = []  # the 40 Gauss-Legendre nodes and weights, computed on first use


def _li_neg(s, z):
    """Li_s(-z) for 0 <= z <= e^{-2} (power series)."""
    zz = np.asarray(z, float)[..., None]
    return np.sum((-zz) ** _J / _J_POW[s], axis=-1)


def _gl(fun, y):
    if not _LEGGAUSS:
        _LEGGAUSS.extend(np.polynomial.legendre.leggauss(40))
    x, w = _LEGGAUSS
    y = np.asarray(y, float)[..., None]
    t = 0.5 * y * (x + 1.0)
    return 0.5 * y[..., 0] * np.sum(w * fun(t, y), axis=-1)


def _split(y, big_fn, small_fn):
    """``big_fn`` on the elements y >= 2 and ``small_fn`` on the others (each evaluated only where it is used;
    every operation is elementwise or a sum along the 40 terms of one element, so each value is the one a
    whole-array evaluation gives)."""
    y = np.asarray(y, float)
    big = y >= _Y_SWITCH
    out = np.empty(y.shape)
    with np.errstate(all="ignore"):
        if np.any(big):
            out[big] = big_fn(y[big])
        if not np.all(big):
            out[~big] = small_fn(y[~big])
    return out


def j_abs(y):
    """J₀(y) = ∫_0^y (y - x)/(1 + e^x) dx (vectorised, y >= 0)."""
    def big(yb):
        return yb * math.log(2.0) - math.pi ** 2 / 12 - _li_neg(2, np.exp(-yb))

    return _split(y, big, lambda ys: _gl(lambda t, yy: (yy - t) / (1.0 + np.exp(t)), ys))


def j_sq(y):
    """J₁(y) = ∫_0^y (y - x) x/(1 + e^x) dx (vectorised, y >= 0)."""
    def big(yb):
        z = np.exp(-yb)
        l1 = np.log1p(z)
        li2, li3 = _li_neg(2, z), _li_neg(3, z)
        i1 = math.pi ** 2 / 12 - yb * l1 + li2
        i2 = 1.5 * ZETA3 - yb * yb * l1 + 2 * yb * li2 + 2 * li3
        return yb * i1 - i2

    return _split(y, big, lambda ys: _gl(lambda t, yy: (yy - t) * t / (1.0 + np.exp(t)), ys))


def j_mp(power: int, y):
    """J₀(y) (power 0) or J₁(y) (power 1) at mpmath's working precision (the high-precision path of ThresholdJ0 and
    ThresholdJ1). For y >= 2 the closed forms of the module docstring with mpmath's polylogarithms (no cancellation
    beyond a factor 3); for 0 <= y < 2 the integral ∫_0^y (y - x) x^p/(1 + e^x) dx by mpmath's quadrature (the
    closed forms cancel there: J₀ ~ y²/4 and J₁ ~ y³/12 while their terms are of order 1). NaN for y < 0."""
    import mpmath

    y = mpmath.mpf(y)
    if mpmath.isnan(y) or y < 0:
        return mpmath.mpf("nan")
    if y == 0:
        return mpmath.mpf(0)
    if y < _Y_SWITCH:
        with mpmath.extradps(10):  # mpmath's quadrature meets about 30 of 40 digits for tiny y without them
            v = mpmath.quad(lambda x: (y - x) * x ** power / (1 + mpmath.exp(x)), [0, y])
        return +v
    with mpmath.extradps(10):
        z = mpmath.exp(-y)
        l1, li2 = mpmath.log1p(z), mpmath.polylog(2, -z)
        if power == 0:  # J₀ = y I₀ - I₁ = y ln 2 - π²/12 - Li₂(-e^{-y})
            v = y * mpmath.log(2) - mpmath.pi ** 2 / 12 - li2
        else:
            i1 = mpmath.pi ** 2 / 12 - y * l1 + li2
            i2 = 3 * mpmath.zeta(3) / 2 - y * y * l1 + 2 * y * li2 + 2 * mpmath.polylog(3, -z)
            v = y * i1 - i2
    return +v


def _as_float_fn(fn, power):
    def wrapped(y):
        if hasattr(y, "_mpf_"):  # the mpmath (high-precision) path
            return j_mp(power, y)
        return fn(np.asarray(y, dtype=float))
    return wrapped


class ThresholdJ0(sp.Function):
    """J₀(y) = ∫_0^y (y - x)/(1 + e^x) dx (threshold Bayes bound, absolute loss)."""

    nargs = 1
    _imp_ = staticmethod(_as_float_fn(j_abs, 0))

    def _latex(self, printer, exp=None):
        tex = rf"J_0\left({printer._print(self.args[0])}\right)"
        return tex if exp is None else rf"{tex}^{{{exp}}}"


class ThresholdJ1(sp.Function):
    """J₁(y) = ∫_0^y (y - x) x/(1 + e^x) dx (threshold Bayes bound, squared loss)."""

    nargs = 1
    _imp_ = staticmethod(_as_float_fn(j_sq, 1))

    def _latex(self, printer, exp=None):
        tex = rf"J_1\left({printer._print(self.args[0])}\right)"
        return tex if exp is None else rf"{tex}^{{{exp}}}"


S.HIGH_PRECISION.update({"ThresholdJ0", "ThresholdJ1"})  # j_mp computes at mpmath's working precision


def bayes_abs(width, kappa):
    """(4/(Wκ²)) J₀(κW/2): lower bound on the max |·| risk over an interval of length W (sympy)."""
    return 4 / (width * kappa ** 2) * ThresholdJ0(kappa * width / 2)


def bayes_sq(width, kappa):
    """(8/(Wκ³)) J₁(κW/2): lower bound on the max squared risk over an interval of length W (sympy)."""
    return 8 / (width * kappa ** 3) * ThresholdJ1(kappa * width / 2)


def bayes_numeric_direct(width, kappa, loss):
    """The same double integral (1/W)∫ds∫_0^{m(s)} ℓ'(u) 2/(1+e^{κu}) du by plain quadrature (tests)."""
    from scipy import integrate

    def inner(m):
        f = (lambda u: 2.0 / (1.0 + math.exp(kappa * u))) if loss == "abs" else \
            (lambda u: 2 * u * 2.0 / (1.0 + math.exp(kappa * u)))
        return integrate.quad(f, 0, m, limit=200)[0]

    val = integrate.quad(lambda s: inner(min(s, width - s)), 0, width, limit=200, points=[width / 2])[0]
    return val / width


def delta_correction(width, d0, loss):
    """What an additive loss d0 in the pairwise bound costs: (1/W)∫ds∫_0^{m(s)} w(u) d0 du = d0 W/4 (|·|, w = 1)
    or d0 W²/12 (squared, w = 2u). Used for (ε,δ)-DP, where the coupled test bound is
    2(1 - δ_h)/(1 + e^{εh}) >= 2/(1 + e^{εh}) - 2δ/(e^ε - 1) (δ_h = δ(e^{εh}-1)/(e^ε-1) and
    (e^{εh}-1)/(e^{εh}+1) <= 1), so d0 = 2δ/(e^ε - 1) (a negative pairwise bound is still valid)."""
    return d0 * width / 4 if loss == "abs" else d0 * width ** 2 / 12


def bayes_linear(width, c, loss):
    """The threshold bound when the pairwise bound is 1 - c u (α-TV privacy: type I + II >= 1 - nα t).

    (1/W)∫_A^B ds ∫_0^{m(s)} w(u)(1 - cu)_+ du = (2/W)∫_0^{W/2} φ(x) dx with, for y = min(x, 1/c),
    |·|: φ(x) = y - c y²/2 (constant 1/(2c) beyond 1/c); squared: φ(x) = y² - 2c y³/3 (1/(3c²) beyond).
    Integrating, with X = W/2 and Y = min(X, 1/c):
    |·|: (2/W)[Y²/2 - cY³/6 + (X - Y)/(2c)];  squared: (2/W)[Y³/3 - cY⁴/6 + (X - Y)/(3c²)].
    """
    big_x = width / 2
    y = S.Min(big_x, 1 / c)
    if loss == "abs":
        return 2 / width * (y ** 2 / 2 - c * y ** 3 / 6 + (big_x - y) / (2 * c))
    return 2 / width * (y ** 3 / 3 - c * y ** 4 / 6 + (big_x - y) / (3 * c ** 2))


# ---------------------------------------------------------------------- exact coupled-test average
#: at most this many Hamming distances k are summed (dropping terms only lowers the bound: all are >= 0)
K_MAX = 4000


def binom_g_numeric(z, n, eps, power):
    """G_p(z) = ∫_0^z (z - τ) τ^p E[2/(1 + e^{εH})] dτ, H ~ Bin(n, τ), p ∈ {0, 1}, summed exactly over k.

    With b(k; n, τ) the binomial pmf, ∫_0^z b(k;n,τ) dτ = I_z(k+1, n-k+1)/(n+1) and τ b(k;n,τ) =
    (k+1)/(n+1) b(k+1; n+1, τ), so
    p = 0: Σ_k f(k) [z I_z(k+1, n-k+1) - (k+1)/(n+2) I_z(k+2, n-k+1)]/(n+1),
    p = 1: Σ_k f(k) (k+1)/((n+1)(n+2)) [z I_z(k+2, n-k+1) - (k+2)/(n+3) I_z(k+3, n-k+1)],
    f(k) = 2/(1+e^{εk}); k is summed up to min(n, 40/ε + 20, K_MAX) (the dropped terms are >= 0).
    """
    from scipy.special import betainc

    z, n, eps = np.broadcast_arrays(np.asarray(z, float), np.asarray(n, float), np.asarray(eps, float))
    out = np.empty(z.shape)
    for ix in np.ndindex(z.shape):
        zz, nn, ee = float(z[ix]), float(n[ix]), float(eps[ix])
        kmax = int(min(nn, math.ceil(40.0 / ee) + 20, K_MAX))
        k = np.arange(kmax + 1, dtype=float)
        f = 2.0 / (1.0 + np.exp(np.minimum(ee * k, 700.0)))
        with np.errstate(all="ignore"):
            # The incomplete betas are upper binomial tails, P(Bin(n+1+j, z) >= k+1+j) (j = 0, 1, 2 by term), which
            # decrease in k and in j. Where the smallest one used rounds to 1, they all do (the far side of the
            # mode, nz >> kmax): the same floats as computing each, without the 2(kmax + 1) evaluations.
            if betainc(kmax + 2 + power, nn - kmax + 1, zz) == 1.0:
                ones = np.ones_like(k)
                term = zz * ones - (k + 1 + power) / (nn + 2 + power) * ones
                val = np.sum(f * np.maximum(term, 0.0)) / (nn + 1) if power == 0 else \
                    np.sum(f * (k + 1) * np.maximum(term, 0.0)) / ((nn + 1) * (nn + 2))
            elif power == 0:
                term = zz * betainc(k + 1, nn - k + 1, zz) - (k + 1) / (nn + 2) * betainc(k + 2, nn - k + 1, zz)
                val = np.sum(f * np.maximum(term, 0.0)) / (nn + 1)
            else:
                term = zz * betainc(k + 2, nn - k + 1, zz) - (k + 2) / (nn + 3) * betainc(k + 3, nn - k + 1, zz)
                val = np.sum(f * (k + 1) * np.maximum(term, 0.0)) / ((nn + 1) * (nn + 2))
        out[ix] = val if math.isfinite(val) else 0.0
    return out


def _binom_upper_tails(N, z, jmax):
    """[P(Bin(N, z) >= j) for j = 0, ..., jmax] at mpmath's working precision (N an integer, 0 <= z <= 1).

    The pmf by its recurrence b(i+1) = b(i) (N-i)/(i+1) · z/(1-z) from b(0) = (1-z)^N (relative error about
    (i+2)·2^-prec after i steps); P(>= j) = 1 - P(< j) while P(< j) <= 1/2 (relative error at most twice that of
    P(< j)), else the sum of b(i), i >= j, up to an i past the mode where the geometric remainder bound
    b(i) ρ/(1-ρ) (ρ the next ratio, decreasing in i) is below 2^-prec/1024 of b(jmax) <= P(>= jmax)."""
    import mpmath

    if z >= 1:
        return [mpmath.mpf(1) if j <= N else mpmath.mpf(0) for j in range(jmax + 1)]
    if z <= 0:
        return [mpmath.mpf(1)] + [mpmath.mpf(0)] * jmax
    r = z / (1 - z)
    pm = [mpmath.exp(N * mpmath.log1p(-z))]
    for i in range(jmax):
        pm.append(pm[-1] * (N - i) / (i + 1) * r if i < N else mpmath.mpf(0))
    below, c = [], mpmath.mpf(0)  # below[j] = P(< j)
    for j in range(jmax + 1):
        below.append(c)
        c += pm[j]
    out = [1 - b if b <= 0.5 else None for b in below]
    if out[-1] is None:  # the tail sums from jmax on, then backwards
        tol = mpmath.eps / 1024 * pm[jmax]
        i, t, rest = jmax, pm[jmax], mpmath.mpf(0)
        while i < N:
            ratio = (N - i) / (i + 1) * r
            t *= ratio
            i += 1
            rest += t
            nxt = (N - i) / (i + 1) * r
            if nxt < 1 and t * nxt / (1 - nxt) <= tol:
                break
        acc = rest
        for j in range(jmax, -1, -1):
            acc += pm[j]
            if out[j] is None:
                out[j] = acc
    return out


def _lower_tail_negligible(N: int, z: float, j: int, prec: int) -> bool:
    """Whether P(Bin(N, z) < j) <= 2^-(prec + 60), so that every upper tail P(Bin(N', z) >= j') with N' >= N,
    j' <= j + (N' - N) is 1 to ``prec`` bits with room to spare (P(Bin(N', z) < j') <= P(Bin(N, z) < j) for
    N' >= N and j' - j <= N' - N). Chernoff: P(Bin(N, z) <= a) <= exp(-N KL(a/N || z)) for a/N <= z; the float
    exponent is taken with a 10 % margin and 20 nats to spare, far more than its rounding."""
    a = j - 1
    if not (0 < z < 1) or N <= 0 or a < 0 or a >= N * z:
        return False
    q = a / N
    kl = (q * math.log(q / z) if q > 0 else 0.0) + (1 - q) * (math.log1p(-q) - math.log1p(-z))
    return 0.9 * N * kl > (prec + 60) * math.log(2) + 20


def binom_g_mp(z, n, eps, power):
    """G_p(z; n, ε) of :func:`binom_g_numeric` at mpmath's working precision (the high-precision path of
    CoupledTestG0/G1): the same sum over k <= min(n, 40/ε + 20, K_MAX) (the same truncation, computed from the float
    arguments as there), with I_z(k+1, n-k+1) = P(Bin(n+1, z) >= k+1), I_z(k+2, n-k+1) = P(Bin(n+2, z) >= k+2) and
    I_z(k+3, n-k+1) = P(Bin(n+3, z) >= k+3) from :func:`_binom_upper_tails` (the difference of each term, which
    cancels in float64, costs at most log10(k+2) of the working digits). Outside 0 <= z <= 1, n >= 0 integer,
    ε > 0 finite: the float64 value (0 there)."""
    import mpmath

    zf, nf, ef = float(z), float(n), float(eps)
    if not (0 <= zf <= 1 and 0 <= nf < 2 ** 53 and nf == math.floor(nf) and 0 < ef < math.inf):
        return mpmath.mpf(float(binom_g_numeric(zf, nf, ef, power)))
    kmax = int(min(nf, math.ceil(40.0 / ef) + 20, K_MAX))
    z, nn, e = mpmath.mpf(zf), int(nf), mpmath.mpf(ef)
    with mpmath.extradps(10):
        if _lower_tail_negligible(nn + 1 + power, zf, kmax + 2 + power, mpmath.mp.prec):
            s1 = s2 = [mpmath.mpf(1)] * (kmax + 3 + power)  # every tail is 1 to the working precision
        else:
            s1 = _binom_upper_tails(nn + 1 + power, z, kmax + 1 + power)
            s2 = _binom_upper_tails(nn + 2 + power, z, kmax + 2 + power)
        tot = mpmath.mpf(0)
        for k in range(kmax + 1):
            f = 2 / (1 + mpmath.exp(e * k))
            if power == 0:
                tot += f * (z * s1[k + 1] - mpmath.mpf(k + 1) / (nn + 2) * s2[k + 2])
            else:
                tot += f * (k + 1) * (z * s1[k + 2] - mpmath.mpf(k + 2) / (nn + 3) * s2[k + 3])
        val = tot / (nn + 1) if power == 0 else tot / ((nn + 1) * (nn + 2))
    return +val


def _binom_g_impl(power):
    def impl(z, n, eps):
        if hasattr(z, "_mpf_") or hasattr(n, "_mpf_") or hasattr(eps, "_mpf_"):  # the high-precision path
            return binom_g_mp(z, n, eps, power)
        return binom_g_numeric(z, n, eps, power)
    return impl


class CoupledTestG0(sp.Function):
    """G₀(z; n, ε) = ∫_0^z (z - τ) E[2/(1+e^{εH})] dτ, H ~ Bin(n, τ) (exact binomial sum)."""

    nargs = 3
    _imp_ = staticmethod(_binom_g_impl(0))

    def _latex(self, printer, exp=None):
        tex = r"G_0\left(" + ", ".join(printer._print(a) for a in self.args) + r"\right)"
        return tex if exp is None else rf"{tex}^{{{exp}}}"


class CoupledTestG1(sp.Function):
    """G₁(z; n, ε) = ∫_0^z (z - τ) τ E[2/(1+e^{εH})] dτ, H ~ Bin(n, τ) (exact binomial sum)."""

    nargs = 3
    _imp_ = staticmethod(_binom_g_impl(1))

    def _latex(self, printer, exp=None):
        tex = r"G_1\left(" + ", ".join(printer._print(a) for a in self.args) + r"\right)"
        return tex if exp is None else rf"{tex}^{{{exp}}}"


S.HIGH_PRECISION.update({"CoupledTestG0", "CoupledTestG1"})  # binom_g_mp: working precision


def bayes_exact_relative(width, low, n, eps, loss):
    """Threshold bound when TV(P_{s-u}, P_{s+u}) <= 2u/low (e.g. uniform support, low = A), with the exact
    average E[2/(1+e^{εH})] instead of its Jensen bound: with τ = 2u/low and z = W/low (<= 1),
    |·|: (low²/(2W)) G₀(z);  squared: (low³/(2W)) G₁(z)."""
    z = width / low
    if loss == "abs":
        return low ** 2 / (2 * width) * CoupledTestG0(z, n, eps)
    return low ** 3 / (2 * width) * CoupledTestG1(z, n, eps)
