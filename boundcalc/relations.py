"""Relations between privacy definitions (Barber–Duchi Section 2; THEOREMS.md §1.6).

This module is the one place where one privacy guarantee is translated into another. The core's
lower bounds use :func:`tv_level` to transfer the TV-privacy lower bound to other models.
"""
from __future__ import annotations

import math


def tv_level(model: str, eps: float, delta: float | None = None) -> float:
    """TV-privacy level α implied by a central guarantee (THEOREMS.md §1.6), capped at 1.

    - pure / smooth ε-DP: α = (e^ε − 1)/(e^ε + 1) = tanh(ε/2) (tight); smooth DP implies pure DP.
    - (ε,δ)-DP: α = (e^ε − 1 + 2δ)/(e^ε + 1).
    - α-KL: α' = sqrt(α/2) (Pinsker).
    - α-TV: α itself.
    - none: 1 (no constraint).
    """
    if model == "none":
        return 1.0
    if model in ("pure", "smooth"):
        return math.tanh(eps / 2.0)
    if model == "approx":
        # (e^ε − 1 + 2δ)/(e^ε + 1) written to avoid overflow for large ε
        return min(1.0, (-math.expm1(-eps) + 2.0 * delta * math.exp(-eps)) / (1.0 + math.exp(-eps)))
    if model == "kl":
        return min(1.0, math.sqrt(eps / 2.0))
    if model == "tv":
        return float(eps)
    raise ValueError(f"no TV level for privacy model {model!r}")
