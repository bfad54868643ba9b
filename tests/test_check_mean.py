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
