"""`check` simulates each mechanism on the instances where its risk is largest, so that a correct bound never
gets a FAIL: the no-data estimators (θ̂ = 0, the uniform law) on the point mass at the largest ‖θ‖ (a vertex),
where their risk equals the no-data risk, which is at least every certified lower bound."""
from __future__ import annotations

import pytest

import boundcalc as bc


def test_local_mean_d100_zero_estimator_on_a_vertex():
    """`check --problem mean --privacy local --d 100 --ball l2 --ns 100,316` reported FAIL at n = 100 ("worst
    empirical 0.01402 below lower 0.7637"): θ̂ = 0 had been simulated only at a small ‖θ‖. Its exact risk at the
    point mass X ≡ r e_1 is r² = 1, which is its certified value."""
    res = bc.check("mean", "local", d=100, ball="l2", ns=[100, 316], reps=30, seed=0)
    assert res.passed, res.to_text()
    # the shrunk average (1-σ)Z̄ now beats θ̂ = 0 there; θ̂ = 0 itself, checked where it is the reported bound
    # (the ℓ∞ family, whose average is not shrunk), has exact risk d r² at the vertex r·(1,…,1)
    res = bc.check("mean", "local", d=100, ball="linf", ns=[100, 316], reps=30, seed=0)
    assert res.passed, res.to_text()
    row = res.to_dict()["rows"][0]
    assert "θ̂ = 0" in row["mechanism"] and row["risk"] == pytest.approx(100.0)


PAIRS = [(e["problem"], e["privacy"]) for e in bc.list_problems() if e["check"]]


@pytest.mark.parametrize("problem,privacy", PAIRS)
def test_every_check_at_small_n_has_no_failed_row(problem, privacy):
    """At n = 3 and 6 (ε = 0.01) the no-data estimator is the best certified upper bound for most pairs: every
    row's verdict (empirical risk within [lower, upper]) passes. The fitted slope over two tiny n is not judged."""
    kw = {} if privacy == "none" else {"eps": 0.01}
    res = bc.check(problem, privacy, reps=100, seed=0, ns=[3, 6], **kw)
    rows = res.to_dict()["rows"]
    assert rows and all(r["ok"] for r in rows), res.to_text()
