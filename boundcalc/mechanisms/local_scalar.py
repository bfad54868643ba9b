"""ε-LDP mechanisms for one truncated scalar (docs/problems/mean.md; Duchi, Jordan & Wainwright).

Each user holds x, truncates it to ``[x]_T = max(-T, min(T, x))`` and releases one privatised value Z
with ``E[Z | x] = [x]_T`` (unbiased for the truncated value). The statistician averages the Z_i.

- **Laplace**: ``Z = [x]_T + Laplace(2T/ε)``. The range of ``[x]_T`` has length 2T, so the density
  ratio ``exp((|z - a| - |z - b|)/(2T/ε)) <= e^ε`` for a, b in [-T, T]: ε-LDP.
  ``E[Z²|x] = [x]_T² + 2 (2T/ε)² = [x]_T² + 8T²/ε²``.
- **one-bit** (Duchi et al.): ``Z = ± T c_ε`` with ``c_ε = (e^ε+1)/(e^ε-1) = coth(ε/2)`` and
  ``P(Z = +T c_ε) = 1/2 + [x]_T/(2 T c_ε)``. The two probabilities lie in
  ``[1/(e^ε+1), e^ε/(e^ε+1)]``, so their ratio over any two inputs is at most e^ε: ε-LDP.
  ``E[Z|x] = T c_ε (2P(+) - 1) = [x]_T``; ``Z² = T² c_ε²`` always.

Both second moments are checked by simulation and by exact computation in tests/test_local_mechanisms.py.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from .. import symbolic as S


def coth_half(eps):
    """coth(ε/2) = (e^ε+1)/(e^ε-1) = 1 + 2/expm1(ε), as a sympy expression (stable for small ε)."""
    return 1 + 2 / S.expm1(eps)


def coth_half_np(eps):
    eps = np.asarray(eps, float)
    return 1.0 + 2.0 / np.expm1(eps)


def onebit_second_moment(T, eps):
    """E[Z²] of the one-bit mechanism on [-T, T]: T² coth²(ε/2) (exact, every input)."""
    return T ** 2 * coth_half(eps) ** 2


def laplace_noise_second_moment(T, eps):
    """E[W²] of the Laplace(2T/ε) noise: 8T²/ε²."""
    return 8 * T ** 2 / eps ** 2


def truncate(x, T):
    return np.clip(x, -T, T)


def onebit(x, T, eps, rng: np.random.Generator):
    """Vectorised one-bit privatisation of the truncated values (any array shape)."""
    xt = truncate(np.asarray(x, float), T)
    c = coth_half_np(eps)
    p_plus = 0.5 + xt / (2.0 * T * c)
    return np.where(rng.random(xt.shape) < p_plus, T * c, -T * c)


def onebit_probabilities(x, T, eps):
    """P(Z = +T c_ε | x) (for the exact privacy/unbiasedness tests)."""
    xt = truncate(np.asarray(x, float), T)
    return 0.5 + xt / (2.0 * T * coth_half_np(eps))


def laplace(x, T, eps, rng: np.random.Generator):
    """Vectorised Laplace privatisation of the truncated values."""
    xt = truncate(np.asarray(x, float), T)
    return xt + rng.laplace(0.0, 2.0 * T / eps, size=xt.shape)


MECHANISMS = {"one-bit": onebit, "laplace": laplace}
