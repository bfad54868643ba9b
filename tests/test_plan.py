"""Planning: n (or ε) necessary and sufficient for a target risk, confirmed by re-evaluating the bounds."""
import json

import pytest

import boundcalc as bc
from boundcalc.core import bounds as registry
from boundcalc.cli import main
from boundcalc.core.errors import InputError


def _lower(problem, privacy, **p):
    b = bc.rate(problem, privacy, **p).lower
    return None if b is None else b.value


def _upper(problem, privacy, **p):
    b = bc.rate(problem, privacy, **p).upper
    return None if b is None else b.value


def _confirm_n(problem, privacy, target, n_nec, n_suf, **p):
    """Re-evaluate the certified bounds through bc.rate at n and n - 1 (independent of plan's search)."""
    assert isinstance(n_nec, int) and isinstance(n_suf, int)
    assert 1 <= n_nec <= n_suf
    assert _upper(problem, privacy, n=n_suf, **p) <= target
    if n_suf > 1:
        assert _upper(problem, privacy, n=n_suf - 1, **p) > target
    assert _lower(problem, privacy, n=n_nec, **p) <= target
    if n_nec > 1:
        assert _lower(problem, privacy, n=n_nec - 1, **p) > target


def _json(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))


def test_contract_command_gives_confirmed_integers(capsys):
    out = _json(capsys, "plan", "--problem", "mean", "--privacy", "pure", "--k", "4", "--target", "0.01", "--json")
    assert out["solve"] == "n" and out["target"] == 0.01
    n_nec, n_suf = out["n_necessary"], out["n_sufficient"]
    assert out["reason_necessary"] is None and out["reason_sufficient"] is None
    _confirm_n("mean", "pure", 0.01, n_nec, n_suf, k=4)
    # the tuned mechanism and the certificates are reported
    assert out["sufficient"]["mechanism"] and "T" in out["sufficient"]["free_parameters"]
    assert out["necessary"]["value_at_n_minus_1"] > 0.01
    assert out["params"]["eps"] == 1.0 and "n" not in out["params"]


@pytest.mark.parametrize("privacy", ["none", "pure", "smooth", "approx", "tv", "kl"])
def test_every_central_model_of_mean(privacy):
    level = {} if privacy == "none" else {"eps": 0.5}  # privacy none has no level (eps is refused there)
    res = bc.plan("mean", privacy=privacy, k=4, target=2e-3, **level)
    _confirm_n("mean", privacy, 2e-3, res.n_necessary, res.n_sufficient, k=4, **level)


def test_nonprivate_is_exact():
    """No privacy: the certified upper bound is the exact minimax r²/(1+√n)² (shrunk mean), equal to the
    lower bound, so n_sufficient = n_necessary = the smallest n with 1/(1+√n)² <= target."""
    for t in (1e-3, 3e-3, 0.5, 1e-15):
        res = bc.plan("mean", privacy="none", target=t)
        m = res.n_sufficient
        assert 1 / (1 + m ** 0.5) ** 2 <= t * (1 + 1e-12)
        assert m == 1 or 1 / (1 + (m - 1) ** 0.5) ** 2 > t * (1 - 1e-12)
        assert res.n_necessary == m
    # the necessary n is where the certified lower bound crosses the target, at any scale
    for t in (1e-4, 1e-12):
        res = bc.plan("mean", privacy="none", target=t)
        assert _lower("mean", "none", n=res.n_necessary) <= t < _lower("mean", "none", n=res.n_necessary - 1)


def test_vectorised_targets_are_monotone():
    targets = [1e-2, 1e-4, 1e-3, 1e-6]
    res = bc.plan("mean", privacy="approx", k=4, target=targets, eps=1.0)
    assert res.targets == targets
    assert len(res.n_necessary) == 4 and len(res.n_sufficient) == 4
    order = sorted(range(4), key=lambda i: -targets[i])
    nec = [res.n_necessary[i] for i in order]
    suf = [res.n_sufficient[i] for i in order]
    assert nec == sorted(nec) and suf == sorted(suf)
    for t, a, b in zip(targets, res.n_necessary, res.n_sufficient):
        _confirm_n("mean", "approx", t, a, b, k=4, eps=1.0)
    # the comma-separated string form gives the same answers
    res2 = bc.plan("mean", privacy="approx", k=4, target="0.01, 1e-4,0.001,1e-6", eps=1.0)
    assert res2.n_sufficient == res.n_sufficient


def test_solve_eps_brackets():
    t = 2e-3
    res = bc.plan("mean", privacy="pure", k=4, target=t, n=2000, solve="eps")
    row = res.to_dict()
    e_nec, e_suf = res.eps_necessary, res.eps_sufficient
    assert 0 < e_nec <= e_suf
    assert _upper("mean", "pure", k=4, n=2000, eps=e_suf) <= t
    assert _upper("mean", "pure", k=4, n=2000, eps=row["sufficient"]["eps_below"]) > t
    assert row["sufficient"]["eps_below"] >= e_suf * (1 - 2e-4)
    assert _lower("mean", "pure", k=4, n=2000, eps=row["necessary"]["eps_below"]) > t
    assert _lower("mean", "pure", k=4, n=2000, eps=e_nec) <= t


def test_solve_eps_tv_level_stays_below_one():
    res = bc.plan("mean", privacy="tv", k=4, target=1e-3, n=5000, solve="eps")
    assert 0 < res.eps_necessary <= res.eps_sufficient < 1
    assert res.to_dict()["level_name"] == "alpha"


def test_unreachable_targets_give_null_and_reason(capsys):
    # below the non-private floor at fixed n: no level reaches it
    res = bc.plan("mean", privacy="pure", k=4, target=1e-9, n=5000, solve="eps")
    d = res.to_dict()
    assert d["eps_necessary"] is None and d["eps_sufficient"] is None
    assert "non-private" in d["reason_sufficient"] and "unreachable" in d["reason_necessary"]
    # beyond n = 10^18
    res = bc.plan("mean", privacy="pure", k=4, target=1e-30)
    assert res.n_sufficient is None and "unreachable" in res.rows[0].reason_sufficient
    assert res.n_necessary is None and "unreachable" in res.rows[0].reason_necessary
    out = _json(capsys, "plan", "--problem", "mean", "--privacy", "pure", "--target", "1e-30", "--json")
    assert out["n_sufficient"] is None and out["reason_sufficient"]


def test_large_target_needs_one_record():
    # below the no-data risk r² = 1 but above the certified upper bound at n = 1 (0.9): one record
    res = bc.plan("mean", privacy="pure", k=4, target=0.95)
    assert res.n_necessary == 1 and res.n_sufficient == 1
    assert res.rows[0].notes


@pytest.mark.parametrize("target", [1.0, 10.0, "1,5", [0.01, 2.0]])
def test_target_reached_without_data_is_bad_input(target):
    """θ̂ = 0 has risk r² = 1 at every n and level: a target >= 1 asks nothing (issue 23: --target 1,5)."""
    for solve, extra in (("n", {}), ("eps", {"n": 1000})):
        with pytest.raises(InputError, match="no data") as e:
            bc.plan("mean", privacy="pure", k=4, target=target, solve=solve, **extra)
        assert e.value.parameter == "target"


def test_solve_target_matches_rate():
    res = bc.plan("mean", privacy="approx", k=4, n=3000, solve="target")
    r = bc.rate("mean", "approx", k=4, n=3000)
    assert res.target_necessary == pytest.approx(r.lower.value)
    assert res.target_sufficient == pytest.approx(r.upper.value)
    assert "reached by mechanism" in res.to_text()


def test_text_output(capsys):
    rc = main(["plan", "--problem", "mean", "--privacy", "kl", "--k", "4", "--target", "0.01,0.001"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "n necessary" in out and "n sufficient" in out and "nan" not in out.lower()


@pytest.mark.parametrize("kwargs,param", [
    ({}, "target"), ({"target": 0}, "target"), ({"target": -1}, "target"), ({"target": float("nan")}, "target"),
    ({"target": "abc"}, "target"), ({"target": "inf"}, "target"), ({"target": "0.01,"}, "target"),
    ({"target": ",0.01"}, "target"), ({"target": "0.01,,0.001"}, "target"), ({"target": " , "}, "target"),
    ({"target": 0.01, "solve": "k"}, "solve"), ({"target": 0.01, "n": 100}, "n"),
    ({"target": 0.01, "solve": "eps", "eps": 1}, "eps"), ({"target": 0.01, "solve": "target"}, "target"),
    ({"target": 0.01, "bogus": 1}, "bogus"), ({"target": 0.01, "eps": -1}, "eps"),
])
def test_bad_input(kwargs, param):
    with pytest.raises(InputError) as e:
        bc.plan("mean", privacy="pure", **kwargs)
    assert e.value.parameter == param


def test_bad_input_cli_exit_2(capsys):
    for argv in (["--target", "-1"], ["--target", "0.01", "--solve", "k"], [],
                 ["--target", "nan"], ["--privacy", "none", "--target", "0.01", "--solve", "eps"]):
        base = ["plan", "--problem", "mean"] + (["--privacy", "pure"] if "--privacy" not in argv else []) + argv
        rc = main(base)
        err = capsys.readouterr().err
        assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err


@pytest.fixture
def order_only_problem():
    """A registered problem whose upper bound is order only (unspecified constant)."""
    from boundcalc.core import symbolic as S
    from boundcalc.core.params import N, R

    name = "_test_order_only"
    __import__("boundcalc.app.catalog", fromlist=["x"]).problems()
    registry.register_problem(name, "test problem")
    up = registry.Bound(side="upper", name="order", label="order-only mechanism", expr=S.r ** 2 / S.n, source="test", derivation="none",
                        certified=False)
    lo = registry.Bound(side="lower", name="lc", label="certified lower", expr=S.r ** 2 / (4 * S.n), source="test", derivation="exact")

    class OrderOnly(registry.Problem):
        params = (N, R)

        def rate(self, values):
            return [("stat", S.r ** 2 / S.n)]

        def bounds(self, values):
            return [up, lo]

    OrderOnly.name = name
    registry.register(OrderOnly().entry("pure"))
    yield name
    registry._PROBLEMS.pop(name)


def test_order_only_bound_gives_null(order_only_problem):
    res = bc.plan(order_only_problem, privacy="pure", target=0.01)
    assert res.n_sufficient is None and "order only" in res.rows[0].reason_sufficient
    assert res.n_necessary == 25  # r²/(4n) <= 0.01 first at n = 25 (certified lower bound)


def test_every_registered_problem_plans():
    """Each problem (through the registry, no special cases): the target reached at n = 400 by the
    certified upper bound is reached by n_sufficient <= 400, confirmed by re-evaluation."""
    seen = set()
    for row in bc.list_problems():
        if row["problem"] in seen:
            continue
        priv = row["privacy"] if row["privacy"] != "none" else None
        if priv is None:
            continue
        up = _upper(row["problem"], priv, n=400)
        if up is None:
            continue
        seen.add(row["problem"])
        res = bc.plan(row["problem"], privacy=priv, target=up)
        assert res.n_sufficient is not None and res.n_sufficient <= 400
        assert _upper(row["problem"], priv, n=res.n_sufficient) <= up
        if res.n_necessary is not None:
            assert res.n_necessary <= res.n_sufficient
            if res.n_necessary > 1:
                assert _lower(row["problem"], priv, n=res.n_necessary - 1) > up
    assert "mean" in seen


def test_contract_as_console_script():
    """The issue's command, run as the installed console script."""
    import shutil
    import subprocess
    import sys

    exe = shutil.which("boundcalc")
    cmd = [exe] if exe else [sys.executable, "-m", "boundcalc.cli"]
    p = subprocess.run(cmd + ["plan", "--problem", "mean", "--privacy", "pure", "--k", "4", "--target", "0.01",
                              "--json"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    _confirm_n("mean", "pure", 0.01, out["n_necessary"], out["n_sufficient"], k=4)
    p = subprocess.run(cmd + ["plan", "--problem", "mean", "--privacy", "pure", "--target", "0"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "--target" in p.stderr and "Traceback" not in p.stderr


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=6, deadline=None, derandomize=True)
@given(log_t=st.floats(-8, -1), privacy=st.sampled_from(["pure", "approx", "tv", "kl", "local"]),
       eps=st.sampled_from([0.1, 0.5, 0.9]), k=st.sampled_from([2, 4, "inf"]))
def test_property_random_targets_confirmed(log_t, privacy, eps, k):
    t = 10.0 ** log_t
    res = bc.plan("mean", privacy=privacy, target=t, eps=eps, k=k)
    if res.n_sufficient is None:  # only beyond n = 10^18
        assert _upper("mean", privacy, n=10 ** 18, eps=eps, k=k) > t
        return
    _confirm_n("mean", privacy, t, res.n_necessary, res.n_sufficient, eps=eps, k=k)


def test_plan_starts_at_the_smallest_n_the_problem_accepts():
    # subsample-and-aggregate with the exponential model rejects n < 3: a rejected n is no evidence, so
    # n_necessary must come from the certified lower bound at valid n (re-checked at n and n - 1)
    res = bc.plan("point", privacy="pure", model="exponential", target=1e-4)
    n = res.n_necessary
    assert n is not None and n > 3
    lo = lambda m: bc.rate("point", "pure", model="exponential", n=m).lower.value
    assert lo(n - 1) > 1e-4 >= lo(n)
