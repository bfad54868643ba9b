"""The real console script, run as a subprocess."""
import json
import shutil
import subprocess
import sys
import time

import pytest

EXE = shutil.which("boundcalc")
CMD = [EXE] if EXE else [sys.executable, "-m", "boundcalc.cli"]


def run(*args, timeout=120):
    return subprocess.run(CMD + list(args), capture_output=True, text=True, timeout=timeout)


def test_main_command_runs_as_is():
    p = run("rate", "--problem", "mean", "--privacy", "approx", "--k", "4")
    assert p.returncode == 0, p.stderr
    assert "certified lower" in p.stdout and "certified upper" in p.stdout and "ratio" in p.stdout
    assert "nan" not in p.stdout.lower()


def test_rate_json_contract():
    p = run("rate", "--problem", "mean", "--privacy", "approx", "--k", "4", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    for key in ("problem", "privacy", "params", "rate", "lower", "upper", "lowers", "uppers", "ratio",
                "nonprivate", "regime"):
        assert key in out
    assert out["params"] == {"n": 1000, "d": 1, "r": 1.0, "k": 4.0, "eps": 1.0, "delta": 1e-06}
    lo, up = out["lower"], out["upper"]
    assert lo["certified"] is True and up["certified"] is True
    assert 0 < lo["value"] <= up["value"]
    for b in (lo, up):
        for key in ("value", "certified", "expr", "latex", "source", "free_parameters", "conditions"):
            assert key in b
    assert "method" in lo and "mechanism" in up
    assert out["ratio"] == pytest.approx(up["value"] / lo["value"])
    assert out["rate"]["expr"] and out["rate"]["latex"]
    assert out["nonprivate"]["value"] == pytest.approx(1 / (1 + 1000 ** 0.5) ** 2)  # exact minimax (shrunk mean)


def test_k_inf_and_latex():
    p = run("rate", "--problem", "mean", "--privacy", "pure", "--k", "inf", "--latex")
    assert p.returncode == 0, p.stderr
    assert r"\toprule" in p.stdout and r"\bottomrule" in p.stdout


@pytest.mark.parametrize("args,param", [
    (["--eps", "-1"], "--eps"), (["--delta", "2"], "--delta"), (["--k", "1"], "--k"), (["--n", "0"], "--n"),
    (["--d", "2.5"], "--d"), (["--problem", "nope"], "--problem"), (["--privacy", "nope"], "--privacy"),
    (["--n", "abc"], "--n"), (["--eps", "nan"], "--eps"), (["--eps", "inf"], "--eps"), (["--r", "-inf"], "--r"),
    (["--delta", "NaN"], "--delta"), (["--privacy", "pure", "--delta", "1e-6"], "--delta"),
    (["--bogus", "1"], "--bogus"), (["--k", "two"], "--k"), (["--k", "1e400"], "--k"), (["--k", "1500"], "--k")])
def test_bad_input_exits_2_with_one_line(args, param):
    base = {"--problem": "mean", "--privacy": "approx"}
    for flag, val in zip(args[::2], args[1::2]):
        base[flag] = val
    argv = ["rate"] + [x for kv in base.items() for x in kv]
    p = run(*argv)
    assert p.returncode == 2, (argv, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and param in lines[0], p.stderr
    assert p.stdout == ""


def test_repeated_option_is_refused():
    p = run("rate", "--problem", "mean", "--privacy", "pure", "--n", "10", "--n", "20")
    assert p.returncode == 2 and "--n" in p.stderr and "twice" in p.stderr


def test_large_k_uses_float_bias_constant():
    p = run("rate", "--problem", "mean", "--privacy", "pure", "--k", "1000", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert 0 < out["lower"]["value"] <= out["upper"]["value"]


def test_missing_problem_and_unknown_command():
    for argv in (["rate", "--privacy", "pure"], ["frobnicate"], []):
        p = run(*argv)
        assert p.returncode == 2 and "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_list():
    p = run("list", "--json")
    assert p.returncode == 0
    rows = json.loads(p.stdout)
    assert {"problem": "mean", "privacy": "approx"}.items() <= next(
        r for r in rows if r["problem"] == "mean" and r["privacy"] == "approx").items()
    p = run("list")
    assert p.returncode == 0 and "mean" in p.stdout


def test_check_pure_k4_passes_fast():
    t = time.time()
    p = run("check", "--problem", "mean", "--privacy", "pure", "--k", "4", "--json", timeout=60)
    elapsed = time.time() - t
    assert p.returncode == 0, p.stdout + p.stderr
    out = json.loads(p.stdout)
    assert out["passed"] is True
    assert len(out["rows"]) >= 4
    for row in out["rows"]:
        assert row["lower"] <= row["ci_high"] and row["ci_low"] <= row["upper"]
    assert abs(out["fitted_slope"] - out["predicted_slope"]) <= out["slope_tolerance"]
    assert elapsed < 30


def test_check_is_reproducible():
    a = run("check", "--problem", "mean", "--privacy", "approx", "--k", "3", "--ns", "100,1000", "--reps", "50",
            "--seed", "7", "--json")
    b = run("check", "--problem", "mean", "--privacy", "approx", "--k", "3", "--ns", "100,1000", "--reps", "50",
            "--seed", "7", "--json")
    assert a.returncode == 0 and b.returncode == 0
    ra, rb = json.loads(a.stdout), json.loads(b.stdout)
    assert [r["risk"] for r in ra["rows"]] == [r["risk"] for r in rb["rows"]]


def test_check_bad_input():
    p = run("check", "--problem", "mean", "--privacy", "pure", "--reps", "1")
    assert p.returncode == 2 and "--reps" in p.stderr
