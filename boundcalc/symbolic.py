"""Shared sympy symbols and the special functions that bounds use, with numeric implementations.

Bounds are sympy expressions in these named symbols. Functions that sympy cannot evaluate fast
(binomial tails, the analytic Gaussian calibration) are sympy ``Function`` classes whose numpy and
mpmath implementations are registered in :data:`NUMPY_IMPL` / :data:`MPMATH_IMPL` and handed to
``lambdify``; the expression stays printable (str and LaTeX) and evaluation stays vectorised.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p  # noqa: F401  (re-exported: stable small-x forms)

# problem / privacy parameters
n = sp.Symbol("n", positive=True)
eps = sp.Symbol("epsilon", positive=True)
delta = sp.Symbol("delta", positive=True)
alpha = sp.Symbol("alpha", positive=True)
d = sp.Symbol("d", positive=True)
r = sp.Symbol("r", positive=True)

# free parameters of bounds
T = sp.Symbol("T", positive=True)  # truncation radius
p = sp.Symbol("p", positive=True)  # mixture weight
M = sp.Symbol("M", nonnegative=True)  # group size in the coupling of §1.4
s = sp.Symbol("s", positive=True)  # packing distance
h = sp.Symbol("h", positive=True)  # half-gap of a two-point construction

#: map from parameter name (as used in params dicts) to its symbol
PARAM_SYMBOLS = {"n": n, "eps": eps, "delta": delta, "d": d, "r": r}


def _pow(tex: str, exp) -> str:
    return tex if exp is None else rf"{{{tex}}}^{{{exp}}}"


class BinomSF(sp.Function):
    """``BinomSF(M, n, p) = P(Binomial(n, p) > M)``: the exact binomial upper tail (regularised beta)."""

    nargs = 3

    def _latex(self, printer, exp=None):
        m, nn, pp = (printer._print(a) for a in self.args)
        return _pow(rf"\Pr\left[\mathrm{{Bin}}({nn}, {pp}) > {m}\right]", exp)


class BinomTVComplement(sp.Function):
    """``1 - TV(Bin(n, q1), Bin(n, q2))``, computed exactly from binomial CDFs (no cancellation).

    The likelihood ratio of the two binomials is monotone in the count, so the TV is attained on a
    set ``{j <= j0}`` and ``1 - TV = sf_{q_lo}(j0) + cdf_{q_hi}(j0)`` for the smaller ``q_lo``.
    """

    nargs = 3

    def _latex(self, printer, exp=None):
        nn, a, b = (printer._print(x) for x in self.args)
        return _pow(rf"\left(1 - \mathrm{{TV}}(\mathrm{{Bin}}({nn},{a}), \mathrm{{Bin}}({nn},{b}))\right)", exp)


class GaussSigmaAnalytic(sp.Function):
    """Noise multiplier of the exactly calibrated Gaussian mechanism (Balle & Wang 2018, Thm 8).

    ``GaussSigmaAnalytic(eps, delta)`` is the smallest σ such that N(0, σ²) noise on a query of
    ℓ2 sensitivity 1 is (ε,δ)-DP: ``Φ(1/(2σ) - εσ) - e^ε Φ(-1/(2σ) - εσ) <= δ``.
    """

    nargs = 2

    def _latex(self, printer, exp=None):
        a, b = (printer._print(x) for x in self.args)
        return _pow(rf"\sigma_{{\mathrm{{aG}}}}({a}, {b})", exp)


# ---------------------------------------------------------------- numeric implementations

def _binom_sf(m, nn, pp):
    """P(Bin(n,p) > m) = I_p(m+1, n-m) (regularised incomplete beta; works for n up to 1e18,
    where scipy's bdtrc casts n to a C int and fails)."""
    from scipy import special

    m, nn, pp = np.broadcast_arrays(np.asarray(m, float), np.asarray(nn, float), np.asarray(pp, float))
    m = np.floor(m)
    inside = (m >= 0) & (m < nn)
    with np.errstate(all="ignore"):
        out = special.betainc(np.where(inside, m + 1, 1.0), np.where(inside, nn - m, 1.0), pp)
    out = np.where(m >= nn, 0.0, out)
    return np.where(m < 0, 1.0, out)


def _binom_cdf(j, nn, pp):
    """P(Bin(n,p) <= j) = I_{1-p}(n-j, j+1)."""
    from scipy import special

    inside = (j >= 0) & (j < nn)
    with np.errstate(all="ignore"):
        out = special.betainc(np.where(inside, nn - j, 1.0), np.where(inside, j + 1, 1.0), 1.0 - pp)
    out = np.where(j >= nn, 1.0, out)
    return np.where(j < 0, 0.0, out)


#: above this n the float64 "exact" binomial TV is not trusted: the crossing point j0 ~ n/2 moves by
#: ~ n·1e-16/|q1-q2| counts (rounding of q1, q2), which exceeds the binomial's sd √n/2 once n ≳ 1e12
EXACT_BINOMIAL_TV_MAX_N = 1e10


def _binom_tv_complement(nn, q1, q2):
    """1 - TV(Bin(n,q1), Bin(n,q2)), exact, for n <= EXACT_BINOMIAL_TV_MAX_N; nan beyond (an unusable
    value, never a wrong one). For any n use :func:`boundcalc.methods.ldp.binomial_tv_bound`, which
    switches to the Hellinger bound there."""
    nn = np.asarray(nn, float)
    return np.where(nn <= EXACT_BINOMIAL_TV_MAX_N, _binom_tv_complement_exact(nn, q1, q2), np.nan)


def _binom_tv_complement_exact(nn, q1, q2):
    nn, q1, q2 = np.broadcast_arrays(np.asarray(nn, float), np.asarray(q1, float), np.asarray(q2, float))
    lo = np.minimum(q1, q2)
    hi = np.maximum(q1, q2)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log1p(-lo) - np.log1p(-hi)  # log((1-lo)/(1-hi)) > 0
        b = np.log(hi) - np.log(lo)  # log(hi/lo) > 0
        j0 = nn * a / (a + b)  # pmf_lo(j) > pmf_hi(j) iff j < j0
    j = np.ceil(j0) - 1.0
    j = np.where(hi == 1, nn - 1.0, j)  # Bin(n, 1) is a point mass at n: Bin(n, lo) wins below n
    j = np.where(lo == 0, 0.0, j)  # Bin(n, 0) is a point mass at 0, which beats Bin(n, hi) there
    j = np.clip(j, -1.0, nn)
    out = _binom_sf(j, nn, lo) + _binom_cdf(j, nn, hi)
    out = np.where(lo == hi, 1.0, out)
    return np.clip(out, 0.0, 1.0)


def gauss_sigma_analytic_scalar(e: float, dl: float) -> float:
    """Smallest σ with δ(σ) <= dl for sensitivity 1, rounded up (memoised; see :mod:`boundcalc.gauss_calibration`)."""
    from .gauss_calibration import sigma_analytic_scalar

    return sigma_analytic_scalar(e, dl)


def _gauss_sigma(e, dl):
    """Vectorised analytic Gaussian calibration (each distinct (ε, δ) solved once, over arrays)."""
    from .gauss_calibration import sigma_analytic

    return sigma_analytic(e, dl)


def _lazy_special(name):
    """A scipy.special function imported on first call (keeps `import scipy` out of the CLI's start-up)."""

    def fn(*args):
        from scipy import special

        return getattr(special, name)(*args)

    fn.__name__ = name
    return fn


#: sympy function names printed by lambdify's numpy printer that numpy lacks
_SPECIAL_NAMES = ("erf", "erfc", "erfinv", "erfcinv", "gamma", "loggamma", "gammaln", "digamma", "polygamma",
                  "beta", "betainc", "zeta", "lambertw")

#: generated numeric functions, keyed by (argument symbols, expression, implementations of the
#: expression's implemented functions): each expression is lambdified once per process
_LAMBDIFIED: "OrderedDict" = None
LAMBDIFY_CACHE_SIZE = 1024


def _impl_key(expr):
    """Identity of the Python implementations an expression's functions carry (``_imp_``) or are
    given through :data:`NUMPY_IMPL`, so two expressions that print alike but evaluate differently
    never share a generated function."""
    out = []
    for f in expr.atoms(sp.Function):
        name = type(f).__name__
        imp = getattr(type(f), "_imp_", None)
        out.append((name, id(imp) if imp is not None else None, id(NUMPY_IMPL.get(name))))
    return tuple(sorted(out, key=repr))


def numpy_lambdify(args, expr):
    """``sympy.lambdify`` with the NumPy printer but a namespace of only ``numpy`` and our functions.

    (lambdify's default "numpy" namespace runs ``from numpy import *``, which under numpy 2 imports
    every numpy submodule: ~0.2 s of CLI start-up for nothing; the NumPy printer qualifies its names.)
    Memoised: the same (args, expression) gives the same generated function (an LRU of
    :data:`LAMBDIFY_CACHE_SIZE`); the expression is still the only source of the code.
    """
    global _LAMBDIFIED
    if _LAMBDIFIED is None:
        from collections import OrderedDict

        _LAMBDIFIED = OrderedDict()
    args = tuple(args)
    key = (args, expr, _impl_key(expr))
    fn = _LAMBDIFIED.get(key)
    if fn is not None:
        _LAMBDIFIED.move_to_end(key)
        return fn
    fn = _numpy_lambdify(args, expr)
    _LAMBDIFIED[key] = fn
    while len(_LAMBDIFIED) > LAMBDIFY_CACHE_SIZE:
        _LAMBDIFIED.popitem(last=False)
    return fn


def _numpy_lambdify(args, expr):
    from sympy.printing.numpy import NumPyPrinter

    printer = NumPyPrinter({"fully_qualified_modules": True, "inline": True, "allow_unknown_functions": True,
                            "user_functions": {k: k for k in NUMPY_IMPL}})
    import functools

    return sp.lambdify(args, expr, modules=[NUMPY_IMPL, {"numpy": np, "functools": functools, "math": math}],
                       printer=printer)


NUMPY_IMPL = {
    **{name: _lazy_special(name) for name in _SPECIAL_NAMES},
    "BinomSF": _binom_sf,
    "BinomTVComplement": _binom_tv_complement,
    "GaussSigmaAnalytic": _gauss_sigma,
}


def _mp_binom_sf(m, nn, pp):
    import mpmath

    m = mpmath.floor(m)
    if m < 0:
        return mpmath.mpf(1)
    if m >= nn:
        return mpmath.mpf(0)
    # P(X > m) = I_p(m+1, n-m)
    return mpmath.betainc(m + 1, nn - m, 0, pp, regularized=True)


def _mp_binom_tv_complement(nn, q1, q2):
    return mpmath_float(_binom_tv_complement(float(nn), float(q1), float(q2)))


def mpmath_float(x):
    import mpmath

    return mpmath.mpf(float(np.asarray(x)))


MPMATH_IMPL = {
    "BinomSF": _mp_binom_sf,
    "BinomTVComplement": _mp_binom_tv_complement,
    "GaussSigmaAnalytic": lambda e, dl: mpmath_float(gauss_sigma_analytic_scalar(float(e), float(dl))),
}


def register_scalar_function(name: str, value, nan_unless_finite: bool = False):
    """Register the numeric implementations of the sympy function ``name`` from a scalar float function
    ``value(*args)``: an elementwise numpy version (broadcast arguments; a float for scalar input) and an mpmath
    version (NaN where ``value`` is NaN, or, with ``nan_unless_finite``, wherever it is not finite)."""

    def numpy_impl(*args):
        arrs = np.broadcast_arrays(*(np.asarray(a, float) for a in args))
        out = np.empty(arrs[0].shape)
        for ix in np.ndindex(out.shape):
            out[ix] = value(*(float(a[ix]) for a in arrs))
        return out if out.ndim else float(out)

    def mpmath_impl(*args):
        import mpmath

        v = value(*(float(a) for a in args))
        bad = (not math.isfinite(v)) if nan_unless_finite else math.isnan(v)
        return mpmath.mpf("nan") if bad else mpmath.mpf(v)

    NUMPY_IMPL[name] = numpy_impl
    MPMATH_IMPL[name] = mpmath_impl
