"""Unit tests of the formulas behind the central mean bounds, each against an independent computation."""
import math

import numpy as np
import pytest
import sympy as sp
from scipy import optimize, stats

from boundcalc.core import symbolic as S
from boundcalc.methods import uniformity
from boundcalc.problems import mean_central as mc


# ---------------------------------------------------------------- special functions

@pytest.mark.parametrize("n,p", [(1, 0.3), (7, 0.5), (50, 0.02), (400, 0.9)])
def test_binom_sf_matches_scipy(n, p):
    m = np.arange(-2, n + 3)
    np.testing.assert_allclose(S._binom_sf(m, n, p), stats.binom.sf(m, n, p), rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("n,q1,q2", [(1, 0.2, 0.7), (10, 0.5, 0.51), (60, 0.3, 0.45), (300, 0.01, 0.02),
                                     (200, 0.9, 0.1), (7, 0.0, 0.3), (9, 0.4, 1.0), (5, 0.0, 1.0)])
def test_binom_tv_complement_brute_force(n, q1, q2):
    k = np.arange(n + 1)
    tv = 0.5 * np.abs(stats.binom.pmf(k, n, q1) - stats.binom.pmf(k, n, q2)).sum()
    assert S._binom_tv_complement(n, q1, q2) == pytest.approx(1 - tv, rel=1e-9, abs=1e-14)


def test_binom_tv_complement_large_n_normal_limit():
    # Bin(n, 1/2 ± h) for large n: TV -> 2Φ(2h√n) - 1 (normal approximation, independent formula);
    # the exact form within its trusted range, and a lower bound on 1 - TV beyond it
    n, h = 1e10, 3e-6
    approx = 1 - (2 * stats.norm.cdf(2 * h * math.sqrt(n)) - 1)
    assert float(S._binom_tv_complement(n, 0.5 - h, 0.5 + h)) == pytest.approx(approx, rel=1e-6)
    assert math.isnan(float(S._binom_tv_complement(1e15, 0.5 - 1e-8, 0.5 + 1e-8)))


def test_le_cam_never_exceeds_the_exact_minimax_risk_at_huge_n():
    # Le Cam on the {±r u} family is a lower bound on that family's exact minimax risk r²/(1+√n)²;
    # float64 binomial TV broke this at n >= 1e17 (now the Hellinger form above 1e10)
    import boundcalc as bc

    for n in (10**9, 10**11, 10**13, 10**15, 10**17, 10**18):
        lows = {b.name: b.value for b in bc.rate("mean", "none", n=n).lowers}
        assert lows["le-cam"] <= lows["hodges-lehmann"]


def test_binom_tv_complement_hellinger_branch_is_a_lower_bound():
    # above the exact range ldp.binomial_tv_bound uses the Hellinger bound: check that form against the
    # exact value where both can be computed (n = 1e6), then the huge-n value against 50-digit mpmath
    n = 1e6
    for h in (1e-5, 3e-4, 1e-3, 0.01):
        q1, q2 = 0.5 - h, 0.5 + h
        exact = float(S._binom_tv_complement_exact(n, q1, q2))
        bc_ = math.sqrt(q1 * q2) + math.sqrt((1 - q1) * (1 - q2))
        hell = 1 - math.sqrt(1 - bc_ ** (2 * n))
        assert hell <= exact + 1e-12
    import mpmath

    with mpmath.workdps(50):  # BC = sqrt(1 - 4h²) for q = 1/2 ± h, so BC^{2n} = (1 - 4h²)^n
        h_ = mpmath.mpf(1) / 10 ** 6
        expected = float(1 - mpmath.sqrt(1 - (1 - 4 * h_ ** 2) ** (10 ** 12)))
    from boundcalc.methods import ldp

    h = sp.Symbol("h", positive=True)
    f = sp.lambdify([S.n, h], 1 - ldp.binomial_tv_bound(S.n, sp.Rational(1, 2) - h, sp.Rational(1, 2) + h),
                    modules=[S.NUMPY_IMPL, "numpy"])
    assert float(f(1e12, 1e-6)) == pytest.approx(expected, rel=1e-6)
    assert math.isnan(float(S._binom_tv_complement(1e12, 0.5 - 1e-6, 0.5 + 1e-6)))  # unusable, not wrong


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-5), (1.0, 1e-6), (5.0, 1e-10), (0.5, 1e-300), (20, 1e-3)])
def test_analytic_gaussian_calibration(eps, delta):
    sigma = S.gauss_sigma_analytic_scalar(eps, delta)

    def dl(sig):  # Balle & Wang Thm 8, straight from scipy's normal cdf in log space
        a, b = 1 / (2 * sig), eps * sig
        return math.exp(stats.norm.logcdf(a - b)) - math.exp(eps + stats.norm.logcdf(-a - b))

    if delta > 1e-250:
        assert dl(sigma) == pytest.approx(delta, rel=1e-6)
        assert dl(sigma * 0.999) > delta  # smallest such σ
    else:  # below double precision of the difference: check in log space via mpmath
        import mpmath
        mpmath.mp.dps = 60
        a, b = 1 / (2 * mpmath.mpf(sigma)), eps * mpmath.mpf(sigma)
        d = mpmath.ncdf(a - b) - mpmath.e ** eps * mpmath.ncdf(-a - b)
        assert float(mpmath.log(d)) == pytest.approx(math.log(delta), rel=1e-6)
    if eps < 1:
        classical = math.sqrt(2 * math.log(1.25 / delta)) / eps
        assert sigma <= classical


def test_tv_gaussian_calibration_exact():
    # σ = Δ/(2√2 erfinv(α)) makes TV(N(0,σ²), N(Δ,σ²)) = 2Φ(Δ/(2σ)) - 1 exactly α
    for alpha in (0.01, 0.3, 0.9):
        delta_ = 0.7
        sigma = delta_ / (2 * math.sqrt(2) * float(sp.erfinv(alpha)))
        assert 2 * stats.norm.cdf(delta_ / (2 * sigma)) - 1 == pytest.approx(alpha, rel=1e-10)


# ---------------------------------------------------------------- noise second moments (simulation)

@pytest.mark.parametrize("d", [1, 3, 10])
def test_noise_second_moments(d):
    from boundcalc.mechanisms import noise

    rng = np.random.default_rng(1)
    b, reps = 0.7, 200_000
    w = noise.l2_laplace(rng, reps, d, b)
    assert np.mean(np.sum(w ** 2, axis=1)) == pytest.approx(d * (d + 1) * b ** 2, rel=0.02)
    w = noise.laplace(rng, reps, d, b)
    assert np.mean(np.sum(w ** 2, axis=1)) == pytest.approx(2 * d * b ** 2, rel=0.02)


def test_l2_laplace_density_is_radial_exponential():
    # ||W|| ~ Gamma(d, b): check the radius distribution by a KS test
    from boundcalc.mechanisms import noise

    rng = np.random.default_rng(2)
    w = noise.l2_laplace(rng, 20000, 4, 1.5)
    assert stats.kstest(np.linalg.norm(w, axis=1), stats.gamma(a=4, scale=1.5).cdf).pvalue > 1e-3


# ---------------------------------------------------------------- bias constant

@pytest.mark.parametrize("k", [2.0, 2.5, 4.0, 10.0])
def test_bias_constant_is_attained_by_two_point_law(k):
    r = 1.3
    T = 1.2 * r  # the extremal law exists when y* = kT/(k-1) >= r
    ck = float(mc.bias_constant(k))
    ystar = k * T / (k - 1)
    mass = r ** k / ystar ** k
    assert mass <= 1
    attained = mass * (ystar - T)  # E(Y - T)_+ for Y = y* w.p. mass, else 0; E Y^k = r^k
    assert attained == pytest.approx(ck * r ** k / T ** (k - 1), rel=1e-12)


@pytest.mark.parametrize("k", [2.0, 3.0, 4.0])
def test_bias_bound_holds_for_random_laws(k):
    rng = np.random.default_rng(3)
    ck = float(mc.bias_constant(k))
    for _ in range(2000):
        y = rng.exponential(1.0, size=5) * rng.uniform(0.1, 5)
        w = rng.dirichlet(np.ones(5))
        r = float((w @ y ** k) ** (1 / k))
        T = rng.uniform(0.05, 3) * r
        lhs = float(w @ np.maximum(y - T, 0))
        assert lhs <= ck * r ** k / T ** (k - 1) * (1 + 1e-12)


# ---------------------------------------------------------------- Hodges–Lehmann

@pytest.mark.parametrize("n", [1, 5, 40, 300])
def test_hodges_lehmann_constant_risk(n):
    # the estimator (X + √n/2)/(n + √n) has risk exactly 1/(4(1+√n)²) for every q
    x = np.arange(n + 1)
    est = (x + math.sqrt(n) / 2) / (n + math.sqrt(n))
    for q in (0.0, 0.13, 0.5, 0.91):
        risk = float(stats.binom.pmf(x, n, q) @ (est - q) ** 2)
        assert risk == pytest.approx(1 / (4 * (1 + math.sqrt(n)) ** 2), rel=1e-9, abs=1e-15)
    # ... and it is the posterior mean for the Beta(√n/2, √n/2) prior, hence Bayes: its constant risk is the
    # Bayes risk, a lower bound on the minimax risk
    a = math.sqrt(n) / 2
    assert np.allclose(est, (x + a) / (n + 2 * a))
    # the Bayes risk under that prior (posterior variance averaged over the marginal) equals it too
    post_var = (x + a) * (n - x + a) / ((n + 2 * a) ** 2 * (n + 2 * a + 1))
    marg = stats.betabinom.pmf(x, n, a, a)
    assert float(marg @ post_var) == pytest.approx(1 / (4 * (1 + math.sqrt(n)) ** 2), rel=1e-9)


def test_mean_lower_bound_is_the_scaled_binomial_minimax_risk():
    # on {±r u} the mean is r(2q-1)u: risk of estimating it = (2r)² × risk for q
    import boundcalc as bc

    for n in (1, 10, 1000):
        lo = next(b for b in bc.rate("mean", "none", n=n, r=2.0).lowers if b.name == "hodges-lehmann")
        assert lo.value == pytest.approx((2 * 2.0) ** 2 / (4 * (1 + math.sqrt(n)) ** 2), rel=1e-12)


# ---------------------------------------------------------------- uniformity of mass

@pytest.mark.parametrize("N,n,p,M,eps,delta", [(2, 20, 0.1, 3, 1.0, 0.0), (5, 100, 0.02, 4, 0.5, 1e-3),
                                               (50, 1000, 0.01, 15, 0.3, 1e-6)])
def test_uniformity_rewriting(N, n, p, M, eps, delta):
    expr = uniformity.failure_probability(S.n, S.p, S.M, S.eps, sp.log(N - 1), S.delta if delta else None)
    f = sp.lambdify([S.n, S.p, S.M, S.eps, S.delta], expr, modules=[S.NUMPY_IMPL, "numpy"])
    assert float(f(n, p, M, eps, delta)) == pytest.approx(
        uniformity.failure_probability_direct(N, n, p, M, eps, delta), rel=1e-10)


@pytest.mark.parametrize("n,eps,noise", [(10, 1.0, "laplace"), (30, 0.5, "laplace"), (25, 1.0, "gauss")])
def test_uniformity_bound_below_exact_failure_of_a_dp_test(n, eps, noise):
    """Theorem 3 (N = 2) against an exact computation for a concrete private estimator.

    Data from (1-p)δ_0 + p δ_{±a}; the estimator releases S + W with S = Σ sign(x_i) (sensitivity 2)
    and W Laplace(2/ε) (ε-DP) or Gaussian (exact (ε,δ) calibration), and guesses the sign. Its exact
    failure probability must be at least the certified bound for every p and M.
    """
    delta = 0.0
    if noise == "gauss":
        delta = 1e-3
        sigma = 2 * S.gauss_sigma_analytic_scalar(eps, delta)
        cdf = stats.norm(scale=sigma).cdf
    else:
        cdf = stats.laplace(scale=2 / eps).cdf
    j = np.arange(n + 1)
    for p in (0.01, 0.05, 0.2, 0.5):
        # under v = +1, S ~ Bin(n, p); failure = P(S + W <= 0) (ties to the wrong side: conservative)
        fail = float(stats.binom.pmf(j, n, p) @ cdf(-j))
        best = max(uniformity.failure_probability_direct(2, n, p, M, eps, delta) for M in range(n + 1))
        assert best <= fail + 1e-12


# ---------------------------------------------------------------- truncation optimum

@pytest.mark.parametrize("k", [2.0, 2.5, 3.0, 4.0, 8.0])
@pytest.mark.parametrize("c", [1e-6, 1e-3, 0.3])
def test_symbolic_truncation_optimum_matches_numeric(k, c):
    r = 1.7
    obj = lambda T: float(mc.bias_constant(k)) ** 2 * r ** (2 * k) / T ** (2 * (k - 1)) + c * T ** 2
    num = optimize.minimize_scalar(lambda lt: obj(math.exp(lt)), bounds=(-20, 20), method="bounded",
                                   options={"xatol": 1e-12}).x
    sym = float(mc.truncation_optimum(k, sp.Float(c)).subs({S.r: r}))
    assert sym == pytest.approx(math.exp(num), rel=1e-5)
    # and sympy's own stationary point agrees with the closed form
    Tv = sp.Symbol("T", positive=True)
    sol = sp.solve(sp.diff(mc.bias_constant(k) ** 2 * sp.Float(r) ** (2 * mc._knum(k)) / Tv ** (2 * (mc._knum(k) - 1))
                           + sp.Float(c) * Tv ** 2, Tv), Tv)
    assert any(abs(float(s_) - sym) < 1e-6 * sym for s_ in sol)


@pytest.mark.parametrize("k", ["4", "inf"])
def test_solver_T_agrees_with_symbolic_optimum(k):
    import boundcalc as bc

    # private-dominated regime, T* < r: the variance term is small, the solver and the closed form agree
    res = bc.rate("mean", "pure", k=k, n=10**6, eps=1e-3, d=1)
    up = res.upper
    b = next(b for b in __import__("boundcalc.app.catalog", fromlist=["x"]).get_entry("mean", "pure").bounds(
        {"privacy": "pure", "k": float(k), "d": 1}) if b.name == up.name)
    values = {"n": 10**6, "eps": 1e-3, "d": 1, "r": 1.0}
    t_sym = float(b.optimum[S.T].subs({S.n: values["n"], S.eps: values["eps"], S.d: 1, S.r: 1}))
    assert up.free_parameters["T"] == pytest.approx(t_sym, rel=0.05)
    # the solver's value is never worse than the closed form, and not much better
    closed = float(b.evaluate(values, {"T": t_sym, "sigma_shrink": 0.0}))  # unshrunk
    assert up.value <= closed * (1 + 1e-9)
    assert up.value >= closed * 0.9


# ---------------------------------------------------------------- central mean mechanisms: privacy and E||W||²
# Added in the test audit: each upper bound's constant c (E||W||² = c T²) and the sampler's scale are
# checked against an independent privacy calibration and an independent second-moment formula.

def _mech_eval(expr, T, n, eps, d, delta, alpha):
    args = [S.T, S.n, S.eps, S.d, S.delta, S.alpha]
    return float(S.numpy_lambdify(args, sp.sympify(expr))(T, n, eps, d, delta, alpha))


def _bw_delta(sigma_over_sens, eps):
    """Balle & Wang Thm 8, from scipy: the exact δ of the Gaussian mechanism at σ/Δ and ε."""
    a, b = 1 / (2 * sigma_over_sens), eps * sigma_over_sens
    return math.exp(stats.norm.logcdf(a - b)) - math.exp(eps + stats.norm.logcdf(-a - b))


@pytest.mark.parametrize("name", sorted(mc.MECHANISMS))
@pytest.mark.parametrize("T,n,eps,d,delta", [(0.7, 50, 0.5, 1, 1e-5), (2.0, 1000, 0.9, 3, 1e-8),
                                              (1.3, 7, 0.2, 10, 1e-3)])
def test_mean_mechanism_noise_is_private_and_c_is_its_second_moment(name, T, n, eps, d, delta):
    privs, _title, c, sampler, scale, _conds, _why = mc.MECHANISMS[name]
    alpha = 0.3 if "tv" in privs else eps  # the tv/kl level (the CLI's --eps)
    b = _mech_eval(scale, T, n, eps, d, delta, alpha)
    ew2 = _mech_eval(c, T, n, eps, d, delta, alpha) * T ** 2
    sens2, sens1 = 2 * T / n, 2 * math.sqrt(d) * T / n  # ℓ2 / ℓ1 sensitivity of the projected mean
    if sampler == "laplace":  # i.i.d. Laplace(b) coordinates: ε-DP iff ℓ1 sensitivity <= ε b; E||W||² = 2 d b²
        assert sens1 <= eps * b * (1 + 1e-12)
        assert ew2 == pytest.approx(2 * d * b ** 2, rel=1e-12)
    elif sampler == "l2-laplace":  # density ∝ exp(-||w||/b): ε-DP iff Δ₂ <= ε b; ||W|| ~ Gamma(d, b)
        assert sens2 <= eps * b * (1 + 1e-12)
        assert ew2 == pytest.approx(stats.gamma(a=d, scale=b).moment(2), rel=1e-12)
    else:
        assert sampler == "gaussian"
        assert ew2 == pytest.approx(d * b ** 2, rel=1e-12)
        if "approx" in privs:  # exact δ of N(0, b² I) at ℓ2 sensitivity Δ₂
            assert _bw_delta(b / sens2, eps) <= delta * (1 + 1e-6)
        elif "kl" in privs:  # KL(N(μ,b²I) || N(μ',b²I)) = ||μ-μ'||²/(2b²)
            assert sens2 ** 2 / (2 * b ** 2) <= alpha * (1 + 1e-12)
        else:  # TV(N(μ,b²I), N(μ',b²I)) = 2Φ(||μ-μ'||/(2b)) - 1
            assert "tv" in privs
            assert 2 * stats.norm.cdf(sens2 / (2 * b)) - 1 == pytest.approx(alpha, rel=1e-9)


# ---------------------------------------------------------------- Le Cam (non-private) below the exact minimax risk

@pytest.mark.parametrize("n", [1, 4, 30, 1000])
def test_mean_le_cam_below_hodges_lehmann_exact_minimax(n):
    """The Le Cam pair {P_{1/2-h}, P_{1/2+h}} lies in the two-point family on {±r u}, whose exact minimax risk
    is r²/(1+√n)² (Hodges–Lehmann, verified above). A two-point lower bound cannot exceed it for any h: this
    fails if the Le Cam constant (Φ(s) with s = 2rh, factor 1/2) or the binomial TV were too large."""
    from boundcalc.app.catalog import get_entry

    r = 1.7
    b = next(x for x in get_entry("mean", "none").bounds({"privacy": "none", "k": 2.0, "d": 1}) if x.name == "le-cam")
    exact = r ** 2 / (1 + math.sqrt(n)) ** 2
    hs = np.linspace(1e-4, 0.5 - 1e-9, 400)
    vals = np.array([float(b.evaluate({"n": n, "r": r}, {"h": h})) for h in hs])
    assert np.all(vals <= exact * (1 + 1e-9))
    # and independently of the package: (2rh)²(1 - TV(Bin(n,1/2-h), Bin(n,1/2+h)))/2 from scipy
    j = np.arange(n + 1)
    for h, v in zip(hs[::40], vals[::40]):
        tv = 0.5 * np.abs(stats.binom.pmf(j, n, 0.5 - h) - stats.binom.pmf(j, n, 0.5 + h)).sum()
        # 1 - tv from a sum of pmf differences loses ~1e-16 absolute when TV is near 1: absolute tolerance
        assert v == pytest.approx((2 * r * h) ** 2 * (1 - tv) / 2, rel=1e-9, abs=(2 * r * h) ** 2 * 1e-14)
    assert vals.max() > 0.1 * exact  # not vacuous: Le Cam is within a factor ~6 of the exact minimax risk


# ---------------------------------------------------------------- central TV contraction (docs/methods/tv-contraction.md)

def _neighbour_pairs(nx, n):
    import itertools

    xs = list(itertools.product(range(nx), repeat=n))
    idx = {x: i for i, x in enumerate(xs)}
    pairs = [(idx[x], idx[x[:i] + (v,) + x[i + 1:]]) for x in xs for i in range(n) for v in range(nx) if v != x[i]]
    return xs, pairs


@pytest.mark.parametrize("nx,n", [(2, 2), (3, 2), (2, 3)])
def test_central_tv_contraction_brute_force(nx, n):
    """TV(M_0, M_1) <= min{α n TV(P_0,P_1), TV(P_0^n,P_1^n)} for random finite α-TV-private channels
    Q[x_{1:n}, z] (α = the exact max TV over neighbouring samples), exact laws by enumeration, using the
    package's sympy expression le_cam.tv_private_contraction."""
    from boundcalc.methods import le_cam

    rng = np.random.default_rng(100 * nx + n)
    xs, pairs = _neighbour_pairs(nx, n)
    worst = 0.0  # largest TV(M_0,M_1) / (α n TV(P_0,P_1))
    for trial in range(300):
        nz = int(rng.integers(2, 5))
        Q = rng.random((len(xs), nz)) ** rng.choice([1.0, 4.0, 12.0])
        Q = Q / Q.sum(axis=1, keepdims=True)
        alpha = max(0.5 * np.abs(Q[i] - Q[j]).sum() for i, j in pairs)
        P0, P1 = rng.dirichlet(np.ones(nx)), rng.dirichlet(np.ones(nx))
        if trial % 3 == 0:  # close pairs, where the α n TV term binds
            P1 = 0.97 * P0 + 0.03 * P1
        w0 = np.array([np.prod([P0[v] for v in x]) for x in xs])
        w1 = np.array([np.prod([P1[v] for v in x]) for x in xs])
        tv_m = 0.5 * np.abs(w0 @ Q - w1 @ Q).sum()
        tv1, tvn = 0.5 * np.abs(P0 - P1).sum(), 0.5 * np.abs(w0 - w1).sum()
        bound = float(le_cam.tv_private_contraction(sp.Float(alpha), n, sp.Float(tv1), sp.Float(tvn)))
        assert tv_m <= bound * (1 + 1e-12) + 1e-15
        worst = max(worst, tv_m / (alpha * n * tv1))
    # the α n TV term itself is nearly attained (0.7-0.93 here): a constant αn/2 would fail above
    assert worst > 0.6


# ---------------------------------------------------------------- TV-mixture lower bound: the implied TV levels

@pytest.mark.parametrize("priv,eps,delta", [("pure", 0.5, None), ("smooth", 2.0, None), ("approx", 1.0, 1e-3),
                                            ("tv", 0.05, None), ("kl", 0.02, None), ("kl", 3.0, None)])
def test_tv_mixture_uses_a_valid_tv_level(priv, eps, delta):
    """The central tv-mixture bound at the solver's p equals (r p^{(k-1)/k}/2)²(1 - min{nαp, 1-(1-p)^n})/2 with
    α the TV level implied by the model, computed here from first principles: pure/smooth tanh(ε/2),
    approx (e^ε-1+2δ)/(e^ε+1), tv α, kl min{√(α/2), √(1-e^{-α})} (Pinsker, Bretagnolle–Huber).
    A smaller (invalid) level would make the package's value larger and fail the test."""
    import boundcalc as bc

    n, k, r = 300, 4.0, 1.3
    kw = dict(n=n, k=k, r=r, eps=eps, **({"delta": delta} if delta else {}))
    b = next(x for x in bc.rate("mean", priv, **kw).lowers if x.name == "tv-mixture")
    alpha = {"pure": math.tanh(eps / 2), "smooth": math.tanh(eps / 2),
             "approx": (math.exp(eps) - 1 + 2 * (delta or 0)) / (math.exp(eps) + 1), "tv": eps,
             "kl": min(math.sqrt(eps / 2), math.sqrt(-math.expm1(-eps)))}[priv]
    p = b.free_parameters["p"]
    direct = (r * p ** ((k - 1) / k) / 2) ** 2 * (1 - min(n * alpha * p, 1 - (1 - p) ** n)) / 2
    assert b.value == pytest.approx(direct, rel=1e-9)


# ---------------------------------------------------------------- central lower bounds vs exact Bayes risks
# Le Cam (two points) and the uniformity-of-mass argument (N points) lower-bound the Bayes risk under the
# uniform prior on the hypotheses, for every channel with the privacy guarantee. Exact Bayes risks on small
# samples (n <= 3, all n-tuples of atoms enumerated) against the package's bound at the channel's exact level.

def _central_bayes_risk(atoms_p, thetas, Q, xs):
    """atoms_p: (V, A) laws on atoms; xs: list of n-tuples of atom indices; Q[x-tuple, z]."""
    lik = np.array([[np.prod(P[list(x)]) for x in xs] for P in atoms_p])  # (V, tuples)
    joint = (lik @ Q) / len(atoms_p)  # P(V = v, Z = z)
    est = (joint.T @ thetas) / joint.sum(axis=0)[:, None]  # posterior means (Z, dim)
    return float(np.sum(joint * ((thetas[:, None, :] - est[None, :, :]) ** 2).sum(-1)))


def _channels(nA, n, rng):
    import itertools

    xs = list(itertools.product(range(nA), repeat=n))
    X = np.array(xs)
    ham = (X[:, None, :] != X[None, :, :]).sum(-1)
    out = []
    for c in (0.3, 1.0, 2.5):  # Q(z|x) ∝ exp(-c d_ham(x, z)): exactly c-DP (the normalisers are all equal)
        Q = np.exp(-c * ham)
        out.append(Q / Q.sum(axis=1, keepdims=True))
    for _ in range(3):
        Q = np.exp(rng.choice([0.5, 2.0]) * rng.random((len(xs), int(rng.integers(2, 5)))))
        out.append(Q / Q.sum(axis=1, keepdims=True))
    _, pairs = _neighbour_pairs(nA, n)
    return xs, out, pairs


def test_central_tv_mixture_below_exact_bayes_risk():
    from boundcalc.app.catalog import get_entry

    rng = np.random.default_rng(41)
    k, r = 4.0, 1.0
    b = next(x for x in get_entry("mean", "tv").bounds({"privacy": "tv", "k": k, "d": 1}) if x.name == "tv-mixture")
    best = 0.0
    for n in (1, 2, 3):
        xs, chans, pairs = _channels(2, n, rng)
        for Q in chans:
            alpha = max(0.5 * np.abs(Q[i] - Q[j]).sum() for i, j in pairs)
            for p in (0.02, 0.1, 0.4):
                # atoms (0, r p^{-1/k}): P_0 = δ_0, P_1 = (1-p)δ_0 + p δ_a; means 0 and r p^{(k-1)/k}
                Pv = np.array([[1.0, 0.0], [1 - p, p]])
                th = np.array([[0.0], [r * p ** ((k - 1) / k)]])
                br = _central_bayes_risk(Pv, th, Q, xs)
                lb = float(b.evaluate({"n": n, "r": r, "alpha_TV": alpha}, {"p": p}))
                assert br >= lb * (1 - 1e-9), (n, alpha, p, br, lb)
                best = max(best, lb / br)
    assert best > 0.4


@pytest.mark.parametrize("s_pack", [1.0, 0.5])
def test_central_uniformity_line_below_exact_bayes_risk(s_pack):
    """§1.4 with N = ⌊2/s⌋+1 points on a diameter (the 'line' packing), ε-DP channels on 2-3 samples."""
    from boundcalc.app.catalog import get_entry

    rng = np.random.default_rng(int(10 * s_pack))
    k, r = 2.0, 1.0
    b = next(x for x in get_entry("mean", "pure").bounds({"privacy": "pure", "k": k, "d": 1})
             if x.name == "uniformity-line")
    u = -1 + s_pack * np.arange(int(math.floor(2 / s_pack)) + 1)
    best = 0.0
    for p in (0.1, 0.5, 0.9):
        a = r * p ** (-1 / k)
        vals = sorted(set(np.round(np.concatenate([[0.0], a * u]), 12)))
        Pv = np.zeros((len(u), len(vals)))
        for i, ui in enumerate(u):
            Pv[i, vals.index(0.0)] += 1 - p
            Pv[i, vals.index(round(a * ui, 12))] += p
        th = (r * p ** ((k - 1) / k) * u)[:, None]
        for n in (2, 3) if len(vals) <= 3 else (2,):
            xs, chans, pairs = _channels(len(vals), n, rng)
            for Q in chans:
                eps = max(float(np.max(np.abs(np.log(Q[i]) - np.log(Q[j])))) for i, j in pairs)
                br = _central_bayes_risk(Pv, th, Q, xs)
                lb = max(float(b.evaluate({"n": n, "r": r, "eps": eps}, {"p": p, "M": M, "s": s_pack}))
                         for M in range(n + 1))
                assert br >= lb * (1 - 1e-9), (n, eps, p, br, lb)
                best = max(best, lb / br)
    assert best > 0.05  # (ρ*/2)² × failure uses only the closest pair: 0.09-0.3 of the exact Bayes risk here


# ---------------------------------------------------------------- packings of the unit ball (uniformity bounds)

@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("s", [0.5, 0.3])
def test_volumetric_packing_count(d, s):
    """A maximal s-packing of the unit ball has N >= (1/s)^d points (its s-balls cover the ball): a greedy
    packing over a fine grid of the ball, with pairwise distances >= s checked."""
    rng = np.random.default_rng(int(100 * s) + d)
    pts = rng.uniform(-1, 1, size=(20000 * d, d))
    pts = pts[np.linalg.norm(pts, axis=1) <= 1]
    chosen = []
    for x in pts:
        if not chosen or np.min(np.linalg.norm(np.array(chosen) - x, axis=1)) >= s:
            chosen.append(x)
    C = np.array(chosen)
    dist = np.linalg.norm(C[:, None] - C[None], axis=-1) + np.eye(len(C)) * 9
    assert dist.min() >= s
    assert len(C) >= (1 / s) ** d


@pytest.mark.parametrize("priv,d", [("pure", 3), ("approx", 3), ("pure", 16), ("approx", 9)])
def test_uniformity_packings_values_from_independent_pieces(priv, d):
    """Each packing's bound at the solver's free parameters equals (r p^{(k-1)/k} dist/2)² × the §1.4 failure
    probability (paper form) with the packing's N: coords N = 2d at distance √2; volume N - 1 = (1/s)^d - 1 at
    distance s; Varshamov–Gilbert N - 1 = 2^{d/8} at distance 1/√2 (d >= 8); line N = ⌊2/s⌋+1 at distance s."""
    import boundcalc as bc

    n, eps, delta, k, r = 2000, 0.5, 1e-6, 4.0, 1.1
    kw = {"delta": delta} if priv == "approx" else {}
    res = bc.rate("mean", priv, n=n, eps=eps, d=d, k=k, r=r, **kw)
    seen = 0
    for b in res.lowers:
        if not b.name.startswith("uniformity-"):
            continue
        f = b.free_parameters
        p, M, s = f["p"], int(f["M"]), f.get("s")
        N, dist = {"uniformity-coords": (2 * d, math.sqrt(2)), "uniformity-volume": ((1 / s) ** d if s else None, s),
                   "uniformity-varshamov-gilbert": (2 ** (d / 8) + 1, 1 / math.sqrt(2)),
                   "uniformity-line": (math.floor(2 / s) + 1 if s else None, s)}[b.name]
        direct = (r * p ** ((k - 1) / k) * dist / 2) ** 2 * uniformity.failure_probability_direct(
            N, n, p, M, eps, delta if kw else 0.0)
        assert b.value == pytest.approx(direct, rel=1e-7), b.name
        seen += 1
    assert seen == (4 if d >= 8 else 3)
