"""boundcalc works under ``python -OO`` (docstrings stripped): no bound reads its derivation from a ``__doc__``.

One subprocess with an empty cache directory (so every bound is built, not read back) answers ``rate`` at
the defaults of every (problem, privacy) pair of :func:`boundcalc.list_problems`.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import json, sys
import boundcalc as bc
assert bc.rate.__doc__ is None, "docstrings were not stripped"
failed, done = [], 0
for item in bc.list_problems():
    try:
        res = bc.rate(item["problem"], item["privacy"])
        if not any(b.value is not None for b in res.lowers + res.uppers):
            raise RuntimeError("no bound has a value")
        for b in res.lowers + res.uppers:
            if not isinstance(b.derivation, str) or not b.derivation.strip():
                raise RuntimeError(f"bound {b.name} has no derivation text")
        done += 1
    except Exception as exc:
        failed.append(f"{item['problem']}/{item['privacy']}: {type(exc).__name__}: {exc}")
print(json.dumps({"done": done, "failed": failed}))
"""


def test_rate_for_every_pair_under_python_OO(tmp_path):
    env = dict(os.environ, BOUNDCALC_CACHE_DIR=str(tmp_path / "cache"), PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-OO", "-c", SCRIPT], env=env, capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not out["failed"], "\n".join(out["failed"])
    assert out["done"] >= 26
