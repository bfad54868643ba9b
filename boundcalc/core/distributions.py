"""Binomial and normal probabilities through scipy.special's ufuncs, without importing scipy.stats.

``scipy.stats`` costs about 0.3 s at start-up (its distribution classes and docstring processing), more than
all the rest of a ``boundcalc rate`` call beyond sympy. The functions here return exactly what
``scipy.stats.binom.pmf`` and ``scipy.stats.norm.cdf`` return (``tests/test_distributions.py`` checks bit
equality on random and edge arguments), by calling the same ufuncs those methods call: the binomial pmf ufunc
behind ``binom._pmf`` (Boost), clipped to [0, 1] on the support and 0 off it, as ``rv_discrete.pmf`` does; and
``ndtr`` for the standard normal cdf. Where the private ufunc is missing (another SciPy), ``scipy.stats`` is used.
"""
from __future__ import annotations

import numpy as np


def binom_pmf(k, n, p):
    """P(Bin(n, p) = k), elementwise (arrays broadcast); the same values as ``scipy.stats.binom.pmf``."""
    try:
        from scipy.special._ufuncs import _binom_pmf
    except ImportError:  # pragma: no cover - another SciPy layout
        from scipy import stats

        return stats.binom.pmf(k, n, p)
    k, n, p = np.broadcast_arrays(*(np.asarray(a, float) for a in (k, n, p)))
    valid = (n >= 0) & (n == np.floor(n)) & (p >= 0) & (p <= 1)
    support = valid & (k >= 0) & (k <= n) & (k == np.floor(k))
    out = np.where(valid, 0.0, np.nan)
    if np.any(support):
        out[support] = np.clip(_binom_pmf(k[support], n[support], p[support]), 0, 1)
    return out if out.ndim else float(out)


def norm_cdf(x):
    """Φ(x), the standard normal cdf (``scipy.special.ndtr``, what ``scipy.stats.norm.cdf`` computes)."""
    from scipy import special

    return special.ndtr(x)


#: Stirling-series coefficients of log k! - [(k + 1/2) log k - k + log √(2π)] = 1/(12k) - 1/(360k³) + ...
_STIRLING = (1.0 / 12, 1.0 / 360, 1.0 / 1260, 1.0 / 1680, 1.0 / 1188)


def _stirling_error(k):
    """δ(k) = log Γ(k+1) - (k + 1/2) log k + k - log √(2π) for real k >= 16, by its asymptotic series (5 terms:
    the first omitted one, 691/(360360 k^11), is below 2e-16 at k = 16)."""
    s0, s1, s2, s3, s4 = _STIRLING
    kk = k * k
    return (s0 - (s1 - (s2 - (s3 - s4 / kk) / kk) / kk) / kk) / k


def _deviance(k, mu):
    """bd0(k, μ) = k log(k/μ) + μ - k >= 0 without cancellation (Loader 2000): for |k - μ| < (k + μ)/10 the series
    2k Σ_j v^(2j+1)/(2j+1) - (k - μ) v, v = (k - μ)/(k + μ) (|v| < 0.1: 14 terms leave a relative 1e-28), else
    the direct form (which then cancels at most about tenfold)."""
    k, mu = np.broadcast_arrays(np.asarray(k, float), np.asarray(mu, float))
    with np.errstate(all="ignore"):
        d = k - mu
        v = d / (k + mu)
        s = d * v
        ej = 2.0 * k * v
        v2 = v * v
        for j in range(1, 15):
            ej = ej * v2
            s = s + ej / (2 * j + 1)
        direct = k * np.log(k / mu) + mu - k
    return np.where(np.abs(d) < 0.1 * (k + mu), s, direct)


def poisson_pmf(k, mu):
    """``μ^k e^{-μ} / Γ(k+1)`` for real k >= 0 and μ > 0 (the Poisson probability at integer k; also the gamma
    density terms x^{s-1} e^{-x}/Γ(s) = poisson_pmf(s - 1, x)), elementwise, accurate to about 1e-12 relative at
    every size: Loader's saddle-point form ``exp(-δ(k) - bd0(k, μ)) / √(2πk)`` for k >= 16 (C. Loader, "Fast and
    accurate computation of binomial probabilities", 2000; the form R's dpois uses), whose exponent has no
    cancellation of large terms, and the direct ``exp(k log μ - μ - log Γ(k+1))`` for k < 16 (where any value
    above the underflow has an exponent of magnitude below about 2,000). tests/test_distributions.py compares it
    with 40-digit values for k up to 1e15."""
    from scipy import special

    k, mu = np.broadcast_arrays(np.asarray(k, float), np.asarray(mu, float))
    with np.errstate(all="ignore"):
        big = k >= 16
        kb = np.where(big, k, 16.0)
        saddle = np.exp(-_stirling_error(kb) - _deviance(kb, mu)) / np.sqrt(2 * np.pi * kb)
        direct = np.exp(special.xlogy(k, mu) - mu - special.gammaln(k + 1.0))
        out = np.where(big, saddle, direct)
        out = np.where(mu > 0, out, np.where(k == 0, 1.0, 0.0))
    return out if out.ndim else float(out)
