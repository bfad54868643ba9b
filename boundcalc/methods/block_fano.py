"""Block-vertex Fano bound with a collision envelope (docs/methods/block-fano.md; sparse Bernoulli under ε-LDP,
docs/problems/sparse-bernoulli.md). Valid for sequentially interactive protocols.

**Family.** m blocks of b coordinates each (m b <= d); V = (V_1, ..., V_m) uniform on [b]^m; θ_V puts mass μ on
the coordinate V_l of block l and 0 elsewhere (Σθ = mμ <= s, μ <= 1). A user's data restricted to block l is
e_{V_l} B_l with B_l ~ Bern(μ) independent: the vertex is *erased* with probability 1 - μ.

**Risk as posterior collisions.** Under squared loss the Bayes risk is the posterior variance,
``Σ_l Σ_j μ² p_l(j)(1 - p_l(j)) = μ² Σ_l (1 - ‖p_l‖²)`` with p_l the posterior law of V_l given the transcript.

**Collision envelope.** h_b is the least concave nondecreasing function with ``‖q‖² <= h_b(KL(q ‖ U_b))`` for every
law q on b points. Then ``E‖p_l‖² <= E h_b(KL(p_l ‖ U_b))`` and ``Σ_l E KL(p_l ‖ U_b) <= I(V; Z)`` (subadditivity of
entropy under the uniform prior), so by Jensen over the blocks

    minimax >= m μ² (1 - h_b(I/m)).

**One spike and a uniform rest.** For λ >= 0, ``‖q‖² + λH(q) = Σ_i g(q_i)``, g(x) = x² - λ x log x, g'' = 2 - λ/x:
g is strictly convex above λ/2 and concave below. At a maximiser over the simplex at most one coordinate exceeds
λ/2 (moving mass between two such coordinates is a strictly convex function of the amount moved, which cannot peak
inside the interval), and the others can be replaced by their average (Jensen). So
``max_q ‖q‖² - λ KL(q ‖ U_b) = max_u Q(u) - λ K(u)`` over the laws q_u = (u, (1-u)/(b-1), ...), and the least concave
nondecreasing majorant of the curve (K(u), Q(u)) is a valid h_b (take λ a supergradient of it at KL(q)).

**Certified numerics.** u-cells: K at least its value at the point of the cell nearest 1/b (K convex, minimum 0 at
1/b), Q at most its larger end value (Q convex), rounded outward; the upper hull of these dominating points
(monotone chain, once per b, kept on disk) is above h_b; J is rounded up and the interpolation widened by 1e-13.

**Information.** Per report (any past, any prior), with p = 1 - (1-μ)^m = P(X ≠ 0):
``I(V; Z_i | past) <= ι = min{p κ_ε, c_ε p²}`` (the erasure indicator is independent of V: Lemma A of
docs/methods/ldp-mutual-info.md on the non-erased part; the χ²–TV contraction with TV <= p), and by data processing
``I(V; Z^n) <= I(V; X^n) = m (1 - (1-μ)^n) log b``. Chain rule over the n reports.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp

from ..core import symbolic as S
from ..cache.diskcache import persistent

#: margins of the rounded table (K rounded down, Q up)
REL_MARGIN, ABS_MARGIN = 1e-12, 1e-15


def _kl_uniform(b: int, u):
    """K(u) = KL(q_u ‖ uniform) for q_u = (u, (1-u)/(b-1), ..., (1-u)/(b-1)) (numpy; 0 log 0 = 0)."""
    u = np.asarray(u, float)
    lb, lb1 = math.log(b), math.log(b - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(u > 0, u * (np.log(np.where(u > 0, u, 1.0)) + lb), 0.0)
        v = 1 - u
        t2 = np.where(v > 0, v * (np.log(np.where(v > 0, v, 1.0)) + lb - lb1), 0.0)
    return t1 + t2


def _collision(b: int, u):
    """Q(u) = ‖q_u‖² = u² + (1-u)²/(b-1)."""
    u = np.asarray(u, float)
    return u * u + (1 - u) ** 2 / (b - 1)


def _cell_points(b: int):
    """Cell ends on [0, 1]: uniform, geometric towards 1/b from both sides and towards 0."""
    c = 1.0 / b
    g = np.geomspace(1e-9, 1.0, 500)
    pts = np.concatenate([np.linspace(0.0, 1.0, 2001), c - c * g, c + (1 - c) * g, np.geomspace(1e-14, 1.0, 300),
                          1.0 - np.geomspace(1e-12, 0.5, 300), [0.0, c, 1.0]])
    return np.unique(np.clip(pts, 0.0, 1.0))


def envelope_points(b: int):
    """(K_i, Q_i), one point per u-cell [u0, u1]: K_i <= min K on the cell (K is convex with its minimum 0 at 1/b, so the
    minimum is at the point of the cell nearest 1/b), Q_i >= max Q on the cell (Q is convex: an end); rounded
    outward. Every point (K(u), Q(u)) of the curve has a point (K_i, Q_i) with K_i <= K(u), Q_i >= Q(u)."""
    b = int(b)
    x = _cell_points(b)
    u0, u1 = x[:-1], x[1:]
    K = _kl_uniform(b, np.clip(1.0 / b, u0, u1))
    K = np.maximum(K * (1 - REL_MARGIN) - ABS_MARGIN, 0.0)
    Q = np.maximum(_collision(b, u0), _collision(b, u1)) * (1 + REL_MARGIN) + ABS_MARGIN
    return K, Q


def _upper_hull(K, Q):
    """Vertices of the least concave nondecreasing majorant of the points (K, Q) on [0, ∞): the upper hull from the
    point of smallest K (largest Q among ties) to the point of largest Q (monotone chain), flat afterwards."""
    order = np.lexsort((-Q, K))
    K, Q = K[order], Q[order]
    top = int(np.argmax(Q))
    hull = []
    for k, q in zip(K[:top + 1], Q[:top + 1]):
        while len(hull) >= 2:
            (k1, q1), (k2, q2) = hull[-2], hull[-1]
            # drop the middle point when it lies on or below the chord (cross product >= 0)
            if (k2 - k1) * (q - q1) - (q2 - q1) * (k - k1) >= 0:
                hull.pop()
            else:
                break
        if hull and k == hull[-1][0]:
            continue  # same K, smaller Q (sorted by -Q within ties)
        hull.append((float(k), float(q)))
    hk = np.array([h[0] for h in hull])
    hq = np.array([h[1] for h in hull])
    return hk, np.maximum.accumulate(hq)


@persistent  # a certified numeric table: memoised in memory and on disk (boundcalc.cache.diskcache)
def _hull_table(b: int) -> tuple:
    hk, hq = _upper_hull(*envelope_points(int(b)))
    return tuple(float(x) for x in hk), tuple(float(x) for x in hq)


@functools.lru_cache(maxsize=4096)
def _hull_arrays(b: int):
    hk, hq = _hull_table(int(b))
    return np.array(hk, float), np.array(hq, float)


def collision_phi(b: int, J) -> np.ndarray:
    """Certified upper bound on h_b(J), the least concave nondecreasing majorant of the collision curve at J (vectorised
    in J; J rounded up by 2 ulp, the linear interpolation widened by 1e-13: h_b is nondecreasing), at most 1."""
    J = np.nextafter(np.nextafter(np.maximum(np.asarray(J, float), 0.0), np.inf), np.inf)
    hk, hq = _hull_arrays(int(b))
    out = np.interp(J, hk, hq) + 1e-13
    return np.minimum(out, 1.0)


def _collision_phi_numpy(b, J):
    b, J = np.broadcast_arrays(np.asarray(b, float), np.asarray(J, float))
    out = np.full(b.shape, np.nan)
    ok = np.isfinite(b) & np.isfinite(J) & (b >= 2)
    if ok.any():
        bi = np.floor(b[ok]).astype(np.int64)
        Jo = np.maximum(J[ok], 0.0)
        res = np.empty(bi.shape)
        for bb in np.unique(bi):
            sel = bi == bb
            res[sel] = collision_phi(int(bb), Jo[sel])
        out[ok] = res
    return out if out.ndim else float(out)


def _collision_phi_mpmath(b, J):
    import mpmath

    b, J = float(b), float(J)  # float(J) may round down: collision_phi rounds J up by 2 ulp first
    if not (math.isfinite(b) and math.isfinite(J) and b >= 2):
        return mpmath.mpf("nan")
    return mpmath.mpf(float(collision_phi(int(math.floor(b)), max(J, 0.0))))


class CollisionPhi(sp.Function):
    """``CollisionPhi(b, J)``: a certified upper bound on min_λ [C_b(λ) - λ(log b - J)], the largest mean posterior
    collision probability E‖p‖² of a uniform b-ary variable about which J nats are known (module docstring)."""

    nargs = 2

    def _latex(self, printer, exp=None):
        bb, jj = (printer._print(a) for a in self.args)
        base = rf"\Phi_{{{bb}}}\left({jj}\right)"
        return base if exp is None else rf"\left({base}\right)^{{{exp}}}"


S.NUMPY_IMPL["CollisionPhi"] = _collision_phi_numpy
S.MPMATH_IMPL["CollisionPhi"] = _collision_phi_mpmath


def block_fano_bound(n, eps, d, s, m, t):
    """sympy: m μ² (1 - Φ_b(I/m)) with μ = t min{1, s/m}, b = ⌊d/m⌋, p = 1 - (1-μ)^m,
    I = min{n p κ_ε, n c_ε p², m (1 - (1-μ)^n) log b} (module docstring)."""
    from .chi2_contraction import chi2_factor
    from .ldp_mutual_info import kappa

    mu = t * S.Min(1, s / m)
    b = sp.floor(d / m)
    p = -S.expm1(m * S.log1p(-mu))
    info = S.Min(n * p * kappa(eps), n * chi2_factor(eps) * p ** 2, m * (-S.expm1(n * S.log1p(-mu))) * sp.log(b))
    return m * mu ** 2 * (1 - CollisionPhi(b, info / m))
