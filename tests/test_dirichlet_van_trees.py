"""Full-simplex van Trees with a Dirichlet prior (boundcalc/methods/dirichlet_van_trees.py): every step
checked by something that could fail (Monte Carlo / sympy for the prior information, exact Fisher
information of random ε-LDP channels for the trace bound, exact worst-case risks of valid ε-LDP schemes
and the exact non-private minimax risk for the bound itself)."""
import itertools
import math

import mpmath as mp
import numpy as np
import pytest
import sympy as sp
from scipy import stats

import boundcalc as bc
from boundcalc.core import symbolic as S
from boundcalc.mechanisms import discrete as DM
from boundcalc.methods import dirichlet_van_trees as DVT
from boundcalc.methods.ldp import privacy_level, random_channel
from boundcalc.problems import multinomial as MN
from boundcalc.core.solver import optimise


def fisher_trace(Q, p):
    """Exact tr I_Z(p) in an orthonormal basis of {h: Σh = 0}: Σ_z ‖Π q_z‖²/c_z."""
    c = p @ Q
    Qc = Q - Q.mean(axis=0, keepdims=True)
    return float(np.sum(np.sum(Qc ** 2, axis=0) / c))


@pytest.mark.parametrize("k,alpha", [(2, 6), (3, 7), (5, 9)])
def test_prior_information_monte_carlo(k, alpha):
    rng = np.random.default_rng(k * 100 + alpha)
    p = rng.dirichlet(np.full(k, float(alpha)), size=400_000)
    g = (alpha - 1) / p
    g = g - g.mean(axis=1, keepdims=True)  # projection onto 1^⊥: the gradient of log prior on the face
    x = np.sum(g ** 2, axis=1)
    se = x.std() / math.sqrt(x.size)
    J = float(DVT.dirichlet_prior_information(k, alpha))
    assert abs(x.mean() - J) < 5 * se + 1e-3 * J


def test_prior_information_sympy_k2():
    # k = 2: orthonormal coordinate t, p = (1/2 + t/√2, 1/2 - t/√2); J = ∫ (d/dt log μ)² μ dt
    t = sp.Symbol("t", real=True)
    for alpha in (3, 4, 5):
        dens = ((sp.Rational(1, 2) + t / sp.sqrt(2)) * (sp.Rational(1, 2) - t / sp.sqrt(2))) ** (alpha - 1)
        lim = 1 / sp.sqrt(2)
        Z = sp.integrate(dens, (t, -lim, lim))
        J = sp.integrate(sp.simplify(sp.diff(dens, t) ** 2 / dens), (t, -lim, lim)) / Z
        assert float(J) == pytest.approx(float(DVT.dirichlet_prior_information(2, alpha)), rel=1e-10)


@pytest.mark.parametrize("k,alpha,tau", [(2, 3, 0.3), (4, 5, 0.2), (10, 30, 0.08), (100, 7, 0.004)])
def test_expected_small_count_is_the_beta_marginal(k, alpha, tau):
    f = S.numpy_lambdify([], DVT.expected_small_count(k, alpha, tau))
    val = float(f())
    assert val == pytest.approx(k * stats.beta.cdf(tau, alpha, (k - 1) * alpha), rel=1e-9, abs=1e-300)


def test_generalised_trace_bound_random_channels():
    """tr I_Z(p) <= sinh²(ε/2)/τ + (e^ε-1)² #{p_x < τ} for every τ, exact Fisher information."""
    rng = np.random.default_rng(11)
    worst = 0.0
    for t in range(3000):
        k, nz = int(rng.integers(2, 7)), int(rng.integers(2, 8))
        Q, eps = random_channel(k, nz, rng, spread=float(np.exp(rng.uniform(-4, 2.5))), extreme=bool(t % 2))
        p = rng.dirichlet(np.full(k, float(np.exp(rng.uniform(-2, 2)))))
        p = np.maximum(p, 1e-12)
        p = p / p.sum()
        tr = fisher_trace(Q, p)
        for tau in list(p) + [1e-9, 1.0 / k, 1.0]:
            bnd = math.sinh(eps / 2) ** 2 / tau + math.expm1(eps) ** 2 * np.sum(p < tau)
            r = tr / bnd
            assert r <= 1 + 1e-9, (k, eps, p, tau, tr, bnd)
            worst = max(worst, r)
    assert worst > 0.3  # not vacuous


def _worst_linear_shrunk(n, eps, d):
    """Exact sup_θ risk of the best shrunk linear scheme p̂ = u + λ(p̂_unb - u), over k-RR, RR and
    subset selection (every s), λ on a grid: risk(θ) = λ²(C - ‖θ‖²/n) + (1-λ)²(‖θ‖² - 1/d) is linear in
    ‖θ‖² ∈ [1/d, 1], so its sup is at an endpoint."""
    best = 1 - 1 / d
    lams = np.linspace(0, 1, 2001)
    mechs = [("krr", None), ("rr", None)] + [("subset", s) for s in range(1, d)]
    for mech, s in mechs:
        if mech == "rr" and d > 12:
            continue
        C = float(DM.risk_constant(mech, sp.Float(n), sp.Float(eps), sp.Integer(d), sp.Integer(s or 1)))
        r1 = lams ** 2 * (C - 1 / (d * n))
        r2 = lams ** 2 * (C - 1 / n) + (1 - lams) ** 2 * (1 - 1 / d)
        best = min(best, float(np.min(np.maximum(r1, r2))))
    return best


def _dirichlet_lower(n, eps, d, private=True, name="van-trees-dirichlet", loss="l2sq"):
    b = next(x for x in MN._bounds(loss, private) if x.name == name)
    vals = {"n": n, "d": d, "loss": loss, "privacy": "local" if private else "none"}
    if private:
        vals["eps"] = eps
    return optimise(b, vals).value


@pytest.mark.parametrize("d", [2, 3, 4, 10])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 3.0, 8.0, 12.0])
def test_lower_below_exact_risks_of_private_schemes(d, eps):
    tight = 0.0
    for n in [1, 2, 5, 10, 100, 10 ** 4, 10 ** 7]:
        up = _worst_linear_shrunk(n, eps, d)
        pm = _dirichlet_lower(n, eps, d, name="point-mass-bayes")
        assert pm <= up * (1 + 1e-9), (n, eps, d, pm, up)
        lo = _dirichlet_lower(n, eps, d)
        assert lo <= up * (1 + 1e-9), (n, eps, d, lo, up)
        tight = max(tight, lo / up)
    assert tight > 0.1  # the comparison can fail: the bound is within 10x somewhere on the row


def test_nonprivate_lower_below_minimax():
    # the exact non-private minimax risk (1 - 1/d)/(1 + √n)² (Steinhaus / Trybuła)
    for d in (2, 5, 20):
        for n in (1, 3, 10, 1000, 10 ** 6):
            lo = _dirichlet_lower(n, None, d, private=False)
            assert lo <= (1 - 1 / d) / (1 + math.sqrt(n)) ** 2 * (1 + 1e-9)
    # asymptotically close to the exact minimax (1 - 1/d)/n
    assert _dirichlet_lower(10 ** 9, None, 5, private=False) > 0.8 * (1 - 1 / 5) / 10 ** 9


def test_monotone_in_d_and_eps():
    for n in (10, 1000, 10 ** 6):
        prev = 0.0
        for d in (2, 3, 10, 50, 200):
            lo = _dirichlet_lower(n, 1.0, d)
            assert lo >= prev * (1 - 1e-3)
            prev = lo
        prev = math.inf
        for eps in (0.1, 0.5, 1.0, 3.0, 8.0):
            lo = _dirichlet_lower(n, eps, 20)
            assert lo <= prev * (1 + 1e-3)
            prev = lo


def test_asymptotically_equal_to_subset_selection():
    # d/(e^ε+1) integer: subset selection's risk (d-1)²/(n d sinh²(ε/2)) is the limit of the bound
    d, eps = 8, math.log(3.0)  # s = 2
    n = 1e12
    lo = _dirichlet_lower(n, eps, d)
    C = float(DM.worst_risk("subset", sp.Float(n), sp.Float(eps), sp.Integer(d), sp.Integer(2)))
    assert C == pytest.approx((d - 1) ** 2 / (n * d * math.sinh(eps / 2) ** 2), rel=1e-9)
    assert 0.9 < lo / C <= 1


# ------------------------------------------------------------------ saturated regime: point-mass Bayes bound

def _exact_bayes_point_masses(Q, n, d, g):
    """Exact Bayes ℓ2² and ℓ1 risks (Bayes estimators) for θ_j = (1-γ)u + γe_j, j uniform, through the
    central channel Q[x^n, z^n] of a local protocol."""
    xs = np.array(list(itertools.product(range(d), repeat=n)))
    th = (1 - g) / d + g * np.eye(d)  # th[j] = θ_j
    px = np.prod(th[:, xs], axis=2)  # (d, |X^n|): P(x^n | j)
    M = px @ Q  # (d, |Z^n|)
    mz = M.mean(axis=0)
    keep = mz > 0
    post = (M[:, keep] / d) / mz[keep]  # π_j(z)
    l2 = g ** 2 * np.sum(mz[keep] * (1 - np.sum(post ** 2, axis=0)))
    l1 = g * np.sum(mz[keep] * np.sum(np.minimum(post, 1 - post), axis=0))
    return float(l2), float(l1)


def _pm_bound(loss, n, eps, d, g):
    f = S.numpy_lambdify([S.n, S.eps, S.d, MN.GAMMA_MIX], MN.point_mass_bayes(loss))
    return float(f(float(n), float(eps), float(d), float(g)))


def test_point_mass_bayes_below_exact_bayes_risk_sequential_channels():
    import finite_channels as FC

    rng = np.random.default_rng(5)
    worst = {"l2sq": 0.0, "l1": 0.0}
    for t in range(60):
        d, n, kz = int(rng.integers(2, 4)), int(rng.integers(1, 4)), int(rng.integers(2, 4))
        ch, eps = FC.sequential_local_channel(rng, d, kz, n, eps_cap=float(np.exp(rng.uniform(-1, 2.5))))
        for g in (0.2, 0.6, 0.95):
            l2, l1 = _exact_bayes_point_masses(ch.Q, n, d, g)
            for loss, val in (("l2sq", l2), ("l1", l1)):
                b = _pm_bound(loss, n, eps, d, g)
                assert b <= val * (1 + 1e-9), (loss, d, n, eps, g, b, val)
                worst[loss] = max(worst[loss], b / val)
    assert worst["l2sq"] > 0.5 and worst["l1"] > 0.3  # not vacuous


@pytest.mark.parametrize("d", [2, 3, 5])
@pytest.mark.parametrize("eps", [0.3, 1.0, 3.0, 8.0])
def test_point_mass_bayes_below_exact_bayes_risk_krr(d, eps):
    """k-RR is an efficient channel: its exact Bayes risk (n users, product channel) stays above the bound."""
    E = math.exp(eps)
    R = np.full((d, d), 1.0) + (E - 1) * np.eye(d)
    R /= R.sum(axis=1, keepdims=True)
    for n in (1, 2, 4):
        zs = list(itertools.product(range(d), repeat=n))
        xs = list(itertools.product(range(d), repeat=n))
        Q = np.array([[np.prod([R[x[i], z[i]] for i in range(n)]) for z in zs] for x in xs])
        for g in (0.1, 0.5, 0.9, 0.999):
            l2, l1 = _exact_bayes_point_masses(Q, n, d, g)
            assert _pm_bound("l2sq", n, eps, d, g) <= l2 * (1 + 1e-9)
            assert _pm_bound("l1", n, eps, d, g) <= l1 * (1 + 1e-9)


def test_point_mass_bayes_reaches_the_no_data_risk():
    for d in (10, 1000, 10 ** 6):
        b = _pm_bound("l2sq", 1, 1e-6, d, 1 - 1e-9)
        assert b == pytest.approx(1 - 1 / d, rel=1e-5)


def test_point_mass_bayes_monotone():
    for loss in ("l2sq", "l1"):
        for n in (1, 30, 1000):
            prev = 0.0
            for d in (2, 3, 10, 100, 10 ** 4):
                lo = _dirichlet_lower(n, 0.3, d, name="point-mass-bayes", loss=loss)
                assert lo >= prev * (1 - 1e-3)
                prev = lo
            prev = math.inf
            for eps in (0.05, 0.3, 1.0, 3.0, 8.0):
                lo = _dirichlet_lower(n, eps, 50, name="point-mass-bayes", loss=loss)
                assert lo <= prev * (1 + 1e-3)
                prev = lo
        prev = math.inf
        for n in (1, 3, 10, 100, 1000, 10 ** 5):
            lo = _dirichlet_lower(n, 0.3, 50, name="point-mass-bayes", loss=loss)
            assert lo <= prev * (1 + 1e-3)
            prev = lo


@pytest.mark.parametrize("eps", [0.5, 2.0, 8.0])
@pytest.mark.parametrize("alpha", [3, 6, 20])
def test_dirichlet_bound_below_exact_bayes_risk_under_its_prior(eps, alpha):
    """van Trees bounds the Bayes risk under its own prior: d = k = 2, Beta(α, α) prior on p_1, binary
    randomized response (optimal for two symbols), posterior mean by quadrature over p_1."""
    from scipy import special
    from scipy import stats as st

    q = 1 / (1 + math.exp(-eps))
    th = np.linspace(0, 1, 20001)[1:-1]
    w = st.beta.pdf(th, alpha, alpha)
    w /= w.sum()
    m = (1 - q) + th * (2 * q - 1)
    ratios = []
    kk, aa, tt = sp.symbols("kk aa tt", positive=True)
    f = S.numpy_lambdify([S.n, S.eps, kk, aa, tt], DVT.dirichlet_van_trees(S.n, S.eps, kk, aa, tt))
    for n in (1, 3, 10, 100, 1000):
        T = np.arange(n + 1)
        # the binomial pmf (n+1, grid) from log-gamma (relative error ~1e-12; scipy's binom.pmf takes 4 s at n = 1000)
        logc = special.gammaln(n + 1) - special.gammaln(T + 1) - special.gammaln(n - T + 1)
        lik = np.exp(logc[:, None] + T[:, None] * np.log(m)[None, :] + (n - T)[:, None] * np.log1p(-m)[None, :])
        joint = lik * w[None, :]
        pt = joint.sum(axis=1)
        mean = (joint @ th) / pt
        second = (joint @ th ** 2) / pt
        bayes = 2 * float(np.sum(pt * (second - mean ** 2)))  # ‖p̂-p‖² = 2(p̂_1 - p_1)²
        for eta in (0.0, 0.3, 0.6):
            b = float(f(float(n), eps, 2.0, float(alpha), (1 - eta) / 2))
            assert b <= bayes * (1 + 1e-6), (n, eps, alpha, eta, b, bayes)
            ratios.append(b / bayes)
    assert max(ratios) > 0.3  # the comparison could fail


def _dvt_mpmath(n, eps, k, a, eta):
    """The van-trees-dirichlet formula at given parameters with the Beta tail by mpmath quadrature
    (independent of scipy's betainc)."""
    mp.mp.dps = 40
    n, eps, k, a, eta = map(mp.mpf, (n, eps, k, a, eta))
    tau, A = (1 - eta) / k, k * a
    b = A - a
    lB = mp.loggamma(a) + mp.loggamma(b) - mp.loggamma(A)
    mu = (a - 1) / (A - 2)
    sd = mp.sqrt(mu * (1 - mu) / A)
    lo = max(mp.mpf(0), mu - 60 * sd)
    if tau <= lo:
        tail = mp.mpf(0)
    else:
        pts = [lo] + [x for x in (mu - 20 * sd, mu - 10 * sd, mu - 5 * sd, mu - 2 * sd, mu, mu + 2 * sd) if lo < x < tau]
        tail = mp.quad(lambda t: mp.exp((a - 1) * mp.log(t) + (b - 1) * mp.log1p(-t) - lB), pts + [tau])
    Tp = mp.sinh(eps / 2) ** 2 / tau + mp.expm1(eps) ** 2 * k * tail
    Tn = (k - 1) * (A - 1) / (a - 1)
    return float((k - 1) ** 2 / (n * min(Tp, Tn) + (k - 1) * (A - 1) * (A - 2) / (a - 2)))


@pytest.mark.parametrize("d,eps,n", [(10, 0.5, 1e12), (1000, 3.0, 1e18), (1000, 0.01, 1e18), (4, 8.0, 1e6),
                                     (1000, 15.0, 1e12)])
def test_dirichlet_value_matches_independent_quadrature(d, eps, n):
    res = bc.rate("multinomial", privacy="local", n=n, eps=eps, d=d, loss="l2sq")
    b = next(x for x in res.lowers if x.name == "van-trees-dirichlet")
    fp = b.free_parameters
    ref = _dvt_mpmath(n, eps, fp["k_act"], fp["alpha_dir"], fp["eta_dir"])
    assert b.value <= ref * (1 + 1e-9)
    assert b.value <= res.upper.value
