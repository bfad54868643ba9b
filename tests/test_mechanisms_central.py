"""Runnable central mechanisms (docs/methods/from-a-plan-to-data.md): the mechanism of the reported upper bound,
run on data; its privacy re-checked independently of the builder (OpenDP's map, the calibration formulas); its
simulated risk on the hard instances against the certified upper bound; bad input."""
from __future__ import annotations

import math
import sys

import numpy as np
import pytest

import boundcalc as bc
from boundcalc.mechanisms.central import ProjectedMean, calibration_check, gaussian_delta
from boundcalc.mechanisms.runnable import CentralMechanism, Guarantee

Z99 = 2.5758293035489004  # the 99% normal quantile


def _ci_low(err):
    err = np.asarray(err, float)
    return err.mean() - Z99 * err.std(ddof=1) / math.sqrt(err.size)


MEAN_CASES = [
    ("pure", dict(eps=1.0, d=1), "staircase"),
    ("pure", dict(eps=1.0, d=3), "l2-laplace"),
    ("approx", dict(eps=1.0, delta=1e-6, d=1), "staircase"),
    ("approx", dict(eps=0.1, delta=1e-2, d=1), "gauss-analytic"),
    ("smooth", dict(eps=1.0, d=1), "laplace"),
    ("tv", dict(alpha=0.2, d=1), "gauss-tv"),
    ("kl", dict(alpha=0.5, d=2), "gauss-kl"),
    ("none", dict(d=2), "shrunk-mean"),
]


@pytest.mark.parametrize("privacy,kw,name", MEAN_CASES)
def test_mean_mechanism_is_the_reported_upper(privacy, kw, name):
    res = bc.rate("mean", privacy, n=400, **kw)
    mech = res.upper.mechanism()
    assert isinstance(mech, CentralMechanism)
    assert res.upper.name == name == mech.bound
    assert mech.label == res.upper.label and mech.n == 400 and mech.certified_risk == res.upper.value
    assert mech.privacy == privacy and mech.guarantee.privacy == privacy
    assert mech.check_privacy()["passed"]
    # the JSON of the result is unchanged: "mechanism" stays the label string, nothing else is added
    up = res.to_dict()["upper"]
    assert up["mechanism"] == res.upper.label and "context" not in up
    # bc.mechanism and res.mechanism() build the same thing
    other = bc.mechanism("mean", privacy=privacy, n=400, **kw)
    assert other.parameters == mech.parameters
    assert "guarantee" in mech.describe() and mech.to_dict()["bound"] == name and "<table>" in mech._repr_html_()


@pytest.mark.parametrize("privacy,kw,name", MEAN_CASES)
def test_mean_mechanism_risk_on_hard_instances(privacy, kw, name):
    """release() on records of the hard instances: the 99% interval of the simulated risk does not lie above the
    certified upper bound (its lower end is below it), seeded."""
    n, reps = 300, 400
    res = bc.rate("mean", privacy, n=n, **kw)
    mech = res.mechanism()
    d, r = int(kw["d"]), 1.0
    rng = np.random.default_rng(7)
    e1 = np.zeros(d)
    e1[0] = 1.0
    p = float(res.lower.free_parameters.get("p", 1.0 / n))
    instances = {
        "point mass r e1": (lambda: np.tile(r * e1, (n, 1)), r * e1),
        "two-point ±r": (lambda: np.outer(rng.choice([-1.0, 1.0], n), r * e1), np.zeros(d)),
        "mixture": (lambda: np.outer(rng.random(n) < p, r * p ** -0.5 * e1), p * r * p ** -0.5 * e1),
    }
    for tag, (draw, theta) in instances.items():
        err = [np.sum((np.atleast_1d(mech.release(draw() if d > 1 else draw()[:, 0], rng)) - theta) ** 2)
               for _ in range(reps)]
        assert _ci_low(err) <= res.upper.value, (tag, np.mean(err), res.upper.value)


def test_release_matches_release_from_statistic():
    """release = the data step + release_from_statistic (the check's fast path) with the same draws."""
    mech = bc.mechanism("mean", privacy="pure", n=50, d=2, eps=1.0)
    x = np.random.default_rng(0).standard_normal((50, 2)) * 3
    a = mech.release(x, rng=11)
    b = mech.release_from_statistic(mech.statistic(x)[None, :], np.random.default_rng(11), 1)[0]
    assert np.array_equal(a, b)


def test_check_runs_the_mechanism_objects(monkeypatch):
    calls = []
    orig = ProjectedMean.release_from_statistic

    def spy(self, statistic, rng, reps):
        calls.append(self.bound)
        return orig(self, statistic, rng, reps)

    monkeypatch.setattr(ProjectedMean, "release_from_statistic", spy)
    bc.check("mean", privacy="pure", reps=20, seed=0, ns=[100, 200], eps=1.0, d=1)
    assert calls and set(calls) == {bc.rate("mean", "pure", n=100, eps=1.0).upper.name}


@pytest.mark.parametrize("privacy,kw", [("pure", dict(eps=1.0, d=1)), ("approx", dict(eps=1.0, delta=1e-6, d=1))])
def test_opendp_measurement_privacy_map(privacy, kw):
    pytest.importorskip("opendp")
    mech = bc.mechanism("mean", privacy=privacy, n=500, reference=False, **kw)
    assert not mech.reference
    meas, d_in = mech.opendp_measurement(), mech.opendp_d_in
    assert d_in == 2 and mech.opendp_d_out == kw["eps"]  # replace one record = one removal + one addition in OpenDP's SymmetricDistance
    assert float(meas.map(d_in)) <= kw["eps"]
    assert mech.check_privacy()["passed"] and mech.check_privacy()["method"] == "OpenDP privacy map"
    x = np.random.default_rng(1).standard_normal(500)
    est = mech.release(x)
    assert isinstance(est, float) and abs(est) < 1.0
    # a larger d_in (two records replaced) costs twice as much: the map is OpenDP's, not a constant
    assert float(meas.map(4)) == pytest.approx(2 * float(meas.map(2)))


def test_opendp_gaussian_refused_when_its_map_cannot_confirm():
    pytest.importorskip("opendp")
    res = bc.rate("mean", "approx", n=1000, d=1, eps=0.1, delta=1e-2)
    assert res.upper.name == "gauss-analytic"
    with pytest.raises(bc.InputError, match="zCDP"):
        res.mechanism(reference=False)
    assert res.mechanism().check_privacy()["passed"]  # the reference implementation's exact calibration holds


def test_opendp_missing_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "opendp", None)
    monkeypatch.setitem(sys.modules, "opendp.prelude", None)
    with pytest.raises(bc.InputError, match=r"pip install 'boundcalc\[opendp\]'"):
        bc.mechanism("mean", privacy="pure", n=100, eps=1.0, reference=False)
    mech = bc.mechanism("mean", privacy="pure", n=100, eps=1.0)  # everything else works
    assert isinstance(mech.release(np.zeros(100), rng=0), float) and mech.check_privacy()["passed"]


def test_opendp_not_offered_elsewhere():
    with pytest.raises(bc.InputError, match="OpenDP"):
        bc.mechanism("mean", privacy="tv", n=100, alpha=0.2, reference=False)
    with pytest.raises(bc.InputError, match="OpenDP"):
        bc.mechanism("support", privacy="pure", n=100, eps=1.0, reference=False)


def test_calibration_check_can_fail():
    """The privacy check is not a constant: halving the noise scale fails it, in every model."""
    for privacy, kw in [("pure", dict(eps=1.0)), ("approx", dict(eps=0.1, delta=1e-2)), ("tv", dict(alpha=0.2)),
                        ("kl", dict(alpha=0.5))]:
        mech = bc.mechanism("mean", privacy=privacy, n=200, **kw)
        assert mech.check_privacy()["passed"]
        mech.scale /= 2
        assert not mech.check_privacy()["passed"], privacy


def test_gaussian_delta_against_classical_calibration():
    # the classical σ = Δ sqrt(2 log(1.25/δ))/ε is (ε, δ)-DP for ε < 1 (Dwork & Roth, Thm A.1): the exact δ is below
    for eps, delta in [(0.5, 1e-5), (0.9, 1e-3)]:
        s = math.sqrt(2 * math.log(1.25 / delta)) / eps
        assert gaussian_delta(eps, s) <= delta
        assert gaussian_delta(eps, s / 3) > delta
    assert calibration_check("approx", "gaussian", 1.0, 1.0, 1.0, 0.5, 1e-5)["passed"] is False


def test_clamping_of_records_outside_the_domain():
    """A record beyond T is projected onto [-T, T] (d = 1): the release equals the one with the record at T."""
    mech = bc.mechanism("mean", privacy="pure", n=20, d=1, eps=1.0)
    T = mech.T
    x = np.zeros(20)
    x[0] = 1e9
    y = x.copy()
    y[0] = T
    assert mech.release(x, rng=3) == mech.release(y, rng=3)
    m2 = bc.mechanism("mean", privacy="pure", n=20, d=2, eps=1.0)
    x2 = np.zeros((20, 2))
    x2[0] = [3e9, 4e9]
    y2 = np.zeros((20, 2))
    y2[0] = [0.6 * m2.T, 0.8 * m2.T]
    assert np.allclose(m2.release(x2, rng=3), m2.release(y2, rng=3))


@pytest.mark.parametrize("records,match", [
    (np.zeros((20, 2)), "shape"), (np.zeros(19), "exactly n"), ("abc", "numpy array"), (None, "numpy array"),
    (np.array([np.nan] * 20), "finite"), ([[1, 2], [3]], "numpy array"), (np.zeros(0), "exactly n|at least one"),
])
def test_bad_records(records, match):
    mech = bc.mechanism("mean", privacy="pure", n=20, d=1, eps=1.0)
    with pytest.raises(bc.InputError, match=match):
        mech.release(records, rng=0)


def test_bad_rng_and_reference():
    mech = bc.mechanism("mean", privacy="pure", n=20, d=1, eps=1.0)
    with pytest.raises(bc.InputError, match="rng"):
        mech.release(np.zeros(20), rng="seed")
    with pytest.raises(bc.InputError, match="reference"):
        bc.mechanism("mean", privacy="pure", n=20, eps=1.0, reference="no")
    with pytest.raises(bc.InputError, match="lower bound"):
        bc.rate("mean", "pure", n=20, eps=1.0).lower.mechanism()


def test_plan_mechanism_is_tuned_at_n_sufficient():
    plan = bc.plan("mean", privacy="pure", target=0.01, eps=1.0, d=1)
    mech = plan.mechanism()
    assert mech.n == plan.n_sufficient
    assert mech.certified_risk <= 0.01
    assert mech.bound == plan.rows[0].evidence_sufficient["bound"]


def test_guarantee_describe():
    g = Guarantee("approx", 1.0, 1e-6, "x")
    assert "δ = 1e-06" in g.describe() and g.to_dict()["delta"] == 1e-6
    assert "α = 0.2" in Guarantee("tv", 0.2, level_name="alpha").describe()


# ---------------------------------------------------------------------- bernoulli, support

@pytest.mark.parametrize("privacy,kw", [("pure", dict(eps=1.0)), ("pure", dict(eps=0.001)), ("none", {})])
def test_bernoulli_mechanism(privacy, kw):
    n, reps = 200, 400
    res = bc.rate("bernoulli", privacy, n=n, **kw)
    mech = res.mechanism()
    assert mech.bound == res.upper.name and mech.check_privacy()["passed"]
    rng = np.random.default_rng(5)
    for theta in (0.5, 0.1):
        err = [(mech.release((rng.random(n) < theta).astype(float), rng) - theta) ** 2 for _ in range(reps)]
        assert _ci_low(err) <= res.upper.value
    with pytest.raises(bc.InputError, match="0 or 1"):
        mech.release(np.full(n, 0.5))


@pytest.mark.parametrize("privacy,kw", [("pure", dict(eps=1.0)), ("approx", dict(eps=1.0, delta=1e-6, loss="squared")),
                                        ("tv", dict(alpha=0.2)), ("kl", dict(alpha=1.0)), ("none", dict(loss="squared"))])
def test_support_mechanism(privacy, kw):
    n, reps = 200, 300
    res = bc.rate("support", privacy, n=n, **kw)
    mech = res.mechanism()
    assert mech.bound == res.upper.name and mech.check_privacy()["passed"]
    loss = kw.get("loss", "abs")
    rng = np.random.default_rng(9)
    for theta in (2.0, 1.0):
        est = np.array([mech.release(rng.random(n) * theta, rng) for _ in range(reps)])
        err = np.abs(est - theta) if loss == "abs" else (est - theta) ** 2
        assert _ci_low(err) <= res.upper.value
    # negative records are set to 0 (documented): the release is the same as with zeros
    x = rng.random(n)
    y = x.copy()
    x[:5] = -3.0
    y[:5] = 0.0
    assert mech.release(x, rng=1) == mech.release(y, rng=1)


def test_support_privacy_check_can_fail():
    mech = bc.mechanism("support", privacy="tv", n=200, alpha=0.2)
    assert mech.check_privacy()["passed"]
    mech.eps_used = (mech.eps_used or 0) * 2
    mech.subsample = (mech.subsample or 0) * 2
    assert not mech.check_privacy()["passed"]


# ---------------------------------------------------------------------- point, density

POINT_CASES = [("approx", dict(eps=1.0, delta=1e-6, model="normal-mean")),
               ("pure", dict(eps=1.0, model="poisson")), ("none", dict(model="poisson")),
               ("pure", dict(eps=1.0, model="exponential"))]


@pytest.mark.parametrize("privacy,kw", POINT_CASES)
def test_point_mechanism(privacy, kw):
    """The reported upper bound's mechanism, run on records at θ_lo, θ and θ_hi (the local minimax risk is the
    sup over N = [θ_lo, θ_hi]): the 99% interval of the simulated risk does not lie above the certified bound."""
    from boundcalc.core.models import get_point_model

    n, reps = 400, 200
    res = bc.rate("point", privacy, n=n, **kw)
    mech = res.mechanism()
    assert mech.bound == res.upper.name and mech.check_privacy()["passed"]
    model = get_point_model(kw["model"])
    v = mech.values
    rng = np.random.default_rng(4)
    for theta in (v["theta_lo"], float(res.params["theta"]), v["theta_hi"]):
        if not (model.natural_space[0] < theta < model.natural_space[1]):
            continue
        err = [(mech.release(model.sampler(rng, theta, (n,)), rng) - theta) ** 2 for _ in range(reps)]
        assert _ci_low(err) <= res.upper.value, (theta, np.mean(err), res.upper.value)


def test_point_every_certified_upper_has_a_private_mechanism():
    for privacy, kw in POINT_CASES[:3]:
        res = bc.rate("point", privacy, n=400, **kw)
        for b in res.uppers:
            if b.certified and b.usable:
                mech = b.mechanism()
                assert mech.check_privacy()["passed"], (b.name, mech.check_privacy())
                mech.eps = mech.eps * 3 if getattr(mech, "eps", None) else None  # noise for 3ε: caught
                if getattr(mech, "noise", None) or type(mech).__name__ == "ClippedStatistic":
                    assert not mech.check_privacy()["passed"], b.name


def _linear_density_sample(rng, n, slope):
    """n draws of f(x) = 1 + slope (x - 1/2) on [0, 1] (|slope| <= 2), by inverting its CDF."""
    u = rng.random(n)
    a, b = slope / 2, 1 - slope / 2  # F(x) = a x² + b x
    return u if a == 0 else (-b + np.sqrt(b * b + 4 * a * u)) / (2 * a)


@pytest.mark.parametrize("privacy,kw", [("pure", dict(eps=1.0, L=1.0)), ("pure", dict(eps=0.02, L=1.0)),
                                        ("none", dict(L=2.0))])
def test_density_central_mechanism(privacy, kw):
    n, reps = 400, 200
    res = bc.rate("density", privacy, n=n, d=1, **kw)
    mech = res.mechanism()
    assert mech.bound == res.upper.name and mech.check_privacy()["passed"]
    slope = min(kw["L"], 1.8)
    rng = np.random.default_rng(6)
    b = mech.bins
    edges = np.arange(b + 1) / b
    p = np.diff(edges + slope * (edges ** 2 - edges) / 2)  # the bin probabilities of the linear density
    int_f2 = 1 + slope ** 2 / 12
    err = []
    for _ in range(reps):
        fh = mech.release(_linear_density_sample(rng, n, slope), rng)
        err.append(np.sum(fh ** 2) / b - 2 * fh @ p + int_f2)
    assert _ci_low(err) <= res.upper.value
    # records outside [0, 1] are clamped onto it
    x = rng.random(n)
    y = x.copy()
    x[:3], y[:3] = [-5.0, 7.0, 1.5], [0.0, 1.0, 1.0]
    assert np.array_equal(mech.release(x, rng=2), mech.release(y, rng=2))


def test_mean_subsample_mechanism_under_tv():
    """The subsampling mechanism of the TV mean (every certified upper has its mechanism, not only the best):
    release() uses a random m-subset of the n records; its privacy is the sampling probability m/n <= α."""
    n, reps = 200, 400
    res = bc.rate("mean", "tv", n=n, alpha=0.05)
    b = next(u for u in res.uppers if u.name == "subsample-shrunk-tv")
    mech = b.mechanism()
    assert mech.subsample == 10 and mech.check_privacy()["passed"]
    rng = np.random.default_rng(8)
    err = [mech.release(rng.choice([-1.0, 1.0], n), rng) ** 2 for _ in range(reps)]
    assert _ci_low(err) <= b.value
    mech.subsample = 20  # m/n = 0.1 > α: caught
    assert not mech.check_privacy()["passed"]


def test_an_upper_bound_without_a_mechanism_is_refused():
    """A bound the builders do not know (a new upper bound, say) raises InputError rather than getting another
    bound's mechanism; so does a pointwise (uncertified) bound of the point problem."""
    from boundcalc.core.bounds import Bound

    fake = Bound(side="upper", name="not-a-mechanism", label="some new bound", expr=1, source="", derivation="")
    res = bc.rate("mean", "pure", n=100, eps=1.0)
    for problem, privacy, kw in [("mean", "pure", dict(eps=1.0)), ("support", "pure", dict(eps=1.0)),
                                 ("density", "pure", dict(eps=1.0))]:
        entry, values = bc.resolve(problem, privacy, dict(n=100, **kw))
        with pytest.raises(bc.InputError, match="no runnable mechanism"):
            entry.mechanism(entry.with_derived(values), res.upper, fake)
    pt = bc.rate("point", "approx", n=400, eps=1.0, delta=1e-6, model="normal-mean")
    exact = next(b for b in pt.uppers if b.name.startswith("smith-exact"))
    entry, values = bc.resolve("point", "approx", dict(n=400, eps=1.0, delta=1e-6, model="normal-mean"))
    v = entry.with_derived(values)
    bound = next(b for b in entry.bounds(v) if b.name == exact.name)
    with pytest.raises(bc.InputError, match="pointwise"):
        entry.mechanism(v, exact, bound)


def test_density_knorm_mechanism_privacy_and_noise():
    """The K-norm histograms (Hardt–Talwar noise on the count vector): the mechanism of the reported upper, its
    privacy re-check (a replacement moves the counts by e_i - e_j, of K-norm 1) fails when the noise is made for 3ε,
    and its noise has the second moment the certified risk uses: E||Z||² = m(m+1)E||U||²/ε²."""
    from boundcalc.methods import knorm

    res = bc.rate("density", "pure", n=1000, d=1, eps=0.1)
    assert res.upper.name.endswith("-knorm")  # the bound this test is about is the reported one here
    for b in (u for u in res.uppers if u.name.endswith("-knorm")):
        mech = b.mechanism()
        assert mech.noise == "knorm" and mech.check_privacy()["passed"]
        mech.eps = 3 * mech.eps
        assert not mech.check_privacy()["passed"]
    mech = res.mechanism()
    m = mech.bins
    rng = np.random.default_rng(11)
    zero = np.zeros((20000, m))
    z = mech.release_from_statistic(zero, rng, 20000) * (mech.n / m)  # back to counts (shrinkage off: f̂ = c/(nh))
    if mech.shrink != 1.0:  # undo the shrinkage toward 1: c = n h (1 + λ(g - 1)) with g = Z/(n h)
        z = (z - mech.n / m * (1 - mech.shrink)) / mech.shrink
    assert np.allclose(z.sum(axis=1), 0.0, atol=1e-6)  # the noise lives on Σz = 0
    want = m * (m + 1) * knorm.second_moment(m) / 0.1 ** 2
    got = float(np.mean(np.sum(z ** 2, axis=1)))
    assert abs(got / want - 1) < 0.05
