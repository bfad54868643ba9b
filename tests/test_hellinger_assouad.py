"""The Hellinger–Bhattacharyya Assouad method (boundcalc/methods/hellinger_assouad.py,
docs/methods/hellinger-assouad.md): its contraction step on random ε-LDP channels, each family's bound below
exact Bayes risks (k-RR and other channels, small n, every output enumerated; a random adaptive protocol), and
the multinomial lower bound's monotonicity in d and n."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import boundcalc as bc
from boundcalc.methods import hellinger_assouad as HA
from boundcalc.methods import ldp as LDP
from boundcalc.methods.hellinger_contraction import hellinger_factor_float
from boundcalc.problems import multinomial as MN
from boundcalc.problems import sparse_bernoulli as SB
from boundcalc.problems import local_mean as LM
import mpmath as mp


def _h2(p, q):
    return 0.5 * float(np.sum((np.sqrt(p) - np.sqrt(q)) ** 2))


def _tv(p, q):
    return 0.5 * float(np.sum(np.abs(p - q)))


def _extreme_channel(nx, nz, eps, rng):
    """An extreme point of the ε-LDP polytope: K[x, z] = a_z e^{ε B[x,z]} with B ∈ {0,1} and rows summing to 1
    (a ≥ 0 solved by non-negative least squares; None when the pattern admits no such a)."""
    from scipy.optimize import nnls

    B = rng.integers(0, 2, (nx, nz))
    A = np.exp(eps * B)
    a, res = nnls(A, np.ones(nx))
    if res > 1e-10 or a.max() <= 0:
        return None
    K = A * a[None, :]
    K = K[:, a > 0]
    return K / K.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------------------------------------- (a) contraction

def test_hellinger_contraction_on_extreme_and_random_channels():
    """H²(PK, QK) <= h_ε TV(P,Q)² for extreme points of the ε-LDP channel polytope and random channels (at their
    exact level), with P, Q random or concentrated on the set where they differ."""
    rng = np.random.default_rng(2024)
    worst, count = 0.0, 0
    while count < 3000:
        nx, nz = int(rng.integers(2, 6)), int(rng.integers(2, 7))
        if count % 2:
            eps = float(rng.choice([0.05, 0.3, 1.0, 2.0, 4.0, 8.0]))
            K = _extreme_channel(nx, nz, eps, rng)
            if K is None:
                continue
        else:
            K, _ = LDP.random_channel(nx, nz, rng, float(rng.choice([0.2, 1.0, 4.0])), bool(rng.integers(2)))
        eps = LDP.privacy_level(K)
        if eps < 1e-6:  # a channel that releases nothing
            continue
        P, Q = rng.dirichlet(np.full(nx, 0.5)), rng.dirichlet(np.full(nx, 0.5))
        if count % 3 == 0:  # two laws that differ on one atom only
            Q = P.copy()
            i = int(rng.integers(nx))
            t = float(rng.uniform(0, 1 - P[i]))
            Q[i] += t
            Q[(i + 1) % nx] = max(0.0, Q[(i + 1) % nx] - t)
            Q /= Q.sum()
        t = _tv(P, Q)
        if t < 1e-9:
            continue
        ratio = _h2(P @ K, Q @ K) / (hellinger_factor_float(eps) * t ** 2)
        assert ratio <= 1 + 1e-9, (eps, K, P, Q)
        worst = max(worst, ratio)
        count += 1
    assert worst > 0.5  # the constant is nearly attained on these channels (not vacuous)


# ----------------------------------------------------------------------------------- (b) exact Bayes risks

def _compositions(n, k):
    """All count vectors of n users over k outputs, and their multinomial coefficients."""
    out = []
    for cut in itertools.combinations(range(n + k - 1), k - 1):
        c = np.diff(np.concatenate([[-1], cut, [n + k - 1]])) - 1
        out.append(c)
    C = np.array(out)
    logc = math.lgamma(n + 1) - np.sum([[math.lgamma(x + 1) for x in row] for row in C], axis=1)
    return C, np.exp(logc)


def bayes_risk_iid(Pv, thetas, K, n, loss):
    """Exact Bayes risk (uniform prior on the rows of Pv) of estimating thetas[v] from n i.i.d. releases of the
    channel K, with the optimal estimator: posterior mean (ℓ2²) or coordinate-wise posterior median (ℓ1)."""
    M = Pv @ K  # (|V|, nz)
    C, coef = _compositions(n, M.shape[1])
    with np.errstate(divide="ignore"):
        logM = np.log(M)
    W = coef[:, None] * np.exp(C @ np.where(np.isfinite(logM), logM, -1e300).T) / len(Pv)  # (outputs, |V|)
    W = np.where(C @ (M.T == 0).astype(float) > 0, 0.0, W) if np.any(M == 0) else W
    return _bayes_from_weights(W, thetas, loss)


def _bayes_from_weights(W, thetas, loss):
    if loss == "l2sq":
        tot = W.sum(axis=1, keepdims=True)
        est = (W @ thetas) / np.where(tot > 0, tot, 1.0)
        return float(np.sum(W[:, :, None] * (thetas[None, :, :] - est[:, None, :]) ** 2))
    total = 0.0
    for j in range(thetas.shape[1]):
        cand = thetas[:, j]
        dev = np.abs(cand[:, None] - cand[None, :])  # (candidate c, v)
        total += float(np.sum(np.min(W @ dev.T, axis=1)))
    return total


def krr(k, eps):
    K = np.ones((k, k)) + np.eye(k) * math.expm1(eps)
    return K / K.sum(axis=1, keepdims=True)


def pair_family(m, delta, d):
    V = np.array(list(itertools.product([-1, 1], repeat=m)), float)
    P = np.zeros((len(V), d))
    for i, v in enumerate(V):
        for j in range(m):
            P[i, 2 * j] = (1 + delta * v[j]) / (2 * m)
            P[i, 2 * j + 1] = (1 - delta * v[j]) / (2 * m)
    return P


def _hb_bound(problem_bounds, values, free):
    b = next(x for x in problem_bounds if x.name == "hellinger-assouad")
    return float(b.evaluate(values, free))


@pytest.mark.parametrize("loss", ["l2sq", "l1"])
@pytest.mark.parametrize("d", [4, 6])
def test_multinomial_below_exact_bayes_risk_under_krr(loss, d):
    """Exact Bayes risks of the pair family under k-RR (and without privacy), n <= 6: the bound stays below,
    and reaches a good fraction of them."""
    best = 0.0
    for m in range(1, d // 2 + 1):
        for delta in (0.2, 0.6, 1.0):
            P = pair_family(m, delta, d)
            thetas = P.copy()
            for n in (1, 3, 6):
                for eps in (0.5, 1.5, 4.0):
                    br = bayes_risk_iid(P, thetas, krr(d, eps), n, loss)
                    free = {"delta_hb": delta} if loss == "l1" else {"delta_hb": delta, "m_hb": m}
                    values = {"n": n, "eps": eps, "d": d, "m_pairs": m}  # ℓ1 uses m = ⌊d/2⌋: pass m there
                    lb = _hb_bound(MN._bounds(loss, True), values, free)
                    assert lb <= br * (1 + 1e-9), (loss, d, m, delta, n, eps, lb, br)
                    best = max(best, lb / br)
                # no privacy: the identity channel
                br = bayes_risk_iid(P, thetas, np.eye(d), 3, loss)
                free = {"delta_hb": delta} if loss == "l1" else {"delta_hb": delta, "m_hb": m}
                lb = _hb_bound(MN._bounds(loss, False), {"n": 3, "d": d, "m_pairs": m}, free)
                assert lb <= br * (1 + 1e-9), (loss, d, m, delta, lb, br)
    assert best > 0.5, best  # a bound 2x too large would fail somewhere


def test_multinomial_below_exact_bayes_risk_under_random_channels():
    rng = np.random.default_rng(5)
    d, m = 4, 2
    for trial in range(20):
        K, _ = LDP.random_channel(d, int(rng.integers(2, 5)), rng, float(rng.choice([0.3, 1.0, 3.0])),
                                  bool(rng.integers(2)))
        eps = LDP.privacy_level(K)
        delta = float(rng.choice([0.3, 0.8, 1.0]))
        P = pair_family(m, delta, d)
        for loss in ("l2sq", "l1"):
            n = int(rng.integers(1, 6))
            free = {"delta_hb": delta} if loss == "l1" else {"delta_hb": delta, "m_hb": m}
            lb = _hb_bound(MN._bounds(loss, True), {"n": n, "eps": eps, "d": d, "m_pairs": m}, free)
            assert lb <= bayes_risk_iid(P, P.copy(), K, n, loss) * (1 + 1e-9)


@pytest.mark.parametrize("s", [0.6, 2.0])
def test_sparse_bernoulli_below_exact_bayes_risk(s):
    """a = 2 coordinates, X ∈ {0,1}²: 4-ary k-RR on X and random ε-LDP channels, n <= 5."""
    rng = np.random.default_rng(11)
    a = 2
    mu = min(s / a, 1.0)  # the family reaches θ_j ∈ {0, 1} (μ = min{s/a, 1})
    X = np.array(list(itertools.product([0, 1], repeat=a)), float)
    V = np.array(list(itertools.product([-1, 1], repeat=a)), float)
    best = 0.0
    for delta in (0.3, 0.7, 1.0):
        thetas = mu / 2 * (1 + delta * V)
        P = np.array([np.prod(np.where(X == 1, th, 1 - th), axis=1) for th in thetas])
        for trial in range(8):
            if trial % 2 == 0:
                eps = float(rng.choice([0.5, 1.5, 4.0]))
                K = krr(4, eps)
            else:
                K, _ = LDP.random_channel(4, int(rng.integers(2, 5)), rng, 1.0, bool(rng.integers(2)))
                eps = LDP.privacy_level(K)
            for n in (1, 3, 5):
                lb = _hb_bound(SB._bounds(True), {"n": n, "eps": eps, "d": 5, "s": s}, {"delta_hb": delta, "a_hb": a})
                br = bayes_risk_iid(P, thetas, K, n, "l2sq")
                assert lb <= br * (1 + 1e-9), (delta, n, eps, lb, br)
                best = max(best, lb / br)
    assert best > 0.5, best


def test_local_mean_cube_below_exact_bayes_risk():
    """d = 2, ℓ2 ball: X = (r/√2)x, x ∈ {±1}², under 4-ary k-RR, n <= 5."""
    r, d = 1.3, 2
    c = r / math.sqrt(d)
    X = np.array(list(itertools.product([-1, 1], repeat=d)), float)
    V = X.copy()
    b = next(x for x in LM._bounds(math.inf, False, "l2") if x.name == "hellinger-assouad-cube")
    for delta in (0.3, 0.9):
        thetas = c * delta * V
        P = np.array([np.prod((1 + delta * v[None, :] * X) / 2, axis=1) for v in V])
        for eps in (0.5, 2.0):
            for n in (1, 4):
                lb = float(b.evaluate({"n": n, "eps": eps, "d": d, "r": r}, {"delta_hb": delta}))
                assert lb <= bayes_risk_iid(P, thetas, krr(4, eps), n, "l2sq") * (1 + 1e-9)


# -------------------------------------------------------------------------- (c) a random adaptive protocol

def _adaptive_transcripts(P, rounds, nz, eps, rng):
    """Laws of the transcripts of a random sequentially interactive protocol: user i's channel is a fresh random
    ε-LDP extreme-point channel for every history of earlier reports (two rounds of users: the first half uses
    one channel, the second half channels chosen by the first half's reports)."""
    nx = P.shape[1]
    channels = {}

    def channel(hist):
        key = hist if len(hist) >= rounds // 2 else ()
        if key not in channels:
            K = None
            while K is None or K.shape[1] != nz:
                K = _extreme_channel(nx, nz, eps, rng)
            channels[key] = K
        return channels[key]

    laws = []
    for p in P:
        law = {}
        for zs in itertools.product(range(nz), repeat=rounds):
            pr = 1.0
            for i in range(rounds):
                pr *= float(p @ channel(zs[:i])[:, zs[i]])
            law[zs] = pr
        laws.append(law)
    keys = list(laws[0])
    return np.array([[law[k] for k in keys] for law in laws])  # (|V|, transcripts)


def test_multinomial_below_exact_bayes_risk_of_adaptive_protocols():
    rng = np.random.default_rng(21)
    d, m = 4, 2
    tried = 0
    for trial in range(30):
        eps = float(rng.choice([0.5, 1.0, 2.5]))
        delta = float(rng.choice([0.4, 1.0]))
        n = int(rng.integers(2, 5))
        P = pair_family(m, delta, d)
        M = _adaptive_transcripts(P, n, 3, eps, rng)
        W = (M / len(P)).T  # (transcripts, |V|)
        # the BC of the mixtures M_{±j} is at least (1 - h)^n (steps 1-3 of the derivation)
        V = np.array(list(itertools.product([-1, 1], repeat=m)))
        h = HA.per_flip_h_float("local", eps, delta / m, (1 - math.sqrt(1 - delta ** 2)) / m)
        for j in range(m):
            mp, mm = M[V[:, j] == 1].mean(axis=0), M[V[:, j] == -1].mean(axis=0)
            assert np.sum(np.sqrt(mp * mm)) >= HA.transcript_bc_lower(n, h) - 1e-12
        for loss in ("l2sq", "l1"):
            free = {"delta_hb": delta} if loss == "l1" else {"delta_hb": delta, "m_hb": m}
            lb = _hb_bound(MN._bounds(loss, True), {"n": n, "eps": eps, "d": d, "m_pairs": m}, free)
            assert lb <= _bayes_from_weights(W, P.copy(), loss) * (1 + 1e-9)
        tried += 1
    assert tried == 30


# ------------------------------------------------------------------------------------ (d) property tests

common = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@common
@given(logn=st.floats(1, 8), eps=st.sampled_from([0.1, 0.5, 1.0, 2.0, 3.0]),
       d=st.integers(2, 3000), factor=st.sampled_from([2, 3, 10]), loss=st.sampled_from(["l2sq", "l1"]))
def test_multinomial_lower_monotone_and_below_upper(logn, eps, d, factor, loss):
    """Every family for d symbols is one for d' > d (sub-alphabet), so the lower bound never decreases in d; it
    never increases in n; lower <= upper. The solver's accuracy on the three free parameters of the Dirichlet
    van Trees bound is about 1e-3 relative (its search range depends on d below the sub-alphabet cap)."""
    n = int(10 ** logn)
    lo = lambda **kw: bc.rate("multinomial", "local", loss=loss, eps=eps, **kw)
    a, b, c = lo(n=n, d=d), lo(n=n, d=factor * d), lo(n=4 * n, d=d)
    assert b.lower.value >= a.lower.value * (1 - 2e-3), (a.lower.value, b.lower.value)
    assert c.lower.value <= a.lower.value * (1 + 1e-6)
    for r in (a, b, c):
        assert 0 < r.lower.value <= r.upper.value


def test_multinomial_lower_constant_beyond_the_sub_alphabet_cap():
    """Above the cap the search no longer depends on d: the reported lower bound is exactly constant (the bullet
    of the tightness issue: at n = 1e5, ε = 1 it fell from d = 100 to d = 1000)."""
    ds = (100, 300, 1000, 3000, 10 ** 4, 10 ** 5)
    vals = [bc.rate("multinomial", "local", n=10 ** 5, eps=1.0, d=d).lower.value for d in ds]
    assert all(y >= x for x, y in zip(vals, vals[1:])), vals
    assert vals[0] < 6e-4 < 1e-3 < vals[2]  # the Dirichlet bound at d = 100, the Hellinger–Assouad one at 1000
    caps = [MN.sub_alphabet_cap({"n": 10 ** 5, "eps": 1.0, "d": 10 ** 9}, c) for c in (1, 1 / 8, 1 / math.pi ** 2)]
    assert max(caps) < 3000  # every search range is the same from d = 3000 on
    assert vals[3] == vals[4] == vals[5]


def test_sub_alphabet_caps_are_lossless():
    """Each sub-family bound is at most c/k on k symbols (c = 1, 1/8, 1/π²): checked on the bounds themselves at
    random free parameters."""
    rng = np.random.default_rng(3)
    bnds = {b.name: b for b in MN._bounds("l2sq", True)}
    for _ in range(200):
        n, eps = float(10 ** rng.uniform(0, 8)), float(10 ** rng.uniform(-2, 1))
        k = int(rng.integers(2, 5000))
        v = {"n": n, "eps": eps, "d": 10 ** 6}
        dl, w = float(rng.uniform(1e-3, 1)), float(rng.uniform(1e-3, 0.999))
        m = max(1, k // 2)
        assert float(bnds["hellinger-assouad"].evaluate(v, {"delta_hb": dl, "m_hb": m})) <= 1 / (2 * m)
        assert float(bnds["assouad"].evaluate(v, {"delta_gap": dl, "m": m})) <= 1 / (2 * m)
        assert float(bnds["van-trees-sub"].evaluate(v, {"w": w, "q": m})) <= 1 / (2 * math.pi ** 2 * m)
        al = int(rng.integers(3, 10 ** 4))
        assert float(bnds["van-trees-dirichlet"].evaluate(v, {"k_act": k, "alpha_dir": al, "eta_dir": w})) <= 1 / (8 * k)


def test_middle_regime_value():
    """At the private optimum (δ = 1, m = √(h_ε(4n+1))) the ℓ2² bound is about 1/(4√e √(n h_ε))."""
    n, eps = 10 ** 5, 1.0
    v = MN.guaranteed_lower({"n": n, "eps": eps, "d": 10 ** 6, "privacy": "local"})
    approx = 1 / (4 * math.sqrt(math.e) * math.sqrt(n * hellinger_factor_float(eps)))
    assert abs(v / approx - 1) < 1e-2
    assert bc.rate("multinomial", "local", n=n, eps=eps, d=1000).lower.value >= v * (1 - 1e-12)


def test_sparse_family_reaching_theta_one_stays_below_exact_bayes_risk():
    """The sparse-Bernoulli hypercube may reach θ_j ∈ {0, 1} (μ = min{s/a, 1}): at a = s = d = 2, δ = 1 the bound
    a/4 (1-h_ε)^{2n} must stay below the exact Bayes risk of the uniform prior on {0,1}² under a concrete ε-LDP
    scheme (randomized response at level ε/2 on each bit, Bayes estimator), computed by enumeration."""
    from math import comb, exp

    from boundcalc.app import api

    for eps in (0.5, 1.0, 2.0):
        for n in (1, 2, 3, 5):
            entry, values = api.resolve("sparse-bernoulli", "local", dict(n=n, d=2, s=2, eps=eps))
            v = entry.with_derived(values)
            b = [x for x in entry.bounds(v) if x.name == "hellinger-assouad"][0]
            bound = float(b.evaluate(v, {"delta_hb": 1.0, "a_hb": 2}))
            q = exp(eps / 2) / (1 + exp(eps / 2))  # P(report = bit) of randomized response at level ε/2
            # one coordinate: θ ∈ {0, 1} uniform, n reports; posterior variance averaged over the count of ones
            bayes_one = 0.0
            for k in range(n + 1):
                l1 = comb(n, k) * q ** k * (1 - q) ** (n - k)  # P(count = k | θ = 1)
                l0 = comb(n, k) * (1 - q) ** k * q ** (n - k)
                m = 0.5 * (l0 + l1)
                post = 0.5 * l1 / m
                bayes_one += m * post * (1 - post)
            assert bound <= 2 * bayes_one * (1 + 1e-12), (eps, n, bound, 2 * bayes_one)
    # and the reported lower bound at n = 1 reaches about s/4 (1-h_ε)^2 (it was capped at θ <= 1/2 before)
    res = bc.rate("sparse-bernoulli", "local", n=1, d=200, s=5, eps=1.0)
    h = (math.exp(1) - 1) ** 2 / (4 * (math.exp(1) + 1))
    assert res.lower.value >= 5 / 4 * (1 - h) ** 2 * (1 - 1e-9)


# ----------------------------------------------------------------------------------------------------
# Falsification: the Hellinger-Assouad lower bounds against exact risks of concrete schemes (formerly test_audit_hellinger_assouad.py)
#
# Falsification audit of the Hellinger–Bhattacharyya Assouad lower bounds (docs/methods/hellinger-assouad.md).
#
# Every certified lower bound must stay below the worst-case risk of a concrete ε-LDP scheme. The references here
# are exact worst-case risks derived in closed form for one user (n = 1), where the bounds come closest:
#
# * binary data (multinomial with d = 2, the mean on [-r, r] and the linear problem with d = 1 after unbiased
#   rounding to ±r): randomized response at level ε, b = tanh(ε/2), and the best symmetric estimator of the bit;
# * no privacy: the minimax estimator (N + √n/d)/(n + √n) of the multinomial (Steinhaus 1957), whose risk
#   (1 - 1/d)/(1 + √n)² is constant on the simplex.
#
# At small ε the Hellinger–Assouad bound agrees with these risks to first order in ε² (ℓ2²) and ε (ℓ1), and at
# n = 1 without privacy it equals them, so a wrong constant (BC against BC², the 1/2 of the pair family, h_ε) or a
# value rounded up would fail here. The sub-alphabet cap is checked against a brute force over every pair count.

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
