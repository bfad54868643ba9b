"""Planning answers state their reliability (issue 14, item 4): a gap n_sufficient/n_necessary > 3 is
flagged in text and JSON with the side believed loose; notes are only those of the loss asked for."""
import json
import os
import subprocess
import sys
from pathlib import Path

import boundcalc as bc
from boundcalc.app.planning import RELIABLE_RATIO

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "boundcalc.cli", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)


def test_wide_plan_is_flagged_with_the_loose_side():
    args = ["plan", "--problem", "multinomial", "--privacy", "local", "--d", "10", "--eps", "1", "--target", "0.01"]
    out = _cli(*args)
    assert out.returncode == 0, out.stderr
    assert "unreliable" in out.stdout and "believed loose" in out.stdout
    assert "ℓ1" not in out.stdout  # an l2sq question gets no ℓ1 note
    d = json.loads(_cli(*args, "--json").stdout)
    rel = d["reliability"]
    assert rel["ratio"] == d["n_sufficient"] / d["n_necessary"] > RELIABLE_RATIO
    assert rel["reliable"] is False and rel["loose_side"] in ("lower", "upper")
    # the rate min{1/sqrt(n min{ε², e^ε}), d/(n min{ε², e^ε, d})} has slope between -1 and -1/2 in n
    assert -1 - 1e-9 <= rel["slopes"]["rate"] <= -0.5 + 1e-9
    # the side called loose is the one whose slope is farthest from the rate's
    s = rel["slopes"]
    far = max(("lower", "upper"), key=lambda k: abs(s[k] - s["rate"]))
    assert rel["loose_side"] == far
    assert any("unreliable" in n for n in d["rows"][0]["notes"])


def test_tight_plan_is_reliable_and_silent():
    res = bc.plan("mean", privacy="pure", k=4, target=0.01)
    assert res.n_sufficient / res.n_necessary <= RELIABLE_RATIO
    assert res.to_dict()["reliability"]["reliable"] is True
    assert "unreliable" not in res.to_text()


def test_notes_only_for_the_loss_asked():
    l1 = bc.plan("multinomial", privacy="local", d=10, eps=1, loss="l1", target=0.5)
    assert any(n.startswith("ℓ1 loss:") for n in l1.notes)
    l2 = bc.plan("multinomial", privacy="local", d=10, eps=1, target=0.01)
    assert not any("ℓ1" in n for n in l2.notes)


def test_rate_notes_only_for_the_loss_asked():
    assert not any("ℓ1" in n for n in bc.rate("multinomial", privacy="local", d=10).notes)
    assert any(n.startswith("ℓ1 loss:") for n in bc.rate("multinomial", privacy="local", d=10, loss="l1").notes)
