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
