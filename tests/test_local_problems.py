"""Local-privacy problems through the Python API: certified lower <= upper on grids and extremes, the
rate scalings of the issue, closed-form special cases, and quick simulation checks."""
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

import boundcalc as bc
from boundcalc.problems import gaussian as G
from boundcalc.problems import multinomial as MN
from boundcalc.problems import sparse_bernoulli as SB

CASES = [("mean", {}), ("mean", {"k": "inf"}), ("mean", {"k": 4}), ("mean", {"d": 8}),
         ("mean", {"d": 8, "ball": "linf", "k": "inf"}), ("multinomial", {}), ("multinomial", {"loss": "l1"}),
         ("discrete", {"d": 3}), ("gaussian", {}), ("gaussian", {"d": 4, "sigma": 2.0}),
         ("sparse-bernoulli", {}), ("sparse-bernoulli", {"s": 0.5, "d": 30})]


def _bounds(prob, **kw):
    r = bc.rate(prob, "local", **kw)
    assert r.lower is not None and r.upper is not None, (prob, kw)
    assert r.lower.certified and r.upper.certified
    lo, up = r.lower.value, r.upper.value
    assert math.isfinite(lo) and math.isfinite(up) and lo > 0
    assert lo <= up * (1 + 1e-9), (prob, kw, lo, up)
    return lo, up


@pytest.mark.parametrize("prob,kw", CASES)
def test_lower_below_upper_on_grid_and_extremes(prob, kw):
    for n, eps in [(10, 0.1), (1000, 1.0), (10 ** 6, 3.0), (1, 1e-6), (10 ** 15, 50.0), (10 ** 15, 1e-6),
                   (100, 1e3)]:
        _bounds(prob, n=n, eps=eps, **kw)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logn=st.floats(0, 12), logeps=st.floats(-3, 1.5), case=st.sampled_from(range(len(CASES))))
def test_property_lower_le_upper_and_monotone_in_n(logn, logeps, case):
    prob, kw = CASES[case]
    n, eps = int(10 ** logn), 10 ** logeps
    lo1, up1 = _bounds(prob, n=n, eps=eps, **kw)
    lo2, up2 = _bounds(prob, n=10 * n, eps=eps, **kw)
    assert up2 <= up1 * (1 + 1e-6)
    assert lo2 <= lo1 * (1 + 1e-3)


def _slope(prob, key, a, b, **kw):
    la, ua = _bounds(prob, **{**kw, key: a})
    lb, ub = _bounds(prob, **{**kw, key: b})
    return math.log(lb / la) / math.log(b / a), math.log(ub / ua) / math.log(b / a)


@pytest.mark.parametrize("k", [2, 4, "inf"])
def test_mean_1d_scales_as_n_eps2_power(k):
    a = 1.0 if k == "inf" else (k - 1) / k
    sl, su = _slope("mean", "n", 10 ** 10, 10 ** 12, eps=0.1, k=k)
    assert sl == pytest.approx(-a, abs=0.05) and su == pytest.approx(-a, abs=0.05)
    sl, su = _slope("mean", "eps", 0.01, 0.02, n=10 ** 13, k=k)
    assert sl == pytest.approx(-2 * a, abs=0.1) and su == pytest.approx(-2 * a, abs=0.1)


def test_mean_l2_ball_scales_as_d_over_n_eps2():
    kw = dict(k="inf", eps=0.1, n=10 ** 9)
    sl, su = _slope("mean", "d", 5, 20, **kw)
    assert sl == pytest.approx(1.0, abs=0.1) and su == pytest.approx(1.0, abs=0.1)
    sl, su = _slope("mean", "n", 10 ** 9, 10 ** 11, d=10, k="inf", eps=0.1)
    assert sl == pytest.approx(-1.0, abs=0.05) and su == pytest.approx(-1.0, abs=0.05)
    lo, up = _bounds("mean", d=10, **kw)
    assert up / lo < 2.5  # ℓ2 sampling is within a constant 2.2 of van Trees here


def test_mean_linf_ball_scales_as_d2():
    sl, su = _slope("mean", "d", 5, 20, k="inf", eps=0.1, n=10 ** 10, ball="linf")
    assert sl == pytest.approx(2.0, abs=0.1) and su == pytest.approx(2.0, abs=0.1)


def test_multinomial_small_and_moderate_eps_regimes():
    # small ε: d/(nε²)
    sl, su = _slope("multinomial", "eps", 0.01, 0.02, n=10 ** 12, d=50)
    assert sl == pytest.approx(-2, abs=0.1) and su == pytest.approx(-2, abs=0.1)
    sl, su = _slope("multinomial", "d", 50, 200, n=10 ** 12, eps=0.05)
    assert sl == pytest.approx(1, abs=0.1) and su == pytest.approx(1, abs=0.1)
    # 1 << e^ε << d: d/(n e^ε)
    lo4, up4 = _bounds("multinomial", n=10 ** 15, d=10 ** 5, eps=4.0)
    lo6, up6 = _bounds("multinomial", n=10 ** 15, d=10 ** 5, eps=6.0)
    assert math.log(lo6 / lo4) == pytest.approx(-2.0, abs=0.2)
    assert math.log(up6 / up4) == pytest.approx(-2.0, abs=0.2)
    # ε >> log d: 1/n (the non-private rate); subset size tuned to 1 (k-RR)
    r = bc.rate("multinomial", "local", n=10 ** 6, d=10, eps=20.0)
    assert r.upper.value == pytest.approx((1 - 1 / 10) / 10 ** 6, rel=1e-3)


def test_multinomial_subset_size_is_tuned():
    r = bc.rate("multinomial", "local", n=10 ** 4, d=64, eps=1.0)
    subset = next(b for b in r.uppers if b.name == "subset")  # (the projected bounds may be the best upper)
    s = subset.free_parameters["s_sub"]
    from boundcalc.mechanisms import discrete as DM

    risks = [float(DM.worst_risk("subset", 10 ** 4, 1.0, 64, k)) for k in range(1, 64)]
    assert s == int(np.argmin(risks)) + 1


def test_gaussian_scales_as_sigma2_d2_over_n_eps2():
    lo1, _ = _bounds("gaussian", n=10 ** 10, eps=0.05, d=2, sigma=1.0, B=10.0)
    lo2, _ = _bounds("gaussian", n=10 ** 10, eps=0.05, d=2, sigma=2.0, B=20.0)
    assert lo2 / lo1 == pytest.approx(4.0, rel=0.02)
    sl, su = _slope("gaussian", "d", 2, 8, n=10 ** 12, eps=0.05)
    assert sl == pytest.approx(2.0, abs=0.05) and su == pytest.approx(2.0, abs=0.15)
    sl, su = _slope("gaussian", "eps", 0.01, 0.02, n=10 ** 12, d=2)
    assert sl == pytest.approx(-2.0, abs=0.05) and su == pytest.approx(-2.0, abs=0.15)
    sl, su = _slope("gaussian", "n", 10 ** 8, 10 ** 10, eps=0.1)
    assert sl == pytest.approx(-1.0, abs=0.02)
    assert -1.03 < su <= -0.999  # threshold schemes: no log factor (clipping had one); two-stage a bit faster than 1/n


# ------------------------------------------------------------------------- closed-form special cases

@pytest.mark.parametrize("d", [4, 10, 64])
def test_multinomial_van_trees_matches_closed_form_at_w_half(d):
    b = next(x for x in MN.Multinomial().bounds_local({"loss": "l2sq"}) if x.name == "van-trees")
    for n, eps in [(100, 0.5), (10 ** 5, 1.0), (10 ** 7, 2.0)]:
        mine = float(b.evaluate({"n": n, "eps": eps, "d": d, "m_pairs": d // 2}, {"w": 0.5}))
        cat = 0.5 / (n * min(4 / 3, 8 / (3 * d) * math.sinh(eps / 2) ** 2) + 2 * math.pi ** 2 * d)
        assert mine == pytest.approx(cat, rel=1e-10)


def test_paired_reduction_inequality():
    rng = np.random.default_rng(0)
    for _ in range(500):
        d = 2 * rng.integers(1, 10)
        delta = rng.normal(size=d)
        th = (d / 2) * (delta[0::2] - delta[1::2])
        assert np.sum(delta ** 2) >= 2 / d ** 2 * np.sum(th ** 2) - 1e-12


def test_gaussian_van_trees_matches_closed_form():
    b = next(x for x in G.Gaussian().bounds_local({"d": 3}) if x.name == "van-trees")
    for n, eps, d, sg, B in [(100, 0.5, 3, 1.0, 1.0), (10 ** 6, 3.0, 5, 2.0, 0.5), (10 ** 4, 10.0, 2, 1.0, 3.0)]:
        mine = float(b.evaluate({"n": n, "eps": eps, "d": d, "sigma": sg, "B": B}))
        cat = sg ** 2 * d ** 2 / (n * min(d, math.sinh(eps / 2) ** 2, 2 * eps) + sg ** 2 * d * math.pi ** 2 / B ** 2)
        assert mine == pytest.approx(cat, rel=1e-10)


def test_gauss_loss_function_and_clipping_bias():
    t = sp.Symbol("t", positive=True)
    import mpmath

    for x in (0.0, 0.3, 1.0, 3.0, 8.0, 30.0):
        with mpmath.workdps(60):
            xm = mpmath.mpf(x)
            ref = float(mpmath.npdf(xm) - xm * mpmath.erfc(xm / mpmath.sqrt(2)) / 2)  # φ(x) - x(1-Φ(x))
        assert float(G.gauss_loss_np(x)) == pytest.approx(ref, rel=1e-9)
        if x < 5:
            direct = integrate.quad(lambda g: (g - x) * stats.norm.pdf(g), x, np.inf)[0]
            assert ref == pytest.approx(direct, rel=1e-7)
            assert float(G.psi_symbolic(t).subs(t, x)) == pytest.approx(ref, rel=1e-9)
    vals = G.gauss_loss_np(np.linspace(0, 60, 601))
    assert np.all(vals >= 0) and np.all(np.diff(vals) <= 0)
    # |E clip(X) - θ| <= σ ψ(τ/σ) for θ in [-B, B], exact integration
    for sg, B, tau in [(1.0, 1.0, 0.5), (2.0, 0.5, 3.0), (0.5, 2.0, 1.0)]:
        L = B + tau
        for th in np.linspace(-B, B, 9):
            m = integrate.quad(lambda x: np.clip(x, -L, L) * stats.norm.pdf(x, th, sg), th - 40 * sg, th + 40 * sg,
                               points=[-L, L], limit=200)[0]
            assert abs(m - th) <= sg * float(G.gauss_loss_np(tau / sg)) * (1 + 1e-7) + 1e-12


def test_sparse_bernoulli_fisher_constant_and_box_condition():
    for s, d in [(1, 20), (5, 20), (10, 20), (20, 20), (0.3, 5)]:
        m = min(s / d, 0.5)
        grid = np.linspace(m / 2, m, 2001)
        fisher = 1 / (grid * (1 - grid))
        I0 = 4 / (m * (2 - m))
        assert fisher.max() == pytest.approx(I0, rel=1e-12)
        if s <= d / 2:
            assert I0 <= 8 * d / (3 * s) + 1e-12
    # the box [s/(2d), s/d] with I_0 = 8d/(3s) fails when s > d/2 (here s = 0.9 d)
    s, d = 18, 20
    grid = np.linspace(s / (2 * d), s / d, 2001)
    assert (1 / (grid * (1 - grid))).max() > 8 * d / (3 * s)


def test_sparse_bernoulli_validation():
    from boundcalc.core.errors import InputError

    with pytest.raises(InputError, match="--s"):
        bc.rate("sparse-bernoulli", "local", s=30, d=20)
    with pytest.raises(InputError, match="--delta"):
        bc.rate("sparse-bernoulli", "local", delta=1e-6)
    with pytest.raises(InputError, match="--d"):
        bc.rate("multinomial", "local", d=2.5)


def test_order_only_bound_is_never_selected():
    r = bc.rate("sparse-bernoulli", "local", n=10 ** 6, d=50, s=1, eps=0.5)
    bco = next(b for b in r.uppers if b.name == "bco-reduction")
    assert not bco.certified
    assert r.upper.name != "bco-reduction"


def test_evaluate_curve_vectorised():
    ns = np.logspace(2, 12, 1000)
    for prob, kw in [("mean", {"d": 10}), ("multinomial", {"d": 20}), ("gaussian", {"d": 2}),
                     ("sparse-bernoulli", {})]:
        up = bc.evaluate_curve(prob, "local", side="upper", n=ns, eps=0.5, **kw)
        lo = bc.evaluate_curve(prob, "local", side="lower", n=ns, eps=0.5, **kw)
        assert up.shape == ns.shape and np.all(np.isfinite(up)) and np.all(np.isfinite(lo))
        assert np.all(lo <= up * (1 + 1e-9))
        assert np.all(np.diff(up) <= 1e-12)


@pytest.mark.parametrize("prob,kw", [("mean", {"k": 3}), ("mean", {"d": 3, "k": "inf"}),
                                     ("mean", {"d": 3, "ball": "linf"}), ("multinomial", {"d": 6}),
                                     ("multinomial", {"d": 6, "loss": "l1", "eps": 3.0}),
                                     ("gaussian", {}), ("sparse-bernoulli", {"d": 10, "s": 1})])
def test_checks_pass_quickly(prob, kw):
    res = bc.check(prob, privacy="local", reps=60, seed=1, ns=[300, 1000, 3000], **kw)
    assert res.passed, res.failures


def test_checks_are_reproducible():
    for prob, kw in [("mean", {"d": 2}), ("multinomial", {"d": 4}), ("sparse-bernoulli", {"d": 5, "s": 1}),
                     ("gaussian", {})]:
        a = bc.check(prob, privacy="local", reps=20, seed=7, ns=[200, 400], **kw).to_dict()
        b = bc.check(prob, privacy="local", reps=20, seed=7, ns=[200, 400], **kw).to_dict()
        assert [r["risk"] for r in a["rows"]] == [r["risk"] for r in b["rows"]]
        c = bc.check(prob, privacy="local", reps=20, seed=8, ns=[200, 400], **kw).to_dict()
        assert [r["risk"] for r in a["rows"]] != [r["risk"] for r in c["rows"]]


# ----------------------------------------------------------------------------- audit additions (appended)
# Assouad's argument lower-bounds the Bayes risk under the uniform prior on the hypercube, for every channel.
# So for any ε-LDP channel Q, the exact Bayes risk (optimal estimator, exact enumeration of the outputs) must be
# at least the package's private Assouad bound at that ε: a check of the whole chain (separation constant s,
# flip TV, private TV bound), which fails if any constant is too large.

def _bayes_risk(Pv, thetas, Q, n, loss):
    import itertools

    Mv = Pv @ Q  # (|V|, nz) one-output laws (non-interactive channel, i.i.d. users)
    nz = Q.shape[1]
    total = 0.0
    for zs in itertools.product(range(nz), repeat=n):
        w = np.prod(Mv[:, list(zs)], axis=1) / len(Pv)  # joint P(V = v, Z = zs)
        if loss == "l2sq":
            est = (w @ thetas) / w.sum()
            total += float(w @ np.sum((thetas - est) ** 2, axis=1))
        else:  # ℓ1: coordinate-wise posterior median, found among the support points
            for j in range(thetas.shape[1]):
                cand = thetas[:, j]
                total += float(min(w @ np.abs(cand - c) for c in cand))
    return total


def _assouad_check(bound, values, free, Pv, thetas, loss, seed, n_values=(1, 2, 3)):
    from boundcalc.methods import ldp as LDP

    rng = np.random.default_rng(seed)
    nx = Pv.shape[1]
    best = 0.0
    for trial in range(12):
        if trial % 3 == 0:  # k-RR at level ε on the atoms: a good channel
            e = float(rng.choice([0.5, 1.5, 3.0]))
            Q = np.full((nx, nx), 1.0) + np.eye(nx) * math.expm1(e)
            Q /= Q.sum(axis=1, keepdims=True)
        else:
            Q, e = LDP.random_channel(nx, int(rng.integers(2, 5)), rng, float(rng.choice([0.3, 1.0, 3.0])),
                                      bool(rng.integers(2)))
        eps = LDP.privacy_level(Q)
        for n in n_values:
            lb = float(bound.evaluate({**values, "n": n, "eps": eps}, free))
            br = _bayes_risk(Pv, thetas, Q, n, loss)
            assert br >= lb * (1 - 1e-9), (n, eps, br, lb)
            best = max(best, lb / br)
    return best


@pytest.mark.parametrize("loss", ["l2sq", "l1"])
@pytest.mark.parametrize("delta_gap", [0.3, 0.9])
def test_multinomial_assouad_below_exact_bayes_risk(loss, delta_gap):
    import itertools

    b = next(x for x in MN._bounds(loss, True) if x.name == "assouad")
    mp, d = 2, 4
    V = np.array(list(itertools.product([-1, 1], repeat=mp)), float)
    Pv = np.array([[(1 + delta_gap * v[0]) / 4, (1 - delta_gap * v[0]) / 4,
                    (1 + delta_gap * v[1]) / 4, (1 - delta_gap * v[1]) / 4] for v in V])
    best = _assouad_check(b, {"d": d}, {"delta_gap": delta_gap, "m": mp}, Pv, Pv.copy(), loss, seed=7)
    assert best > 0.9  # 0.95-0.99 of the exact Bayes risk: a constant 1.1x too large would fail


@pytest.mark.parametrize("delta_gap", [0.3, 0.9])
def test_local_mean_assouad_below_exact_bayes_risk(delta_gap):
    import itertools
    from boundcalc.problems import local_mean as LM

    b = next(x for x in LM._bounds(2.0, False, "l2") if x.name == "assouad")
    m, r = 2, 1.5
    V = np.array(list(itertools.product([-1, 1], repeat=m)), float)
    # atoms +r e_1, -r e_1, +r e_2, -r e_2: P_v(±r e_j) = (1 ± δ v_j)/(2m), mean (rδ/m) v
    Pv = np.array([[(1 + delta_gap * v[0]) / 4, (1 - delta_gap * v[0]) / 4,
                    (1 + delta_gap * v[1]) / 4, (1 - delta_gap * v[1]) / 4] for v in V])
    thetas = r * delta_gap / m * V
    best = _assouad_check(b, {"d": m, "r": r}, {"delta_gap": delta_gap, "m": m}, Pv, thetas, "l2sq", seed=8)
    assert best > 0.9  # 0.95-0.99 of the exact Bayes risk: a constant 1.1x too large would fail


@pytest.mark.parametrize("delta_gap", [0.3, 0.9])
def test_sparse_bernoulli_assouad_below_exact_bayes_risk(delta_gap):
    import itertools

    b = next(x for x in SB._bounds(True) if x.name == "assouad")
    a, s = 2, 0.6
    mm = min(s / a, 0.5)
    V = np.array(list(itertools.product([-1, 1], repeat=a)), float)
    thetas = mm / 2 * (1 + delta_gap * V)
    X = np.array(list(itertools.product([0, 1], repeat=a)), float)
    Pv = np.array([np.prod(np.where(X == 1, th, 1 - th), axis=1) for th in thetas])
    best = _assouad_check(b, {"d": 5, "s": s}, {"delta_gap": delta_gap, "a": a}, Pv, thetas, "l2sq", seed=9)
    assert best > 0.9  # 0.95-0.99 of the exact Bayes risk: a constant 1.1x too large would fail


# Le Cam's two-point bound also lower-bounds the Bayes risk under the uniform prior on the two points.

@pytest.mark.parametrize("k", [2.0, 4.0])
def test_local_mean_le_cam_bounds_below_exact_bayes_risk(k):
    from boundcalc.problems import local_mean as LM

    bs = {x.name: x for x in LM._bounds(k, True, "l2")}
    r = 1.2
    rng = np.random.default_rng(int(k))
    best = {"le-cam-mixture": 0.0, "le-cam-two-point": 0.0}
    for p in (0.05, 0.3, 0.8):
        a = r * p ** (-1 / k)
        # atoms (-a, 0, a): P_± = (1-p)δ_0 + p δ_{±a}, means ±r p^{(k-1)/k}
        mix = (np.array([[0, 1 - p, p], [p, 1 - p, 0]]), np.array([[r * p ** ((k - 1) / k)], [-r * p ** ((k - 1) / k)]]))
        # atoms (-r, r): P(X = ±r) = (1 ± h)/2 with h = p, means ±r h
        two = (np.array([[(1 - p) / 2, (1 + p) / 2], [(1 + p) / 2, (1 - p) / 2]]), np.array([[r * p], [-r * p]]))
        for name, (Pv, th), free in (("le-cam-mixture", mix, {"p": p}), ("le-cam-two-point", two, {"h": p})):
            for trial in range(8):
                nx = Pv.shape[1]
                if trial % 2 == 0:  # randomized response on the atoms
                    e = float(rng.choice([0.3, 1.0, 3.0]))
                    Q = np.ones((nx, nx)) + np.eye(nx) * math.expm1(e)
                    Q /= Q.sum(axis=1, keepdims=True)
                else:
                    from boundcalc.methods import ldp as LDP
                    Q, e = LDP.random_channel(nx, int(rng.integers(2, 4)), rng, float(rng.choice([0.3, 2.0])), True)
                from boundcalc.methods import ldp as LDP
                eps = LDP.privacy_level(Q)
                for n in (1, 3, 6):
                    lb = float(bs[name].evaluate({"n": n, "eps": eps, "r": r, "d": 1}, free))
                    br = _bayes_risk(Pv, th, Q, n, "l2sq")
                    assert br >= lb * (1 - 1e-9), (name, p, n, eps, br, lb)
                    best[name] = max(best[name], lb / br)
    assert min(best.values()) > 0.4  # about 0.5: Le Cam loses exactly its factor 1/2 at small TV


def test_gaussian_le_cam_tv_terms_by_quadrature():
    """Gaussian le-cam: TV(N(h,σ²), N(-h,σ²)) and the n-sample TV (the mean is sufficient: N(±h, σ²/n)) by
    quadrature, against the bound evaluated at a huge ε (the private TV terms then exceed 1 and the exact
    n-sample term binds) and at small ε (the (e^ε-1)√(n/(e^ε+1))TV term)."""
    from scipy import integrate as I

    b = next(x for x in G.Gaussian().bounds_local({"d": 1}) if x.name == "le-cam")
    for n, sg, h in [(1, 1.0, 0.4), (10, 2.0, 0.5), (200, 0.7, 0.05)]:
        tv = lambda s: 0.5 * I.quad(lambda x: abs(stats.norm.pdf(x, h, s) - stats.norm.pdf(x, -h, s)),
                                    -h - 40 * s, h + 40 * s, points=[0.0], limit=200)[0]
        tvn, tv1 = tv(sg / math.sqrt(n)), tv(sg)
        v = {"n": n, "d": 1, "sigma": sg, "B": 1.0}
        assert float(b.evaluate({**v, "eps": 30.0}, {"h": h})) == pytest.approx(h ** 2 * (1 - tvn) / 2, rel=1e-7)
        e = 1e-3
        assert float(b.evaluate({**v, "eps": e}, {"h": h})) == pytest.approx(
            h ** 2 * (1 - math.expm1(e) * math.sqrt(n / (math.exp(e) + 1)) * tv1) / 2, rel=1e-7)  # χ²–TV, Pinsker


@pytest.mark.parametrize("n", [10 ** 16, 10 ** 18])
def test_local_mean_two_point_below_certified_upper_at_huge_n(n):
    """Regression: at n = 1e18, k = inf, le-cam-two-point was 2.67e-17 > one-bit 4.68e-18 (float64 exact
    binomial TV wrong for n > 2^53; methods.ldp.binomial_tv_bound switches to the Hellinger bound there)."""
    for k in ("inf", 2.0):
        res = bc.rate("mean", "local", k=k, n=n)
        for b in res.lowers:
            assert b.value is None or b.value <= res.upper.value, (k, b.name)
        sb = bc.rate("sparse-bernoulli", "local", n=n)
        assert sb.lower.value <= sb.upper.value


@pytest.mark.parametrize("delta_gap", [0.3, 0.9])
@pytest.mark.parametrize("a,s", [(2, 0.6), (2, 2.0), (1, 0.5)])
def test_sparse_bernoulli_posterior_assouad_below_exact_bayes_risk(delta_gap, a, s):
    """The posterior-mean Assouad bound (a active coordinates) stays below the exact Bayes risk of its own
    hypercube family under k-RR and random ε-LDP channels (n = 1, 2, 3; ε up to about 9)."""
    import itertools

    b = next(x for x in SB._bounds(True) if x.name == "posterior-assouad")
    mm = min(s / a, 0.5)
    V = np.array(list(itertools.product([-1, 1], repeat=a)), float)
    thetas = mm / 2 * (1 + delta_gap * V)
    X = np.array(list(itertools.product([0, 1], repeat=a)), float)
    Pv = np.array([np.prod(np.where(X == 1, th, 1 - th), axis=1) for th in thetas])
    best = _assouad_check(b, {"d": 5, "s": s}, {"delta_gap": delta_gap, "a": a}, Pv, thetas, "l2sq", seed=19 + a)
    assert best > 0.3  # not vacuous


def test_sparse_bernoulli_lower_monotone():
    """The certified lower bound never decreases with d and never increases with n or ε."""
    lo = lambda **kw: bc.rate("sparse-bernoulli", "local", s=2, **kw).lower.value
    for n in (10, 10 ** 3, 10 ** 6):
        for e in (0.3, 2.0, 8.0):
            vals = [lo(n=n, eps=e, d=d) for d in (2, 10, 100, 1000)]
            assert all(y >= x * (1 - 1e-6) for x, y in zip(vals, vals[1:])), (n, e, vals)
            assert lo(n=10 * n, eps=e, d=50) <= lo(n=n, eps=e, d=50) * (1 + 1e-6)
            assert lo(n=n, eps=2 * e, d=50) <= lo(n=n, eps=e, d=50) * (1 + 1e-6)


@pytest.mark.parametrize("n", [10 ** 12, 10 ** 15, 10 ** 18])
def test_sparse_bernoulli_lowers_below_upper_at_huge_n(n):
    """Regression: the Bernoulli KL in float64 cancelled to negative values at δ ~ 1e-9 (n = 1e18) and the
    posterior-mean bound exploded; every certified lower must stay below the certified upper."""
    for e in (0.1, 3.0, 20.0):
        for d, s in ((20, 2.0), (5, 0.5), (1000, 2.0)):
            res = bc.rate("sparse-bernoulli", "local", n=n, d=d, s=s, eps=e)
            for b in res.lowers:
                if b.certified and b.value is not None:
                    assert 0 <= b.value <= res.upper.value, (e, d, s, b.name)


def test_sparse_bernoulli_posterior_assouad_below_rr_scheme_large_n():
    """a = 1: θ = (m/2)(1 + δv), v uniform on {±1}. At fixed δ the bound lower-bounds the Bayes risk, hence the
    v-averaged risk of a concrete scheme: randomized response at level ε on the bit, posterior-mean estimate
    of θ given the count of ones (the Bayes estimator for this channel, computed exactly from the binomial
    laws). n up to 10⁴, ε up to 8, s ∈ {0.5, 2}."""
    from scipy import stats as st_

    b = next(x for x in SB._bounds(True) if x.name == "posterior-assouad")
    best = 0.0
    for s in (0.5, 2.0):
        mm = min(s / 1, 0.5)
        for n in (10, 100, 1000, 10000):
            for eps in (0.1, 1.0, 3.0, 8.0):
                q = 1 / (1 + math.exp(-eps))
                for delta in np.geomspace(1e-3, 0.99, 15):
                    th = np.array([mm / 2 * (1 + delta), mm / 2 * (1 - delta)])
                    pr = th * q + (1 - th) * (1 - q)
                    k = np.arange(n + 1)
                    w = np.array([st_.binom.pmf(k, n, p) for p in pr]) / 2  # joint P(v, count)
                    est = (w * th[:, None]).sum(0) / np.maximum(w.sum(0), 1e-300)
                    bayes = float((w * (th[:, None] - est[None, :]) ** 2).sum())
                    lb = float(b.evaluate({"n": n, "eps": eps, "d": 3, "s": s}, {"delta_gap": delta, "a": 1}))
                    assert lb <= bayes * (1 + 1e-7) + 1e-18, (s, n, eps, delta, lb, bayes)
                    best = max(best, lb / bayes)
    assert best > 0.3

