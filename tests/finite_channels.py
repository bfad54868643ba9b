"""Finite channels and their exact privacy quantities, for brute-force checks of the relations.

A *channel* is a row-stochastic matrix ``Q[x, z] = Q(z | x)``: rows are inputs (samples / datasets),
columns are outputs. Privacy is about *pairs* of rows (neighbouring samples), so the core functions
here take two batches of probability vectors ``P`` and ``R`` of shape ``(..., k)`` (row ``x`` and row
``x'`` of many channels at once) and return one number per pair, vectorised with numpy:

- :func:`eps_exact`     the smallest ε with ``P ≤ e^ε R`` and ``R ≤ e^ε P`` (``inf`` if the supports differ);
- :func:`delta_of_eps`  the smallest δ with ``P(A) ≤ e^ε R(A) + δ`` and the reverse, for every set A:
                        ``δ(ε) = max{Σ_z (P_z − e^ε R_z)_+, Σ_z (R_z − e^ε P_z)_+}`` (the sup over A is
                        attained at ``A = {z: P_z > e^ε R_z}``);
- :func:`tv`, :func:`kl` (``inf`` when P is not absolutely continuous w.r.t. R), :func:`kl_sym_max`;
- :func:`test_errors`   type I and type II errors of *every* deterministic test (all 2^k subsets);
  :func:`min_error_sum` = ``1 − TV`` (Le Cam), checked against the brute force;
- :func:`chtp_min_error_sum`: the conditional hypothesis-testing quantity of Barber–Duchi Def. 8,
  ``min_{S, ψ} Q(ψ=1 | x, S) + Q(ψ=0 | x', S)`` over every conditioning set S of probability ≥ γ;
- :func:`chtp_thinning_witness`: the best conditional test against a garbling ``Q' ⪯ Q`` that keeps
  outputs in a set A with probability ``t_A`` and outputs outside A with probability ``t_C`` (the
  channel of the converse of Theorem 1).

:class:`Channel` holds a matrix and a neighbour relation (index pairs) and reports the channel-level
quantities (max over neighbours, both orders). Constructors build random channels on the Hamming
cube (group privacy), product / sequential local channels (local → central), randomized response and
release-one-at-random (the counterexample of Barber–Duchi Example 2).

Everything is plain numpy; thousands of random pairs take milliseconds.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

__all__ = [
    "eps_exact", "delta_of_eps", "tv", "kl", "kl_sym_max", "min_error_sum", "subset_matrix",
    "test_errors", "chtp_min_error_sum", "chtp_thinning_witness", "random_simplex", "random_pairs",
    "Channel", "hamming_pairs", "hypercube_channel", "randomized_response", "release_one_at_random",
    "local_product_channel", "sequential_local_channel", "local_eps",
]


# ---------------------------------------------------------------- pairwise quantities

def _pair(P, R):
    P = np.asarray(P, dtype=float)
    R = np.asarray(R, dtype=float)
    return np.broadcast_arrays(P, R)


def eps_exact(P, R) -> np.ndarray:
    """Exact (symmetric) ε of a pair: ``max_z |log(P_z / R_z)|`` over outputs with mass; ``inf`` when
    one vector puts mass where the other has none. ``ε(P, R)`` is the smallest ε for which the pair
    satisfies ε-DP in both directions (for finite outputs the set condition reduces to points)."""
    P, R = _pair(P, R)
    both = (P > 0) & (R > 0)
    one = (P > 0) ^ (R > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        lr = np.where(both, np.abs(np.log(np.where(both, P, 1.0)) - np.log(np.where(both, R, 1.0))), 0.0)
    out = lr.max(axis=-1)
    return np.where(one.any(axis=-1), np.inf, out)


def _one_sided_delta(P, R, eps):
    eps = np.asarray(eps, dtype=float)[..., None]
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = np.where(R > 0, np.exp(np.minimum(eps, 700.0)) * R, 0.0)
        scaled = np.where((R > 0) & (eps > 700.0), np.inf, scaled)
    return np.clip(P - scaled, 0.0, None).sum(axis=-1)


def delta_of_eps(P, R, eps) -> np.ndarray:
    """Exact δ(ε) of a pair, both directions: the smallest δ with ``P(A) ≤ e^ε R(A) + δ`` and
    ``R(A) ≤ e^ε P(A) + δ`` for all A. (``Σ_z (P_z − e^ε R_z)_+`` is the sup over A: take
    ``A = {P_z > e^ε R_z}``.)"""
    P, R = _pair(P, R)
    return np.maximum(_one_sided_delta(P, R, eps), _one_sided_delta(R, P, eps))


def tv(P, R) -> np.ndarray:
    """Total variation ``(1/2) Σ |P_z − R_z|``."""
    P, R = _pair(P, R)
    return 0.5 * np.abs(P - R).sum(axis=-1)


def kl(P, R) -> np.ndarray:
    """``KL(P ‖ R) = Σ P_z log(P_z / R_z)`` (natural log); ``inf`` unless P ≪ R."""
    P, R = _pair(P, R)
    bad = ((P > 0) & (R <= 0)).any(axis=-1)
    pos = (P > 0) & (R > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(pos, P * (np.log(np.where(pos, P, 1.0)) - np.log(np.where(pos, R, 1.0))), 0.0)
    out = np.maximum(terms.sum(axis=-1), 0.0)
    return np.where(bad, np.inf, out)


def kl_sym_max(P, R) -> np.ndarray:
    """``max{KL(P‖R), KL(R‖P)}``: the KL-privacy level of a neighbouring pair (both orders)."""
    return np.maximum(kl(P, R), kl(R, P))


def min_error_sum(P, R) -> np.ndarray:
    """``inf_ψ P(ψ = 1) + R(ψ = 0) = 1 − TV(P, R)`` (Le Cam; attained by the likelihood-ratio test)."""
    return 1.0 - tv(P, R)


_SUBSETS: dict = {}


def subset_matrix(k: int) -> np.ndarray:
    """All ``2^k`` subsets of ``{0..k-1}`` as a 0/1 matrix of shape ``(2^k, k)`` (row 0 = ∅)."""
    if k not in _SUBSETS:
        if k > 16:
            raise ValueError("subset enumeration is for small output alphabets (k <= 16)")
        _SUBSETS[k] = np.array(list(itertools.product([0.0, 1.0], repeat=k)))[:, ::-1].copy()
    return _SUBSETS[k]


def test_errors(P, R):
    """Errors of every deterministic test ψ = 1{z ∈ A}, A ranging over all subsets of outputs.

    Returns ``(type1, type2)``, each of shape ``(..., 2^k)``: ``type1 = P(A)`` (reject x although the
    sample is x), ``type2 = R(A^c)``. Randomised tests are mixtures, so their error pairs lie in the
    convex hull; every linear bound checked on these holds for them too."""
    P, R = _pair(P, R)
    S = subset_matrix(P.shape[-1])
    type1 = P @ S.T
    type2 = 1.0 - R @ S.T
    return type1, type2


def chtp_min_error_sum(P, R, gamma, condition: str = "max") -> np.ndarray:
    """Conditional hypothesis testing (Barber–Duchi Def. 8) on a finite pair, by brute force.

    ``min over S, ψ`` of ``Q(ψ=1 | x, S) + Q(ψ=0 | x', S) = 1 − TV(P(·|S), R(·|S))`` over all output
    sets S whose probability is at least γ, where ``condition`` says under which sample:
    ``"x"`` (P(S) ≥ γ), ``"max"`` (under either; this equals the ``"x"`` version once both orders of
    the pair are considered, since swapping x, x' and ψ ↔ 1−ψ leaves the error sum unchanged) or
    ``"min"`` (under both). Sets with P(S) = 0 or R(S) = 0 have no conditional channel and are
    skipped. Returns 1.0 (no admissible set) where nothing qualifies.
    """
    P, R = _pair(P, R)
    S = subset_matrix(P.shape[-1])[1:]  # nonempty sets, (m, k)
    PS = P[..., None, :] * S  # (..., m, k)
    RS = R[..., None, :] * S
    mp = PS.sum(axis=-1)
    mr = RS.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ctv = 0.5 * np.abs(PS / mp[..., None] - RS / mr[..., None]).sum(axis=-1)
    if condition == "x":
        ok = mp >= gamma
    elif condition == "max":
        ok = np.maximum(mp, mr) >= gamma
    elif condition == "min":
        ok = np.minimum(mp, mr) >= gamma
    else:
        raise ValueError("condition must be 'x', 'max' or 'min'")
    ok &= (mp > 0) & (mr > 0)
    ctv = np.where(ok, ctv, 0.0)
    return 1.0 - ctv.max(axis=-1)


def chtp_thinning_witness(P, R, gamma, eps, condition: str = "min", grid: int = 201):
    """Best conditional test against the garbled channel of the converse of Barber–Duchi Theorem 1.

    For each pair take ``A = {z: P_z > e^ε R_z}`` (where the (ε, ·)-DP inequality is most violated),
    ``p = P(A)``, ``r = R(A)``, and the garbling Q' ⪯ Q that outputs (Z, U) with U uniform on [0,1];
    condition on ``S = A × [0, t_A] ∪ A^c × [0, t_C]``. Given S the test ψ = 1{Z ∉ A} has conditional
    error sum ``1 − |t_A p / (t_A p + t_C (1−p)) − t_A r / (t_A r + t_C (1−r))|``.
    Returns the minimum of that error sum over a grid of ``(t_A, t_C) ∈ (0, 1]^2`` (one of them = 1,
    the other on a log grid, which is w.l.o.g. since only the ratio matters for the error) subject to
    the conditioning set having probability ≥ γ (under both samples for ``condition="min"``, under
    either for ``"max"``). Returns ``(error_sum, p, r)``.
    """
    P, R = _pair(P, R)
    eps = np.asarray(eps, dtype=float)[..., None]
    A = P > np.exp(eps) * R
    p = np.where(A, P, 0.0).sum(axis=-1)[..., None]
    r = np.where(A, R, 0.0).sum(axis=-1)[..., None]
    t = np.concatenate([np.logspace(-8, 0, grid)])
    tA = np.concatenate([np.ones_like(t), t])
    tC = np.concatenate([t, np.ones_like(t)])
    mp = tA * p + tC * (1 - p)
    mr = tA * r + tC * (1 - r)
    with np.errstate(divide="ignore", invalid="ignore"):
        err = 1.0 - np.abs(tA * p / mp - tA * r / mr)
    if condition == "min":
        ok = np.minimum(mp, mr) >= gamma
    elif condition == "max":
        ok = np.maximum(mp, mr) >= gamma
    else:
        raise ValueError("condition must be 'min' or 'max'")
    ok &= (mp > 0) & (mr > 0)
    err = np.where(ok, err, 1.0)
    return err.min(axis=-1), p[..., 0], r[..., 0]


# ---------------------------------------------------------------- random pairs

def random_simplex(rng: np.random.Generator, size: int, k: int, conc=1.0, zero_prob: float = 0.0):
    """``size`` random probability vectors of length k: Dirichlet(conc) with, optionally, each
    coordinate zeroed with probability ``zero_prob`` (at least one coordinate is kept)."""
    x = rng.gamma(float(conc), size=(size, k))
    if zero_prob > 0:
        keep = rng.random((size, k)) >= zero_prob
        keep[np.arange(size), rng.integers(0, k, size)] = True
        x = x * keep
    x = np.maximum(x, 0.0)
    s = x.sum(axis=-1, keepdims=True)
    x = np.where(s > 0, x / np.where(s > 0, s, 1.0), 1.0 / k)
    return x


def random_pairs(rng: np.random.Generator, size: int, k: int = 4, *, full_support: bool = False):
    """``size`` random neighbouring pairs (P, R) of length-k output distributions, from a mixture of
    regimes: flat and spiky Dirichlet draws, near-identical pairs (small ε), randomized-response-like
    extremal pairs (likelihood ratio taking only the values e^{±ε}), and (unless ``full_support``)
    pairs with zeros (ε = ∞, δ(ε) > 0)."""
    parts = []
    n5 = size // 5
    # 1. independent Dirichlet draws, concentration varied per pair (flat to spiky)
    conc = rng.choice([0.2, 1.0, 5.0], size=(n5, 1))
    a = rng.gamma(np.broadcast_to(conc, (n5, k)))
    b = rng.gamma(np.broadcast_to(conc, (n5, k)))
    a = np.maximum(a, 1e-300)
    b = np.maximum(b, 1e-300)
    parts.append((a / a.sum(-1, keepdims=True), b / b.sum(-1, keepdims=True)))
    # 2. small perturbations (small ε)
    base = random_simplex(rng, n5, k, 2.0)
    scale = 10.0 ** rng.uniform(-3, 0, size=(n5, 1))
    pert = base * np.exp(scale * rng.standard_normal((n5, k)))
    parts.append((base, pert / pert.sum(-1, keepdims=True)))
    # 3. extremal pairs: likelihood ratio ∈ {e^ε, e^-ε} exactly (randomized response / staircase)
    e = rng.exponential(1.5, size=(n5, 1))
    sgn = np.where(rng.random((n5, k)) < 0.5, 1.0, -1.0)
    sgn[:, 0], sgn[:, 1] = 1.0, -1.0
    w = random_simplex(rng, n5, k, 1.0)
    # find R with P = R e^{ε sgn}: choose R ∝ w, then P = R e^{ε sgn}; fix normalisation by mixing
    # the two classes so both sum to one: R(+) e^ε + R(−) e^−ε = 1 and R(+) + R(−) = 1
    rp = (1 - np.exp(-e)) / (np.exp(e) - np.exp(-e))  # mass of R on the '+' class
    pos = sgn > 0
    wp = np.where(pos, w, 0.0)
    wm = np.where(pos, 0.0, w)
    R3 = rp * wp / wp.sum(-1, keepdims=True) + (1 - rp) * wm / wm.sum(-1, keepdims=True)
    P3 = R3 * np.exp(e * sgn)
    P3 = P3 / P3.sum(-1, keepdims=True)  # already sums to 1 up to rounding
    parts.append((P3, R3))
    # 4. Dirichlet(1) and sparse pairs (zeros: infinite ε, δ(ε) > 0), or more Dirichlet if full support is required
    rest = size - 3 * n5
    if full_support:
        parts.append((random_simplex(rng, rest, k, 1.0), random_simplex(rng, rest, k, 1.0)))
    else:
        half = rest // 2
        parts.append((random_simplex(rng, half, k, 1.0), random_simplex(rng, half, k, 1.0)))
        parts.append((random_simplex(rng, rest - half, k, 1.0, zero_prob=0.3),
                      random_simplex(rng, rest - half, k, 1.0, zero_prob=0.3)))
    P = np.concatenate([p for p, _ in parts])
    R = np.concatenate([r for _, r in parts])
    return P, R


# ---------------------------------------------------------------- channels with a neighbour relation

@dataclass
class Channel:
    """A finite channel ``Q[x, z]`` and its neighbour relation ``pairs`` (array of index pairs).

    Channel-level quantities are the max over neighbouring pairs, in both orders."""

    Q: np.ndarray
    pairs: np.ndarray

    def __post_init__(self):
        self.Q = np.asarray(self.Q, dtype=float)
        self.pairs = np.asarray(self.pairs, dtype=int).reshape(-1, 2)
        if not np.allclose(self.Q.sum(axis=-1), 1.0, atol=1e-9) or (self.Q < 0).any():
            raise ValueError("rows of Q must be probability vectors")

    def rows(self, pairs=None):
        pr = self.pairs if pairs is None else np.asarray(pairs, dtype=int).reshape(-1, 2)
        return self.Q[pr[:, 0]], self.Q[pr[:, 1]]

    def eps(self, pairs=None) -> float:
        return float(eps_exact(*self.rows(pairs)).max())

    def delta(self, eps: float, pairs=None) -> float:
        return float(delta_of_eps(*self.rows(pairs), eps).max())

    def tv(self, pairs=None) -> float:
        return float(tv(*self.rows(pairs)).max())

    def kl(self, pairs=None) -> float:
        return float(kl_sym_max(*self.rows(pairs)).max())

    def min_error_sum(self, pairs=None) -> float:
        return float(min_error_sum(*self.rows(pairs)).min())


def hamming_pairs(n_bits: int, dist: int = 1) -> np.ndarray:
    """Index pairs (i, j), i < j, of the points of {0,1}^n_bits at Hamming distance exactly ``dist``."""
    idx = np.arange(2 ** n_bits)
    ham = np.array([[bin(a ^ b).count("1") for b in idx] for a in idx])
    i, j = np.nonzero(np.triu(ham == dist))
    return np.stack([i, j], axis=1)


def hypercube_channel(rng, n_bits: int, k: int, conc: float = 1.0) -> Channel:
    """A random channel on samples x ∈ {0,1}^n_bits (rows) with k outputs; neighbours differ in one bit."""
    Q = random_simplex(rng, 2 ** n_bits, k, conc)
    return Channel(Q, hamming_pairs(n_bits, 1))


def randomized_response(eps: float, k: int = 2) -> Channel:
    """k-ary randomized response on one datum: ``Q(z|x) ∝ e^ε 1{z=x} + 1{z≠x}``; all rows neighbours.
    Its exact ε is ε, its TV is ``(e^ε − 1)/(e^ε + k − 1)`` (= tanh(ε/2) for k = 2)."""
    Q = np.ones((k, k)) + (np.exp(eps) - 1) * np.eye(k)
    Q = Q / Q.sum(axis=1, keepdims=True)
    pairs = np.array([(i, j) for i in range(k) for j in range(i + 1, k)])
    return Channel(Q, pairs)


def release_one_at_random(n: int, domain: int = 2):
    """Barber–Duchi Example 2: the channel that publishes one uniformly chosen record of the sample.

    Samples are x ∈ {0..domain-1}^n (rows), outputs are values in {0..domain-1}; ``Q(z|x) =
    #{i: x_i = z}/n``. Returns the :class:`Channel` with replace-one neighbours. Its TV is exactly 1/n
    and δ(ε) = 1/n for every ε, but its ε is infinite (x = (0,...,0) vs (1,0,...,0): the output 1 is
    impossible under the first), and so is its KL."""
    samples = np.array(list(itertools.product(range(domain), repeat=n)))
    Q = np.stack([(samples == z).mean(axis=1) for z in range(domain)], axis=1)
    diff = (samples[:, None, :] != samples[None, :, :]).sum(-1)
    i, j = np.nonzero(np.triu(diff == 1))
    return Channel(Q, np.stack([i, j], axis=1))


def local_eps(R) -> float:
    """Exact ε of a local randomizer ``R[x, z]`` (all pairs of inputs are compared)."""
    R = np.asarray(R, float)
    i, j = np.triu_indices(R.shape[0], 1)
    return float(eps_exact(R[i], R[j]).max())


def local_product_channel(R, n: int) -> Channel:
    """Non-interactive local protocol: each of n individuals applies the randomizer ``R[x, z]`` to
    their own datum; the central channel maps the sample ``x ∈ X^n`` to ``(z_1..z_n)``. Neighbours:
    samples differing in one entry."""
    R = np.asarray(R, float)
    kx, kz = R.shape
    xs = list(itertools.product(range(kx), repeat=n))
    zs = list(itertools.product(range(kz), repeat=n))
    Q = np.array([[np.prod([R[x[i], z[i]] for i in range(n)]) for z in zs] for x in xs])
    X = np.array(xs)
    diff = (X[:, None, :] != X[None, :, :]).sum(-1)
    i, j = np.nonzero(np.triu(diff == 1))
    return Channel(Q, np.stack([i, j], axis=1))


def sequential_local_channel(rng, kx: int, kz: int, n: int, eps_cap: float | None = None):
    """Sequentially interactive local protocol with random randomizers: individual i applies
    ``R_i(z_i | x_i, z_{1:i-1})`` (a fresh random kx × kz channel for every history). Returns the
    central channel and the exact local ε (max over individuals and histories of the randomizer's ε).
    If ``eps_cap`` is given, each randomizer is mixed with the uniform channel until its ε ≤ eps_cap.
    """
    xs = list(itertools.product(range(kx), repeat=n))
    zs = list(itertools.product(range(kz), repeat=n))
    rand = {}
    eps_local = 0.0
    for i in range(n):
        for hist in itertools.product(range(kz), repeat=i):
            Ri = random_simplex(rng, kx, kz, 1.0)
            if eps_cap is not None:
                lam = 1.0
                while local_eps(Ri) > eps_cap:
                    lam *= 0.7
                    Ri = lam * Ri + (1 - lam) / kz
            rand[(i, hist)] = Ri
            eps_local = max(eps_local, local_eps(Ri))
    Q = np.array([[np.prod([rand[(i, z[:i])][x[i], z[i]] for i in range(n)]) for z in zs] for x in xs])
    X = np.array(xs)
    diff = (X[:, None, :] != X[None, :, :]).sum(-1)
    i, j = np.nonzero(np.triu(diff == 1))
    return Channel(Q, np.stack([i, j], axis=1)), eps_local


def ldp_channel(A, eps):
    """A channel with every column ratio in [e^{-ε}, e^ε] (rows normalised; returns the channel and its
    actual ε' <= ε, against which the inequality is checked)."""
    s = np.exp(eps / 2 * np.tanh(A))
    q = s / s.sum(1, keepdims=True)
    return q, float(np.max(np.log(q.max(0) / q.min(0))))
