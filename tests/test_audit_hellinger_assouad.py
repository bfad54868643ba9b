"""Falsification audit of the Hellinger–Bhattacharyya Assouad lower bounds (docs/methods/hellinger-assouad.md).

Every certified lower bound must stay below the worst-case risk of a concrete ε-LDP scheme. The references here
are exact worst-case risks derived in closed form for one user (n = 1), where the bounds come closest:

* binary data (multinomial with d = 2, the mean on [-r, r] and the linear problem with d = 1 after unbiased
  rounding to ±r): randomized response at level ε, b = tanh(ε/2), and the best symmetric estimator of the bit;
* no privacy: the minimax estimator (N + √n/d)/(n + √n) of the multinomial (Steinhaus 1957), whose risk
  (1 - 1/d)/(1 + √n)² is constant on the simplex.

At small ε the Hellinger–Assouad bound agrees with these risks to first order in ε² (ℓ2²) and ε (ℓ1), and at
n = 1 without privacy it equals them, so a wrong constant (BC against BC², the 1/2 of the pair family, h_ε) or a
value rounded up would fail here. The sub-alphabet cap is checked against a brute force over every pair count.
"""
import math

import mpmath as mp
import numpy as np
import pytest

import boundcalc as bc

EPS_SMALL = [1e-9, 1e-7, 1e-5, 1e-3, 0.05, 0.3]
EPS_ALL = EPS_SMALL + [1.0, 1.76, 3.0, 8.0, 30.0]


def _certified_lowers(res):
    return [b for b in res.lowers if b.certified and b.value is not None and b.value > 0]


def _b(eps):
    return mp.tanh(mp.mpf(eps) / 2)


@pytest.fixture(autouse=True)
def _fifty_digits():
    """References near 1 - 1e-19 need more than float precision (restored after each test)."""
    with mp.workdps(50):
        yield


# ------------------------------------------------------------------------------ exact one-user references

def rr_l2sq_bit_risk(b):
    """Worst-case E(θ̂ - θ)² over θ ∈ [-1, 1] of θ̂ = ±c from one randomized-response bit of a ±1 variable with
    mean θ (E[bit] = bθ): c² + θ²(1 - 2cb), best at c = b (1 - b², when 2b² <= 1) or c = 1/(2b) (1/(4b²))."""
    return 1 - b ** 2 if 2 * b ** 2 <= 1 else 1 / (4 * b ** 2)


def rr_l1_pair_risk(b):
    """Worst-case ‖p̂ - p‖₁ = 2|t̂ - t| on two symbols from one randomized-response bit, t̂ = 1/2 ± c: the risk is
    1 - 2t + 2cb(2t - 1) for t <= 1/2 - c, 2c - b(2t - 1)² in the middle, symmetric beyond, so its sup is
    max{1 - 2cb, 2c}, equal to 1/(1 + b) at c = 1/(2(1 + b))."""
    return 1 / (1 + b)


def rr_linear_risk(b):
    """Worst-case excess E[θ̂μ] + |μ| (r = M = 1, d = 1) of θ̂ = -t·bit after unbiased rounding of X to ±1 and
    randomized response: |μ| - tbμ², whose sup over |μ| <= 1 is 1 - tb (tb <= 1/2) or 1/(4tb); best t gives
    1 - b for b <= 1/2 and 1/(4b) beyond."""
    return 1 - b if b <= mp.mpf(1) / 2 else 1 / (4 * b)


@pytest.mark.parametrize("eps", EPS_ALL)
def test_multinomial_two_symbols_one_user_below_randomized_response(eps):
    """d = 2, n = 1: ‖p̂ - p‖² = 2(t̂ - t)², so the ℓ2² reference is rr_l2sq_bit_risk/2 (θ = 2t - 1)."""
    b = _b(eps)
    refs = {"l2sq": rr_l2sq_bit_risk(b) / 2, "l1": rr_l1_pair_risk(b)}
    for loss, ref in refs.items():
        res = bc.rate("multinomial", privacy="local", n=1, d=2, eps=eps, loss=loss)
        for lb in _certified_lowers(res):
            assert mp.mpf(lb.value) <= ref, (loss, eps, lb.name, lb.value, ref)
    # the bound is first-order exact at small ε: not vacuous
    if eps <= 1e-3:
        hb = next(x for x in bc.rate("multinomial", privacy="local", n=1, d=2, eps=eps, loss="l2sq").lowers
                  if x.name == "hellinger-assouad")
        assert hb.value >= (1 - 1e-6) * float(refs["l2sq"])


@pytest.mark.parametrize("eps", EPS_ALL)
def test_linear_one_dimension_one_user_below_randomized_response(eps):
    ref = rr_linear_risk(_b(eps))
    for geometry in ("l2", "l1"):
        res = bc.rate("linear", privacy="local", n=1, d=1, eps=eps, geometry=geometry)
        for lb in _certified_lowers(res):
            assert mp.mpf(lb.value) <= ref, (geometry, eps, lb.name, lb.value, ref)


@pytest.mark.parametrize("eps", [1e-9, 0.3, 30.0])
def test_mean_cube_one_user_below_randomized_response(eps):
    """d = 1, X ∈ [-1, 1]: unbiased rounding to ±1 then randomized response; the Hellinger–Assouad cube bound
    and the other certified lowers stay below its worst-case risk (ε = 1e-8 is tested separately below)."""
    ref = rr_l2sq_bit_risk(_b(eps))
    res = bc.rate("mean", privacy="local", n=1, d=1, eps=eps, k=math.inf, r=1.0)
    for lb in _certified_lowers(res):
        assert mp.mpf(lb.value) <= ref, (eps, lb.name, lb.value, ref)


@pytest.mark.parametrize("n", [1, 10 ** 6])
def test_mean_bayes_vertices_tiny_eps_below_randomized_response(n):
    """n users, X ∈ [-1, 1], ε = 1e-8: unbiased rounding, randomized response, θ̂ = c·(mean of bits)/b with
    c = nb²/(1 + nb²) has worst-case risk max{(1-c)² + c²(1/b² - 1)/n, c²/(nb²)} < 1."""
    eps = 1e-8
    b = _b(eps)
    c = n * b ** 2 / (1 + n * b ** 2)
    ref = max((1 - c) ** 2 + c ** 2 * (1 / b ** 2 - 1) / n, c ** 2 / (n * b ** 2))
    res = bc.rate("mean", privacy="local", n=n, d=1, eps=eps, k=math.inf, r=1.0)
    lb = next(x for x in res.lowers if x.name == "bayes-vertices")
    assert mp.mpf(lb.value) <= ref, (n, lb.value, ref)


@pytest.mark.parametrize("d", [2, 3, 4, 7])
@pytest.mark.parametrize("n", [1, 2, 3, 10])
def test_multinomial_nonprivate_below_exact_minimax(n, d):
    """Without privacy the minimax ℓ2² risk is (1 - 1/d)/(1 + √n)² (constant-risk Bayes estimator); the
    Hellinger–Assouad bound equals it at n = 1, d = 2."""
    ref = (1 - mp.mpf(1) / d) / (1 + mp.sqrt(n)) ** 2
    res = bc.rate("multinomial", privacy="none", n=n, d=d, loss="l2sq")
    for lb in _certified_lowers(res):
        assert mp.mpf(lb.value) <= ref, (n, d, lb.name, lb.value, ref)
    if n == 1 and d == 2:
        assert res.lower.value >= float(ref) * (1 - 1e-12)


# ------------------------------------------------------------------------------ the sub-alphabet cap

def _hb_pairs(n, eps, m, delta):
    """(δ²/(2m))(1-h)^{2n}, h = min{(1 - √(1-δ²))/m, h_ε δ²/m²} (numpy, written without cancellation)."""
    h2 = delta ** 2 / (1 + np.sqrt(1 - delta ** 2)) / m
    he = math.expm1(eps) * math.tanh(eps / 2) / 4
    h = np.minimum(h2, he * (delta / m) ** 2)
    return delta ** 2 / (2 * m) * np.exp(2 * n * np.log1p(-np.minimum(h, 1 - 1e-300)))


@pytest.mark.parametrize("n, eps, d", [(1000, 1.0, 400), (10, 1.0, 200), (1e5, 0.5, 300), (3, 0.1, 100)])
def test_hellinger_assouad_cap_loses_nothing_and_uses_valid_pairs(n, eps, d):
    """The solver searches m <= ⌊min{d, k*}/2⌋ pairs; a brute force over every m <= ⌊d/2⌋ (δ on a log grid)
    finds nothing larger, and the reported value is the bound at valid (m, δ), recomputed in 50 digits."""
    res = bc.rate("multinomial", privacy="local", n=n, d=d, eps=eps, loss="l2sq")
    hb = next(x for x in res.lowers if x.name == "hellinger-assouad")
    m_rep, dl_rep = hb.free_parameters["m_hb"], hb.free_parameters["delta_hb"]
    assert 1 <= m_rep <= d // 2 and 0 < dl_rep <= 1
    ms = np.arange(1, d // 2 + 1)[:, None]
    dl = np.unique(np.concatenate([np.geomspace(1e-6, 1, 3000), np.linspace(0.9, 1, 101)]))[None, :]
    brute = float(np.max(_hb_pairs(n, eps, ms, dl)))
    assert hb.value >= brute * (1 - 1e-6), (hb.value, brute)
    e, x = mp.mpf(eps), mp.mpf(dl_rep)
    h = min(x ** 2 / (1 + mp.sqrt(1 - x ** 2)) / m_rep, mp.expm1(e) * mp.tanh(e / 2) / 4 * (x / m_rep) ** 2)
    exact = x ** 2 / (2 * m_rep) * mp.exp(2 * n * mp.log1p(-h))
    assert mp.mpf(hb.value) <= exact


@pytest.mark.xfail(strict=True, reason="the Dirichlet van Trees search finds k = 66 at d = 119 where k = 75 (valid, "
                                       "found at d = 110) is 0.6% better: the reported bound drops 0.23% with d")
def test_multinomial_lower_does_not_drop_from_110_to_119_symbols():
    """Every family on 110 symbols is one on 119, so the reported lower bound should not decrease (tolerance
    2e-3, the one of the monotonicity property test)."""
    lo = lambda d: bc.rate("multinomial", privacy="local", n=10 ** 4, eps=2.0, d=d, loss="l2sq").lower.value
    a, b = lo(110), lo(119)
    assert b >= a * (1 - 2e-3), (a, b)
