"""ε-LDP mechanisms for a discrete distribution on d symbols (docs/problems/multinomial.md): exact risks,
samplers and the unbiased estimators.

Every mechanism below releases Z_i from X_i, and the estimator is *linear and unbiased*:
``p̂ = (1/n) Σ_i a(Z_i)`` with ``E[a(Z)|X=x] = e_x``. Its squared-ℓ2 risk is therefore exactly
``(1/n) Σ_j Var_θ(a_j(Z)) = (1/n)(E_θ||a(Z)||² - ||θ||²)``, computed in closed form below and checked
against the exact finite-channel computation :func:`exact_risk_linear` (and by simulation).

- **RR on the one-hot vector** (each bit kept w.p. ``q = e^{ε/2}/(1+e^{ε/2})``; two one-hot vectors
  differ in two bits, so the likelihood ratio is at most (q/(1-q))² = e^ε). ``a_j(Z) = (Z_j - (1-q))/(2q-1)``.
  Risk ``(1/n)(d e^{ε/2}/(e^{ε/2}-1)² + 1 - ||θ||²)``: with ``m_j = 1-q + θ_j(2q-1)``,
  ``Σ m_j(1-m_j)/(2q-1)² = d q(1-q)/(2q-1)² + 1 - ||θ||²`` and ``q(1-q)/(2q-1)² = e^{ε/2}/(e^{ε/2}-1)²``.
- **Laplace on the one-hot vector** (ℓ1 sensitivity 2, scale 2/ε per coordinate, variance 8/ε²):
  ``(1/n)(8d/ε² + 1 - ||θ||²)``.
- **k-RR** (Kairouz et al.): keep the symbol w.p. ``e^ε/(e^ε+d-1)``, else a uniform other symbol.
  ``a_j(Z) = (1{Z=j} - b)/(a - b)``, a = e^ε/D, b = 1/D, D = e^ε+d-1. Risk
  ``(1/n)((d-1)(d + 2e^ε - 2)/(e^ε-1)² + 1 - ||θ||²)`` (sympy identity in the tests).
- **subset selection** (Ye & Barg): release an s-subset S, ``P(S|x) ∝ e^ε`` if x ∈ S else 1.
  ``p* = P(x∈S|x) = s e^ε/(s e^ε + d - s)``, ``q* = P(i∈S|x≠i) = (s - p*)/(d-1)``,
  ``a_i(S) = (1{i∈S} - q*)/(p* - q*)``; risk
  ``(d-1)²(s e^ε + d - s)²/(n d s (d-s)(e^ε-1)²) + (1/d - ||θ||²)/n``.

In every case the risk is a constant minus ``||θ||²/n``: the worst case over the simplex is the
uniform distribution (``||θ||² = 1/d``), which is what :func:`worst_risk` returns.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import sympy as sp

from ..core import symbolic as S
from .large_eps import flip_probability

ssub = sp.Symbol("s_sub", positive=True, integer=True)  # subset size of subset selection


# --------------------------------------------------------------------------- exact risks (sympy)

def _rr_risk(n, eps, d, s):
    h = sp.exp(eps / 2)
    return (d * h / S.expm1(eps / 2) ** 2 + 1) / n


def _laplace_risk(n, eps, d, s):
    return (8 * d / eps ** 2 + 1) / n


def _krr_risk(n, eps, d, s):
    return ((d - 1) * (d + 2 * sp.exp(eps) - 2) / S.expm1(eps) ** 2 + 1) / n


def _subset_risk(n, eps, d, s):
    E = sp.exp(eps)
    return (d - 1) ** 2 * (s * E + d - s) ** 2 / (n * d * s * (d - s) * S.expm1(eps) ** 2) + 1 / (d * n)


def risk_constant(mech: str, n, eps, d, s=ssub):
    """The risk at θ is ``risk_constant - ||θ||²/n``; this returns risk_constant (sympy)."""
    return mechanism(mech).risk_constant(n, eps, d, s)


def worst_risk(mech: str, n=S.n, eps=S.eps, d=S.d, s=ssub):
    """Worst-case squared-ℓ2 risk over the simplex (the uniform θ), before projection (sympy)."""
    return risk_constant(mech, n, eps, d, s) - 1 / (d * n)


def default_subset_size(d: int, eps: float) -> int:
    """Ye–Barg's choice ⌈d/(e^ε+1)⌉, clipped to [1, d-1]."""
    return int(min(max(math.ceil(d / (math.exp(min(eps, 700.0)) + 1)), 1), max(d - 1, 1)))


# --------------------------------------------------------------------------- finite channels

def _krr_channel(d: int, eps: float, s=None):
    D = math.exp(eps) + d - 1
    a, b = math.exp(eps) / D, 1 / D
    Q = np.full((d, d), b)
    np.fill_diagonal(Q, a)
    A = (np.eye(d) - b) / (a - b)
    return Q, A


def _rr_channel(d: int, eps: float, s=None):
    import itertools

    q = 1 / (1 + math.exp(-eps / 2))
    Z = np.array(list(itertools.product([0.0, 1.0], repeat=d)))
    X = np.eye(d)
    agree = (Z[None, :, :] == X[:, None, :])
    Q = np.prod(np.where(agree, q, flip_probability(eps / 2)), axis=2)  # 1 - q taken directly (large ε)
    A = (Z - (1 - q)) / (2 * q - 1)
    return Q, A


def _subset_channel(d: int, eps: float, s: int):
    import itertools

    subsets = list(itertools.combinations(range(d), s))
    Zs = np.zeros((len(subsets), d))
    for i, c in enumerate(subsets):
        Zs[i, list(c)] = 1.0
    W = np.where(Zs.T > 0, math.exp(eps), 1.0)  # (d, #subsets)
    Q = W / W.sum(axis=1, keepdims=True)
    from .subset_tail import subset_constants

    _, qs, D = subset_constants(eps, d, s)
    A = (Zs - qs) / D
    return Q, A


def channel(mech: str, d: int, eps: float, s: int | None = None):
    """(Q, A): Q[x, z] = P(Z=z | X=x) over an enumerated output alphabet, and the estimator
    matrix A[z, j] = a_j(z). For RR the outputs are all 2^d bit vectors (small d only).
    Laplace is continuous and has no finite channel (its risk is checked by simulation)."""
    m = mechanism(mech)
    if m.channel is None:
        raise ValueError(mech)
    return m.channel(d, eps, s)


def exact_risk_linear(Q, A, theta, n):
    """Exact risk E||p̂ - θ||² of the linear estimator (1/n) Σ A[Z_i] under the channel Q."""
    theta = np.asarray(theta, float)
    mz = theta @ Q  # law of Z
    mean = mz @ A
    second = mz @ (A ** 2)
    return float(np.sum(second - mean ** 2) / n), mean


def max_privacy_ratio(Q):
    """max over z, x, x' of Q[x,z]/Q[x',z] (must be <= e^ε)."""
    return float(np.max(Q.max(axis=0) / Q.min(axis=0)))


# --------------------------------------------------------------------------- samplers + estimators

def sample_counts(theta, n, reps, rng):
    """Input symbol counts (reps, d) of n i.i.d. draws from θ."""
    return rng.multinomial(n, np.asarray(theta, float), size=reps)


#: at most about this many float64 cells (8 bytes each) in one block of a per-user simulation
BLOCK_CELLS = 2_000_000


def _rr_estimate(theta, n, eps, reps, rng, s=None):
    q = 1 / (1 + math.exp(-eps / 2))
    c = sample_counts(theta, n, reps, rng)
    T = rng.binomial(c, q) + rng.binomial(n - c, 1 - q)
    return (T / n - (1 - q)) / (2 * q - 1)


def _laplace_estimate(theta, n, eps, reps, rng, s=None):
    d = theta.size
    c = sample_counts(theta, n, reps, rng)
    b = 2.0 / eps
    noise = rng.gamma(n, b, size=(reps, d)) - rng.gamma(n, b, size=(reps, d))
    return (c + noise) / n


def _krr_estimate(theta, n, eps, reps, rng, s=None):
    d = theta.size
    D = math.exp(eps) + d - 1
    a, b = math.exp(eps) / D, 1 / D
    T = krr_counts(theta, n, eps, reps, rng)
    return (T / n - b) / (a - b)


def _subset_estimate(theta, n, eps, reps, rng, s):
    d = theta.size
    from .subset_tail import subset_constants

    _, qs, D = subset_constants(eps, theta.size, s)
    T = subset_counts(theta, n, eps, s, reps, rng)
    return (T / n - qs) / D


def estimate(mech: str, theta, n: int, eps: float, reps: int, rng: np.random.Generator, s: int | None = None):
    """Simulate the mechanism on n users, ``reps`` times: returns the unbiased estimates (reps, d).

    Per-user privatisation is simulated exactly through sufficient statistics where the law of the
    released counts is known in closed form: RR, independent binomials per bit; Laplace, a sum of n
    Laplace variables is a difference of two Gamma(n, b) variables; k-RR, given the input counts c_j
    the number of users of symbol j who keep it is Binomial(c_j, e^ε/(e^ε+d-1)) and the others spread
    over the d-1 other symbols as Multinomial(c_j - kept, uniform) (per-user draws when d² > 4n, where
    that is cheaper). Subset selection is simulated user by user (a sum of random subsets has no simple
    law), in blocks of users so that memory stays bounded for large n.
    """
    return mechanism(mech).estimate(np.asarray(theta, float), n, eps, reps, rng, s)


def _user_blocks(n: int, reps: int, width: int):
    """(rep slice, number of users) blocks covering reps x n users with about BLOCK_CELLS * width cells."""
    per = max(1, BLOCK_CELLS // max(width, 1))  # users (x reps) per block
    if n <= per:
        rr = max(1, per // max(n, 1))
        for i0 in range(0, reps, rr):
            yield slice(i0, min(i0 + rr, reps)), n
    else:
        for i0 in range(reps):
            left = n
            while left > 0:
                yield slice(i0, i0 + 1), min(per, left)
                left -= per


def krr_counts(theta, n: int, eps: float, reps: int, rng: np.random.Generator, per_user: bool | None = None):
    """Released symbol counts (reps, d) of k-RR on n users with inputs drawn from θ.

    From sufficient statistics (input counts, then kept ~ Binomial, the rest ~ Multinomial over the
    other d-1 symbols) unless ``per_user`` (default: per-user draws when d² > 4n, in bounded blocks).
    """
    theta = np.asarray(theta, float)
    d = theta.size
    keep_p = math.exp(eps) / (math.exp(eps) + d - 1)
    if per_user is None:
        per_user = d * d > 4 * n
    T = np.zeros((reps, d), dtype=np.int64)
    if d == 1:
        T[:, 0] = n
        return T
    if not per_user:
        c = sample_counts(theta, n, reps, rng)
        kept = rng.binomial(c, keep_p)
        T += kept
        moved = c - kept
        unif = np.full(d - 1, 1.0 / (d - 1))
        for j in range(d):
            if not moved[:, j].any():
                continue
            spread = rng.multinomial(moved[:, j], unif)  # (reps, d-1): the symbols other than j, in order
            T[:, :j] += spread[:, :j]
            T[:, j + 1:] += spread[:, j:]
        return T
    for rows, m in _user_blocks(n, reps, 3):
        rr = rows.stop - rows.start
        x = rng.choice(d, size=(rr, m), p=theta)
        keep = rng.random((rr, m)) < keep_p
        other = (x + rng.integers(1, d, size=(rr, m))) % d  # uniform over the other d-1 symbols
        z = np.where(keep, x, other)
        flat = (z + d * np.arange(rr)[:, None]).ravel()
        T[rows] += np.bincount(flat, minlength=rr * d).reshape(rr, d)
    return T


def smallest_members(keys, m):
    """Boolean mask of the ``m`` smallest keys along the last axis (``m``: an array broadcast against
    ``keys[..., 0]``, values in [0, keys.shape[-1]]; keys distinct). One ``np.partition`` gives the two
    order statistics needed (m takes two values per call of subset selection); equal to
    ``argsort(argsort(keys)) < m``."""
    keys = np.asarray(keys)
    m = np.broadcast_to(np.asarray(m), keys.shape[:-1])
    k = keys.shape[-1]
    kth = sorted({int(v) - 1 for v in np.unique(m) if 0 < v <= k})
    if not kth:
        return np.zeros(keys.shape, dtype=bool)
    part = np.partition(keys, kth, axis=-1)  # part[..., v] is the (v+1)-th smallest key for v in kth
    thr = np.take_along_axis(part, np.clip(m - 1, 0, k - 1)[..., None].astype(np.intp), axis=-1)
    return (keys <= thr) & (m > 0)[..., None]


#: subset selection is simulated from sufficient statistics when the subsets of the other symbols number at
#: most this many (then each user's subset is one of an enumerated list, and the users' choices are multinomial)
SUBSET_ENUM_LIMIT = 2000


def _subsets_of_others(d: int, j: int, k: int) -> np.ndarray:
    """Membership matrix (C(d-1, k), d) of the k-subsets of the symbols other than j."""
    import itertools

    others = [i for i in range(d) if i != j]
    combos = list(itertools.combinations(others, k))
    M = np.zeros((len(combos), d), dtype=np.int64)
    for r, c in enumerate(combos):
        M[r, list(c)] = 1
    return M


def subset_counts(theta, n: int, eps: float, s: int, reps: int, rng: np.random.Generator,
                  per_user: bool | None = None):
    """Released membership counts (reps, d) of subset selection on n users with inputs drawn from θ.

    From sufficient statistics when the subsets are few (at most :data:`SUBSET_ENUM_LIMIT` subsets of the
    other symbols): given the input counts c_j, the number of users of symbol j whose subset contains j is
    Binomial(c_j, p*); those users' other s-1 members are a uniform (s-1)-subset of the d-1 other symbols
    and the rest's a uniform s-subset, so the numbers of users choosing each enumerated subset are
    multinomial. Otherwise (or with ``per_user``) user by user, in blocks of bounded size.
    """
    theta = np.asarray(theta, float)
    d = theta.size
    if per_user is None:
        per_user = math.comb(d - 1, max(s - 1, 0)) + math.comb(d - 1, s) > SUBSET_ENUM_LIMIT
    if not per_user:
        ps = s * math.exp(eps) / (s * math.exp(eps) + d - s) if eps < 700 else s / (s + (d - s) * math.exp(-eps))
        T = np.zeros((reps, d), dtype=np.int64)
        c = sample_counts(theta, n, reps, rng)
        for j in range(d):
            if not c[:, j].any():
                continue
            inc = rng.binomial(c[:, j], ps)
            T[:, j] += inc
            for users, k in ((inc, s - 1), (c[:, j] - inc, s)):
                if k < 0 or k > d - 1 or not users.any():
                    continue
                M = _subsets_of_others(d, j, k)
                chosen = rng.multinomial(users, np.full(M.shape[0], 1.0 / M.shape[0]))  # (reps, #subsets)
                T += chosen @ M
        return T
    ps = s * math.exp(eps) / (s * math.exp(eps) + d - s) if eps < 700 else s / (s + (d - s) * math.exp(-eps))
    T = np.zeros((reps, d), dtype=np.int64)
    for rows, m in _user_blocks(n, reps, d):
        rr = rows.stop - rows.start
        xs = rng.choice(d, size=(rr, m), p=theta)
        inc = rng.random((rr, m)) < ps  # true symbol in the subset
        # the other members: a uniformly random (s-1)- or s-subset of the d-1 other symbols, i.e. the
        # smallest of d-1 i.i.d. uniform keys (the true symbol's key is +inf, never among them)
        keys = rng.random((rr, m, d))
        np.put_along_axis(keys, xs[..., None], np.inf, axis=2)
        member = smallest_members(keys, np.where(inc, s - 1, s))
        np.put_along_axis(member, xs[..., None], inc[..., None], axis=2)
        T[rows] += member.sum(axis=1)
    return T


def project_simplex(v):
    """Euclidean projection of the rows of v onto the probability simplex (can only reduce ℓ2 error)."""
    v = np.atleast_2d(np.asarray(v, float))
    u = -np.sort(-v, axis=1)
    css = np.cumsum(u, axis=1) - 1
    ind = np.arange(1, v.shape[1] + 1)
    cond = u - css / ind > 0
    rho = cond.shape[1] - 1 - np.argmax(cond[:, ::-1], axis=1)
    tau = css[np.arange(v.shape[0]), rho] / (rho + 1)
    return np.maximum(v - tau[:, None], 0)


# --------------------------------------------------------------------------- simplex projection

def subset_gap(eps, d, s=ssub):
    """(p*, q*, D = p* - q*) of subset selection (sympy)."""
    E = sp.exp(eps)
    ps = s * E / (s * E + d - s)
    qs = (s - ps) / (d - 1)
    return ps, qs, ps - qs


def projected_subset_risk(n=S.n, eps=S.eps, d=S.d, s=ssub):
    """Certified bound on sup_θ E‖Π_Δ(p̂) - θ‖² for subset selection followed by the Euclidean
    projection Π_Δ onto the simplex (sympy).

    Derivation. With y = θ + w unbiased and p̂ = Π_Δ(y), the projection inequality
    ⟨y - p̂, θ - p̂⟩ <= 0 (θ ∈ Δ) gives ‖p̂ - θ‖² <= ⟨w, p̂ - θ⟩ <= max_j w_j - ⟨w, θ⟩ (p̂ ∈ Δ), and
    E⟨w, θ⟩ = 0, so E‖p̂ - θ‖² <= E max_j w_j. Each w_j = (1/n) Σ_i ξ_ij is an average of independent
    centred terms ξ_ij = a_j(S_i) - θ_j with ξ_ij <= b = (1 - q*)/D and Var ξ_ij <= 1/(4D²)
    (a_j = (1{j∈S} - q*)/D, a Bernoulli over D). Bernstein's moment bound makes w_j sub-gamma on the
    right with variance factor v = 1/(4D² n) and scale c = b/(3n), and the maximal inequality for
    sub-gamma variables (Boucheron, Lugosi & Massart 2013, Cor. 2.6) gives
    E max_j w_j <= sqrt(2 v log d) + c log d.
    """
    ps, qs, D = subset_gap(eps, d, s)
    v = 1 / (4 * D ** 2 * n)
    c = (1 - qs) / (3 * D * n)
    return sp.sqrt(2 * v * sp.log(d)) + c * sp.log(d)


# --------------------------------------------------------------------------- the mechanisms, one record each

@dataclass(frozen=True)
class DiscreteMechanism:
    """One ε-LDP frequency-estimation mechanism: its title, the constant of its exact risk (sympy,
    ``risk_constant(n, ε, d, s)``), its finite channel and estimator matrix (``channel(d, ε, s)``, None when
    the output is continuous) and its vectorised sampler of the unbiased estimates
    (``estimate(θ, n, ε, reps, rng, s)``). ``s`` is the subset size, a free parameter of the mechanisms
    with ``subset_size`` set (subset selection only); the others ignore it."""

    name: str
    title: str
    risk_constant: Callable
    channel: Callable | None
    estimate: Callable
    subset_size: bool = False


REGISTRY = {m.name: m for m in (
    DiscreteMechanism("rr", "randomized response on the one-hot vector", _rr_risk, _rr_channel, _rr_estimate),
    DiscreteMechanism("laplace", "Laplace noise on the one-hot vector", _laplace_risk, None, _laplace_estimate),
    DiscreteMechanism("krr", "k-ary randomized response (k-RR)", _krr_risk, _krr_channel, _krr_estimate),
    DiscreteMechanism("subset", "subset selection (Ye-Barg)", _subset_risk, _subset_channel, _subset_estimate,
                      subset_size=True),
)}
MECHANISMS = tuple(REGISTRY)
TITLES = {name: m.title for name, m in REGISTRY.items()}


def mechanism(name: str) -> DiscreteMechanism:
    """The mechanism record of a name in :data:`MECHANISMS` (ValueError otherwise)."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(name) from None


# --------------------------------------------------------------------------- ℓ1: exact mean absolute deviations

def subset_l1_mad_at(n: int, eps: float, d: int, s: int) -> float:
    """Certified bound on sup_θ E‖y - θ‖₁ for unprojected subset selection with subset size s, y_j = (N_j/n - q*)/D.

    N_j ~ Bin(n, π_j) exactly, π_j = q* + D θ_j, so E‖y - θ‖₁ = Σ_j G(θ_j), G(x) = E|N - nπ(x)|/(nD) (exact mean
    absolute deviations). As Σ_j (θ_j - 1/d) = 0, the supremum over the simplex is at most d sup_x [G(x) - κ(x - 1/d)]
    for every κ. On a cell [x_a, x_b] (π ∈ [π_a, π_b]): |N - nπ| = (N - nπ)₊ + (nπ - N)₊ <= (N - nπ_a)₊ + (nπ_b - N)₊,
    and Bin(n, π) increases stochastically in π while (N - c)₊ increases and (c - N)₊ decreases in N, so
    G <= [E_{π_b}(N - nπ_a)₊ + E_{π_a}(nπ_b - N)₊]/(nD): exact binomial partial moments from tails
    (:mod:`boundcalc.mechanisms.subset_tail`, widened for rounding), cells refined adaptively."""
    from . import subset_tail as ST

    ps, qs, D = ST.subset_constants(eps, d, s)

    def cell(xa, xb):
        """Monotone bound of G on [x_a, x_b] (at a point: G itself, up to rounding)."""
        pa, pb = qs + D * np.asarray(xa, float), qs + D * np.asarray(xb, float)
        ca, cb = n * pa * (1 - 1e-15), n * pb * (1 + 1e-15)  # c_a <= nπ(x) <= c_b on the cell despite rounding
        u1, s1 = ST._upper_first(n, np.minimum(pb, 1.0), ca)
        l1, t1 = ST._lower_first(n, np.minimum(pa, 1.0), cb)
        return (np.maximum(u1 + s1, 0.0) + np.maximum(l1 + t1, 0.0)) / (n * D) * (1 + 1e-12)

    def slopes(xa, xb):
        """(A_lo, A_up): bounds on G'(x) over the cell. G' = ∂_π F/n + ∂_c F (F(π, c) = E_π|N - c|, c = nπ) with
        2P(N' >= c) - 1 <= ∂_π F/n <= 2P(N' > c - 1) - 1 (N' ~ Bin(n-1, π)) and ∂_c F = P(N < c) - P(N > c),
        each tail bounded by stochastic monotonicity at the cell's ends."""
        pa, pb = np.minimum(qs + D * np.asarray(xa, float), 1.0), np.minimum(qs + D * np.asarray(xb, float), 1.0)
        ca, cb = n * pa * (1 - 1e-15), n * pb * (1 + 1e-15)
        up = (2 * ST._sf(np.floor(ca - 1), n - 1, pb) - 1 + ST._cdf(np.ceil(cb) - 1, n, pa)
              - ST._sf(np.floor(cb), n, pa))
        lo = (2 * ST._sf(np.ceil(cb) - 1, n - 1, pa) - 1 + ST._cdf(np.ceil(ca) - 1, n, pb)
              - ST._sf(np.floor(ca), n, pb))
        return lo - 1e-12, up + 1e-12

    def bound(xa, xb, cv, kappa):
        """sup over the cell of G(x) - κ(x - 1/d): the smaller of the monotone bound ``cv`` at the worse end of the
        linear term and the mean-value bound around the midpoint."""
        mono = cv - np.minimum(kappa * (xa - 1.0 / d), kappa * (xb - 1.0 / d))
        xm = (xa + xb) / 2
        lo, up = slopes(xa, xb)
        lip = np.maximum(np.abs(up - kappa), np.abs(lo - kappa))
        mean_value = cell(xm, xm) - kappa * (xm - 1.0 / d) + lip * (xb - xa) / 2 * (1 + 1e-12)
        return np.minimum(mono, mean_value)

    # initial cells: uniform, geometric towards 0, and a band around 1/d (where the supremum sits: G is nearly
    # concave, κ close to its slope there); refined where they could carry the supremum
    pts = np.unique(np.concatenate([np.linspace(0.0, 1.0, 201), np.geomspace(1e-7, 1.0, 100),
                                    1.0 / d * (1 + 0.9 * np.linspace(-1.0, 1.0, 101))]))
    gp = cell(pts, pts)  # G at the points (up to rounding)
    xa, xb = pts[:-1], pts[1:]
    cv = cell(xa, xb)
    for _ in range(MAD_ROUNDS):
        # κ: minimises the maximum over the points so far (any κ is valid; the cells are then bounded at that κ)
        kappa = _best_kappa(pts, gp, 1.0 / d)
        ub = bound(xa, xb, cv, kappa)
        best_pt = float(np.max(gp - kappa * (pts - 1.0 / d)))
        bad = ub > best_pt + MAD_TOL * abs(best_pt)
        if not bad.any() or bad.sum() * 7 + xa.size > MAD_TOTAL_CELLS:
            break
        sub = xa[bad][:, None] + (xb[bad] - xa[bad])[:, None] * (np.arange(9) / 8.0)[None, :]
        inner = sub[:, 1:-1].ravel()
        pts = np.concatenate([pts, inner])
        gp = np.concatenate([gp, cell(inner, inner)])
        na, nb = sub[:, :-1].ravel(), sub[:, 1:].ravel()
        xa, xb = np.concatenate([xa[~bad], na]), np.concatenate([xb[~bad], nb])
        cv = np.concatenate([cv[~bad], cell(na, nb)])
    kappa = _best_kappa(pts, gp, 1.0 / d)
    return d * float(np.max(bound(xa, xb, cv, kappa)))


#: up to MAD_ROUNDS rounds splitting by 8 the cells above the best point value by more than MAD_TOL (relatively),
#: while the cells number at most MAD_TOTAL_CELLS
MAD_ROUNDS, MAD_TOL, MAD_TOTAL_CELLS = 8, 2e-3, 8000


def _best_kappa(x, g, x0):
    """κ minimising max_i (g_i - κ(x_i - x0)) over the points (a convex function of κ: ternary search)."""
    from ..core.solver import ternary_search

    lo, hi = ternary_search(lambda k: float(np.max(g - k * (x - x0))), -4.0, 4.0, 100)
    return (lo + hi) / 2


@__import__("boundcalc.cache.diskcache", fromlist=["persistent"]).persistent
def subset_l1_mad(n: int, eps: float, d: int) -> tuple:
    """(bound, s): :func:`subset_l1_mad_at` at the subset size of :func:`_l2_best_size`, at most 2 (the ℓ1 diameter of
    the simplex)."""
    s = _l2_best_size(eps, d)
    return min(subset_l1_mad_at(n, eps, d, s), 2.0), s


def _l2_best_size(eps: float, d: int) -> int:
    """The subset size minimising subset selection's exact unprojected ℓ2² risk constant (sd of each coordinate's
    estimate: the mean absolute deviation is about sqrt(2/π) of it in every coordinate, so the same size is close to
    best for ℓ1); any size gives a valid bound."""
    ss = np.arange(1, d, dtype=float)
    E = math.exp(min(eps, 700.0))
    c = (ss * E + d - ss) ** 2 / (ss * (d - ss))
    return int(ss[int(np.argmin(c))])


def subset_l1_mad_value(n: float, eps: float, d: float) -> float:
    if not (n >= 1 and d >= 2 and eps > 0) or not all(map(math.isfinite, (n, eps, d))) or eps > 700:
        return math.nan
    return float(subset_l1_mad(int(math.floor(n + 1e-9)), float(eps), int(round(d)))[0])


class SubsetL1MAD(S.ScalarFunction):
    """``SubsetL1MAD(n, ε, d)``: certified worst-case ℓ1 risk of unprojected subset selection, from exact mean
    absolute deviations (:func:`subset_l1_mad`)."""

    nargs = 3
    scalar_value = staticmethod(subset_l1_mad_value)
    latex = r"R^{{\ell_1}}_{{\mathrm{{MAD}}}}({0}, {1}, {2})"
