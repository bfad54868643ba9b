"""Le Cam's two-point method and the central TV contraction (docs/methods/le-cam.md, docs/methods/tv-contraction.md).

- Two points (Le Cam 1973; Yu 1997; docs/methods/le-cam.md): if ρ(θ_0, θ_1) >= 2s, then for any estimator
  max_v E_v Φ(ρ(θ̂, θ_v)) >= Φ(s) (1 - TV(M_0, M_1)) / 2, M_v the law of what the statistician sees.
- Central α-TV privacy (Barber & Duchi 2014, Theorem 2, constant derived; docs/methods/tv-contraction.md): for i.i.d. samples
  TV(M_0, M_1) <= min{α n TV(P_0, P_1), TV(P_0^n, P_1^n)}.
  Hybrid argument: swap the n coordinates one at a time; for fixed other coordinates the map
  x_i -> Q(A | x) varies by at most α (TV privacy), so integrating against P_1 - P_0 moves it by at
  most α TV(P_0, P_1) (∫ g d(P_1 - P_0) <= (sup g - inf g) TV). Summing n swaps: α n TV. The second
  term is data processing.
"""
from __future__ import annotations

import sympy as sp

from ..core import symbolic as S


def two_point(loss_at_s, tv):
    """Φ(s)(1 - TV)/2 as a sympy expression."""
    return loss_at_s * (1 - tv) / 2


def tv_private_contraction(alpha_tv, n, tv_one, tv_product):
    """Upper bound on the TV between the output laws under α-TV privacy (i.i.d. samples)."""
    return S.Min(alpha_tv * n * tv_one, tv_product)
