"""Bad input at the command line: exit 2, one short stderr line naming the parameter, no traceback, no file."""
import os
import subprocess
import sys

import pytest

CASES = [
    (["table", "--problem", "mean", "--format", "csv", "--output", "/sys/t.csv"], "--output"),
    (["plot", "--problem", "mean", "--privacy", "pure", "--output", ""], "--output"),
    (["table", "--problem", "mean", "--output", ""], "--output"),
    (["table", "--problem", "mean", "--output", "/no/such/dir/t.csv"], "--output"),
    (["table", "--problem", "mean", "--output", "."], "--output"),
    (["check", "--problem", "mean", "--privacy", "pure", "--plot", "/sys/c.png"], "--plot"),
    (["plot", "--problem", "mean", "--privacy", "pure", "--output", "/sys/p.png"], "--output"),
    (["rate", "--problem", "mean", "--privacy", "pure", "--k", "4", "--k", "3"], "--k"),
    (["rate", "--problem", "mean", "--privacy", "pure", "--privacy", "approx"], "--privacy"),
    (["rate", "--problem", "mean", "--privacy", "pure", "--json", "--json"], "--json"),
    (["rate", "--problem", "mean", "--privacy", "none", "--eps", "1"], "--eps"),
    (["rate", "--problem", "mean", "--privacy", "pure", "--alpha", "0.5"], "--alpha"),
    (["rate", "--problem", "mean", "--privacy", "pure", "--delta", "1e-6"], "--delta"),
    (["table", "--problem", "mean", "--privacy", "pure,tv", "--delta", "1e-5"], "--delta"),
    (["rate", "--problem", "mean", "--privacy", "pure", "--n", "\uff11\uff10\uff10\uff10"], "--n"),
    (["rate", "--problem", "mean", "--privacy", "pure", "--n", "1_000"], "--n"),
    (["rate", "--problem", "mean", "--privacy", "pure", "--n", "0x10"], "--n"),
    (["rate", "--problem", "mean", "--privacy", "pure", "--r", "9" * 100000], "--r"),
]


def run(args, cwd):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "boundcalc.cli", *args] if False else ["boundcalc", *args],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


@pytest.mark.parametrize("args,param", CASES, ids=[" ".join(a)[:60] for a, _ in CASES])
def test_bad_input_exits_2_with_one_short_line(args, param, tmp_path):
    before = set(os.listdir(tmp_path))
    r = run(args, tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert param in lines[0]
    assert len(lines[0]) < 300  # long values are shortened, not echoed back
    assert r.stdout == ""
    assert set(os.listdir(tmp_path)) == before  # no partial file left


def test_api_overflow_is_an_input_error():
    import boundcalc as bc

    with pytest.raises(bc.InputError, match="--n"):
        bc.rate("mean", privacy="pure", n=10 ** 400)


def test_output_checked_before_computing(tmp_path):
    """A bad output path is refused at once (no 6-10 s of computing first). Measured in the child's CPU
    time (user + sys), which a loaded machine does not inflate the way it inflates wall time; computing the
    table first costs well over 5 s of CPU."""
    import resource

    def child_cpu():
        u = resource.getrusage(resource.RUSAGE_CHILDREN)
        return u.ru_utime + u.ru_stime

    t = child_cpu()
    r = run(["table", "--problem", "all", "--output", "/sys/x.csv"], tmp_path)
    assert r.returncode == 2
    assert child_cpu() - t < 4


def test_risk_interval_is_clipped_at_zero():
    import numpy as np

    from boundcalc.app.simulate import risk_interval

    m, lo, hi = risk_interval(np.array([0.0, 10.0]))  # two reps: a huge standard error
    assert lo == 0.0 and hi > m > 0


# Accepted before (issue 23): each is now one line, exit 2, naming the option; checked in-process (fast).
STRICT = [
    (["list", "--foo", "1"], "--foo"),
    (["docs", "--foo", "1"], "--foo"),
    (["docs", "no-such-page"], "--page"),
    (["check", "--problem", "mean", "--privacy", "pure", "--n", "5"], "--n"),
    (["convert", "--from", "none", "--to", "pure", "--eps", "1"], "--eps"),
    (["convert", "--from", "pure", "--to", "tv", "--alpha", "1"], "--alpha"),
    (["check", "--problem", "mean", "--privacy", "pure", "--ns", "100,,200"], "--ns"),
    (["check", "--problem", "mean", "--privacy", "pure", "--ns", "100,200,"], "--ns"),
    (["check", "--problem", "mean", "--privacy", "pure", "--ns", ""], "--ns"),
    (["check", "--problem", "mean", "--privacy", "pure", "--ns", "1,5"], "--ns"),
    (["plan", "--problem", "mean", "--privacy", "pure", "--target", "0.01,"], "--target"),
    (["plan", "--problem", "mean", "--privacy", "pure", "--target", ",0.01"], "--target"),
    (["plan", "--problem", "mean", "--privacy", "pure", "--target", "1,5"], "--target"),
    (["table", "--problem", "mean,,support"], "--problem"),
    (["table", "--problem", "mean,mean"], "--problem"),
    (["table", "--problem", "mean,mean-estimation"], "--problem"),
    (["table", "--problem", "mean", "--privacy", "pure,"], "--privacy"),
    (["table", "--problem", "mean", "--privacy", "pure,pure"], "--privacy"),
    (["table", "--problem", "mean", "--privacy", ""], "--privacy"),
    (["plot", "--problem", "mean", "--privacy", "tv", "--x", "eps", "--xmax", "2", "--output", "p.png"], "--xmax"),
    (["plot", "--problem", "mean", "--privacy", "pure", "--x", "n", "--xmin", "0.5", "--output", "p.png"], "--xmin"),
    (["plot", "--problem", "mean", "--privacy", "pure", "--output", "p.xyz"], "--output"),
]


@pytest.mark.parametrize("args,param", STRICT, ids=[" ".join(a)[:70] for a, _ in STRICT])
def test_formerly_accepted_input_exits_2(args, param, tmp_path, capsys, monkeypatch):
    from boundcalc.cli import main

    if args[0] == "plot":
        pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    rc = main(args)
    cap = capsys.readouterr()
    assert rc == 2, (cap.out[-500:], cap.err)
    lines = cap.err.strip().splitlines()
    assert len(lines) == 1 and param in lines[0] and cap.out == ""
    assert os.listdir(tmp_path) == []
