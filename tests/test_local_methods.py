"""Tests of the local-privacy lower-bound machinery: every inequality is checked by exact computation
on random finite channels (these tests would fail if a constant were wrong)."""
import itertools
import math

import numpy as np
import pytest
import sympy as sp
from scipy import stats

from boundcalc.methods import fisher as F
from boundcalc.methods import ldp
from boundcalc.methods import van_trees as V


def _rand_pmf(rng, k):
    p = rng.random(k) + 0.05
    return p / p.sum()


def _tv(p, q):
    return 0.5 * float(np.abs(np.asarray(p) - np.asarray(q)).sum())


CHANNELS = [(nx, nz, spread, ext) for nx in (2, 3, 5) for nz in (2, 4) for spread in (0.3, 1.5, 4.0)
            for ext in (False, True)]


@pytest.mark.parametrize("nx,nz,spread,ext", CHANNELS)
def test_theorem1_symmetric_kl(nx, nz, spread, ext):
    rng = np.random.default_rng(hash((nx, nz, spread, ext)) % 2**32)
    for _ in range(20):
        Q, eps = ldp.random_channel(nx, nz, rng, spread, ext)
        p0, p1 = _rand_pmf(rng, nx), _rand_pmf(rng, nx)
        m0, m1 = p0 @ Q, p1 @ Q
        assert ldp.kl(m0, m1) + ldp.kl(m1, m0) <= ldp.sym_kl_bound(eps, _tv(p0, p1)) * (1 + 1e-12) + 1e-13
        # the sharper one-direction bound (χ² argument)
        assert ldp.kl(m0, m1) <= ldp.kl_bound(eps, _tv(p0, p1)) * (1 + 1e-12) + 1e-13


def _joint_sequential(P, Q1, Q2s):
    """Law of (Z1, Z2) for two i.i.d. samples from P; the second channel depends on z1."""
    m1 = P @ Q1  # law of Z1
    return np.array([[m1[z1] * (P @ Q2s[z1])[z2] for z2 in range(Q2s[0].shape[1])]
                     for z1 in range(Q1.shape[1])]).ravel()


def test_corollary1_sequential_and_private_le_cam():
    rng = np.random.default_rng(1)
    worst = 0.0
    for _ in range(300):
        nx, nz = rng.integers(2, 5), rng.integers(2, 4)
        spread = rng.choice([0.2, 1.0, 3.0])
        Q1, e1 = ldp.random_channel(nx, nz, rng, spread, bool(rng.integers(2)))
        Q2s, e2s = zip(*[ldp.random_channel(nx, nz, rng, spread, bool(rng.integers(2))) for _ in range(nz)])
        eps = max(e1, *e2s)
        p0, p1 = _rand_pmf(rng, nx), _rand_pmf(rng, nx)
        M0, M1 = _joint_sequential(p0, Q1, Q2s), _joint_sequential(p1, Q1, Q2s)
        tv = _tv(p0, p1)
        skl = ldp.kl(M0, M1) + ldp.kl(M1, M0)
        assert skl <= ldp.sym_kl_bound(eps, tv, n=2) * (1 + 1e-12) + 1e-13
        assert ldp.kl(M0, M1) <= ldp.kl_bound(eps, tv, n=2) * (1 + 1e-12) + 1e-13
        tvn = _tv(M0, M1)
        assert tvn <= ldp.private_tv_bound(eps, tv, n=2) + 1e-12
        assert tvn <= ldp.private_tv_bound_corollary1(eps, tv, n=2) + 1e-12
        worst = max(worst, tvn / ldp.private_tv_bound(eps, tv, n=2))
    assert worst > 0.05  # the test is not vacuous


def _mutual_information(Ps, Q, n):
    """I(Z_{1:n}; V), V uniform, non-interactive channel Q, exact enumeration."""
    laws = []
    for P in Ps:
        m = P @ Q
        joint = m
        for _ in range(n - 1):
            joint = np.outer(joint, m).ravel()
        laws.append(joint)
    laws = np.array(laws)
    mbar = laws.mean(axis=0)
    return float(np.mean([ldp.kl(l, mbar) for l in laws]))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_private_fano_and_variational_bounds(n):
    rng = np.random.default_rng(10 + n)
    ratio_var = 0.0
    for _ in range(150):
        nx, nz, nv = rng.integers(2, 6), rng.integers(2, 4), rng.integers(2, 5)
        Q, eps = ldp.random_channel(nx, nz, rng, rng.choice([0.2, 1.0, 2.5]), bool(rng.integers(2)))
        Ps = [_rand_pmf(rng, nx) for _ in range(nv)]
        I = _mutual_information(Ps, Q, n)
        max_tv = max(_tv(a, b) for a, b in itertools.combinations(Ps, 2))
        assert I <= ldp.fano_mi_bound(eps, max_tv, n) * (1 + 1e-12) + 1e-13
        assert ldp.fano_mi_bound(eps, max_tv, n) <= ldp.fano_mi_bound_corollary1(eps, max_tv, n)
        vb = ldp.variational_mi_bound(eps, ldp.sup_gamma_finite(np.array(Ps)), nv, n)
        assert I <= vb * (1 + 1e-12) + 1e-13
        # the recalled (e^ε - e^{-ε})² / |V| form is looser than ours
        assert vb <= n * (math.exp(eps) - math.exp(-eps)) ** 2 / nv * ldp.sup_gamma_finite(np.array(Ps))
        ratio_var = max(ratio_var, I / vb)
    assert ratio_var > 0.02


def test_fano_probability_and_sympy_forms():
    assert ldp.fano_probability(0.0, 2) == 0.0
    assert ldp.fano_probability(0.1, 100) == pytest.approx(1 - (0.1 + math.log(2)) / math.log(100))
    n, e, tv = sp.symbols("n e tv", positive=True)
    expr = ldp.private_le_cam_expr(1, n, e, tv)
    assert float(expr.subs({n: 4, e: 1.0, tv: 0.1})) == pytest.approx(
        (1 - ldp.private_tv_bound(1.0, 0.1, 4)) / 2)
    # Pinsker on KL <= n·2(e^ε-1)²/(e^ε+1)·TV²: (e^ε-1)·sqrt(n/(e^ε+1))·TV
    assert ldp.private_tv_bound(1.0, 0.1, 4) == pytest.approx(math.expm1(1) * math.sqrt(4 / (math.e + 1)) * 0.1)


def test_variational_assouad_one_sample_certified_form():
    """Σ_j symKL(M_{+j}, M_{-j}) <= ((e^ε-1)²/2) sup_γ Σ_j (∫γ d(P_{+j}-P_{-j}))² on random hypercube families."""
    rng = np.random.default_rng(21)
    best = 0.0
    for _ in range(150):
        nx, k = rng.integers(2, 6), rng.integers(1, 4)
        Q, eps = ldp.random_channel(nx, rng.integers(2, 4), rng, rng.choice([0.3, 1.0, 3.0]), bool(rng.integers(2)))
        cube = list(itertools.product([-1, 1], repeat=k))
        P = {v: _rand_pmf(rng, nx) for v in cube}
        Pp = np.array([np.mean([P[v] for v in cube if v[j] == 1], axis=0) for j in range(k)])
        Pm = np.array([np.mean([P[v] for v in cube if v[j] == -1], axis=0) for j in range(k)])
        total = sum(ldp.kl(a @ Q, b @ Q) + ldp.kl(b @ Q, a @ Q) for a, b in zip(Pp, Pm))
        bound = ldp.assouad_variational_one_sample(eps, ldp.sup_gamma_pairs(Pp, Pm))
        assert total <= bound * (1 + 1e-12) + 1e-13
        assert bound <= ldp.assouad_variational_order(eps, ldp.sup_gamma_pairs(Pp, Pm), 1)
        best = max(best, total / bound)
    assert best > 0.01
    assert ldp.ASSOUAD_VARIATIONAL_CERTIFIED is False


def test_private_assouad_convexity_step():
    """TV(M_{+j}, M_{-j}) between mixtures <= max pairwise TV (convexity), checked exactly."""
    rng = np.random.default_rng(3)
    for _ in range(100):
        nx, nz = 4, 3
        Q, eps = ldp.random_channel(nx, nz, rng, 1.0)
        base = [_rand_pmf(rng, nx) for _ in range(4)]
        plus, minus = base[:2], base[2:]
        Mp = np.mean([np.outer(p @ Q, p @ Q).ravel() for p in plus], axis=0)
        Mm = np.mean([np.outer(p @ Q, p @ Q).ravel() for p in minus], axis=0)
        pair = max(_tv(np.outer(a @ Q, a @ Q).ravel(), np.outer(b @ Q, b @ Q).ravel())
                   for a, b in zip(plus, minus))
        assert _tv(Mp, Mm) <= pair + 1e-12
        assert pair <= ldp.private_tv_bound(eps, max(_tv(a, b) for a, b in zip(plus, minus)), 2) + 1e-12


# ----------------------------------------------------------------------------- Fisher information

def test_bhatia_davis_constant_is_sinh2():
    e, a = sp.symbols("epsilon a", positive=True)
    f = (a * sp.exp(e) - 1) * (1 - a)
    astar = sp.solve(sp.diff(f, a), a)[0]
    assert sp.simplify(astar - (sp.exp(e) + 1) / (2 * sp.exp(e))) == 0
    assert sp.simplify(f.subs(a, astar) - sp.sinh(e / 2) ** 2) == 0
    assert sp.simplify((sp.exp(e) - 1) ** 2 * sp.exp(-e) / 4 - sp.sinh(e / 2) ** 2) == 0
    for x in (1e-6, 0.1, 1.0, 5.0):
        assert float(F.sinh2_half(sp.Float(x))) == pytest.approx(math.sinh(x / 2) ** 2, rel=1e-12)


def test_variance_bound_never_exceeded_random_channels():
    """Row 1 on random finite models (vector parameters) and random ε-LDP channels, exact I_Z."""
    rng = np.random.default_rng(7)
    best = 0.0
    for trial in range(400):
        nx, nz, k = rng.integers(2, 7), rng.integers(2, 6), rng.integers(1, 4)
        Q, eps = ldp.random_channel(nx, nz, rng, rng.choice([0.1, 0.7, 2.0, 5.0]), bool(rng.integers(2)))
        # a random smooth model: p_θ = softmax(a + Bθ) at θ = 0; ∂p = p (B - pᵀB)
        a = rng.normal(size=nx)
        Bm = rng.normal(size=(nx, k))
        p = np.exp(a) / np.exp(a).sum()
        dp = (p[:, None] * (Bm - p @ Bm)).T  # (k, nx)
        score = dp / p  # (k, nx)
        IX = (score * p) @ score.T
        I0 = float(np.linalg.eigvalsh(IX).max())
        IZ = F.exact_private_fisher(Q, p, dp)
        assert IZ <= I0 * math.sinh(eps / 2) ** 2 * (1 + 1e-10) + 1e-13
        assert IZ <= np.trace(IX) * (1 + 1e-10) + 1e-13
        best = max(best, IZ / (I0 * math.sinh(eps / 2) ** 2))
    assert best > 0.3  # near-tight channels occur: the test has teeth


def test_variance_bound_is_attained_order():
    """Binary model and the matched binary randomized response: I_Z / (I_0 sinh²) -> 1 at θ = 1/2."""
    eps = 0.5
    q = math.exp(eps) / (1 + math.exp(eps))
    Q = np.array([[q, 1 - q], [1 - q, q]])
    p = np.array([0.5, 0.5])
    dp = np.array([[1.0, -1.0]])  # θ = P(x=0)
    IZ = F.exact_private_fisher(Q, p, dp)
    I0 = F.exact_fisher(p, dp)
    assert IZ / (I0 * math.sinh(eps / 2) ** 2) > 0.9


def _gauss_interval_fisher(edges, Q, theta, sigma=1.0):
    cdf = stats.norm.cdf((np.asarray(edges) - theta) / sigma)
    pdf = stats.norm.pdf((np.asarray(edges) - theta) / sigma) / sigma
    pmf = np.diff(cdf)
    dpmf = -np.diff(pdf)
    return F.exact_private_fisher(Q, pmf, dpmf[None, :])


@pytest.mark.parametrize("eps_scale", [0.2, 1.0, 3.0, 8.0])
def test_gaussian_subgaussian_and_variance_rows(eps_scale):
    rng = np.random.default_rng(int(eps_scale * 10))
    for _ in range(60):
        nb = rng.integers(2, 7)
        inner = np.sort(rng.normal(scale=2.0, size=nb - 1))
        edges = np.concatenate([[-np.inf], inner, [np.inf]])
        Q, eps = ldp.random_channel(nb, rng.integers(2, 5), rng, eps_scale, True)
        sigma = float(rng.choice([0.5, 1.0, 2.0]))
        IZ = _gauss_interval_fisher(edges, Q, float(rng.normal()), sigma)
        bound = float(F.model_trace_bound("normal-mean", sp.Float(eps), theta_value=0, sigma=sigma))
        assert bound == pytest.approx(min(1, math.sinh(eps / 2) ** 2, 2 * eps) / sigma ** 2)
        assert IZ <= bound * (1 + 1e-9) + 1e-13


@pytest.mark.parametrize("model", ["poisson", "exponential", "bernoulli"])
def test_model_rows_on_binned_channels(model):
    rng = np.random.default_rng({"poisson": 1, "exponential": 2, "bernoulli": 3}[model])
    for _ in range(80):
        eps_scale = float(rng.choice([0.3, 1.0, 3.0, 6.0]))
        if model == "poisson":
            lam = float(rng.choice([0.5, 2.0, 6.0]))
            K = 40
            x = np.arange(K)
            pm = stats.poisson.pmf(x, lam)
            pmf = np.concatenate([pm, [stats.poisson.sf(K - 1, lam)]])
            d = pm * (x / lam - 1)
            dpmf = np.concatenate([d, [-d.sum()]])
            groups = rng.integers(0, 4, size=K + 1)
            theta = lam
        elif model == "exponential":
            lam = float(rng.choice([0.5, 1.0, 3.0]))
            e = np.concatenate([[0.0], np.sort(rng.exponential(1 / lam, size=6)), [np.inf]])
            pmf = np.exp(-lam * e[:-1]) - np.exp(-lam * e[1:])
            with np.errstate(invalid="ignore"):
                t1 = np.where(np.isinf(e[1:]), 0.0, e[1:] * np.exp(-lam * np.where(np.isinf(e[1:]), 0, e[1:])))
            dpmf = -e[:-1] * np.exp(-lam * e[:-1]) + t1
            groups = np.arange(len(pmf))
            theta = lam
        else:
            theta = float(rng.uniform(0.05, 0.95))
            pmf = np.array([1 - theta, theta])
            dpmf = np.array([-1.0, 1.0])
            groups = np.arange(2)
        ng = groups.max() + 1
        Qg, eps = ldp.random_channel(ng, rng.integers(2, 5), rng, eps_scale, True)
        Q = Qg[groups]
        IZ = F.exact_private_fisher(Q, pmf, dpmf[None, :])
        bound = float(F.model_trace_bound(model, sp.Float(eps), theta_value=theta))
        assert IZ <= bound * (1 + 1e-9) + 1e-13


@pytest.mark.parametrize("model,theta", [("poisson", 2.0), ("exponential", 1.5), ("bernoulli", 0.1),
                                         ("bernoulli", 0.5), ("normal-mean", 0.0)])
def test_tail_parameters_by_cgf(model, theta):
    """K(t) <= t² ν²/2 on the declared range (dense grid), and I(θ) = K''(0)."""
    tp = F.tail_parameters(model)
    th = tp.theta
    K = sp.lambdify(F.t_sym, tp.cgf.subs(th, theta).subs(sp.Symbol("sigma", positive=True), 1), "numpy")
    I = float(tp.fisher.subs(th, theta).subs(sp.Symbol("sigma", positive=True), 1))
    h = 1e-4
    assert (K(h) - 2 * K(0.0) + K(-h)) / h ** 2 == pytest.approx(I, rel=1e-3)
    if tp.subgaussian is not None:
        s2 = float(tp.subgaussian.subs(th, theta).subs(sp.Symbol("sigma", positive=True), 1))
        t = np.linspace(-50, 50, 20001)
        t = t[t != 0]
        assert np.all(K(t) <= t ** 2 * s2 / 2 * (1 + 1e-9) + 1e-12)
    if tp.subexponential is not None:
        for c in (sp.Rational(1, 4), sp.Rational(1, 2), sp.Rational(9, 10)):
            nu2, b = (float(v.subs(th, theta)) for v in tp.subexponential(c))
            t = np.linspace(-1 / b, 1 / b, 4001)
            t = t[t != 0]
            assert np.all(K(t) <= t ** 2 * nu2 / 2 * (1 + 1e-9))
            # and the endpoint is tight (the sup is attained there)
            assert np.max(2 * K(t) / t ** 2) == pytest.approx(nu2, rel=1e-3)


def test_kearns_saul_is_the_optimal_proxy_and_increasing():
    for p in (0.01, 0.1, 0.3, 0.49):
        t = np.linspace(-200, 200, 400001)
        t = t[t != 0]
        K = np.log(p * np.exp(t * (1 - p)) + (1 - p) * np.exp(-t * p))
        assert np.max(2 * K / t ** 2) == pytest.approx(float(F.kearns_saul_np(p)), rel=1e-3)
    grid = np.linspace(1e-4, 0.5, 5000)
    assert np.all(np.diff(F.kearns_saul_np(grid)) > 0)


def test_categorical_fisher_matrices():
    for d in (3, 4, 5):
        th, logs = F.categorical_log_pmf(d)
        pmf = [sp.exp(l) for l in logs]
        I = F.fisher_matrix_finite(th, pmf)
        expected = sp.diag(*[1 / t for t in th]) + sp.ones(d - 1, d - 1) / (1 - sum(th))
        assert (I - expected).applyfunc(sp.simplify) == sp.zeros(d - 1, d - 1)
    for d in (4, 5, 6):
        th, pmf = F.categorical_paired_pmf(d)
        I = F.fisher_matrix_finite(th, pmf)
        assert (I - sp.diag(*[sp.Rational(2, d) / (1 - t ** 2) for t in th])).applyfunc(sp.simplify) == \
            sp.zeros(len(th), len(th))
        I0, tr, J = F.categorical_paired_constants(d)
        assert I0 == sp.Rational(2, d) / (1 - sp.Rational(1, 4))
        assert tr == (d // 2) * I0


# ----------------------------------------------------------------------------- van Trees

def test_box_prior_information_symbolic():
    w = sp.Symbol("w", positive=True)
    assert sp.simplify(V.prior_information_symbolic(w) - sp.pi ** 2 / w ** 2) == 0
    th = sp.Symbol("theta_v", real=True)
    assert sp.simplify(sp.integrate(V.box_prior_density(th, 0, w), (th, -w, w)) - 1) == 0
    assert V.box_prior_information(sp.Rational(1, 2), 3) == 12 * sp.pi ** 2


def test_van_trees_below_exact_bayes_risk_bernoulli_rr():
    """Scalar sanity check: Bernoulli(θ), θ on [1/4, 3/4] with the cos² prior, binary RR at level ε,
    n samples: the exact Bayes risk (posterior mean, by enumeration over the count) is >= van Trees."""
    from scipy import integrate

    for n, eps in [(5, 0.5), (20, 1.0), (50, 2.0)]:
        q = math.exp(eps) / (1 + math.exp(eps))
        w, c = 0.25, 0.5
        grid = np.linspace(c - w, c + w, 4001)
        prior = np.cos(np.pi * (grid - c) / (2 * w)) ** 2 / w
        m = grid * q + (1 - grid) * (1 - q)  # P(Z = 1)
        ks = np.arange(n + 1)
        lik = stats.binom.pmf(ks[:, None], n, m[None, :])  # (n+1, grid)
        post = lik * prior
        norm = integrate.trapezoid(post, grid, axis=1)
        pmean = integrate.trapezoid(post * grid, grid, axis=1) / norm
        risk = integrate.trapezoid(prior * np.sum(lik * (pmean[:, None] - grid[None, :]) ** 2, axis=0), grid)
        IZ = float(np.max((2 * q - 1) ** 2 / (m * (1 - m))))
        vt = 1 / (n * IZ + math.pi ** 2 / w ** 2)
        assert risk >= vt
        # and the one-sample private bound used by boundcalc is above the exact I_Z on the box
        I0 = float(np.max(1 / (grid * (1 - grid))))
        assert IZ <= I0 * math.sinh(eps / 2) ** 2 * (1 + 1e-12) + 1e-13


def test_problem_constants_match_sympy_model_calculus():
    """The constants hard-wired in the problems (for speed) equal the sympy-derived ones."""
    from boundcalc.problems import gaussian as G
    from boundcalc.problems import sparse_bernoulli as SBP

    tp = F.tail_parameters("normal-mean")
    sigma = G.sigma
    assert sp.simplify(tp.fisher - 1 / sigma ** 2) == 0
    assert sp.simplify(tp.subgaussian - 1 / sigma ** 2) == 0
    assert sp.simplify(tp.cgf - F.t_sym ** 2 / (2 * sigma ** 2)) == 0
    tb = F.tail_parameters("bernoulli")
    for m in (0.01, 0.1, 0.3, 0.5):
        a = m / 2
        assert float(tb.fisher.subs(tb.theta, a)) == pytest.approx(1 / (a * (1 - a)))
        # the proxy used by sparse-bernoulli bounds the model's proxy on the whole box [m/2, m]
        used = float(F.kearns_saul_proxy(sp.Float(m)) / (a * (1 - a)) ** 2)
        grid = np.linspace(a, m, 201)
        model = [float(tb.subgaussian.subs(tb.theta, th)) for th in grid]
        assert max(model) <= used * (1 + 1e-12)
    assert SBP.box_m(sp.Integer(30), sp.Integer(20)) == sp.Rational(1, 2)


# ----------------------------------------------------------------------------- audit additions (appended)

def _sym_eval(expr, syms, vals):
    from boundcalc.core import symbolic as S

    return float(S.numpy_lambdify(list(syms), expr)(*vals))


def test_tv_private_expr_sympy_form_bounds_exact_tv_sequential():
    """The sympy TV bound used by every private Le Cam/Assouad bound, min{√(n/2)(e^ε-1)TV,
    √(1-exp(-n(e^ε-1)²TV²))}, is >= the exact TV of two-sample sequentially interactive outputs on random
    channels, including far-apart pairs where the Bretagnolle–Huber branch is the smaller one."""
    n_, e_, t_ = sp.symbols("n e t", positive=True)
    expr = ldp.tv_private_expr(n_, e_, t_)
    rng = np.random.default_rng(2024)
    bh_used = 0
    worst = 0.0
    for _ in range(400):
        nx, nz = rng.integers(2, 5), rng.integers(2, 4)
        spread = rng.choice([0.2, 1.0, 3.0, 6.0])
        Q1, e1 = ldp.random_channel(nx, nz, rng, spread, bool(rng.integers(2)))
        Q2s, e2s = zip(*[ldp.random_channel(nx, nz, rng, spread, bool(rng.integers(2))) for _ in range(nz)])
        eps = max(e1, *e2s)
        p0, p1 = _rand_pmf(rng, nx), _rand_pmf(rng, nx)
        if rng.random() < 0.5:  # nearly disjoint supports: large TV
            p0 = np.where(np.arange(nx) == 0, 1.0, 1e-3); p0 /= p0.sum()
            p1 = np.where(np.arange(nx) == nx - 1, 1.0, 1e-3); p1 /= p1.sum()
        M0, M1 = _joint_sequential(p0, Q1, Q2s), _joint_sequential(p1, Q1, Q2s)
        tv, tvn = _tv(p0, p1), _tv(M0, M1)
        bound = _sym_eval(expr, (n_, e_, t_), (2, eps, tv))
        assert tvn <= bound * (1 + 1e-12) + 1e-13
        a = math.sqrt(2 / 2) * math.expm1(eps) * tv
        bh_used += bound < a * (1 - 1e-9)
        worst = max(worst, tvn / bound)
    assert bh_used > 20 and worst > 0.1


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_hellinger_tv_product_bounds_exact_product_tv(n):
    """TV(P^n, Q^n) <= sqrt(1 - BC^{2n}) (Le Cam's inequality as coded in ldp.hellinger_tv_product, with
    1 - BC passed in) against exact n-fold product laws."""
    n_, c_ = sp.symbols("n c", positive=True)
    expr = ldp.hellinger_tv_product(n_, c_)
    rng = np.random.default_rng(n)
    for _ in range(100):
        k = rng.integers(2, 4)
        p, q = _rand_pmf(rng, k), _rand_pmf(rng, k)
        P, Qm = p, q
        for _ in range(n - 1):
            P, Qm = np.outer(P, p).ravel(), np.outer(Qm, q).ravel()
        one_minus_bc = 1 - float(np.sum(np.sqrt(p * q)))
        assert _tv(P, Qm) <= _sym_eval(expr, (n_, c_), (n, one_minus_bc)) * (1 + 1e-12) + 1e-13


def _local_mean_vt(ball, d):
    from boundcalc.problems import local_mean as LM

    return next(b for b in LM._bounds(2.0, d == 1, ball) if b.name == "van-trees")


def _vt_trace(b, d, eps, w, cube):
    """Extract the one-sample trace bound T from the registered van Trees bound value
    c/(nT + J) (c = r²·d² for the cube, r² for the axes family; r = 1) by evaluating it at two n."""
    n1, n2 = 1e3, 2e3
    v1 = float(b.evaluate({"n": n1, "eps": eps, "d": d, "r": 1.0}, {"w": w}))
    v2 = float(b.evaluate({"n": n2, "eps": eps, "d": d, "r": 1.0}, {"w": w}))
    c = d ** 2 if cube else 1.0
    J = c / v1 - n1 * (c / v2 - c / v1) / (n2 - n1)
    assert J == pytest.approx(d * math.pi ** 2 / w ** 2, rel=1e-6)  # the cos² box prior's information
    return (c / v2 - c / v1) / (n2 - n1)


@pytest.mark.parametrize("ball,d", [("l2", 2), ("l2", 3), ("linf", 2), ("linf", 3)])
def test_local_mean_van_trees_trace_bound_on_random_channels(ball, d):
    """The one-sample bound T(ε, w) inside the local mean van Trees bound is >= the exact Tr I_Z(θ) for
    θ anywhere in the prior's box [-w, w]^d and random ε-LDP channels: ℓ2 family P(±r e_j) = (1±θ_j)/(2d),
    cube family X_j = ±r independent with P(X_j = r) = (1+θ_j)/2 (exact enumeration of the 2d / 2^d atoms)."""
    import itertools

    cube = ball == "linf"
    b = _local_mean_vt(ball, d)
    rng = np.random.default_rng(31 + d + 10 * cube)
    if cube:
        atoms = np.array(list(itertools.product([-1.0, 1.0], repeat=d)))
    worst = 0.0
    for _ in range(150):
        w = float(rng.choice([0.2, 0.5, 0.8]))
        theta = rng.uniform(-w, w, size=d)
        if rng.random() < 0.5:
            theta = w * rng.choice([-1.0, 1.0], size=d)  # corners, where I_X is largest
        if cube:
            f = (1 + atoms * theta) / 2  # (atoms, d)
            pmf = f.prod(axis=1)
            dpmf = np.array([atoms[:, k] / 2 * np.prod(np.delete(f, k, axis=1), axis=1) for k in range(d)])
        else:
            pmf = np.concatenate([(1 + theta) / (2 * d), (1 - theta) / (2 * d)])
            dpmf = np.hstack([np.eye(d), -np.eye(d)]) / (2 * d)
        Q, eps = ldp.random_channel(len(pmf), int(rng.integers(2, 6)), rng,
                                    float(rng.choice([0.05, 0.3, 1.0, 3.0])), bool(rng.integers(2)))
        IZ = F.exact_private_fisher(Q, pmf, dpmf)
        T = _vt_trace(b, d, eps, w, cube)
        assert IZ <= T * (1 + 1e-8) + 1e-12, (ball, d, w, eps, IZ, T)
        worst = max(worst, IZ / T)
    assert worst > 0.3  # 0.41-0.68 on these seeds: the test has teeth


def _vt_trace_general(b, values, free, c, J_expected):
    """T from a registered van Trees bound c/(nT + J), evaluated at two n (J checked against J_expected)."""
    n1, n2 = 1e3, 2e3
    v1 = float(b.evaluate({**values, "n": n1}, free))
    v2 = float(b.evaluate({**values, "n": n2}, free))
    T = (c / v2 - c / v1) / (n2 - n1)
    assert c / v1 - n1 * T == pytest.approx(J_expected, rel=1e-6)
    return T


@pytest.mark.parametrize("d", [2, 4, 5])
def test_multinomial_van_trees_trace_bound_on_random_channels(d):
    """Paired family p(2j-1) = (1+θ_j)/d, p(2j) = (1-θ_j)/d (odd d: last symbol fixed at 1/d), θ ∈ [-w,w]^m,
    m = ⌊d/2⌋: exact Tr I_Z on random ε-LDP channels <= the bound's one-sample T(ε, w)."""
    from boundcalc.problems import multinomial as MN

    b = next(x for x in MN._bounds("l2sq", True) if x.name == "van-trees")
    m = d // 2
    rng = np.random.default_rng(50 + d)
    worst = 0.0
    for _ in range(150):
        w = float(rng.choice([0.2, 0.5, 0.8]))
        theta = rng.uniform(-w, w, size=m)
        if rng.random() < 0.5:
            theta = w * rng.choice([-1.0, 1.0], size=m)
        pmf = np.full(d, 1 / d)
        pmf[0:2 * m:2], pmf[1:2 * m:2] = (1 + theta) / d, (1 - theta) / d
        dpmf = np.zeros((m, d))
        for j in range(m):
            dpmf[j, 2 * j], dpmf[j, 2 * j + 1] = 1 / d, -1 / d
        Q, eps = ldp.random_channel(d, int(rng.integers(2, 6)), rng, float(rng.choice([0.05, 0.3, 1.0, 3.0])),
                                    bool(rng.integers(2)))
        IZ = F.exact_private_fisher(Q, pmf, dpmf)
        T = _vt_trace_general(b, {"eps": eps, "d": d, "m_pairs": m}, {"w": w}, 2 * m ** 2 / d ** 2,
                              m * math.pi ** 2 / w ** 2)
        assert IZ <= T * (1 + 1e-8) + 1e-12, (d, w, eps, IZ, T)
        worst = max(worst, IZ / T)
    assert worst > 0.3


@pytest.mark.parametrize("a,s", [(2, 0.6), (2, 3.0), (3, 1.0)])
def test_sparse_bernoulli_van_trees_trace_bound_on_random_channels(a, s):
    """a active Bernoulli coordinates, θ ∈ [m/2, m]^a, m = min{s/a, 1/2}, X ∈ {0,1}^a enumerated: exact
    Tr I_Z on random ε-LDP channels <= the bound's one-sample T (prior half-width m/4: J = 16aπ²/m²)."""
    import itertools
    from boundcalc.problems import sparse_bernoulli as SBP

    b = next(x for x in SBP._bounds(True) if x.name == "van-trees")
    mm = min(s / a, 0.5)
    X = np.array(list(itertools.product([0.0, 1.0], repeat=a)))
    rng = np.random.default_rng(60 + a)
    worst = 0.0
    for _ in range(150):
        theta = rng.uniform(mm / 2, mm, size=a)
        if rng.random() < 0.5:
            theta = np.where(rng.random(a) < 0.5, mm / 2, mm)
        f = np.where(X == 1, theta, 1 - theta)
        pmf = f.prod(axis=1)
        dpmf = np.array([(2 * X[:, k] - 1) * np.prod(np.delete(f, k, axis=1), axis=1) for k in range(a)])
        Q, eps = ldp.random_channel(len(pmf), int(rng.integers(2, 6)), rng,
                                    float(rng.choice([0.05, 0.3, 1.0, 3.0])), bool(rng.integers(2)))
        IZ = F.exact_private_fisher(Q, pmf, dpmf)
        T = _vt_trace_general(b, {"eps": eps, "d": max(a, 5), "s": s}, {"a": a}, a ** 2,
                              16 * a * math.pi ** 2 / mm ** 2)
        assert IZ <= T * (1 + 1e-8) + 1e-12, (a, s, eps, IZ, T)
        worst = max(worst, IZ / T)
    assert worst > 0.3


# ---------------------------------------------------------------------- regression: binomial TV at huge n
def test_binomial_tv_bound_at_huge_n_is_an_upper_bound():
    """At n = 1e18 the float64 exact binomial TV (incomplete beta, n - j rounded) gave
    TV(Bin(n, 1/2 - h/2), Bin(n, 1/2 + h/2)) = 0.34 at h = 1/sqrt(n), half the true 2Φ(1) - 1 = 0.6827 (CLT,
    error O(1/sqrt(n))), so Le Cam lower bounds built on it exceeded the certified upper bounds."""
    n = 1e18
    h = 1 / math.sqrt(n)
    expr = ldp.binomial_tv_bound(sp.Symbol("n"), (1 - sp.Symbol("h")) / 2, (1 + sp.Symbol("h")) / 2)
    from boundcalc.core import symbolic as S

    f = S.numpy_lambdify([sp.Symbol("h"), sp.Symbol("n")], expr)
    assert float(f(h, n)) >= 2 * stats.norm.cdf(1) - 1 - 1e-6
    # below the switch the exact binomial TV is used unchanged
    exact = S.numpy_lambdify([sp.Symbol("h"), sp.Symbol("n")], 1 - S.BinomTVComplement(sp.Symbol("n"), (1 - sp.Symbol("h")) / 2,
                                                                                    (1 + sp.Symbol("h")) / 2))
    assert float(f(0.05, 1000.0)) == float(exact(0.05, 1000.0))


def test_bernoulli_one_minus_bc_is_cancellation_free():
    q1, q2 = 0.5 - 5e-10, 0.5 + 5e-10
    val = float(ldp.bernoulli_one_minus_bc(sp.Float(q1, 30), sp.Float(q2, 30)))
    # 1 - BC ≈ (q1-q2)²/(8 q(1-q)) = 1e-18/2
    assert val == pytest.approx(1e-18 / 2, rel=1e-6)


# ---------------------------------------------------------------------- posterior-mean Assouad (lemma)
def test_posterior_sign_information_bound_sequential_channels():
    """E[(E[v_j|Z])²] <= min{1, 2(1 - e^{-K/2})}, K = n min{c_ε τ², KL_1}, for v uniform on {±1}², random
    data laws P_v = P̄ + Σ_j v_j D_j, and two users with a sequentially interactive ε-LDP protocol (the
    second channel depends on the first output); exact enumeration (methods.posterior_assouad)."""
    from boundcalc.methods import posterior_assouad as PA

    rng = np.random.default_rng(21)
    worst = worst_budget = 0.0
    for _ in range(300):
        nx, nz = int(rng.integers(3, 6)), int(rng.integers(2, 4))
        spread = float(rng.choice([0.2, 1.0, 3.0]))
        Q1, e1 = ldp.random_channel(nx, nz, rng, spread, bool(rng.integers(2)))
        Q2s, e2s = zip(*[ldp.random_channel(nx, nz, rng, spread, bool(rng.integers(2))) for _ in range(nz)])
        eps = max(e1, *e2s)
        base = _rand_pmf(rng, nx)
        D = []
        for _j in range(2):
            g = rng.normal(size=nx)
            g -= g.mean()
            D.append(g / np.abs(g).sum() * float(rng.uniform(0.01, 1.0)) * base.min())
        V = list(itertools.product([-1, 1], repeat=2))
        P = {v: base + v[0] * D[0] + v[1] * D[1] for v in V}
        M = {v: _joint_sequential(P[v], Q1, Q2s) for v in V}
        total = 0.0
        for j in range(2):
            mp = np.mean([M[v] for v in V if v[j] == 1], axis=0)
            mm = np.mean([M[v] for v in V if v[j] == -1], axis=0)
            info = float(np.sum((mp - mm) ** 2 / (2 * (mp + mm))))  # E[(E[v_j|Z])²]
            flips = [(v, tuple(-x if i == j else x for i, x in enumerate(v))) for v in V if v[j] == 1]
            tau = max(_tv(P[a], P[b]) for a, b in flips)
            kl1 = max(ldp.kl(P[a], P[b]) for a, b in flips)
            for K in (PA.kl_bound_float(2, eps, tau), PA.kl_bound_float(2, None, tau, kl1),
                      PA.kl_bound_float(2, eps, tau, kl1)):
                bound = PA.sign_information_float(K)
                assert info <= bound * (1 + 1e-10) + 1e-14, (info, bound, K)
            worst = max(worst, info / PA.sign_information_float(PA.kl_bound_float(2, eps, tau, kl1)))
            total += info
        # the information budget: Σ_j E[(E[v_j|Z])²] <= 2 I(V; Z) <= 2 n ε tanh(ε/2)
        mbar = np.mean([M[v] for v in V], axis=0)
        mi = float(np.mean([ldp.kl(M[v], mbar) for v in V]))
        assert total <= 2 * mi * (1 + 1e-10) + 1e-14
        assert mi <= 2 * PA.mi_per_report_float(eps) * (1 + 1e-10)
        worst_budget = max(worst_budget, total / (4 * PA.mi_per_report_float(eps)))
    assert worst > 0.05  # not vacuous
    assert worst_budget > 0.01


def test_mi_per_report_is_the_largest_ldp_mutual_information():
    """I(X; Z) <= ε tanh(ε/2) on random ε-LDP channels and input laws, and for binary randomized response
    (log 2 - h(e^ε/(1+e^ε)) at the uniform input; the bound is within a factor 5 of it for ε <= 1)."""
    from boundcalc.methods import posterior_assouad as PA

    rng = np.random.default_rng(22)
    for _ in range(400):
        nx, nz = int(rng.integers(2, 6)), int(rng.integers(2, 5))
        Q, eps = ldp.random_channel(nx, nz, rng, float(rng.choice([0.2, 1.0, 4.0])), bool(rng.integers(2)))
        p = _rand_pmf(rng, nx)
        m = p @ Q
        mi = sum(p[x] * ldp.kl(Q[x], m) for x in range(nx))
        assert mi <= PA.mi_per_report_float(eps) * (1 + 1e-12)
    for eps in (0.1, 1.0, 5.0):
        q = 1 / (1 + math.exp(-eps))
        Q = np.array([[q, 1 - q], [1 - q, q]])
        mi = 0.5 * ldp.kl(Q[0], Q.mean(axis=0)) + 0.5 * ldp.kl(Q[1], Q.mean(axis=0))
        assert mi <= PA.mi_per_report_float(eps)
        if eps <= 1:
            assert mi >= 0.2 * PA.mi_per_report_float(eps)


def test_posterior_sign_information_sympy_matches_float():
    from boundcalc.methods import posterior_assouad as PA

    n, e, t, k = sp.symbols("n e t k", positive=True)
    f = sp.lambdify((n, e, t, k), PA.sign_information(PA.kl_bound_expr(n, e, t, k)), "math")
    for args in [(10, 0.5, 0.01, 1e-3), (3, 2.0, 0.3, 0.05), (1000, 0.1, 0.2, 0.08)]:
        want = PA.sign_information_float(PA.kl_bound_float(args[0], args[1], args[2], args[3]))
        assert f(*args) == pytest.approx(want, rel=1e-12)
    # the Bernoulli KL and the sign KL in closed form
    assert float(PA.sign_kl(sp.Rational(1, 3))) == pytest.approx(ldp.kl([2 / 3, 1 / 3], [1 / 3, 2 / 3]), rel=1e-12)
    assert float(PA.bernoulli_kl(sp.Float(0.2), sp.Float(0.05))) == pytest.approx(ldp.kl([0.2, 0.8], [0.05, 0.95]))
