"""Simulation checks of central mean estimation for every privacy model (seeded, small)."""
import pytest

import boundcalc as bc


@pytest.mark.parametrize("privacy,kw", [
    ("none", dict(k=2)), ("pure", dict(k=4, eps=0.2, d=2)), ("smooth", dict(k="inf", eps=0.5)),
    ("approx", dict(k=2, eps=0.3, delta=1e-8, d=3)), ("tv", dict(k=4, eps=0.05)), ("kl", dict(k=3, eps=0.01)),
])
def test_check_passes(privacy, kw):
    res = bc.check("mean", privacy, reps=150, seed=1, ns=[100, 1000, 10000], **kw)
    assert res.passed, res.to_text()
    d = res.to_dict()
    assert d["passed"] and len(d["rows"]) == 3 and all(r["ok"] for r in d["rows"])


def test_check_detects_a_wrong_upper_bound(monkeypatch):
    """The verdict is not vacuous: shrink the certified upper bound tenfold and the check must fail."""
    from boundcalc.app import simulate

    orig = simulate.CheckRow.failures

    def failures(self):
        self.upper = self.upper / 10
        try:
            return orig(self)
        finally:
            self.upper = self.upper * 10

    monkeypatch.setattr(simulate.CheckRow, "failures", failures)
    res = bc.check("mean", "pure", reps=100, seed=0, ns=[100, 1000], k=4, eps=0.3)
    assert not res.passed


def test_check_detects_a_wrong_lower_bound(monkeypatch):
    from boundcalc.app import simulate

    orig = simulate.CheckRow.failures

    def failures(self):
        self.lower = self.lower * 50
        try:
            return orig(self)
        finally:
            self.lower = self.lower / 50

    monkeypatch.setattr(simulate.CheckRow, "failures", failures)
    res = bc.check("mean", "pure", reps=100, seed=0, ns=[100, 1000], k=4, eps=0.3)
    assert not res.passed


# ---------------------------------------------------------------------- the risk intervals: Student t

def _t2_quantile(level):
    """Student's t with 2 degrees of freedom has the CDF F(t) = 1/2 + t/(2 sqrt(2 + t²)), so its two-sided
    quantile at level q solves t/sqrt(2 + t²) = q: t = q sqrt(2/(1 - q²)) (9.9248 at q = 0.99)."""
    return level * (2 / (1 - level ** 2)) ** 0.5


def test_three_reps_interval_uses_the_student_t_quantile():
    """Seeded: the squared errors of 3 standard normal draws (true risk E X² = 1). The normal interval
    mean ± 2.576 s/sqrt(3) ends at 0.78 and excluded the true risk, so `check --reps 3` could call a correct
    bound wrong; the t interval (t_2 = 9.92) contains it."""
    import math
    import statistics

    import numpy as np

    from boundcalc.app.simulate import LEVEL, risk_interval

    errors = np.random.default_rng(1).standard_normal(3) ** 2
    m, lo, hi = risk_interval(errors)
    xs = [float(e) for e in errors]
    mean, half = statistics.fmean(xs), _t2_quantile(LEVEL) * statistics.stdev(xs) / math.sqrt(3)
    assert m == pytest.approx(mean, rel=1e-12)
    assert hi == pytest.approx(mean + half, rel=1e-9) and lo == max(0.0, mean - half) == 0.0
    assert lo <= 1.0 <= hi
    assert mean + 2.5758293035489004 * statistics.stdev(xs) / math.sqrt(3) < 1.0  # the normal interval missed it


def test_interval_covers_a_normal_mean_99_percent_of_the_time_with_three_reps():
    """For normal errors the t interval is exact: 99% coverage (the normal quantile gave 87.7% at 3 reps)."""
    import numpy as np

    from boundcalc.app.simulate import risk_interval

    draws = np.random.default_rng(0).normal(1.0, 1.0, size=(20000, 3))
    covered = np.mean([lo <= 1.0 <= hi for _, lo, hi in map(risk_interval, draws)])
    assert abs(covered - 0.99) < 0.004  # binomial standard error 0.0007


def test_interval_quantile_tends_to_the_normal_one():
    from boundcalc.app.simulate import quantile

    assert quantile(3) == pytest.approx(_t2_quantile(0.99), rel=1e-9)
    assert quantile(1) == float("inf")
    assert 2.5758 < quantile(10 ** 6) < 2.5759 and quantile(200) > quantile(10 ** 6)
