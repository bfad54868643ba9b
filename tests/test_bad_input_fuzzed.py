"""Cases found by the fuzzer (benchmarks/fuzz_cli.py, seed 0, on the code of 672aea7), one test each, and a
seeded fast run of the fuzzer itself. Command-line cases run the ``boundcalc`` console script."""
from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import boundcalc as bc
from boundcalc.core.errors import InputError


def run(args, cwd):
    return subprocess.run(["boundcalc", *args], capture_output=True, text=True, cwd=cwd, env=dict(os.environ),
                          timeout=300)


def one_line(r, option):
    assert r.returncode == 2, (r.returncode, r.stderr[-400:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and option in lines[0] and r.stdout == ""


def answered(r):
    assert r.returncode == 0, r.stderr[-400:]
    assert "internal error" not in r.stderr and "nan" not in r.stdout.lower()


@pytest.mark.parametrize("args", [
    ["rate", "--problem", "density", "--privacy", "pure", "--eps", "5e-324", "--latex"],
    ["plan", "--problem", "density", "--privacy", "pure", "--solve", "target", "--eps", "5e-324"],
    ["table", "--problem", "support", "--eps", "5e-324", "--loss", "abs"],
], ids=["rate density latex", "plan density target", "table support"])
def test_fuzzed_zero_division_is_answered(args, tmp_path):
    answered(run(args, tmp_path))


def test_fuzzed_check_support_tv_eps_5e324(tmp_path):
    r = run(["check", "--problem", "support", "--privacy", "tv", "--reps", "3", "--eps", "5e-324", "--loss",
             "squared"], tmp_path)
    assert r.returncode in (0, 3) and "internal error" not in r.stderr, r.stderr[-400:]


@pytest.mark.parametrize("args", [
    ["check", "--problem", "point", "--privacy", "approx", "--reps", "3", "--model", "exp", "--eps", "2.5",
     "--theta", "1e-300"],
    ["plan", "--problem", "point", "--privacy", "none", "--solve", "target", "--theta", "1e-320"],
], ids=["check point theta", "plan point theta"])
def test_fuzzed_fisher_overflow_is_refused(args, tmp_path):
    one_line(run(args, tmp_path), "--theta")


def test_fuzzed_k_with_17_digits_is_refused(tmp_path):
    """k = 2.0000000000000004 (a float just above 2) ran for more than 10 minutes in sympy's rational roots."""
    one_line(run(["rate", "--problem", "mean", "--privacy", "local", "--k", "2.0000000000000004"], tmp_path), "--k")


@pytest.mark.parametrize("problem,privacy,param,value", [
    ("gaussian", "local", "d", np.array([1.0, 2.0, 3.0])),
    ("mean", "approx", "d", np.array([[1.0], [2.0]])),
    ("point", "approx", "radius", np.array([1.0, 2.0, 3.0])),
])
def test_fuzzed_curve_array_of_a_scalar_parameter(problem, privacy, param, value):
    with pytest.raises(InputError) as e:
        bc.evaluate_curve(problem, privacy, **{param: value})
    assert e.value.parameter == param


def _fuzzer():
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "fuzz_cli.py"
    spec = importlib.util.spec_from_file_location("fuzz_cli", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("fuzz_cli", mod)
    spec.loader.exec_module(mod)
    return mod


def test_seeded_fuzz_finds_nothing():
    """40 fuzzed rate/plan/table/API calls (seed 11; the checks and the tables of several problems, heavier, are
    left to benchmarks/fuzz_cli.py): each ends as an answer without NaN or one line naming an option, within 10 s
    of CPU."""
    fz = _fuzzer()
    plan = [c for c in fz.make_calls(80, seed=11)
            if c[0] == "api" or (c[1][0] != "check" and not (c[1][0] == "table" and ("all" in c[1] or "," in c[1][2])))]
    plan = plan[:40]
    counts, findings = fz.fuzz(plan=plan, limit=10.0)
    assert not findings, findings
    assert counts.get("ok", 0) >= 10 and counts.get("bad-input", 0) >= 10  # both kinds were exercised
