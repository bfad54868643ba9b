"""Private histograms for density estimation: exact risk decompositions, bias constants, samplers.

Histogram on [0,1]^d with b bins per axis (h = 1/b, m = b^d cubic bins B_j of volume h^d):
``f̂ = Σ_j (c_j + W_j)/(n h^d) 1_{B_j}``, c_j the bin counts, W_j the privacy noise (mean 0, independent
of the data, variance σ_W²). With p_j = P(X ∈ B_j) and f̄_j = p_j/h^d the bin averages, the three terms
of E∫(f̂ - f)² are orthogonal (E f̂ = Σ f̄_j 1_{B_j} is the L² projection of f on the bins):

    E∫(f̂-f)² = ∫(f - f̄)²  +  Σ_j h^d Var(c_j)/(n h^d)²  +  Σ_j h^d σ_W²/(n h^d)²
             = bias          +  m (1 - Σ_j p_j²)/n          +  m² σ_W²/n².

* **variance** (exact): Var(c_j) = n p_j(1-p_j), so Σ_j p_j(1-p_j)/(n h^d) = m(1 - Σ p_j²)/n, and
  Σ p_j² >= 1/m (Cauchy–Schwarz), so it is <= (m - 1)/n, with equality at the uniform density.
  (the simpler bound m/n, from Var(c_j) <= n p_j, is valid; (m-1)/n is the exact worst case.)
* **central Laplace** (ε-DP): replace-one moves one point between two bins, changing two counts by 1,
  so the count vector has ℓ1 sensitivity 2 and W_j ~ Laplace(2/ε) i.i.d. is ε-DP; σ_W² = 8/ε², and the
  noise term is 8 m²/(nε)² (docs/problems/density.md: correct).
* **local Laplace** (ε-LDP): each user adds Laplace(2/ε) to each coordinate of its one-hot bin vector
  (two one-hot vectors differ by 2 in ℓ1); the sum of n users' noise has variance 8n/ε², so the noise
  term is 8 m²/(nε²).
* **local randomized response** (ε-LDP): each user flips each bit of its one-hot vector independently
  with probability q = 1/(1 + e^{ε/2}) (two one-hot vectors differ in two bits: likelihood ratio
  <= ((1-q)/q)² = e^ε); debiased bit (Y - q)/(1 - 2q) has conditional variance q(1-q)/(1-2q)² =
  e^{ε/2}/(e^{ε/2}-1)², so the noise term is m² e^{ε/2}/(n (e^{ε/2}-1)²)
  (≈ 4m²/(nε²): half the Laplace term for small ε).

* **local subset selection** (ε-LDP; Ye & Barg): each user releases an s-subset S of the m bins with
  ``P(S|x) ∝ e^ε`` if its bin x ∈ S, else 1 (likelihood ratio <= e^ε); with p* = P(x ∈ S | x) =
  s e^ε/(s e^ε + m - s), q* = P(i ∈ S | x ≠ i) = (s - p*)/(m - 1), the estimate
  ``p̂_i = (1/n) Σ_users (1{i ∈ S} - q*)/(p* - q*)`` is unbiased and E‖p̂ - p‖² = C_s/n - ‖p‖²/n with C_s
  independent of p (docs/problems/multinomial.md; :mod:`boundcalc.mechanisms.discrete`). The
  histogram's whole variance term is E∫(f̂ - f̄)² = m E‖p̂ - p‖² (f̂_j = m p̂_j on bin j), and ‖p‖² >= 1/m,
  so it is at most ``(m-1)²(s + (m-s)e^{-ε})²/(n s (m-s)(1 - e^{-ε})²)`` (sampling included; for
  s = m/(e^ε+1) about 4m² e^ε/(n(e^ε-1)²): for large ε well below randomized response's
  m² e^{ε/2}/(n(e^{ε/2}-1)²)). :func:`subset_noise_term`; s is taken as ⌊m/(e^ε+1)⌋ or ⌈m/(e^ε+1)⌉
  clipped to [1, m-1], whichever is smaller.

**Shrinkage toward the uniform density** (derived). With g the (unbiased-for-f̄) private histogram,
``f̂ = 1 + λ(g - 1)``, λ ∈ [0, 1]: ``f̂ - f = λ(g - f̄) + (f̄ - f) - (1-λ)(f̄ - 1)``; the first is
mean-zero, the second orthogonal to the bin-constant functions, the others bin-constant, so

    E∫(f̂-f)² = ∫(f - f̄)² + (1-λ)² ∫(f̄ - 1)² + λ² E∫(g - f̄)².

With ``∫(f - f̄)² <= A = α h²`` (the bias bound of this module, α = dL²/12 or L²/π^{2β}) and
``∫(f - f̄)² + ∫(f̄ - 1)² = ∫(f - 1)² <= α`` (the one-bin bias), the first two terms are at most
``A + (1-λ)²(α - A)`` (maximise X + (1-λ)²(α' - X) over X <= A, α' <= α); with V the variance bound,
λ = B/(B + V), B = α - A gives ``E∫(f̂-f)² <= A + BV/(B + V)`` (:func:`shrunk_risk`), never above α
(the uniform estimator) nor above the unshrunk A + V. A linear density attains both bias terms at
once (∫(f-f̄)² = L²h²/12 and ∫(f-1)² = L²/12).

**Bias constants** (derived for boundcalc; docs/problems/density.md):

* *coordinate-wise L-Lipschitz* f (|f(x + t e_j) - f(x)| <= L|t| for every j: this holds for f
  L-Lipschitz in any ℓ_p norm): ``∫(f - f̄)² <= d L² h²/12``. Proof: on a bin, with U uniform on it,
  ∫_B (f - f̄_B)² = h^d Var f(U); Efron–Stein: Var f(U) <= Σ_j E Var_j f(U) (variance in U_j with the
  other coordinates fixed); in one coordinate, Var g(U_j) = ½E(g(U_j) - g(U_j'))² <= ½L²E(U_j - U_j')² =
  L² h²/12. Sum over the m bins (volume 1). **Sharp**: f = 1 + L Σ_j (x_j - 1/2) (a density when
  dL <= 2) attains it, and so does the sawtooth f = 1 + L Σ_j (dist(x_j, 2hℤ) - mean), linear with
  slope ±L on every bin (tested). The pointwise bound |f - f̄_B| <= L√d h (f L-Lipschitz in ℓ2, bins of
  ℓ2 diameter √d h) gives d L² h²: valid, but 12 times too large.
* *Sobolev* f on [0,1] with ∫_0^1 f'² <= L² (which contains every L-Lipschitz density):
  ``∫(f - f̄)² <= L² h²/π²`` (Poincaré–Wirtinger on each bin: ∫_B (f - f̄_B)² <= (h/π)² ∫_B f'², sharp
  constant, attained by cos(π x/h) on the bin; sum over bins). With the cosine-Sobolev ellipsoid
  S_β(L) (see :mod:`boundcalc.mechanisms.series`), S_β(L) ⊂ S_1(L/π^{β-1}) for β >= 1, so the bias is
  <= L² h²/π^{2β}.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ..core import symbolic as S


# --------------------------------------------------------------------------- sympy risk terms

def bias_lipschitz(L, d, h):
    """sup over coordinate-wise L-Lipschitz densities of ∫(f - f̄)²: d L² h²/12 (sharp)."""
    return d * L ** 2 * h ** 2 / 12


def bias_sobolev(L, beta, h):
    """sup over the cosine-Sobolev ellipsoid S_β(L), β >= 1, of ∫(f - f̄)²: L² h²/π^{2β} (sharp at β = 1)."""
    return L ** 2 * h ** 2 / sp.pi ** (2 * beta)


def variance_term(m, n):
    """Worst-case sampling variance term m(1 - Σp²)/n <= (m - 1)/n."""
    return (m - 1) / n


def central_laplace_term(m, n, eps):
    """8 m²/(nε)²: Laplace(2/ε) on each of m counts, divided by n h^d, integrated."""
    return 8 * m ** 2 / (n * eps) ** 2


def local_laplace_term(m, n, eps):
    """8 m²/(nε²): every user adds Laplace(2/ε) to its one-hot vector."""
    return 8 * m ** 2 / (n * eps ** 2)


def rr_variance_factor(eps):
    """q(1-q)/(1-2q)² = e^{ε/2}/(e^{ε/2}-1)² for bit-flip probability q = 1/(1+e^{ε/2})."""
    return sp.exp(eps / 2) / S.expm1(eps / 2) ** 2


def local_rr_term(m, n, eps):
    """m² e^{ε/2}/(n (e^{ε/2}-1)²): randomized response on every bit of the one-hot vector."""
    return m ** 2 * rr_variance_factor(eps) / n


def subset_size_choices(m, eps):
    """The two integer subset sizes ⌊m/(e^ε+1)⌋ and ⌈m/(e^ε+1)⌉, clipped to [1, m-1] (sympy)."""
    x = m / (sp.exp(eps) + 1)
    return (S.Max(1, S.Min(m - 1, sp.floor(x))), S.Max(1, S.Min(m - 1, sp.ceiling(x))))


def subset_variance(m, n, eps, s):
    """(m-1)²(s + (m-s)e^{-ε})²/(n s (m-s)(1-e^{-ε})²) = m · sup_p E‖p̂ - p‖² of subset selection with
    subset size s (the same as (m-1)²(s e^ε + m - s)²/(n s (m-s)(e^ε-1)²), overflow-free)."""
    return (m - 1) ** 2 * (s + (m - s) * sp.exp(-eps)) ** 2 / (n * s * (m - s) * S.expm1(-eps) ** 2)


@S.cached_expression
def subset_noise_term(m, n, eps):
    """The histogram variance term with subset selection, at the better of the two subset sizes (m >= 2)."""
    s1, s2 = subset_size_choices(m, eps)
    return S.Min(subset_variance(m, n, eps, s1), subset_variance(m, n, eps, s2))


@S.cached_expression
def shrunk_risk(alpha, h, V):
    """A + BV/(B+V), A = α h², B = α(1 - h²): the histogram shrunk toward 1 with λ = B/(B+V)."""
    A = alpha * h ** 2
    B = alpha * (1 - h ** 2)
    return A + B * V / (B + V)


# --------------------------------------------------------------------------- exact numerics

def subset_second_moment(m: int, eps: float, s: int) -> float:
    """C_s = E‖a(Z)‖² of subset selection on m symbols (p-free): E‖p̂ - p‖² = (C_s - ‖p‖²)/n.
    C_s = (m-1)²(s e^ε + m - s)²/(m s (m-s)(e^ε-1)²) + 1/m (the multinomial page's risk constant)."""
    return (m - 1) ** 2 * (s + (m - s) * math.exp(-eps)) ** 2 / (m * s * (m - s) * math.expm1(-eps) ** 2) + 1 / m


def best_subset_size(m: int, eps: float) -> int:
    """The subset size the bound uses: ⌊m/(e^ε+1)⌋ or ⌈m/(e^ε+1)⌉ in [1, m-1], whichever has the smaller C_s."""
    x = m / (math.exp(min(eps, 700.0)) + 1)
    cands = {min(max(1, k), m - 1) for k in (math.floor(x), math.ceil(x))}
    return min(sorted(cands), key=lambda k: subset_second_moment(m, eps, k))


def exact_risk_shrunk(p, int_f2, n, lam, var_p):
    """Exact E∫(f̂-f)² of f̂ = 1 + λ(g - 1), g = m p̂ on the m bins of [0,1], for an unbiased p̂ of the bin
    probabilities p with E‖p̂ - p‖² = var_p: ∫(f-f̄)² + (1-λ)²∫(f̄-1)² + λ² m var_p."""
    p = np.asarray(p, float)
    m = p.size
    fbar2 = m * np.sum(p ** 2)
    return (int_f2 - fbar2) + (1 - lam) ** 2 * (fbar2 - 1) + lam ** 2 * m * var_p


def rr_flip_probability(eps: float) -> float:
    return 1.0 / (1.0 + math.exp(eps / 2))


def exact_risk(p, int_f2, n, noise_var, h_vol):
    """Exact E∫(f̂-f)² of the histogram for bin probabilities p (length m), ∫f² and per-bin noise variance
    of the *total* noise added to each count (central: σ_W²; local Laplace: n·8/ε²)."""
    p = np.asarray(p, float)
    m = p.size
    fbar2 = np.sum(p ** 2) / h_vol  # ∫ f̄²
    bias = int_f2 - fbar2
    var = np.sum(p * (1 - p)) / (n * h_vol)
    noise = m * noise_var / (n ** 2 * h_vol)
    return bias + var + noise


def ise(counts_noisy, p, int_f2, n, h_vol):
    """Integrated squared error ∫(f̂ - f)² for noisy counts (reps, m): exact given the counts.

    ∫(f̂-f)² = Σ_j h^d f̂_j² - 2 Σ_j f̂_j p_j + ∫f², with f̂_j = counts_j/(n h^d).
    """
    fh = np.asarray(counts_noisy, float) / (n * h_vol)
    return h_vol * np.sum(fh ** 2, axis=1) - 2 * fh @ np.asarray(p, float) + int_f2


def laplace_sum(rng: np.random.Generator, shape, k, scale):
    """Sum of k i.i.d. Laplace(scale) variables, exactly: Gamma(k, scale) - Gamma(k, scale)."""
    if np.all(np.asarray(k) == 1):
        return rng.laplace(0.0, scale, size=shape)
    return rng.gamma(k, scale, size=shape) - rng.gamma(k, scale, size=shape)


def central_counts(rng, n, p, reps, eps=None):
    """Multinomial counts (exactly the binned sample) plus Laplace(2/ε) per bin (None: no noise)."""
    c = rng.multinomial(n, p, size=reps).astype(float)
    if eps is not None:
        c += rng.laplace(0.0, 2.0 / eps, size=c.shape)
    return c


def _laplace_counts(rng, c, n, eps):
    """counts + the sum of n Laplace(2/ε) per bin (each user adds Laplace(2/ε) to its one-hot vector)."""
    return c + laplace_sum(rng, c.shape, n, 2.0 / eps)


def _rr_counts(rng, c, n, eps):
    """The number of 1s reported in bin j is Bin(c_j, 1-q) + Bin(n - c_j, q); debiased by (S - nq)/(1 - 2q)."""
    q = rr_flip_probability(eps)
    s = rng.binomial(c, 1 - q) + rng.binomial(n - c, q)
    return (s - n * q) / (1 - 2 * q)


#: ε-LDP channel -> unbiased counts from the users' releases, given the true counts
LOCAL_COUNT_CHANNELS = {"laplace": _laplace_counts, "rr": _rr_counts}


def local_counts(rng, n, p, reps, eps, mechanism):
    """Unbiased estimates of the counts from n users' ε-LDP one-hot releases (exact in law), under
    ``mechanism`` (a key of :data:`LOCAL_COUNT_CHANNELS`)."""
    c = rng.multinomial(n, p, size=reps)
    return LOCAL_COUNT_CHANNELS[mechanism](rng, c, n, eps)
