"""The real console script on the local-privacy problems: rate --json, check --json, bad input (exit 2)."""
import json
import shutil
import subprocess
import sys

import pytest

EXE = shutil.which("boundcalc")


def run(*args, timeout=60):
    cmd = [EXE, *args] if EXE else [sys.executable, "-c", "import sys; from boundcalc.cli import main; "
                                    "sys.exit(main(sys.argv[1:]))", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


RATE_CASES = [
    ["--problem", "mean"], ["--problem", "mean", "--d", "10", "--ball", "linf", "--k", "inf"],
    ["--problem", "discrete", "--d", "50", "--eps", "4", "--n", "100000", "--loss", "l1"],
    ["--problem", "gaussian", "--d", "3", "--sigma", "2", "--B", "1"],
    ["--problem", "sparse-bernoulli", "--d", "30", "--s", "3"],
]


@pytest.mark.parametrize("args", RATE_CASES)
def test_rate_json(args):
    p = run("rate", *args, "--privacy", "local", "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["privacy"] == "local"
    lo, up = r["lower"], r["upper"]
    assert lo["certified"] and up["certified"]
    assert 0 < lo["value"] <= up["value"]
    assert r["ratio"] == pytest.approx(up["value"] / lo["value"])
    assert r["rate"]["expr"]
    assert "NaN" not in p.stdout and "Infinity" not in p.stdout


# every problem's default check also runs (faster, through the API) in test_local_problems.py
CHECK_CASES = [["--problem", "mean", "--d", "3", "--ball", "linf"],
               ["--problem", "multinomial", "--d", "8", "--reps", "100"]]


@pytest.mark.parametrize("args", CHECK_CASES)
def test_check_json_passes(args):
    p = run("check", *args, "--privacy", "local", "--json", timeout=30)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["passed"], r["failures"]
    assert abs(r["fitted_slope"] - r["predicted_slope"]) <= r["slope_tolerance"]


BAD = [
    (["--problem", "mean", "--delta", "1e-6"], "--delta"),
    (["--problem", "sparse-bernoulli", "--s", "30", "--d", "20"], "--s"),
    (["--problem", "multinomial", "--d", "2.5"], "--d"),
    (["--problem", "mean", "--ball", "l3"], "--ball"),
    (["--problem", "gaussian", "--sigma", "-1"], "--sigma"),
    (["--problem", "mean", "--eps", "0"], "--eps"),
]


@pytest.mark.parametrize("args,name", BAD)
def test_bad_input_exits_2(args, name):
    p = run("rate", *args, "--privacy", "local", "--json")
    assert p.returncode == 2
    assert name in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
