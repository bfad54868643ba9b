"""Whole plans kept by request (boundcalc.app.result_cache): a plan read back is the computed one in every format,
and the command line answers a kept plan without importing sympy (docs/engineering/speed.md)."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

import boundcalc as bc
from boundcalc.app import planning, result_cache
from boundcalc.cache import diskcache, exprcodec
from boundcalc.render.plan_result import PlanResult

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _formats(res) -> dict:
    return {"text": res.to_text(), "json": json.dumps(res.to_dict(), sort_keys=True), "html": res._repr_html_(),
            "latex": res._repr_latex_()}


CASES = [
    ("mean", "pure", {"k": 4, "target": 0.01}),
    ("gaussian", "local", {"d": 3, "eps": 1.0, "target": "0.02,0.013"}),
    ("mean", "pure", {"n": 500, "target": 0.01, "solve": "eps"}),
    ("density", "local", {"n": 10 ** 5, "solve": "target"}),
]


@pytest.mark.parametrize("problem,privacy,kw", CASES)
def test_a_plan_read_from_disk_is_the_computed_one(problem, privacy, kw, tmp_path, monkeypatch):
    monkeypatch.setenv("BOUNDCALC_NO_CACHE", "1")  # computed, with nothing kept on disk
    planning.clear_memo()
    fresh = bc.plan(problem, privacy, **kw)
    monkeypatch.delenv("BOUNDCALC_NO_CACHE")
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path))
    planning.clear_memo()
    monkeypatch.setattr(result_cache, "_STORE", None)  # the store of the cache directory just set
    bc.plan(problem, privacy, **kw)
    diskcache._flush()  # what a finished process writes
    files = [p for p in (tmp_path / "boundcalc").iterdir() if p.name.startswith("boundcalc.results.")]
    assert len(files) == 1
    planning.clear_memo()  # a new process: nothing in memory

    def computing(*a, **k):
        raise AssertionError("the plan was computed, not read")

    monkeypatch.setattr(planning, "_plan", computing)
    read = bc.plan(problem, privacy, **kw)
    assert isinstance(read, PlanResult) and exprcodec.identical(read, fresh)
    assert _formats(read) == _formats(fresh)
    monkeypatch.setattr(result_cache, "_STORE", None)


def test_a_kept_plan_cannot_be_changed_by_its_caller():
    planning.clear_memo()
    first = bc.plan("mean", "pure", k=4, target=0.01)
    text = first.to_text()
    first.rows[0].necessary = -1
    first.rows[0].evidence_sufficient.clear()
    first.notes.append("changed")
    again = bc.plan("mean", "pure", k=4, target=0.01)
    assert again.to_text() == text and again is not first


def test_plan_keys_name_the_target_and_what_is_solved():
    k = result_cache.request_key
    assert k("plan", "mean", "pure", {"(target)": 0.01, "(solve)": None}) != \
        k("plan", "mean", "pure", {"(target)": 0.0123, "(solve)": None})
    assert k("plan", "mean", "pure", {"(target)": 0.01, "(solve)": None}) != \
        k("plan", "mean", "pure", {"(target)": 0.01, "(solve)": "n"})
    assert k("plan", "mean", "pure", {"(target)": 0.01}) != k("rate", "mean", "pure", {"(target)": 0.01})
    assert k("plan", "mean", "pure", {"(target)": [0.01, 0.02]}) is None  # a list: computed, not kept


def test_a_rejected_plan_is_not_kept(tmp_path, monkeypatch):
    planning.clear_memo()
    with pytest.raises(bc.InputError):
        bc.plan("mean", "pure", k=4, target=-1)
    assert not any(key.startswith("('plan'") for key in result_cache._MEMORY)


_CLI = """
import sys
from boundcalc.cli import main
args = ["plan", "--problem", "gaussian", "--privacy", "local", "--d", "3", "--target", "0.02"]
codes = [main(args), main(args + ["--json"])]
print("SYMPY", "sympy" in sys.modules, file=sys.stderr)
sys.exit(max(codes))
"""


def test_a_kept_plan_is_printed_without_sympy(tmp_path):
    """The second process reads the plan whole: same text and JSON, and neither sympy nor a problem module."""
    env = dict(os.environ, BOUNDCALC_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    env.pop("BOUNDCALC_NO_CACHE", None)
    runs = [subprocess.run([sys.executable, "-c", _CLI], env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr[-2000:]
    assert runs[0].stdout == runs[1].stdout and "n sufficient" in runs[0].stdout and '"n_sufficient"' in runs[0].stdout
    assert "SYMPY True" in runs[0].stderr  # the first process computes
    assert "SYMPY False" in runs[1].stderr, runs[1].stderr[-2000:]


def test_the_ends_of_the_range_are_read_at_a_new_target(tmp_path, monkeypatch):
    """Every plan of a question certifies the best bounds at the ends of the searched n range (here n = 1 and
    10^18); they are kept on disk, and a plan at another target reads them: the same plan as one computing them."""
    from boundcalc.core import certify

    monkeypatch.setenv("BOUNDCALC_NO_CACHE", "1")
    planning.clear_memo()
    fresh = bc.plan("mean", "pure", k=4, target=0.0117)
    monkeypatch.delenv("BOUNDCALC_NO_CACHE")
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(result_cache, "_STORE", None)
    monkeypatch.setattr(planning, "_ENDS", None)
    planning.clear_memo()
    bc.plan("mean", "pure", k=4, target=0.0132)
    diskcache._flush()
    ends = [p for p in (tmp_path / "boundcalc").iterdir() if p.name.startswith("boundcalc.plan_ends.")]
    assert len(ends) >= 3  # upper at 1 and 10^18, lower at 1
    planning.clear_memo()
    certified = []
    verify = certify.verify
    monkeypatch.setattr(certify, "verify", lambda b, values, *a: certified.append(values["n"]) or verify(b, values, *a))
    read = bc.plan("mean", "pure", k=4, target=0.0117)
    assert 1 not in certified and 10 ** 18 not in certified and certified  # the ends read, the answer's points not
    assert exprcodec.identical(read, fresh) and _formats(read) == _formats(fresh)
    from boundcalc.render import plan_result

    monkeypatch.setattr(plan_result, "_MECHANISM_FACTORY", planning._plan_mechanism)  # as before the API is imported
    mech, ref = read.mechanism(), fresh.mechanism()
    assert type(mech) is type(ref) and repr(mech) == repr(ref)
    monkeypatch.setattr(planning, "_ENDS", None)
    monkeypatch.setattr(result_cache, "_STORE", None)
