"""Uniformity of mass under (approximate) differential privacy (Barber–Duchi Lemma 2 / Theorem 3;
docs/methods/uniformity-of-mass.md, explicit form derived for boundcalc).

Setting: data i.i.d. from the mixtures ``(1-p) P_0 + p P_v``, v in a packing of size N whose
parameters are ρ*-separated. For any (ε,δ)-DP estimator, with ``t_M = P(Bin(n,p) > M)`` and
``S_ε(M) = (1 - e^{-Mε})/(e^ε - 1)``:

    (1/N) Σ_v P_v(ρ(θ̂,θ_v) >= ρ*/2) >= (N-1)(e^{-Mε}(1 - t_M) - δ S_ε(M)) / (1 + (N-1) e^{-Mε}).

Derivation (checked in tests/test_methods_central.py by brute force on small cases):
1. Group privacy over m changed entries: Q(A|x) >= e^{-mε} Q(A|x') - δ S_ε(m)   (sum of a geometric
   series of the per-step δ), and e^{-mε}, S_ε(m) are monotone in m, so m <= M gives the M form.
2. Coupling: draw a shared P_0 sample; each entry is replaced by a P_v (resp. P_v') draw with
   probability p, so the Hamming distance is Bin(n,p) and
   P_v(A) >= e^{-Mε}(P_v'(A) - t_M) - δ S_ε(M).
3. Apply 2 to the disjoint success sets A_v' = {ρ(θ̂,θ_v') < ρ*/2}, sum over v' != v and average
   over v: with ā the average success probability,
   1 - ā >= e^{-Mε}(N-1)(ā - t_M) - (N-1) δ S_ε(M); solve for 1 - ā.
The form used below divides numerator and denominator by (N-1) e^{-Mε} so that huge packings
(log N in the hundreds) and large Mε stay finite in floating point:

    failure >= (1 - t_M - δ (e^{Mε} - 1)/(e^ε - 1)) / (1 + e^{Mε - log(N-1)}).
"""
from __future__ import annotations

import math

import sympy as sp

from ..core import symbolic as S


@S.cached_expression
def failure_probability(n, p, M, eps, log_nm1, delta=None):
    """Sympy expression for the average failure probability above (clipped at 0).

    ``log_nm1`` is log(N - 1) of the packing. ``delta=None`` is pure DP (δ = 0).
    """
    tail = S.BinomSF(M, n, p)
    num = 1 - tail
    if delta is not None:
        num = num - delta * S.expm1(M * eps) / S.expm1(eps)
    return S.Max(0, num / (1 + sp.exp(M * eps - log_nm1)))


def failure_probability_direct(N: int, n: int, p: float, M: int, eps: float, delta: float = 0.0) -> float:
    """The same bound in the paper's form, for small N (used by tests to check the rewriting)."""
    from scipy import stats

    t = stats.binom.sf(M, n, p)
    S_eps = M if eps == 0 else (1 - math.exp(-M * eps)) / math.expm1(eps)
    e = math.exp(-M * eps)
    return max(0.0, (N - 1) * (e * (1 - t) - delta * S_eps) / (1 + (N - 1) * e))
