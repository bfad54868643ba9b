"""Fisher information of one ε-LDP privatised sample, by score tail (Barnes, Chen & Özgür,
Propositions 2–5; constants derived for boundcalc, docs/methods/van-trees.md).

For any ε-LDP channel Q and score S_θ(X) = ∇_θ log p_θ(X), ``Tr I_Z(θ) <= min{Tr I_X(θ), bound}``:

=========================================  ===========================================
score tail (for every unit vector u)        bound on Tr I_Z(θ)
=========================================  ===========================================
Var⟨u,S⟩ <= I_0 (λ_max(I_X) <= I_0)         ``I_0 sinh²(ε/2)``  (= I_0 (e^ε-1)²/(4e^ε))
sub-Gaussian, proxy σ²                      ``2 σ² ε``
sub-exponential (ν², b)                     ``max{2ν²ε, 4b²ε²}``
=========================================  ===========================================

Derivation (each step named; the first row is tested on random finite channels by computing the exact
Fisher information, the others on exact channels of the built-in models):

1. Lemma 1 (BCO): ``Tr I_Z = E_z ‖E[S_θ(X) | Z=z]‖²`` and ``E[S|z] = E_X[S(X) r_z(X)]`` with the
   likelihood ratio ``r_z(x) = q(z|x)/q_θ(z)``; ε-LDP gives ``r_z ∈ [a, a e^ε]`` and ``E r_z = 1``.
2. Row 1: E S = 0, so ``⟨u,E[S|z]⟩ = E[⟨u,S⟩(r_z - 1)] <= sqrt(I_0 Var r_z)`` (Cauchy–Schwarz) and
   Bhatia–Davis ``Var r_z <= (a e^ε - 1)(1 - a) <= (e^ε-1)²/(4e^ε) = sinh²(ε/2)`` (maximised at
   a = (e^ε+1)/(2e^ε)). Taking sup over u and E_z: ``Tr I_Z <= I_0 sinh²(ε/2)`` (independent of d).
3. Rows 2–3: Donsker–Varadhan, ``λ⟨u,E[S|z]⟩ <= KL(P_{X|z}‖P_X) + log E e^{λ⟨u,S⟩}`` and
   ``KL(P_{X|z}‖P_X) = E[r_z log r_z] <= log(a e^ε) <= ε``. Sub-Gaussian: minimise ε/λ + λσ²/2 at
   λ = sqrt(2ε/σ²): ``⟨u,E[S|z]⟩² <= 2σ²ε``. Sub-exponential (λ <= 1/b): the same λ when
   ν² >= 2εb² (value 2ν²ε), else λ = 1/b and ``(bε + ν²/(2b))² <= (2bε)² = 4b²ε²``.
4. Data processing: ``I_Z <= I_X`` (so also the trace). Chain rule: sequential interaction multiplies
   the one-sample bound by n (docs/methods/van-trees.md).

The model calculus (score, Fisher information, cumulant generating function of the score and the
tail parameters) is done by sympy from the log-density of the built-in models
(:mod:`boundcalc.core.models`: bernoulli, poisson, exponential, normal-mean) and of the categorical
model defined here (vector parameter). No user string is ever parsed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy as sp

from ..core import symbolic as S
from ..cache.diskcache import persistent

SOURCE_BCO = "Barnes, Chen & Özgür, Fisher information under local differential privacy (JSAIT 2020)"


# ----------------------------------------------------------------------------- the three rows

def sinh2_half(eps):
    """sympy sinh²(ε/2) written as (1 - e^{-ε})² e^ε/4 = expm1(-ε)² e^ε/4 (accurate for tiny ε; for huge ε
    it overflows to +inf, never to nan, so a min with Tr I_X stays finite)."""
    return S.expm1(-eps) ** 2 * sp.exp(eps) / 4


def variance_bound(I0, eps):
    """Row 1: Tr I_Z <= I_0 sinh²(ε/2) (sympy)."""
    return I0 * sinh2_half(eps)


def subgaussian_bound(sigma2, eps):
    """Row 2: Tr I_Z <= 2σ²ε (sympy)."""
    return 2 * sigma2 * eps


def subexponential_bound(nu2, b, eps):
    """Row 3: Tr I_Z <= max{2ν²ε, 4b²ε²} (sympy)."""
    return S.Max(2 * nu2 * eps, 4 * b ** 2 * eps ** 2)


@S.cached_expression
def trace_bound(eps, trace_IX=None, I0=None, subgaussian=None, subexponential=()):
    """``min`` of every available bound on Tr I_Z (sympy). ``subexponential``: iterable of (ν², b)."""
    terms = []
    if trace_IX is not None:
        terms.append(trace_IX)
    if I0 is not None:
        terms.append(variance_bound(I0, eps))
    if subgaussian is not None:
        terms.append(subgaussian_bound(subgaussian, eps))
    for nu2, b in subexponential:
        terms.append(subexponential_bound(nu2, b, eps))
    if not terms:
        raise ValueError("no Fisher information bound available")
    return S.Min(*terms) if len(terms) > 1 else terms[0]


def variance_bound_np(I0, eps):
    e = np.asarray(eps, float)
    return I0 * np.sinh(e / 2) ** 2


# ----------------------------------------------------------------------------- exact I_Z

def exact_private_fisher(Q: np.ndarray, pmf: np.ndarray, dpmf: np.ndarray) -> float:
    """Exact Tr I_Z for a finite channel Q[x, z], data pmf p_θ(x) and its gradient dpmf[k, x] = ∂_k p_θ(x).

    ``I_Z = Σ_z (∇ m_θ(z))(∇ m_θ(z))ᵀ / m_θ(z)`` with ``m_θ(z) = Σ_x p_θ(x) Q[x,z]``.
    """
    Q = np.asarray(Q, float)
    m = np.asarray(pmf, float) @ Q
    dm = np.atleast_2d(np.asarray(dpmf, float)) @ Q  # (k, nz)
    keep = m > 0
    return float(np.sum(dm[:, keep] ** 2 / m[keep]))


def exact_fisher(pmf: np.ndarray, dpmf: np.ndarray) -> float:
    """Tr I_X of a finite model (same notation)."""
    return exact_private_fisher(np.eye(len(pmf)), pmf, dpmf)


# ----------------------------------------------------------------------------- model calculus

@dataclass(frozen=True)
class TailParameters:
    """Score tail parameters of a one-parameter model as sympy expressions in θ (and extras).

    ``variance``: I(θ) (= Var S). ``subgaussian``: a variance proxy (None if the score is not
    sub-Gaussian). ``subexponential(c)``: returns (ν², b) valid for the cut-off |t| <= 1/b, as a
    function of a free shape parameter c > 0 (None if not needed). ``cgf``: log E e^{tS} (sympy, in t).
    """

    model: str
    theta: sp.Symbol
    score: sp.Expr
    fisher: sp.Expr
    cgf: sp.Expr
    subgaussian: sp.Expr | None
    subexponential: object
    derivation: str


t_sym = sp.Symbol("t", real=True)


def kearns_saul_proxy(p):
    """Optimal sub-Gaussian proxy of the centred Bernoulli(p): (1-2p)/(2 log((1-p)/p)) (1/4 at p=1/2)
    (Kearns & Saul 1998; Berend & Kontorovich 2013). Tested against sup_t 2K(t)/t² numerically."""
    return sp.Piecewise((sp.Rational(1, 4), sp.Eq(p, sp.Rational(1, 2))),
                        ((1 - 2 * p) / (2 * sp.log((1 - p) / p)), True))


def kearns_saul_np(p):
    p = np.asarray(p, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = (1 - 2 * p) / (2 * np.log((1 - p) / p))
    return np.where(np.abs(p - 0.5) < 1e-9, 0.25, v)


@lru_cache(maxsize=None)
def tail_parameters(name: str) -> TailParameters:
    """Score, Fisher information, CGF of the score and tail parameters, derived by sympy.

    - normal-mean: S = (x-θ)/σ², K(t) = t²/(2σ²): sub-Gaussian with proxy exactly 1/σ².
    - bernoulli: S = (x-θ)/(θ(1-θ)) is a scaled centred Bernoulli: proxy
      KS(θ)/(θ(1-θ))² with KS the Kearns–Saul constant.
    - poisson: S = x/λ - 1, K(t) = λ(e^{t/λ} - 1 - t/λ); K''' > 0 so K(t)/t² = ∫_0^1(1-u)K''(ut)du is
      increasing: on |t| <= cλ (b = 1/(cλ)) ν² = 2K(cλ)/(cλ)² = 2(e^c - 1 - c)/(c²λ).
    - exponential (rate λ): S = 1/λ - x, K(t) = t/λ - log(1 + t/λ) (t > -λ); K''' < 0 so K(t)/t² is
      decreasing: on |t| <= cλ (c < 1) ν² = 2K(-cλ)/(cλ)² = 2(-c - log(1-c))/(c²λ²).
    """
    from ..core.models import get_point_model

    m = get_point_model(name)
    th = m.theta
    score = S.simplify(m.score())
    fisher = S.simplify(m.fisher_information())
    c = sp.Symbol("c", positive=True)
    if m.name == "normal-mean":
        sigma = m.extra_symbols()["sigma"]
        cgf = S.simplify(sp.log(m.expectation(sp.exp(t_sym * score))))
        return TailParameters(m.name, th, score, fisher, cgf, 1 / sigma ** 2, None,
                              "K(t) = t²/(2σ²) exactly: sub-Gaussian with proxy 1/σ².")
    if m.name == "bernoulli":
        cgf = sp.log(sum((sp.exp(t_sym * score) * sp.exp(m.log_density)).subs(m.x, v) for v in (0, 1)))
        proxy = kearns_saul_proxy(th) / (th * (1 - th)) ** 2
        return TailParameters(m.name, th, score, fisher, S.simplify(cgf), proxy, None,
                              "S = (X-θ)/(θ(1-θ)); centred Bernoulli proxy (Kearns–Saul) scaled by 1/(θ(1-θ))².")
    if m.name == "poisson":
        # t S + log p_θ(x) + log x! is linear in x (an exponential family): the summand is
        # C a^x / x!, so E e^{tS} = C e^a (sympy's summation does not close this sum by itself)
        L = sp.expand(sp.expand_log(t_sym * score + m.log_density + sp.log(sp.factorial(m.x)), force=True))
        assert S.simplify(S.diff(L, m.x, 2)) == 0
        a = sp.exp(S.diff(L, m.x))
        cgf = S.simplify(L.subs(m.x, 0) + a)
        nu2 = S.simplify(2 * cgf.subs(t_sym, c * th) / (c * th) ** 2)
        return TailParameters(m.name, th, score, fisher, cgf, None,
                              lambda cc: (nu2.subs(c, cc), 1 / (cc * th)),
                              "K''' = e^{t/λ}/λ² > 0, so sup_{|t|<=cλ} 2K(t)/t² is at t = cλ.")
    if m.name == "exponential":
        # E e^{tS} = e^{t/λ} λ/(λ+t) for t > -λ (sympy integral with the convergence condition dropped)
        cgf = S.simplify(sp.log(S.integrate(sp.exp(t_sym * score + m.log_density), (m.x, 0, sp.oo),
                                              conds="none")))
        nu2 = S.simplify(2 * cgf.subs(t_sym, -c * th) / (c * th) ** 2)
        return TailParameters(m.name, th, score, fisher, cgf, None,
                              lambda cc: (nu2.subs(c, cc), 1 / (cc * th)),
                              "K''' = -2/(λ+t)³ < 0, so sup_{|t|<=cλ} 2K(t)/t² is at t = -cλ (c < 1).")
    raise ValueError(f"no tail parameters for model {name!r}")


def model_trace_bound(name: str, eps, theta_value=None,
                      cs=(sp.Rational(1, 4), sp.Rational(1, 2), sp.Integer(1)), **extra):
    """Bound on Tr I_Z for one sample of a built-in scalar model (sympy; θ substituted if given)."""
    tp = tail_parameters(name)
    sub = {}
    if theta_value is not None:
        sub[tp.theta] = theta_value
    from ..core.models import get_point_model

    for k, v in {**get_point_model(name).extra_defaults, **extra}.items():
        sub[get_point_model(name).extra_symbols()[k]] = v
    I = tp.fisher.subs(sub)
    sg = None if tp.subgaussian is None else tp.subgaussian.subs(sub)
    se = []
    if tp.subexponential is not None:
        for cc in cs:
            if name == "exponential" and cc >= 1:
                continue
            nu2, b = tp.subexponential(cc)
            se.append((nu2.subs(sub), b.subs(sub)))
    return trace_bound(eps, trace_IX=I, I0=I, subgaussian=sg, subexponential=se)


# ----------------------------------------------------------------------------- categorical model

def categorical_log_pmf(d: int):
    """The categorical model on d symbols with free parameters θ_1..θ_{d-1} (θ_d = 1 - Σθ):
    returns (thetas, list of log p_θ(x) for x = 1..d) as sympy expressions."""
    th = sp.symbols(f"theta_1:{d}", positive=True)
    last = 1 - sum(th)
    return th, [sp.log(t) for t in th] + [sp.log(last)]


def categorical_paired_pmf(d: int):
    """The paired sub-family of docs/problems/multinomial.md: p(2j-1) = (1+θ_j)/d, p(2j) = (1-θ_j)/d for
    j <= ⌊d/2⌋ and p(d) = 1/d if d is odd. Returns (thetas, list of p_θ(x))."""
    m = d // 2
    th = sp.symbols(f"theta_1:{m + 1}", real=True)
    pmf = []
    for j in range(m):
        pmf += [(1 + th[j]) / d, (1 - th[j]) / d]
    if d % 2:
        pmf.append(sp.Integer(1) / d)
    return th, pmf


def fisher_matrix_finite(thetas, pmf) -> sp.Matrix:
    """I_X = Σ_x p(x) ∇log p(x) ∇log p(x)ᵀ for a finite model (sympy)."""
    k = len(thetas)
    I = sp.zeros(k, k)
    for p in pmf:
        g = [S.diff(sp.log(p), t) for t in thetas]
        for a in range(k):
            for b in range(k):
                I[a, b] += p * g[a] * g[b]
    return I.applyfunc(sp.simplify)


def categorical_paired_constants(d: int):
    """(I_0, Tr I_X bound, J) of the paired family on the box θ ∈ [-1/2, 1/2]^{⌊d/2⌋}:
    I_jj = (2/d)/(1-θ_j²) <= 8/(3d) = I_0, Tr I_X <= ⌊d/2⌋·8/(3d), J = ⌊d/2⌋ π²/(1/2)² (box prior)."""
    m = d // 2
    return sp.Rational(8, 3) / d, m * sp.Rational(8, 3) / d, 4 * sp.pi ** 2 * m


# ----------------------------------------------------------------------------- Gaussian scores: the threshold bound

def gauss_threshold_value_np(t, eps):
    """``v_ε(t) = (e^ε-1) φ(t) / (1 + (e^ε-1)(1 - Φ(t)))`` (log-space, stable for large ε and t)."""
    from scipy import special

    t = np.asarray(t, float)
    lc = math.log(math.expm1(eps)) if eps < 700 else float(eps)
    log_phi = -t * t / 2 - 0.5 * math.log(2 * math.pi)
    log_den = np.logaddexp(0.0, lc + special.log_ndtr(-t))
    return np.exp(lc + log_phi - log_den)


def gauss_threshold_info_scalar(eps: float) -> float:
    """``V_ε² = sup_t v_ε(t)²``: for every ε-LDP channel, ``Tr I_Z <= V_ε²/σ²`` in the Gaussian location model
    N(θ, σ²I_d) (any d). Found on a grid then refined (bounded Brent); returned with a relative margin 1e-9
    upwards (the refinement is accurate to ~1e-14 relative, so the value is an upper bound of the sup).
    ``inf`` above ε = 700 (the min with Tr I_X = d/σ² then binds)."""
    from scipy import optimize

    eps = float(eps)
    if not eps > 0:
        return 0.0
    if eps > 700:
        return math.inf
    hi = math.sqrt(2 * eps) + 6.0
    grid = np.linspace(-3.0, hi, 4001)
    vals = gauss_threshold_value_np(grid, eps)
    i = int(np.argmax(vals))
    lo_t, hi_t = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = optimize.minimize_scalar(lambda s: -float(gauss_threshold_value_np(s, eps)), bounds=(lo_t, hi_t),
                                   method="bounded", options={"xatol": 1e-12})
    best = max(float(vals[i]), -float(res.fun))
    return best * best * (1 + 1e-9)


@persistent  # one search per ε ever, memoised in memory and on disk (boundcalc.cache.diskcache): a rate call needs
def _gauss_threshold_info_at(eps: float) -> float:  # one ε, and the search imports scipy.optimize (0.1 s)
    return gauss_threshold_info_scalar(eps)


def gauss_threshold_info_np(eps):
    e = np.asarray(eps, float)
    if e.ndim == 0:
        return _gauss_threshold_info_at(float(e))
    uniq, inv = np.unique(e, return_inverse=True)
    return np.array([gauss_threshold_info_scalar(float(u)) for u in uniq])[inv].reshape(e.shape)


@lru_cache(maxsize=256)
def _gauss_threshold_info_mp_cached(eps: float, prec: int):
    import mpmath

    from .ldp_mutual_info import golden_max_mp

    with mpmath.workprec(prec):
        hi = math.sqrt(2 * eps) + 6.0
        grid = np.linspace(-3.0, hi, 4001)  # the float64 grid locates the cell of the maximum, as in the float64
        i = int(np.argmax(gauss_threshold_value_np(grid, eps)))  # search; the maximum is then found in mpmath
        lo_t, hi_t = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, grid.size - 1)])
        c = mpmath.expm1(mpmath.mpf(eps))

        def v(t):
            return c * mpmath.npdf(t) / (1 + c * mpmath.ncdf(-t))

        tol = mpmath.mpf(10) ** (-(mpmath.mp.dps // 2 + 3))
        best = golden_max_mp(v, mpmath.mpf(lo_t), mpmath.mpf(hi_t), tol)
        return best * best


def gauss_threshold_info_mp(eps):
    """V_ε² in mpmath at the working precision: the cell of the maximum from the float64 grid of
    :func:`gauss_threshold_info_scalar`, then the maximum of v_ε there by golden-section search to the working
    precision (no 1e-9 margin: the search error is below it); 0 for ε <= 0, +inf above ε = 700."""
    import mpmath

    e = float(eps)
    if not e > 0:
        return mpmath.mpf(0)
    if e > 700:
        return mpmath.inf
    return +_gauss_threshold_info_mp_cached(e, mpmath.mp.prec)


class GaussThresholdInfo(sp.Function):
    """``GaussThresholdInfo(ε) = V_ε² = sup_t ((e^ε-1)φ(t)/(1 + (e^ε-1)(1-Φ(t))))²``.

    Derivation (the first step of the table above, with the exact law of the score instead of its variance):
    ``Tr I_Z = E_z ‖E[S r_z]‖²`` and ``‖E[S r_z]‖ = sup_u E[⟨u,S⟩ r_z]``. For X ~ N(θ, σ²I_d) and a unit u,
    ``G = σ⟨u,S⟩`` is standard normal. Over all r with values in [a, a e^ε] and E r = 1, E[G r] is largest for
    the threshold function r = a e^ε on {G > t}, a below (rearrangement: put the large values of r where G is
    large), with a = 1/(1 + (e^ε-1)(1-Φ(t))); then E[G r] = a(e^ε-1) E[G; G > t] = a(e^ε-1)φ(t) = v_ε(t).
    So ``‖E[S|z]‖ <= V_ε/σ`` for every output z and ``Tr I_Z <= V_ε²/σ²`` whatever d. At t = 0 it is
    tanh²(ε/2)·2/π, the information of randomized response on the bit 1{X > θ} (attained in one dimension);
    it is below sinh²(ε/2), 2ε and the first-absolute-moment bound C_ε (E|G|)² = C_ε·2/π for every ε.
    Tested on random ε-LDP channels of interval partitions (one and two dimensions) by exact Fisher
    information (tests/test_gauss_threshold.py)."""

    nargs = 1

    def _eval_evalf(self, prec):
        return sp.Float(float(gauss_threshold_info_scalar(float(self.args[0]))), prec)

    def _latex(self, printer, exp=None):
        out = rf"V_{{{printer._print(self.args[0])}}}^{{2}}"
        return out if exp is None else rf"\left({out}\right)^{{{exp}}}"


def _gauss_threshold_info_numeric(e):
    """The numpy implementation (a float for a scalar ε, an array otherwise)."""
    try:
        v = gauss_threshold_info_np(np.asarray(e, float))
    except TypeError:
        v = gauss_threshold_info_np(float(e))
    return float(v) if np.ndim(v) == 0 else v


# registered implementations, not an ``_imp_`` (lambdify prefers an ``_imp_`` to every module, the mpmath one too)
S.NUMPY_IMPL["GaussThresholdInfo"] = _gauss_threshold_info_numeric
S.MPMATH_IMPL["GaussThresholdInfo"] = gauss_threshold_info_mp
S.HIGH_PRECISION.add("GaussThresholdInfo")  # the same maximum, found in mpmath at the working precision


def bathtub_bound_discrete(score, pmf, eps: float) -> float:
    """The same bound for a finite one-parameter model (for tests): ``sup_z E[S|z]² <= max over the level sets
    {S >= s} and {S <= s} of (a(e^ε-1) E[±S; ·])²`` with a = 1/(1 + (e^ε-1) mass). The value
    (α + β m)/(1 + c m) on each linear piece of the concave majorant is monotone, so breakpoints suffice."""
    score, pmf = np.asarray(score, float), np.asarray(pmf, float)
    c = math.expm1(eps)
    best = 0.0
    for sgn in (1.0, -1.0):
        order = np.argsort(-sgn * score)
        m = np.cumsum(pmf[order])
        g = np.cumsum((sgn * score * pmf)[order])
        best = max(best, float(np.max(c * g / (1 + c * m))))
    return best * best
