"""Independent 80-digit references for the exact-risk parts of the mechanisms behind the upper bounds (part C of the
float64-parts audit, docs/engineering/certified-floating-point.md): written from the definitions, not from the code
under test (which supplies only the mechanism's own free parameters, such as PrivUnit's grid threshold γ)."""
from __future__ import annotations

import mpmath

DPS = 80


def _breaks(lo, hi, scale):
    """Break points of [lo, hi] for a quadrature whose integrand lives on a scale ``scale`` above ``lo``."""
    pts = {lo, hi}
    k = mpmath.mpf(scale) / 64
    while lo + k < hi:
        pts.add(lo + k)
        k *= 2
    return sorted(pts)


def privunit_ref(d: int, eps: float, gamma: float):
    """(m, E W²) of PrivUnit in dimension d at cap threshold γ: W = ⟨V, u⟩ has density
    (1 - w²)^{(d-3)/2}/B(1/2, (d-1)/2) on [-1, 1]; C = P(W >= γ); the cap is drawn with probability
    p = e^ε C/(e^ε C + 1 - C); m = E⟨V, u⟩ = (p/C) E[W; W >= γ] + ((1-p)/(1-C)) E[W; W < γ];
    E W² = (p/C) E[W²; W >= γ] + ((1-p)/(1-C)) E[W²; W < γ]. Every truncated moment by quadrature of the density
    (E[W^k; W < γ] = E W^k - E[W^k; W >= γ], E W = 0, E W² = 1/d)."""
    with mpmath.workdps(DPS):
        d, g, e = mpmath.mpf(d), mpmath.mpf(gamma), mpmath.mpf(eps)
        h = (d - 3) / 2
        B = mpmath.beta(mpmath.mpf(1) / 2, (d - 1) / 2)
        lg = mpmath.log1p(-g * g) if g < 1 else -mpmath.inf
        # w = g + (1-g) v: the density relative to its value at γ (no underflow at large d), scale 1/(d g) or 1/sqrt(d)
        scale = min(1 / mpmath.sqrt(d), 1 / (d * g) if g > 0 else 1) / (1 - g)

        def mom(k):
            # at d = 3 (h = 0) the density is constant: no 0·log 0 at w = 1
            f = lambda v: (g + (1 - g) * v) ** k * (mpmath.exp(h * (mpmath.log1p(-(g + (1 - g) * v) ** 2) - lg))
                                                    if h != 0 else 1) if v < 1 else mpmath.mpf(0)
            return (1 - g) * mpmath.quad(f, _breaks(mpmath.mpf(0), mpmath.mpf(1), min(scale, 1))) * \
                mpmath.exp(h * lg) / B
        if d == 2:  # the arcsine law 1/(π√(1-w²)): closed forms (the quadrature meets its endpoint singularity)
            r, ac = mpmath.sqrt(1 - g * g), mpmath.acos(g)
            C, A, T2 = ac / mpmath.pi, r / mpmath.pi, (ac + g * r) / (2 * mpmath.pi)
        else:
            C, A, T2 = mom(0), mom(1), mom(2)
        p = mpmath.exp(e) * C / (mpmath.exp(e) * C + 1 - C)
        m = p / C * A + (1 - p) / (1 - C) * (-A)
        ew2 = p / C * T2 + (1 - p) / (1 - C) * (1 / d - T2)
        return m, ew2


REFERENCE = {}
SAFE = {}
