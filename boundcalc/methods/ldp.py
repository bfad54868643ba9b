"""Lower-bound machinery under ε-local differential privacy (THEOREMS.md §1.3).

Notation: P_v are the data laws, M_v^n the law of the privatised Z_{1:n}; a channel Q is ε-LDP when
``Q(S|x, z_{1:i-1}) <= e^ε Q(S|x', z_{1:i-1})``.

Results and their status (each is tested in tests/test_local_methods.py on random finite channels,
by exact computation):

1. **Theorem 1** (DJW, paper): ``KL(M_0‖M_1) + KL(M_1‖M_0) <= 4(e^ε-1)² TV(P_0,P_1)²`` (one sample),
   and **Corollary 1** (paper): for n samples with sequential interaction the symmetrised KL of the
   n-sample marginals is at most ``4 n (e^ε-1)² TV(P_0,P_1)²``.
2. **Private Le Cam** (derived, certified): Pinsker on both directions,
   ``2 TV(M_0^n,M_1^n)² <= min KL <= (KL_01 + KL_10)/2 <= 2n(e^ε-1)² TV²``, so
   ``TV(M_0^n, M_1^n) <= √n (e^ε-1) TV(P_0,P_1)`` (also <= TV(P_0^n, P_1^n) by data processing), and
   ``M_n >= Φ(s)(1 - min{√n(e^ε-1)TV, TV(P_0^n,P_1^n)})/2``.
3. **Private Fano** (derived, certified; constant 2 verified): ``I(Z_{1:n};V) <= 2n(e^ε-1)² max TV²``.
   Derivation: I = (1/|V|) Σ_v KL(M_v‖M̄) <= (1/|V|²) Σ_{v,v'} KL(M_v‖M_v') (convexity of KL in the
   second argument) = (1/(2|V|²)) Σ_{v≠v'} [KL(M_v‖M_v') + KL(M_v'‖M_v)]
   <= (1/(2|V|²)) |V|(|V|-1) 4n(e^ε-1)² max TV² <= 2n(e^ε-1)² max TV² (Corollary 1).
4. **Variational bound** (DJW Theorem 2 form; constant *re-derived* here, certified for
   non-interactive channels): ``I(Z_{1:n};V) <= n (e^ε-1)²/(4|V|) · sup_{‖γ‖_∞<=1} Σ_v (∫γ d(P_v - P̄))²``.
   Derivation (one sample; for non-interactive channels the Z_i are independent given V, so
   I(Z_{1:n};V) <= Σ_i I(Z_i;V)): write q*(z) = inf_x q(z|x), q^*(z) = sup_x q(z|x), c_z their midpoint,
   γ_z(x) = (q(z|x) - c_z)/((q^* - q*)/2) ∈ [-1,1]. Then m_v(z) - m̄(z) = ((q^*-q*)/2) ∫γ_z d(P_v - P̄);
   I <= (1/|V|) Σ_v χ²(M_v‖M̄) = (1/|V|) ∫ (q^*-q*)²/(4 m̄) Σ_v (∫γ_z d(P_v-P̄))² dz, with m̄ >= q*,
   q^* - q* <= (e^ε-1) q* (ε-LDP) and ∫ q* dz <= 1. The constant (e^ε-1)²/4 is smaller than the
   ``(e^ε - e^{-ε})²`` recalled in THEOREMS.md (which is therefore also valid, but looser).
5. **Private Assouad** (coordinate-wise, derived, certified): for a hypercube family where flipping
   v_j changes P_v by TV at most τ_j, convexity of TV over the mixtures M_{±j} (pair v with its
   j-flip) and the private Le Cam bound give ``TV(M_{+j}, M_{-j}) <= min{1, √n(e^ε-1) τ_j}``, so
   ``M_n >= s Σ_j (1 - min{1, √n(e^ε-1)τ_j})``.
   DJW's *variational* Assouad (a sum over j of symmetrised KL bounded through sup_γ) is kept
   **order only**: its n-sample tensorisation constant was not verified here.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from .. import symbolic as S

SOURCE_DJW = "Duchi, Jordan & Wainwright, Local Privacy and Statistical Minimax Rates (FOCS 2013 / JASA 2018)"


# ----------------------------------------------------------------------------- numeric forms

def sym_kl_bound(eps: float, tv: float, n: int = 1) -> float:
    """Theorem 1 / Corollary 1: bound on KL(M_0^n‖M_1^n) + KL(M_1^n‖M_0^n)."""
    return 4.0 * n * math.expm1(eps) ** 2 * tv ** 2


def private_tv_bound(eps: float, tv: float, n: int = 1) -> float:
    """TV(M_0^n, M_1^n) <= min{1, √n (e^ε - 1) TV(P_0, P_1)}  (private Le Cam, derived)."""
    return min(1.0, math.sqrt(n) * math.expm1(eps) * tv)


def fano_mi_bound(eps: float, max_tv: float, n: int = 1) -> float:
    """Private Fano: I(Z_{1:n}; V) <= 2 n (e^ε-1)² max_{v≠v'} TV(P_v, P_v')² (derived)."""
    return 2.0 * n * math.expm1(eps) ** 2 * max_tv ** 2


def variational_mi_bound(eps: float, sup_gamma: float, nv: int, n: int = 1) -> float:
    """Variational bound: I(Z_{1:n};V) <= n (e^ε-1)²/(4|V|) sup_γ Σ_v (∫γ d(P_v - P̄))² (derived,
    non-interactive channels). ``sup_gamma`` is the supremum (see :func:`sup_gamma_finite`)."""
    return n * math.expm1(eps) ** 2 / (4.0 * nv) * sup_gamma


def sup_gamma_finite(P: np.ndarray) -> float:
    """sup_{γ ∈ [-1,1]^X} Σ_v (γ·(P_v - P̄))² for a finite family (rows of P) by vertex enumeration
    (a convex function of γ is maximised at a vertex of the cube). Small alphabets only."""
    import itertools

    P = np.asarray(P, float)
    D = P - P.mean(axis=0)
    best = 0.0
    for g in itertools.product([-1.0, 1.0], repeat=P.shape[1]):
        best = max(best, float(np.sum((D @ np.asarray(g)) ** 2)))
    return best


def fano_probability(mi_bound: float, n_hyp: int) -> float:
    """Fano: inf_ψ P(ψ ≠ V) >= 1 - (I + log 2)/log|V| (clipped at 0)."""
    return max(0.0, 1.0 - (mi_bound + math.log(2)) / math.log(n_hyp))


# ----------------------------------------------------------------------------- sympy forms

def tv_private_expr(n, eps, tv_one, tv_product=None):
    """sympy: min{√n (e^ε-1) TV(P_0,P_1), TV(P_0^n,P_1^n)} (the second term optional)."""
    a = sp.sqrt(n) * S.expm1(eps) * tv_one
    return a if tv_product is None else sp.Min(a, tv_product)


def private_le_cam_expr(loss_at_s, n, eps, tv_one, tv_product=None):
    """sympy: Φ(s)(1 - min{√n (e^ε-1) TV, TV(P^n)})/2, clipped at 0."""
    return sp.Max(0, loss_at_s * (1 - tv_private_expr(n, eps, tv_one, tv_product)) / 2)


def private_fano_expr(loss_at_s, n, eps, max_tv, log_nhyp):
    """sympy: Φ(s)·max{0, 1 - (2n(e^ε-1)² max TV² + log 2)/log|V|}."""
    mi = 2 * n * S.expm1(eps) ** 2 * max_tv ** 2
    return loss_at_s * sp.Max(0, 1 - (mi + sp.log(2)) / log_nhyp)


def private_assouad_expr(s_sep, n_coords, n, eps, tv_flip):
    """sympy: s Σ_j (1 - min{1, √n(e^ε-1) τ}) for ``n_coords`` coordinates with flip TV τ."""
    return s_sep * n_coords * sp.Max(0, 1 - sp.sqrt(n) * S.expm1(eps) * tv_flip)


# ----------------------------------------------------------------------------- exact finite checks

def kl(p: np.ndarray, q: np.ndarray) -> float:
    p, q = np.asarray(p, float), np.asarray(q, float)
    m = p > 0
    return float(np.sum(p[m] * np.log(p[m] / q[m])))


def privacy_level(Q: np.ndarray) -> float:
    """The exact LDP level of a finite channel: log max_z max_{x,x'} Q[x,z]/Q[x',z]."""
    Q = np.asarray(Q, float)
    return float(np.max(np.log(Q.max(axis=0)) - np.log(Q.min(axis=0))))


def random_channel(nx: int, nz: int, rng: np.random.Generator, spread: float = 1.0,
                   extreme: bool = False):
    """A random finite channel Q[x, z] ∝ w_z exp(spread·u_{xz}) (u uniform on [0,1], or on {0,1}
    when ``extreme``: close to the extreme points of the LDP polytope), and its exact level ε."""
    while True:
        u = rng.integers(0, 2, (nx, nz)).astype(float) if extreme else rng.random((nx, nz))
        w = rng.random(nz) + 1e-3
        Q = w[None, :] * np.exp(spread * u)
        Q = Q / Q.sum(axis=1, keepdims=True)
        level = privacy_level(Q)
        if level > 1e-6:  # redraw the (degenerate) channels that release nothing
            return Q, level
