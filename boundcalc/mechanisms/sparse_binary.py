"""Mechanisms for sparse binary vectors x ∈ {0,1}^d under ε-LDP, and the risk bounds of their estimators of
θ = E x on the class Θ_s = {θ ∈ [0,1]^d : Σθ_j <= s} (docs/problems/sparse-bernoulli.md).

Every user first keeps at most K of its ones (a uniformly random K of them when it has more): x ↦ x',
|x'| <= K. With θ'_j = P(x'_j = 1) the truncation bias b = θ - θ' is >= 0 coordinatewise and

    ‖b‖₁ = E|x| - E min(|x|, K) = E(|x| - K)₊ <= β(K) = E(Poi(s) - K)₊ = s P(Poi(s) >= K) - K P(Poi(s) >= K+1).

The inequality: Bern(p) is below Poi(p) in the convex order (equal means, and for the stop-loss transforms
E(Poi(p) - t)₊ = p - t + t e^{-p} >= p(1 - t) = E(Bern(p) - t)₊ on [0, 1], equality for t <= 0, and >= 0 for
t >= 1); the convex order is kept under sums of independent variables (Shaked & Shanthikumar 2007,
Thm 3.A.12), so |x| <= Poi(Σθ_j) in convex order, and (· - K)₊ is convex; finally Poi(μ) increases
stochastically in μ <= s. The last equality uses k P(Poi(s) = k) = s P(Poi(s) = k-1). As b_j <= θ_j <= 1,
‖b‖₂² <= ‖b‖₁ max_j b_j <= min{β², β}. :class:`PoissonExcess` is β (numpy: scipy's ``pdtrc``; mpmath: the
regularised incomplete gamma function in working precision).

Three estimators (each derivation is repeated in the Bound that uses it, boundcalc/problems/sparse_bernoulli.py):

1. **Projected truncated randomized response** (Warner 1965; Duchi, Jordan & Wainwright 2018 for the LDP
   analysis): every bit of x' goes through randomized response at level ε/(2K) (two truncated vectors differ
   in at most 2K bits, and the truncation is a mixture: ε-LDP). The debiased report of one user lies in an
   interval of length R = coth(ε/(4K)) in each coordinate; y = the average, θ̂ = Π_C(y) with
   C = Θ_s. Risk bound :func:`projected_quadratic` with the Hoeffding moment generating function.
2. **Truncated, centred PrivUnit** (Bhowmick, Duchi, Freudiger, Kapoor & Rogers 2018): v = x' - κ1 with
   κ = K̃/d, K̃ = min{K, d/2}, lies in the ℓ2 ball of radius r, r² = K̃ - K̃²/d (‖x' - κ1‖² = k(1 - 2κ) + dκ²
   for |x'| = k <= K, linear in k and κ <= 1/2, largest at k = K̃ or, when K > d/2, equal to d/4 for every
   k); PrivUnit of v at level ε (:mod:`boundcalc.mechanisms.privunit`: E[Z | v] = v, ‖Z‖ = r/m exactly),
   y = κ1 + Z̄. Unbiased for θ', so E‖y - θ‖² = ‖b‖² + (r²/m² - ‖θ' - κ1‖²)/n <= min{β², β} + r²/(m² n).
3. **The same, projected** onto C: :func:`projected_quadratic` with Bennett's moment generating function bound.

The projection step (both projected estimators). C is closed and convex and θ ∈ C, so with Π = Π_C(y) and
D = ‖Π - θ‖: D² <= ⟨y - θ, Π - θ⟩. Write y - θ = ξ - b with ξ = y - θ' centred. Then
⟨ξ, Π⟩ <= sup_{c ∈ C} ⟨ξ, c⟩ <= s t + Σ_j (ξ_j - t)₊ for every t >= 0 (0 <= c_j <= 1, Σc_j <= s),
E⟨ξ, θ⟩ = 0 and -⟨b, Π - θ⟩ <= ‖b‖₂ D. With (x)₊ <= e^{λx}/(eλ) (λ > 0) and Σ_j E e^{λξ_j} <= S(λ):
E D² <= A + ‖b‖₂ E D <= A + ‖b‖₂ sqrt(E D²), A = s t + S e^{-λt}/(eλ). The choice
t = max{0, log(S/s) - 1}/λ gives A = (s/λ) g(log(S/s)), g(L) = min{e^{L-1}, max{L, 1}} (L for L >= 1, e^{L-1}
otherwise). Solving the quadratic: E D² <= ((β₂ + sqrt(β₂² + 4A))/2)², β₂ = min{β, sqrt(β)}. This is the
maximal-inequality argument of Boucheron, Lugosi & Massart (2013, Section 2.5), applied to the top-s sum.
Because Π_C is 1-Lipschitz and θ ∈ C, the projected estimator also has risk at most its unprojected one.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ..core import symbolic as S
from . import privunit as PU
from .sampling import truncate_ones


# ------------------------------------------------------------------------------ truncation bias β(K)

def poisson_excess_np(s, K):
    """E(Poi(s) - K)₊ = s P(Poi(s) >= K) - K P(Poi(s) >= K+1) (K rounded down; s - K for K <= 0), numpy."""
    from scipy import special

    s, K = np.broadcast_arrays(np.asarray(s, float), np.floor(np.asarray(K, float)))
    with np.errstate(all="ignore"):
        tail = s * special.pdtrc(K - 1, s) - K * special.pdtrc(K, s)  # pdtrc(k, s) = P(Poi(s) > k)
    out = np.where(K <= 0, s - K, np.maximum(tail, 0.0))
    return out if out.ndim else float(out)


def poisson_excess_mp(s, K):
    """The same in mpmath working precision (P(Poi(s) >= k) = P(k, s), the regularised lower incomplete gamma)."""
    import mpmath

    s, K = mpmath.mpf(s), int(mpmath.floor(K))
    if K <= 0:
        return s - K
    return s * mpmath.gammainc(K, 0, s, regularized=True) - K * mpmath.gammainc(K + 1, 0, s, regularized=True)


class PoissonExcess(sp.Function):
    """``PoissonExcess(s, K) = E(Poi(s) - K)₊``: the bound β(K) on the ℓ1 truncation bias of keeping at most K
    ones of a vector of independent bits with Σθ_j <= s (module docstring)."""

    nargs = 2

    def _latex(self, printer, exp=None):
        ss, kk = (printer._print(a) for a in self.args)
        base = rf"\mathbb{{E}}(\mathrm{{Poi}}({ss}) - {kk})_+"
        return base if exp is None else rf"\left({base}\right)^{{{printer._print(exp)}}}"


S.NUMPY_IMPL["PoissonExcess"] = poisson_excess_np
S.MPMATH_IMPL["PoissonExcess"] = poisson_excess_mp
S.HIGH_PRECISION.add("PoissonExcess")  # its mpmath implementation computes at working precision


def bias_l2(s, K):
    """β₂ = min{β, sqrt(β)} >= ‖b‖₂ (sympy)."""
    beta = PoissonExcess(s, K)
    return S.Min(beta, sp.sqrt(beta))


def bias_l2_squared(s, K):
    """min{β², β} >= ‖b‖₂² (sympy)."""
    beta = PoissonExcess(s, K)
    return S.Min(beta ** 2, beta)


# ------------------------------------------------------------------------------ risk bounds (sympy)

def top_sum_bound(s, log_S, lam):
    """A = (s/λ) g(log(S/s)) >= E sup_{c ∈ C}⟨ξ, c⟩ when log Σ_j E e^{λξ_j} <= log_S (module docstring)."""
    L = log_S - sp.log(s)
    return (s / lam) * S.Min(sp.exp(L - 1), S.Max(L, 1))


def projected_quadratic(beta2, A):
    """((β₂ + sqrt(β₂² + 4A))/2)²: the largest x² with x² <= A + β₂ x."""
    return ((beta2 + sp.sqrt(beta2 ** 2 + 4 * A)) / 2) ** 2


def rr_range(eps, K):
    """R = coth(ε/(4K)) = 1/(2q - 1), q = e^{ε'}/(1 + e^{ε'}), ε' = ε/(2K): the range of one debiased RR bit."""
    return 1 / sp.tanh(eps / (4 * K))


def rr_projected_risk(n, eps, d, s, K, ell):
    """Projected truncated RR: each ξ_j is an average of n independent centred variables with range R, so
    E e^{λξ_j} <= e^{λ²v/2}, v = R²/(4n) (Hoeffding's lemma) and S = d e^{λ²v/2}. λ = ℓ/sqrt(v), ℓ > 0 free."""
    sv = rr_range(eps, K) / (2 * sp.sqrt(n))  # sqrt(v)
    log_S = sp.log(d) + ell ** 2 / 2
    return projected_quadratic(bias_l2(s, K), top_sum_bound(s, log_S, ell / sv))


def privunit_radius_sq(d, K):
    """r² = K̃ - K̃²/d, K̃ = min{K, d/2}: the largest ‖x' - κ1‖² over |x'| <= K, κ = K̃/d."""
    Kt = S.Min(K, d / 2)
    return Kt - Kt ** 2 / d


def privunit_centre(d, K):
    """κ = min{K, d/2}/d."""
    return S.Min(K, d / 2) / d


def privunit_unprojected_risk(n, eps, d, s, K):
    """min{β², β} + r²/(m² n) (module docstring, estimator 2)."""
    return bias_l2_squared(s, K) + PU.second_moment(sp.sqrt(privunit_radius_sq(d, K)), eps, d) / n


class PrivUnitInnerMoment(S.ScalarFunction):
    """``PrivUnitInnerMoment(d, ε) = E W²``, W = ⟨V, u⟩ for the unit-sphere release V of PrivUnit on input
    direction u (the same for every u; :func:`boundcalc.mechanisms.privunit.sq_inner_moment`)."""

    nargs = 2
    scalar_value = staticmethod(PU.sq_inner_moment)
    latex = r"\mathbb{{E}} W^2_{{\mathrm{{PU}}}}({0}, {1})"
    nan_unless_finite = True


S.MPMATH_IMPL["PrivUnitInnerMoment"] = PU._inner_mpmath  # E W² at the working precision (PU.moments_mp)
S.HIGH_PRECISION.add("PrivUnitInnerMoment")


def privunit_projected_risk(n, eps, d, s, K, u):
    """Projected truncated PrivUnit. Per user, X_j = Z_j - E Z_j <= b = r/m + κ (|Z_j| <= ‖Z‖ = r/m,
    E Z_j = θ'_j - κ >= -κ), and Var X_j <= E Z_j² = (r/m)² E⟨V, e_j⟩². With V = W u + sqrt(1 - W²) η (η uniform
    on the unit sphere of u^⊥, independent of W): E⟨V, e_j⟩² = w⊥ + ⟨u, e_j⟩² (E W² - w⊥), w⊥ = (1 - E W²)/(d - 1);
    and E⟨u, e_j⟩² <= θ_j + 1/d (⟨u, e_j⟩² <= 1 when x'_j = 1, which has probability θ'_j <= θ_j; when x'_j = 0
    it is κ²/‖x' - κ1‖² <= κ²/(dκ²) = 1/d, as ‖x' - κ1‖² = k(1 - 2κ) + dκ² >= dκ² for κ <= 1/2).
    So σ_j² <= a + g θ_j, a = (r/m)²(w⊥ + (E W² - w⊥)₊/d), g = (r/m)²(E W² - w⊥)₊. Bennett (Boucheron, Lugosi &
    Massart 2013, Thm 2.9): log E e^{λξ_j} <= n σ_j² φ(bλ/n)/b², φ(x) = e^x - x - 1. With h = n φ(bλ/n)/b²,
    convexity of e^{hgθ} on [0, 1] and Σθ_j <= s: Σ_j E e^{λξ_j} <= e^{ha}(d + s(e^{hg} - 1)), whose log is
    ha + hg + log(s + (d - s)e^{-hg}). λ = u n/b, u > 0 free."""
    r2 = privunit_radius_sq(d, K)
    rm2 = PU.second_moment(sp.sqrt(r2), eps, d)  # (r/m)²
    ew2 = PrivUnitInnerMoment(d, eps)
    w_perp = (1 - ew2) / (d - 1)
    gap = S.Max(ew2 - w_perp, 0)
    a, g = rm2 * (w_perp + gap / d), rm2 * gap
    b = sp.sqrt(rm2) + privunit_centre(d, K)
    h = n * (S.expm1(u) - u) / b ** 2
    log_S = h * a + h * g + sp.log(s + (d - s) * sp.exp(-h * g))
    return projected_quadratic(bias_l2(s, K), top_sum_bound(s, log_S, u * n / b))


# ------------------------------------------------------------------------------ samplers

def project_capped_simplex(y, s: float, iters: int = 100):
    """Euclidean projection of each row of y onto C = {c ∈ [0,1]^d : Σc <= s}: c = clip(y - τ, 0, 1) with τ = 0 if
    that sums to <= s, else the τ > 0 with Σ clip(y - τ, 0, 1) = s (the KKT conditions; the sum decreases in τ),
    found by bisection on [0, max y] (``iters`` halvings: exact to rounding)."""
    y = np.atleast_2d(np.asarray(y, float))
    c0 = np.clip(y, 0.0, 1.0)
    need = c0.sum(axis=1) > s
    if not need.any():
        return c0
    yy = y[need]
    lo, hi = np.zeros(yy.shape[0]), yy.max(axis=1)
    for _ in range(iters):
        mid = (lo + hi) / 2
        over = np.clip(yy - mid[:, None], 0.0, 1.0).sum(axis=1) > s
        lo, hi = np.where(over, mid, lo), np.where(over, hi, mid)
    out = c0.copy()
    out[need] = np.clip(yy - hi[:, None], 0.0, 1.0)  # hi: the sum is <= s there (feasible)
    return out


def bernoulli_ones(theta, n: int, rng: np.random.Generator):
    """(rows, cols) of the ones of an n × d matrix with independent entries X_ij ~ Bern(θ_j), in O(n Σθ) work:
    in column j the gaps between consecutive ones are i.i.d. Geometric(θ_j) (a Bernoulli process)."""
    rows, cols = [], []
    for j, p in enumerate(np.asarray(theta, float)):
        if p <= 0:
            continue
        pos = np.zeros(0, np.int64)
        while pos.size == 0 or pos[-1] < n:  # draw gaps until the process leaves {0, ..., n-1}
            more = np.cumsum(rng.geometric(p, size=int(n * p + 4 * math.sqrt(n * p) + 10)))
            pos = np.concatenate([pos, (pos[-1] if pos.size else -1) + more])
        pos = pos[pos < n]
        rows.append(pos)
        cols.append(np.full(pos.size, j))
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(rows), np.concatenate(cols)


def truncated_column_sums(theta, n: int, K: int, rng: np.random.Generator):
    """Column sums of the truncated matrix X' (each row keeps a uniformly random K of its ones when it has more)."""
    d = np.asarray(theta).size
    rows, cols = bernoulli_ones(theta, n, rng)
    keep = np.ones(rows.size, bool)
    per_user = np.bincount(rows, minlength=n)
    over = np.flatnonzero(per_user[rows] > K)
    if over.size:
        order = over[np.lexsort((rng.random(over.size), rows[over]))]  # by user, random order within a user
        r_sorted = rows[order]
        rank = np.arange(order.size) - np.searchsorted(r_sorted, r_sorted, side="left")
        keep[order[rank >= K]] = False
    return np.bincount(cols[keep], minlength=d)


def rr_debiased_means(theta, n: int, K: int, eps: float, reps: int, rng: np.random.Generator):
    """``reps`` draws of y (the debiased average of truncated RR over n users with x_ij ~ Bern(θ_j)),
    shape (reps, d), simulated exactly through the column sums: of the c_j users whose truncated bit j is 1,
    Bin(c_j, q) report 1; of the other n - c_j, Bin(n - c_j, 1 - q) (independent flips)."""
    q = 1.0 / (1.0 + math.exp(-eps / (2 * K)))
    c = np.stack([truncated_column_sums(theta, n, K, rng) for _ in range(reps)])
    T = rng.binomial(c, q) + rng.binomial(n - c, 1 - q)
    return (T / n - (1 - q)) / (2 * q - 1)


def truncated_privunit_means(theta, n: int, K: int, eps: float, reps: int, rng: np.random.Generator):
    """``reps`` draws of y = κ1 + Z̄ (truncated, centred PrivUnit over n users with x_ij ~ Bern(θ_j)), shape
    (reps, d). Every user is simulated: x, truncation to K ones, PrivUnit of x' - κ1 on the ball of radius r."""
    theta = np.asarray(theta, float)
    d = theta.size
    Kt = min(K, d / 2)
    kappa, r = Kt / d, math.sqrt(Kt - Kt * Kt / d)
    out = np.empty((reps, d))
    per = max(1, int(2e6 // (n * d)))  # replications per call of the sampler (memory: about 2e6 entries)
    for i in range(0, reps, per):
        k = min(per, reps - i)
        X = truncate_ones(rng.random((k * n, d)) < theta, K, rng)
        Z = PU.privunit(X - kappa, r, eps, rng)
        out[i:i + k] = kappa + Z.reshape(k, n, d).mean(axis=1)
    return out
