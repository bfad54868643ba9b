"""Runnable local randomizers (issue 31; docs/methods/local-randomizers.md).

Per problem family: the mechanism of every certified upper bound is built through ``BoundValue.mechanism()``
(the problem's ``mechanism_local`` hook), its privacy is re-checked independently (exact likelihood ratios of the
finite channel, or the calibration formula), and it is run on records drawn from hard instances of ``check``
(``privatize_all`` then ``estimate``, seeded): the 99% interval of the simulated risk must reach below the
certified upper bound, and agree with the ``simulate`` fast path that ``check`` runs. Bad input raises InputError.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import boundcalc as bc
from boundcalc.core.errors import InputError
from boundcalc.mechanisms import local_runnable as LR
from boundcalc.mechanisms.runnable import Guarantee, LocalMechanism

Z99 = 2.5758293035489004


def interval(losses):
    losses = np.asarray(losses, float)
    m = float(losses.mean())
    se = float(losses.std(ddof=1) / math.sqrt(losses.size))
    return m, m - Z99 * se, m + Z99 * se


def mechanisms(problem, **kw):
    """(bound value, mechanism) for every certified upper bound of rate(problem, local, **kw) that has one."""
    res = bc.rate(problem, "local", **kw)
    out = []
    for u in res.uppers:
        if not (u.certified and u.usable and math.isfinite(u.value)):
            continue
        out.append((u, u.mechanism()))
    assert out and res.upper.name in {u.name for u, _ in out}
    return out


def run(mech, draw, reps, seed, loss):
    """``reps`` seeded runs of the user-facing path: records -> privatize_all -> estimate -> loss."""
    rng = np.random.default_rng(seed)
    return np.array([loss(mech.estimate(mech.privatize_all(draw(rng), rng))) for _ in range(reps)])


def check_against(u, losses, fast=None):
    m, lo, hi = interval(losses)
    assert lo <= u.value * (1 + 1e-12), (u.name, m, lo, u.value)  # the certified worst-case risk holds on this instance
    if fast is not None and np.ptp(fast) > 0 and np.ptp(losses) > 0:
        mf, lof, hif = interval(fast)
        # the user path and check's fast path estimate the same risk (two 99% intervals of one mean overlap)
        assert lo <= hif and lof <= hi, (u.name, (m, lo, hi), (mf, lof, hif))


# ------------------------------------------------------------------ the hook covers every reported upper bound

CONFIGS = [
    ("multinomial", dict(n=2000, d=6, eps=1.0, loss="l2sq")),
    ("multinomial", dict(n=2000, d=6, eps=1.0, loss="l1")),
    ("mean", dict(n=1000, d=1, r=1.0, k=2.0, eps=1.0)),
    ("mean", dict(n=500, d=3, r=1.0, k=2.0, eps=2.0, ball="l2")),
    ("mean", dict(n=500, d=3, r=1.0, k=2.0, eps=2.0, ball="linf")),
    ("gaussian", dict(n=2000, d=1, sigma=1.0, B=1.0, eps=1.0)),
    ("gaussian", dict(n=1000, d=2, sigma=1.0, B=1.0, eps=2.0)),
    ("sparse-bernoulli", dict(n=2000, d=8, s=2.0, eps=2.0)),
    ("density", dict(n=2000, beta=1.0, L=1.0, eps=1.0)),
    ("linear", dict(n=500, d=4, r=1.0, M=1.0, geometry="l2", eps=1.0)),
    ("linear", dict(n=500, d=4, r=1.0, M=1.0, geometry="l1", eps=1.0)),
]


@pytest.mark.parametrize("problem, kw", CONFIGS)
def test_every_certified_upper_has_a_private_runnable_mechanism(problem, kw):
    for u, mech in mechanisms(problem, **kw):
        assert isinstance(mech, LocalMechanism)
        assert mech.problem == problem and mech.privacy == "local" and mech.bound == u.name
        assert mech.certified_risk == pytest.approx(u.value) and mech.n == kw["n"]
        assert mech.guarantee.privacy == "local" and mech.guarantee.eps == kw["eps"]
        verdict = mech.check_privacy()
        assert verdict["passed"], (u.name, verdict)
        assert verdict["method"] and math.isfinite(verdict.get("log_ratio", math.log(verdict.get("ratio", 1.0))))
        assert mech.describe() and mech.to_dict()["bound"] == u.name


def test_order_only_bound_has_no_mechanism():
    res = bc.rate("sparse-bernoulli", "local", n=2000, d=8, s=2.0, eps=2.0)
    bco = next(u for u in res.uppers if u.name == "bco-reduction")
    with pytest.raises(InputError, match="no runnable mechanism"):
        bco.mechanism()


# ------------------------------------------------------------------ privacy: the checks can fail

def test_privacy_check_fails_when_the_level_is_understated():
    """The independent checks compare the mechanism's actual ratios with the claimed ε: a mechanism calibrated for
    ε = 1 but claiming 0.9 fails every kind of check (finite channel, calibration, density levels, one-bit)."""
    common = dict(problem="p", label="x", name="x", n=10, certified_risk=None, parameters={})
    built = [LR.DiscreteRandomizer("krr", 5, 1.0, **common), LR.DiscreteRandomizer("subset", 40, 1.0, s=5, **common),
             LR.DiscreteRandomizer("rr", 30, 1.0, **common), LR.DiscreteRandomizer("laplace", 5, 1.0, **common),
             LR.ScalarRandomizer("one-bit", 1.0, 1.0, **common), LR.ScalarRandomizer("levels-rr", 1.0, 1.0, m=2, **common),
             LR.VectorRandomizer("privunit", 1.0, "l2", 5, 1.0, **common),
             LR.VectorRandomizer("l2-sampling", 1.0, "l2", 5, 1.0, **common),
             LR.VectorRandomizer("linf-sampling", 1.0, "linf", 4, 1.0, **common),
             LR.VectorRandomizer("linf-sampling", 1.0, "linf", 14, 1.0, **common),
             LR.VectorRandomizer("coordinate-subsampling", 1.0, "linf", 4, 1.0, k=2, **common)]
    for m in built:
        assert m.check_privacy()["passed"], type(m)
        m.guarantee = Guarantee("local", 0.9, None, m.guarantee.neighbouring)  # claims more than it gives
        assert not m.check_privacy()["passed"], (type(m).__name__, m.family)


def test_linf_sampling_both_halves_variant_is_caught():
    """The 'both halves' ℓ∞ sampling law (not ε-LDP for even d) has ratio e^ε + 1 > e^ε: the channel ratio finds it."""
    import itertools

    from boundcalc.mechanisms.sampling import linf_sampling_law

    signs = list(itertools.product([-1.0, 1.0], repeat=4))
    Q = np.column_stack([linf_sampling_law(s, 1.0, variant="both-halves")[1] for s in signs])
    assert LR.channel_log_ratio(Q) == pytest.approx(math.log(math.e + 1))


@pytest.mark.parametrize("kind, s", [("krr", None), ("rr", None), ("subset", 2)])
def test_discrete_channel_is_the_law_of_privatize_all(kind, s):
    """Empirical report frequencies of privatize_all at a fixed symbol match channel() (chi-square, 4 symbols)."""
    from scipy import stats

    m = LR.DiscreteRandomizer(kind, 4, 1.3, s=s, problem="multinomial", label=kind, name=kind, n=1,
                              certified_risk=None, parameters={})
    Q = m.channel()
    rng = np.random.default_rng(5)
    N = 20000
    for x in (0, 3):
        z = m.privatize_all(np.full(N, x), rng)
        if kind == "krr":
            idx = z
        else:  # the enumerated outputs of discrete.channel: bit vectors (RR) / s-subsets in lexicographic order
            import itertools

            outs = (list(itertools.product([0, 1], repeat=4)) if kind == "rr"
                    else [tuple(1 if i in c else 0 for i in range(4)) for c in itertools.combinations(range(4), s)])
            look = {o: i for i, o in enumerate(outs)}
            idx = np.array([look[tuple(int(b) for b in row)] for row in z])
        obs = np.bincount(idx, minlength=Q.shape[0])
        assert stats.chisquare(obs, Q[:, x] * N).pvalue > 1e-4


def test_threshold_bits_channel_is_the_law_of_privatize():
    m = LR.GaussThresholdRandomizer(2, 2, 1.0, 1.0, 2.0, closed=True, problem="gaussian", label="t", name="t", n=1,
                                    certified_risk=None, parameters={})
    Q = m.channel()  # bits (y1, y2) given threshold bits (b1, b2)
    rng = np.random.default_rng(2)
    x = np.tile([[1.0, -1.0]], (40000, 1))  # b = (1, 0)
    z = m.privatize_all(x, rng)  # user i reports coordinates 2i, 2i+1 mod 2 = (0, 1)
    freq = np.bincount(z[:, 0] * 2 + z[:, 1], minlength=4) / len(z)
    assert np.allclose(freq, Q[:, 2], atol=0.01)


# ------------------------------------------------------------------ risk on hard instances, per family

def test_multinomial_risk_on_hard_instances():
    d, n = 6, 2000
    for loss_name in ("l2sq", "l1"):
        for u, mech in mechanisms("multinomial", n=n, d=d, eps=1.0, loss=loss_name):
            for theta in (np.full(d, 1 / d), np.eye(d)[0]):
                def loss(est, theta=theta):
                    diff = est - theta
                    return float(diff @ diff) if loss_name == "l2sq" else float(np.abs(diff).sum())
                losses = run(mech, lambda rng, theta=theta: rng.choice(d, n, p=theta), 60, 1, loss)
                fast = [loss(e) for e in mech.simulate(theta, n, np.random.default_rng(2), 60)]
                check_against(u, losses, fast)


def test_multinomial_unprojected_risk_matches_the_exact_formula():
    """The unbiased linear estimators have risk exactly risk_constant - ‖θ‖²/n: the per-user runs agree."""
    from boundcalc.mechanisms import discrete as DM

    d, n, eps = 5, 500, 1.0
    theta = np.array([0.4, 0.3, 0.1, 0.1, 0.1])
    for kind, s in (("krr", None), ("rr", None), ("laplace", None), ("subset", 2)):
        m = LR.DiscreteRandomizer(kind, d, eps, s=s, problem="multinomial", label=kind, name=kind, n=n,
                                  certified_risk=None, parameters={})
        exact = float(DM.risk_constant(kind, n, eps, d, s or 1)) - float(theta @ theta) / n
        losses = run(m, lambda rng: rng.choice(d, n, p=theta), 300, 3, lambda e: float((e - theta) @ (e - theta)))
        _, lo, hi = interval(losses)
        assert lo <= exact <= hi, (kind, lo, exact, hi)


def test_mean_risk_on_hard_instances():
    for kw, draw in ((dict(n=1000, d=1, r=1.0, k=2.0, eps=1.0), lambda rng: np.where(rng.random(1000) < 0.75, 1.0, -1.0)),
                     (dict(n=400, d=3, r=1.0, k=2.0, eps=2.0, ball="l2"),
                      lambda rng: np.eye(3)[rng.integers(0, 3, 400)] * np.where(rng.random((400, 1)) < 0.5, 1, -1)),
                     (dict(n=400, d=3, r=1.0, k=2.0, eps=2.0, ball="linf"),
                      lambda rng: np.where(rng.random((400, 3)) < 0.75, 1.0, -1.0))):
        mu = np.full(kw["d"], 0.5) if kw["d"] == 1 or kw.get("ball") == "linf" else np.zeros(3)
        mu = mu[0] if kw["d"] == 1 else mu
        for u, mech in mechanisms("mean", **kw):
            losses = run(mech, draw, 40, 4, lambda e: float(np.sum((np.asarray(e) - mu) ** 2)))
            fast = None
            if kw["d"] == 1 and u.name != "zero":  # the exact-law fast path on the two-point law
                fast = (mech.simulate((np.array([-1.0, 1.0]), np.array([0.25, 0.75])), kw["n"],
                                      np.random.default_rng(5), 200) - mu) ** 2
            check_against(u, losses, fast)


def test_gaussian_risk_on_hard_instances():
    for kw in (dict(n=2000, d=1, sigma=1.0, B=1.0, eps=1.0), dict(n=1000, d=2, sigma=1.0, B=1.0, eps=2.0)):
        d, n = kw["d"], kw["n"]
        for theta in (np.zeros(d), np.full(d, 1.0)):
            for u, mech in mechanisms("gaussian", **kw):
                draw = (lambda rng, theta=theta: theta + rng.standard_normal((n, d)))
                losses = run(mech, draw, 30, 6, lambda e, theta=theta: float(np.sum((np.atleast_1d(e) - theta) ** 2)))
                fast = None
                if isinstance(mech, LR.GaussThresholdRandomizer):
                    fast = np.sum((mech.simulate(theta, n, np.random.default_rng(7), 60) - theta) ** 2, axis=1)
                check_against(u, losses, fast)


def test_gaussian_two_stage_single_user_path():
    """privatize(record, user=i, centre=c) reproduces the two rounds of privatize_all; estimate accepts them."""
    res = bc.rate("gaussian", "local", n=2000, d=1, sigma=1.0, B=1.0, eps=1.0)
    mech = next(u for u in res.uppers if u.name == "two-stage-threshold").mechanism()
    rng = np.random.default_rng(0)
    x = 0.3 + rng.standard_normal((2000, 1))
    n1 = int(math.floor(mech.alpha * 2000))
    stage1 = np.array([mech.privatize(x[i], rng, user=i) for i in range(n1)])
    c = mech.centre(stage1, 2000)
    stage2 = np.array([mech.privatize(x[i], rng, user=i, centre=c) for i in range(n1, 2000)])
    est = mech.estimate(np.vstack([stage1, stage2]))
    assert -1.0 <= est <= 1.0 and abs(est - 0.3) < 0.5
    with pytest.raises(InputError, match="centre"):
        mech.privatize(x[-1], rng, user=1999)


def test_sparse_bernoulli_risk_on_hard_instances():
    d, s, n = 8, 2.0, 2000
    for name, theta in (("spread", np.full(d, s / d)), ("ones", np.r_[np.ones(2), np.zeros(d - 2)])):
        for u, mech in mechanisms("sparse-bernoulli", n=n, d=d, s=s, eps=2.0):
            draw = (lambda rng, theta=theta: (rng.random((n, d)) < theta).astype(float))
            losses = run(mech, draw, 25, 8, lambda e, theta=theta: float(np.sum((e - theta) ** 2)))
            fast = np.sum((np.atleast_2d(mech.simulate(theta, n, np.random.default_rng(9), 25)) - theta) ** 2, axis=1)
            check_against(u, losses, fast)


def test_density_risk_on_hard_instances():
    from boundcalc.problems.density import sample_cos_density

    n, amp = 2000, 1.0 / (math.sqrt(2) * math.pi)  # 1 + (1/π) cos(πx): in the Lipschitz and S_1 classes (L = 1)
    grid = (np.arange(4000) + 0.5) / 4000
    f = 1 + amp * math.sqrt(2) * np.cos(math.pi * grid)
    for u, mech in mechanisms("density", n=n, beta=1.0, L=1.0, eps=1.0):
        loss = lambda e: float(np.mean((mech.evaluate(e, grid) - f) ** 2))  # noqa: E731 (ISE on a fine grid)
        losses = run(mech, lambda rng: sample_cos_density(rng, amp, 1, (n,)), 40, 10, loss)
        check_against(u, losses)


def test_linear_risk_on_hard_instances():
    n, d, delta = 500, 4, 0.3
    mu = delta * np.eye(d)[0]
    for geometry in ("l2", "l1"):
        for u, mech in mechanisms("linear", n=n, d=d, r=1.0, M=1.0, geometry=geometry, eps=1.0):
            def draw(rng):
                return np.eye(d)[0] * np.where(rng.random((n, 1)) < (1 + delta) / 2, 1.0, -1.0)

            dual = np.linalg.norm(mu) if geometry == "l2" else np.max(np.abs(mu))
            excess = lambda th: float(np.asarray(th) @ mu + dual)  # noqa: E731 (the excess risk, exactly)
            losses = run(mech, draw, 30, 11, excess)
            fast = None
            if u.name != "zero":
                rng = np.random.default_rng(12)
                fast = mech.simulate(lambda k: np.eye(d)[0] * np.where(rng.random((k, 1)) < (1 + delta) / 2, 1.0, -1.0),
                                     n, rng, 30) @ mu + dual
            check_against(u, losses, fast)


# ------------------------------------------------------------------ bad input

def test_bad_records_and_reports_are_refused():
    m = bc.mechanism("multinomial", "local", n=500, d=5, eps=1.0, loss="l2sq")
    for bad in ([0, 5], [-1, 2], [0.5, 1], [[0, 1]], "abc", [np.nan], None):
        with pytest.raises(InputError):
            m.privatize_all(bad, 0)
    with pytest.raises(InputError):
        m.estimate(np.zeros((3, 2)))
    with pytest.raises(InputError):
        m.privatize_all([0, 1], rng="seed")
    with pytest.raises(InputError):
        m.privatize([0, 1], 0)  # one record, not many
    mean = bc.mechanism("mean", "local", n=500, d=3, r=1.0, k=2.0, eps=1.0, ball="l2")
    with pytest.raises(InputError):
        mean.privatize_all(np.zeros((4, 2)), 0)
    with pytest.raises(InputError):
        mean.privatize_all(np.full((4, 3), np.inf), 0)
    sb = bc.mechanism("sparse-bernoulli", "local", n=2000, d=8, s=2.0, eps=2.0)
    with pytest.raises(InputError, match="0/1"):
        sb.privatize_all(np.full((3, 8), 0.5), 0)
    dens = bc.mechanism("density", "local", n=2000, beta=1.0, L=1.0, eps=1.0)
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        dens.privatize_all([0.2, 1.5], 0)
    lin = bc.mechanism("linear", "local", n=500, d=4, r=1.0, M=1.0, geometry="l2", eps=1.0)
    with pytest.raises(InputError, match="ball"):
        lin.privatize_all(np.full((2, 4), 1.0), 0)


def test_out_of_range_values_are_truncated_as_documented():
    """Mean: records beyond T are truncated (the note says so): a huge record's report is that of T."""
    m = bc.mechanism("mean", "local", n=1000, d=1, r=1.0, k=2.0, eps=1.0)
    assert any("truncated" in note for note in m.notes)
    T = m.parameters["T"]
    a = m.privatize_all(np.full(50, 1e9), 3)
    b = m.privatize_all(np.full(50, T), 3)
    assert np.array_equal(a, b)
    v = bc.mechanism("mean", "local", n=500, d=3, r=1.0, k=2.0, eps=2.0, ball="l2")
    assert any("projected onto the ℓ2 ball" in note for note in v.notes)
    assert np.allclose(v.project(np.array([[30.0, 40.0, 0.0]])), [[0.6 * v.parameters["T"], 0.8 * v.parameters["T"], 0]])


# ------------------------------------------------------------------ block-sampled one-hot OUE (sparse Bernoulli)

def _oue(d, m, eps=1.0, c=1.0, tau=0.0):
    common = dict(problem="sparse-bernoulli", label="x", name="block-oue", n=600, certified_risk=None, parameters={})
    return LR.BlockOUERandomizer(d, 2.0, eps, m, c, tau, **common)


def test_block_oue_reports_have_the_law_of_its_channel():
    """privatize_all's reports, per user restricted to its block (coordinates ascending), have the law of channel():
    the uniform mixture of the columns of the kept one-hot inputs (column 0 when the block holds no one)."""
    from scipy import stats

    d, m, n = 6, 2, 6000
    mech = _oue(d, m)
    Q = mech.channel()
    assert Q.shape == (2 ** 3, 4) and np.allclose(Q.sum(axis=0), 1.0)
    rng = np.random.default_rng(21)
    X = (rng.random((n, d)) < 0.4).astype(float)
    R = mech.privatize_all(X, rng, seed=5)
    assert np.all((R >= 0).sum(axis=1) == 3)  # each user reports on its own block of 3 coordinates
    counts, expected = {}, {}
    for x, r in zip(X, R):
        block = np.flatnonzero(r >= 0)
        xb, yb = x[block].astype(int), r[block].astype(int)
        key = tuple(xb)
        ones = np.flatnonzero(xb)
        law = Q[:, 0] if ones.size == 0 else Q[:, 1 + ones].mean(axis=1)
        counts.setdefault(key, np.zeros(8))[int(yb @ (1 << np.arange(3)))] += 1
        expected[key] = law
    chi2, dof = 0.0, 0
    for key, cnt in counts.items():
        e = expected[key] * cnt.sum()
        chi2 += float(np.sum((cnt - e) ** 2 / e))
        dof += 7
    assert stats.chi2.sf(chi2, dof) > 1e-3, (chi2, dof)
    # and the same law fails against a wrong channel (OUE at a larger ε): the test has power
    Qw = _oue(d, m, eps=2.0).channel()
    chi2w = sum(float(np.sum((cnt - (Qw[:, 0] if not any(k) else Qw[:, 1 + np.flatnonzero(k)].mean(axis=1))
                               * cnt.sum()) ** 2 / ((Qw[:, 0] if not any(k) else Qw[:, 1 + np.flatnonzero(k)]
                                                    .mean(axis=1)) * cnt.sum()))) for k, cnt in counts.items())
    assert stats.chi2.sf(chi2w, dof) < 1e-6


def test_block_oue_privacy_check_fails_when_understated():
    """Both routes (the finite channel for small blocks, the per-bit ratios for large ones; also m = d, randomized
    response) pass at the calibrated ε and fail when the claim is 0.9 ε."""
    for d, m in ((6, 2), (40, 2), (8, 8)):
        mech = _oue(d, m)
        assert (mech.channel() is None) == (d == 40)
        v = mech.check_privacy()
        assert v["passed"] and v["log_ratio"] == pytest.approx(1.0, rel=1e-9), (d, m, v)
        mech.guarantee = Guarantee("local", 0.9, None, mech.guarantee.neighbouring)
        assert not mech.check_privacy()["passed"], (d, m)


def test_block_oue_stays_private_at_large_eps():
    """At ε above about 36.7, e^ε/(e^ε + 1) is 1.0 in float64: randomized response released at that p1 would never
    flip a bit (not private at any level), and e^ε overflows from ε ≈ 710. The bits are released at min{ε, 36}: every
    report has positive probability under every record, and the check passes at the claimed ε."""
    rng = np.random.default_rng(3)
    for d, m in ((2, 2), (8, 8), (6, 2), (40, 2)):
        for eps in (40.0, 800.0):
            mech = _oue(d, m, eps=eps)
            assert 0 < mech.p0 < mech.p1 < 1, (d, m, eps)
            v = mech.check_privacy()
            assert v["passed"] and math.isfinite(v["log_ratio"]) and v["log_ratio"] <= eps, (d, m, eps, v)
    mech = _oue(2, 2, eps=800.0)  # the released reports are bits (and -1 off the user's block)
    R = mech.privatize_all(np.ones((2000, 2)), rng, seed=1)
    assert set(np.unique(R)) <= {-1, 0, 1}


def test_block_oue_user_path_and_bad_input():
    mech = _oue(6, 2)
    rng = np.random.default_rng(3)
    X = (rng.random((5, 6)) < 0.5).astype(float)
    R = mech.privatize_all(X, rng, seed=7)
    assert np.all(R[-1] == -1)  # 5 users, groups of 2: the fifth reports nothing
    for i in range(4):  # one user's report lies on the block privatize_all gave it (same public seed)
        r = mech.privatize(X[i], rng, user=i, seed=7)
        assert np.array_equal(r >= 0, R[i] >= 0)
    est = mech.estimate(R)
    assert est.shape == (6,) and np.all((est >= 0) & (est <= 1))
    for bad in (np.full((4, 6), 0.5), np.zeros((4, 5)), [[2, 0, 0, 0, 0, 0]], np.full((2, 6), np.nan)):
        with pytest.raises(InputError):
            mech.privatize_all(bad, 0)
    with pytest.raises(InputError, match="user"):
        mech.privatize(X[0], 0, seed=1)
    with pytest.raises(InputError, match="seed"):
        mech.privatize(X[0], 0, user=1)
    with pytest.raises(InputError, match="seed"):
        mech.privatize_all(X, 0, seed=-1)
    with pytest.raises(InputError, match="reports"):
        mech.estimate(R[:1])  # one user of a group: coordinates not covered equally
    with pytest.raises(InputError, match="reports"):
        mech.estimate(np.full((4, 6), 3))
