"""Lower-bound machinery under ε-local differential privacy (docs/methods/ldp-contraction.md).

Notation: P_v are the data laws, M_v^n the law of the privatised Z_{1:n}; a channel Q is ε-LDP when
``Q(S|x, z_{1:i-1}) <= e^ε Q(S|x', z_{1:i-1})``.

Results and their status (each is tested in tests/test_local_methods.py on random finite channels,
by exact computation):

1. **Theorem 1** (DJW, paper): ``KL(M_0‖M_1) + KL(M_1‖M_0) <= 4(e^ε-1)² TV(P_0,P_1)²`` (one sample),
   and **Corollary 1** (paper): for n samples with sequential interaction the symmetrised KL of the
   n-sample marginals is at most ``4 n (e^ε-1)² TV(P_0,P_1)²``.
2. **One-direction KL** (derived here, certified; sharper than Theorem 1 by a factor 2):
   ``KL(M_0‖M_1) <= χ²(M_0‖M_1) <= (e^ε-1)² TV(P_0,P_1)²``. With q*(z) = inf_x q(z|x), q^*(z) = sup_x,
   ``|m_0(z) - m_1(z)| = |∫(q(z|x) - c_z) d(P_0-P_1)| <= (q^* - q*) TV`` (c_z the midpoint),
   ``m_1 >= q*``, ``q^* - q* <= (e^ε-1) q*`` and ``∫ q* dz <= 1``. For n samples with sequential
   interaction the chain rule of KL (X_i is independent of Z_{1:i-1} and each conditional channel is
   ε-LDP) gives ``KL(M_0^n‖M_1^n) <= n(e^ε-1)² TV²``.
3. **Private Le Cam** (derived, certified): Pinsker and Bretagnolle–Huber on the bound of 2,
   ``TV(M_0^n, M_1^n) <= min{ sqrt(n/2)(e^ε-1)TV, sqrt(1 - exp(-n(e^ε-1)²TV²)), TV(P_0^n,P_1^n) }``
   (Corollary 1 with Pinsker in both directions gives the weaker √n(e^ε-1)TV; both are tested), and
   ``M_n >= Φ(s)(1 - TV(M_0^n, M_1^n))/2``.
3'. **Private Fano** (derived, certified): ``I(Z_{1:n};V) <= n(e^ε-1)² max TV²``
   (docs/methods/ldp-contraction.md: 2n(e^ε-1)², also verified). Derivation: I = (1/|V|) Σ_v KL(M_v‖M̄) <= (1/|V|²)
   Σ_{v,v'} KL(M_v‖M_v') (convexity of KL in the second argument) <= n(e^ε-1)² max TV² (by 2; the
   constant 2 follows from Corollary 1 the same way, pairing KL(M_v‖M_v') with KL(M_v'‖M_v)).
4. **Variational bound** (DJW Theorem 2 form; constant *re-derived* here, certified for
   non-interactive channels): ``I(Z_{1:n};V) <= n (e^ε-1)²/(4|V|) · sup_{‖γ‖_∞<=1} Σ_v (∫γ d(P_v - P̄))²``.
   Derivation (one sample; for non-interactive channels the Z_i are independent given V, so
   I(Z_{1:n};V) <= Σ_i I(Z_i;V)): write q*(z) = inf_x q(z|x), q^*(z) = sup_x q(z|x), c_z their midpoint,
   γ_z(x) = (q(z|x) - c_z)/((q^* - q*)/2) ∈ [-1,1]. Then m_v(z) - m̄(z) = ((q^*-q*)/2) ∫γ_z d(P_v - P̄);
   I <= (1/|V|) Σ_v χ²(M_v‖M̄) = (1/|V|) ∫ (q^*-q*)²/(4 m̄) Σ_v (∫γ_z d(P_v-P̄))² dz, with m̄ >= q*,
   q^* - q* <= (e^ε-1) q* (ε-LDP) and ∫ q* dz <= 1. The constant (e^ε-1)²/4 is smaller than the
   ``(e^ε - e^{-ε})²`` often quoted with this form (which is therefore also valid, but looser).
5. **Private Assouad** (coordinate-wise, derived, certified): for a hypercube family where flipping
   v_j changes P_v by TV at most τ_j, convexity of TV over the mixtures M_{±j} (pair v with its
   j-flip) and the private Le Cam bound give ``TV(M_{+j}, M_{-j}) <= TVbound(τ_j)`` (item 3), so
   ``M_n >= s Σ_j (1 - TVbound(τ_j))``.
   DJW's *variational* Assouad (a sum over j of symmetrised KL bounded through sup_γ) is kept
   **order only**: its n-sample tensorisation constant was not verified here.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ..core import symbolic as S

SOURCE_DJW = "Duchi, Jordan & Wainwright, Local Privacy and Statistical Minimax Rates (FOCS 2013 / JASA 2018)"


# ----------------------------------------------------------------------------- numeric forms

def sym_kl_bound(eps: float, tv: float, n: int = 1) -> float:
    """Theorem 1 / Corollary 1: bound on KL(M_0^n‖M_1^n) + KL(M_1^n‖M_0^n)."""
    return 4.0 * n * math.expm1(eps) ** 2 * tv ** 2


def kl_bound(eps: float, tv: float, n: int = 1) -> float:
    """One-direction KL(M_0^n‖M_1^n) <= n (e^ε-1)² TV(P_0,P_1)² (derived, χ² argument)."""
    return n * math.expm1(eps) ** 2 * tv ** 2


def private_tv_bound_corollary1(eps: float, tv: float, n: int = 1) -> float:
    """Private Le Cam from DJW Corollary 1 and Pinsker: TV(M_0^n, M_1^n) <= min{1, √n (e^ε - 1) TV(P_0, P_1)}."""
    return min(1.0, math.sqrt(n) * math.expm1(eps) * tv)


def private_tv_bound(eps: float, tv: float, n: int = 1) -> float:
    """TV(M_0^n, M_1^n) <= min{1, sqrt(KL/2), sqrt(1 - e^{-KL})}, KL <= n c_ε TV² (the χ²–TV
    contraction, :mod:`boundcalc.methods.chi2_contraction`; item 2's (e^ε-1)² is the larger constant)."""
    from .chi2_contraction import private_tv_bound as tv_bound

    return tv_bound(eps, tv, n)


def fano_mi_bound(eps: float, max_tv: float, n: int = 1) -> float:
    """Private Fano: I(Z_{1:n}; V) <= n c_ε max_{v≠v'} TV(P_v, P_v')² (derived; c_ε of the χ²–TV
    contraction, below the (e^ε-1)² of item 2)."""
    from .chi2_contraction import kl_bound

    return kl_bound(eps, max_tv, n)


def fano_mi_bound_corollary1(eps: float, max_tv: float, n: int = 1) -> float:
    """Private Fano from DJW Corollary 1: I(Z_{1:n}; V) <= 2 n (e^ε-1)² max TV²."""
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


#: DJW's variational private Assouad for n samples is order only (its tensorisation constant over the
#: n-sample mixtures M^n_{±j} was not verified); the one-sample form below is derived and tested.
ASSOUAD_VARIATIONAL_CERTIFIED = False


def assouad_variational_order(eps: float, sup_gamma_sum: float, n: int = 1) -> float:
    """DJW's private Assouad (docs/methods/ldp-contraction.md, **order only**): Σ_j symmetrised KL(M^n_{+j}, M^n_{-j})
    <= 2 (e^ε-1)² n sup_{‖γ‖_∞<=1} Σ_j (∫γ d(P_{+j} - P_{-j}))². Not used by any certified bound."""
    return 2.0 * n * math.expm1(eps) ** 2 * sup_gamma_sum


def assouad_variational_one_sample(eps: float, sup_gamma_sum: float) -> float:
    """One sample (derived, certified): Σ_j [KL(M_{+j}‖M_{-j}) + KL(M_{-j}‖M_{+j})]
    <= ((e^ε-1)²/2) sup_γ Σ_j (∫γ d(P_{+j} - P_{-j}))². Same χ² argument as item 4 applied to the
    mixtures P_{±j} (one channel, so m_{±j}(z) = ∫q(z|x) dP_{±j}), in both directions."""
    return 0.5 * math.expm1(eps) ** 2 * sup_gamma_sum


def sup_gamma_pairs(Pp: np.ndarray, Pm: np.ndarray) -> float:
    """sup_{γ ∈ [-1,1]^X} Σ_j (γ·(P_{+j} - P_{-j}))² by vertex enumeration (small alphabets)."""
    import itertools

    D = np.asarray(Pp, float) - np.asarray(Pm, float)
    return max(float(np.sum((D @ np.asarray(g)) ** 2)) for g in itertools.product([-1.0, 1.0], repeat=D.shape[1]))


def fano_probability(mi_bound: float, n_hyp: int) -> float:
    """Fano: inf_ψ P(ψ ≠ V) >= 1 - (I + log 2)/log|V| (clipped at 0)."""
    return max(0.0, 1.0 - (mi_bound + math.log(2)) / math.log(n_hyp))


# ----------------------------------------------------------------------------- sympy forms

@S.cached_expression
def tv_private_expr(n, eps, tv_one, tv_product=None):
    """sympy: min{sqrt(KL/2), sqrt(1 - e^{-KL}), TV(P_0^n,P_1^n)} (last optional) with the n-sample KL
    bound KL <= n c_ε TV² of the χ²–TV contraction (:mod:`boundcalc.methods.chi2_contraction`; it is
    below item 2's n(e^ε-1)²TV² by the factor 2/(e^ε+1) at every ε, so it replaces it)."""
    from .chi2_contraction import kl_bound_expr

    kl = kl_bound_expr(n, eps, tv_one)
    a = sp.sqrt(kl / 2)
    bh = sp.sqrt(-S.expm1(-kl))
    return S.Min(a, bh) if tv_product is None else S.Min(a, bh, tv_product)


@S.cached_expression
def private_le_cam_expr(loss_at_s, n, eps, tv_one, tv_product=None):
    """sympy: Φ(s)(1 - TV bound)/2 with the TV bound of :func:`tv_private_expr`, clipped at 0."""
    return S.Max(0, loss_at_s * (1 - tv_private_expr(n, eps, tv_one, tv_product)) / 2)


def private_fano_expr(loss_at_s, n, eps, max_tv, log_nhyp):
    """sympy: Φ(s)·max{0, 1 - (n c_ε max TV² + log 2)/log|V|}, c_ε = 2(e^ε-1)²/(e^ε+1)."""
    from .chi2_contraction import kl_bound_expr

    mi = kl_bound_expr(n, eps, max_tv)  # I <= (1/|V|²) Σ KL(M_v‖M_v') <= n c_ε max TV² (χ²–TV contraction)
    return loss_at_s * S.Max(0, 1 - (mi + sp.log(2)) / log_nhyp)


@S.cached_expression
def private_assouad_expr(s_sep, n_coords, n, eps, tv_flip, tv_flip_product=None):
    """sympy: s Σ_j (1 - TV bound(τ)) for ``n_coords`` coordinates whose flip changes P_v by TV τ
    (``tv_flip_product``: an optional bound on the TV of the n-sample laws, by data processing)."""
    return s_sep * n_coords * S.Max(0, 1 - tv_private_expr(n, eps, tv_flip, tv_flip_product))


@S.cached_expression
def hellinger_tv_product(n, bc_one):
    """sympy: TV(P^n, Q^n) <= sqrt(1 - BC^{2n}) (Le Cam's inequality with the Bhattacharyya coefficient
    BC = Σ sqrt(pq) of one sample); ``bc_one`` is given as 1 - BC (``one_minus_bc``) for accuracy."""
    return sp.sqrt(-S.expm1(2 * n * S.log1p(-bc_one)))


#: above this n the exact binomial TV (S.BinomTVComplement, float64) is not trusted: see
#: symbolic.EXACT_BINOMIAL_TV_MAX_N (at n = 1e18 it gave 0.34 instead of 0.68 and a lower bound built on it
#: exceeded the certified upper bound). Beyond it the Hellinger bound is used.
EXACT_BINOMIAL_TV_MAX_N = S.EXACT_BINOMIAL_TV_MAX_N


@S.cached_expression
def bernoulli_one_minus_bc(q1, q2):
    """sympy: 1 - BC(Bern(q1), Bern(q2)) = ((√q1-√q2)² + (√(1-q1)-√(1-q2))²)/2, written without
    cancellation: (q1-q2)²/2 · (1/(√q1+√q2)² + 1/(√(1-q1)+√(1-q2))²)."""
    return (q1 - q2) ** 2 / 2 * (1 / (sp.sqrt(q1) + sp.sqrt(q2)) ** 2
                                 + 1 / (sp.sqrt(1 - q1) + sp.sqrt(1 - q2)) ** 2)


@S.cached_expression
def binomial_tv_bound(n, q1, q2):
    """sympy: an upper bound on TV(Bin(n, q1), Bin(n, q2)) = TV(Bern(q1)^n, Bern(q2)^n): exact
    (1 - BinomTVComplement) for n <= EXACT_BINOMIAL_TV_MAX_N, else the Hellinger bound
    sqrt(1 - BC^{2n}) (Le Cam's inequality), which float64 evaluates accurately at any n."""
    return sp.Piecewise((1 - S.BinomTVComplement(n, q1, q2), n <= EXACT_BINOMIAL_TV_MAX_N),
                        (hellinger_tv_product(n, bernoulli_one_minus_bc(q1, q2)), True))


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
