"""Studies (bc.plan_study): the round trip for every strategy and privacy model, the study lower bound, the
strategy that must win in two opposite cases, and the accountant checked by dp-accounting independently."""
import math

import pytest

import boundcalc as bc
from boundcalc.app import composition
from boundcalc.app.study import RTOL

S2 = dict(problem="multinomial", d=2)
MEAN = dict(problem="mean", k=4)


def _stats(base, targets):
    return [dict(base, name=f"s{i}", target=t) for i, t in enumerate(targets)]


def _round_trip(res, privacy, eps=None, delta=None):
    """bc.rate at each statistic's allocation: certified upper <= target; groups' budgets compose to the budget."""
    by_group = {}
    for r in res.rows:
        kw = dict(r.params, n=r.n)
        if r.eps is not None:
            kw["eps"] = r.eps
        if r.delta is not None:
            kw["delta"] = r.delta
        rate = bc.rate(r.problem, privacy=privacy, **kw)
        assert rate.upper is not None and rate.upper.certified
        assert rate.upper.value <= r.target, (r.name, rate.upper.value, r.target)
        assert r.n <= r.group_n
        by_group.setdefault(r.group, []).append(r)
    # the groups are disjoint sets of people: they add up to the study's n
    assert sum(g[0].group_n for g in by_group.values()) == res.n_sufficient
    for rows in by_group.values():
        if eps is not None and privacy != "approx":
            assert math.fsum(r.eps for r in rows) <= eps  # sequential composition within a group
    return by_group


@pytest.mark.parametrize("strategy", ["split-eps", "split-people", "mixed"])
def test_round_trip_local_every_strategy(strategy):
    stats = [dict(S2, name="yes/no", target=0.004), dict(problem="multinomial", d=3, name="three", target=0.01)]
    res = bc.plan_study(stats, privacy="local", eps=1.0, strategy=strategy)
    assert res.strategy == strategy or (strategy == "mixed" and res.strategy in ("split-eps", "split-people"))
    _round_trip(res, "local", eps=1.0)
    assert res.n_sufficient == res.strategies[res.strategy]["n"]


@pytest.mark.parametrize("privacy,eps", [("pure", 2.0), ("smooth", 2.0), ("kl", 1.0), ("tv", 0.5)])
def test_round_trip_central_models(privacy, eps):
    res = bc.plan_study(_stats(MEAN, [0.01, 0.02]), privacy=privacy, eps=eps)
    _round_trip(res, privacy, eps=eps)
    for kind in ("split-eps", "split-people"):
        assert res.strategies[kind]["n"] >= res.n_sufficient


def test_round_trip_none_uses_the_same_records():
    res = bc.plan_study(_stats(MEAN, [0.01, 0.005]), privacy="none")
    assert res.strategy == "same-records" and len({r.group for r in res.rows}) == 1
    singles = [bc.plan("mean", privacy="none", k=4, target=t).n_sufficient for t in (0.01, 0.005)]
    assert res.n_sufficient == max(singles)
    for r in res.rows:
        assert bc.rate("mean", privacy="none", k=4, n=r.n).upper.value <= r.target


def test_study_lower_bound_is_the_largest_single_statistic_lower_bound():
    stats = [dict(S2, name="a", target=0.004), dict(problem="multinomial", d=3, name="b", target=0.01)]
    res = bc.plan_study(stats, privacy="local", eps=1.0)
    singles = [bc.plan(s["problem"], privacy="local", d=s["d"], target=s["target"], eps=1.0).n_necessary
               for s in stats]
    assert all(res.n_necessary >= x for x in singles)
    assert res.n_necessary == max(singles)
    assert res.n_necessary <= res.n_sufficient
    assert "study lower bound" in res.evidence_necessary["certificate"]


def test_splitting_people_beats_splitting_the_budget_when_risk_is_1_over_n_eps_squared():
    # three identical yes/no rates under local privacy at small ε: risk ∝ 1/(n ε²), so m groups cost m while
    # m shares of ε cost about m²
    res = bc.plan_study(_stats(S2, [0.002] * 3), privacy="local", eps=0.5)
    people, budget = res.strategies["split-people"]["n"], res.strategies["split-eps"]["n"]
    assert res.strategy == "split-people" and people < budget
    alone = bc.plan("multinomial", privacy="local", d=2, target=0.002, eps=0.5).n_sufficient
    assert people == 3 * alone
    assert budget > 2 * people  # about m = 3 times more: ε/3 costs about 9 times the records
    _round_trip(res, "local", eps=0.5)


def test_splitting_the_budget_beats_splitting_people_when_the_nonprivate_term_dominates():
    # central pure DP at a large ε: the risk is mostly the non-private 1/n term, which splitting people pays m times
    res = bc.plan_study(_stats(MEAN, [0.01] * 3), privacy="pure", eps=5.0)
    people, budget = res.strategies["split-people"]["n"], res.strategies["split-eps"]["n"]
    assert res.strategy == "split-eps" and budget < people
    assert res.n_sufficient == budget
    _round_trip(res, "pure", eps=5.0)
    assert "wins" in res.comparison() and "splitting people" in res.comparison()


def _independent_epsilon(rows, delta_total):
    """dp-accounting, called here directly (not through boundcalc's composition module)."""
    from dp_accounting.pld import common, privacy_loss_distribution as pldm
    from scipy.optimize import brentq
    from scipy.stats import norm

    def gauss_sigma(eps, delta):  # Balle & Wang (2018), Theorem 8, solved here with scipy
        f = lambda s: norm.cdf(0.5 / s - eps * s) - math.exp(eps) * norm.cdf(-0.5 / s - eps * s) - delta
        return brentq(f, 1e-3, 1e3, xtol=1e-14) * (1 + 1e-9)

    pld = None
    for r in rows:
        if r.accountant == "gaussian":
            p = pldm.from_gaussian_mechanism(gauss_sigma(r.eps, r.delta), sensitivity=1.0)
        elif r.accountant == "laplace":
            p = pldm.from_laplace_mechanism(1.0 / r.eps, sensitivity=1.0)
        else:
            p = pldm.from_privacy_parameters(common.DifferentialPrivacyParameters(
                r.eps, 0.0 if r.accountant == "pure" else r.delta))
        pld = p if pld is None else pld.compose(p)
    return pld.get_epsilon_for_delta(delta_total)


def test_approx_round_trip_and_composition_checked_by_dp_accounting():
    stats = [dict(MEAN, name="a", target=0.01), dict(MEAN, name="b", target=0.02)]
    res = bc.plan_study(stats, privacy="approx", eps=1.0, delta=1e-6, strategy="split-eps")
    groups = _round_trip(res, "approx")
    for rows in groups.values():
        assert math.fsum(r.delta for r in rows) <= 1e-6 * (1 + 1e-12)
        assert all(r.accountant in ("gaussian", "laplace", "pure", "generic") for r in rows)
        basic = math.fsum(r.eps for r in rows)
        assert basic <= 1.0 or _independent_epsilon(rows, 1e-6) <= 1.0


def test_gaussian_mechanisms_share_the_budget_through_the_pld_accountant():
    # two d = 10 means under (ε,δ)-DP whose certified uppers are Gaussian mechanisms: the accountant lets the shares
    # add up to more than ε (basic composition would not), and dp-accounting, called independently, agrees
    stats = [dict(MEAN, d=10, name=f"m{i}", target=0.02) for i in range(2)]
    res = bc.plan_study(stats, privacy="approx", eps=1.0, delta=1e-3, strategy="split-eps")
    rows = _round_trip(res, "approx")[1]
    assert all(r.accountant == "gaussian" for r in rows)
    assert math.fsum(r.eps for r in rows) > 1.0
    assert _independent_epsilon(rows, 1e-3) <= 1.0
    assert res.groups[0]["accounting"].startswith("PLD")


def test_pld_accountant_is_tighter_than_basic_composition_for_gaussians():
    ev = [composition.Event("gaussian", 0.5, 1e-7)] * 4
    eps = composition.composed_epsilon(ev, 1e-6)
    assert eps < 2.0  # basic composition would give 4 x 0.5
    from dp_accounting.pld import privacy_loss_distribution as pldm

    from boundcalc.core.gauss_calibration import sigma_analytic_scalar

    one = pldm.from_gaussian_mechanism(sigma_analytic_scalar(0.5, 1e-7))
    assert one.self_compose(4).get_epsilon_for_delta(1e-6) == pytest.approx(eps, rel=0.05)


def test_n_is_certified_and_near_the_smallest():
    res = bc.plan_study(_stats(S2, [0.003, 0.006]), privacy="local", eps=1.0, strategy="split-eps")
    for r in res.rows:
        below = int(r.n / (1 + 4 * RTOL)) - 1
        if below >= 1:
            v = bc.rate("multinomial", privacy="local", d=2, n=below, eps=r.eps).upper.value
            assert v > r.target  # the reported n is not far above the smallest sufficient n


# ---------------------------------------------------------------------- the other questions

def test_solve_target_gives_each_statistic_a_band():
    res = bc.plan_study(_stats(S2, [0.003, 0.006]), privacy="local", eps=1.0, n=5000, solve="target")
    for r in res.rows:
        lo, up = r.band
        assert lo is not None and up is not None and lo <= up
        assert r.n == 5000 and r.eps == pytest.approx(0.5)
        assert bc.rate("multinomial", privacy="local", d=2, n=5000, eps=r.eps).upper.value == pytest.approx(up)


def test_solve_eps_meets_the_targets_with_the_given_n():
    res = bc.plan_study(_stats(S2, [0.004, 0.004]), privacy="local", n=6000, solve="eps")
    assert res.eps_necessary <= res.eps_sufficient
    for r in res.rows:
        assert bc.rate("multinomial", privacy="local", d=2, n=r.n, eps=r.eps).upper.value <= r.target
    if res.strategy == "split-eps":
        assert math.fsum(r.eps for r in res.rows) <= res.eps_sufficient * (1 + 1e-12)
    else:
        assert sum(r.n for r in res.rows) <= 6000


# ---------------------------------------------------------------------- formats

def test_formats_and_json():
    import json

    res = bc.plan_study(_stats(S2, [0.004, 0.008]), privacy="local", eps=1.0)
    d = res.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["n_sufficient"] == res.n_sufficient and len(d["rows"]) == 2
    assert set(d["strategies"]) == {"split-people", "split-eps", "mixed"}
    for fmt in ("text", "markdown", "latex", "csv", "json"):
        assert res.render(fmt)
    assert res.render("csv").splitlines()[0].startswith("name,problem,target")
    assert "<table" in res._repr_html_()
    assert "splitting people: n = " in res.comparison()


# ---------------------------------------------------------------------- bad input

@pytest.mark.parametrize("stats,msg", [
    ([], "no statistic"),
    ([dict(S2, target=0.01)], "'name' is missing"),
    ([dict(S2, name="a")], "'target' is missing"),
    ([dict(S2, name="a", target=0.01), dict(S2, name="a", target=0.02)], "names must be distinct"),
    ([dict(name="a", problem="nope", target=0.01)], "'problem'"),
    ([dict(S2, name="a", target=0.01, foo=3)], "'foo'"),
    ([dict(S2, name="a", target=0.01, eps=1)], "whole study"),
    ([dict(S2, name="a", target=-1)], "'target'"),
    ([dict(name="a", problem="support", target=0.01)], "'problem'"),  # support has no local model
])
def test_bad_statistics_are_refused(stats, msg):
    with pytest.raises(bc.InputError, match=msg):
        bc.plan_study(stats, privacy="local", eps=1.0)


def test_unreachable_target_names_the_statistic():
    stats = [dict(S2, name="fine", target=0.01), dict(S2, name="hopeless", target=1e-30)]
    with pytest.raises(bc.InputError, match="hopeless"):
        bc.plan_study(stats, privacy="local", eps=1.0)


def test_model_without_a_composition_rule_is_refused():
    with pytest.raises(bc.InputError, match="composition"):
        composition.rule("renyi")
    with pytest.raises(bc.InputError, match="privacy"):
        bc.plan_study(_stats(S2, [0.01]), privacy="renyi")


def test_mixed_is_refused_beyond_six_statistics():
    stats = _stats(S2, [0.01] * 7)
    with pytest.raises(bc.InputError, match="up to 6 statistics"):
        bc.plan_study(stats, privacy="local", strategy="mixed")


def test_study_keys_are_checked_before_any_computation():
    with pytest.raises(bc.InputError, match="n"):
        bc.plan_study(_stats(S2, [0.01]), privacy="local", n=100)  # solve n: n is what is solved for
    with pytest.raises(bc.InputError, match="delta"):
        bc.plan_study(_stats(S2, [0.01]), privacy="local", delta=1e-6)
    with pytest.raises(bc.InputError, match="strategy"):
        bc.plan_study(_stats(S2, [0.01]), privacy="local", strategy="random")
