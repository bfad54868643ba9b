"""Whole ``rate`` results kept by request (boundcalc.app.result_cache) and the console script's quick exit.

What must hold: a kept result reads back identical, field by field, to what a process with no cache at all
computes; only successful requests are kept; a request is keyed exactly (type and repr of every parameter);
a damaged entry is recomputed, never trusted; answering a kept request needs no problem module; and the console script's quick exit loses no output, no exit code and no cache write.
"""
from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess
import sys

import pytest

import boundcalc as bc
from boundcalc.app import api, result_cache
from boundcalc.cache import diskcache, exprcodec

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _fresh(problem, privacy, monkeypatch, **kw):
    """The result computed with the disk cache off and nothing kept in memory."""
    monkeypatch.setenv("BOUNDCALC_NO_CACHE", "1")
    api.clear_rate_cache()
    try:
        return bc.rate(problem, privacy, **kw)
    finally:
        monkeypatch.delenv("BOUNDCALC_NO_CACHE")
        api.clear_rate_cache()


@pytest.mark.parametrize("problem,privacy,kw", [("mean", "approx", {"k": 4, "n": 3000}),
                                                ("support", "pure", {"n": "200"}),
                                                ("multinomial", "local", {"d": 7, "eps": 0.5}),
                                                ("gaussian", "local", {}), ("density", "local", {"n": 10**6})])
def test_a_result_read_from_disk_is_the_computed_one(problem, privacy, kw, tmp_path, monkeypatch):
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path))
    api.clear_rate_cache()
    bc.rate(problem, privacy, **kw)
    diskcache._flush()  # what a finished process writes
    key = result_cache.request_key("rate", problem, privacy, kw)
    files = [p for p in (tmp_path / "boundcalc").iterdir() if p.name.startswith("boundcalc.results.")]
    assert len(files) == 1 and key in json.loads(files[0].read_text())
    api.clear_rate_cache()  # a new process: nothing in memory
    read = bc.rate(problem, privacy, **kw)
    fresh = _fresh(problem, privacy, monkeypatch, **kw)
    for f in ("rate_expr", "rate_lower_expr", "lowers", "uppers", "params", "terms", "notes", "rate_terms",
              "nonprivate", "regime"):
        assert exprcodec.identical(getattr(read, f), getattr(fresh, f)), f
    assert read.to_text() == fresh.to_text() and read.explain() == fresh.explain()
    assert read.to_dict() == fresh.to_dict()


def test_request_keys_are_exact():
    k = result_cache.request_key
    assert k("rate", "mean", "pure", {"n": 1000}) != k("rate", "mean", "pure", {"n": 1000.0})
    assert k("rate", "mean", "pure", {"n": 1000}) != k("rate", "mean", "pure", {"n": "1000"})
    assert k("rate", "mean", "pure", {"eps": 0.1}) != k("rate", "mean", "pure", {"eps": math.nextafter(0.1, 1.0)})  # the next float
    assert k("rate", "mean", "pure", {"n": 5, "d": 2}) == k("rate", "mean", "pure", {"d": 2, "n": 5})
    assert k("rate", "mean", "pure", {}) != k("rate", "mean", "approx", {})
    import numpy as np

    assert k("rate", "mean", "pure", {"n": np.int64(5)}) is None  # not a plain value: not kept
    assert k("rate", "mean", "pure", {"n": [5]}) is None
    assert k("rate", 3, "pure", {}) is None


def test_failed_requests_are_not_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path))
    api.clear_rate_cache()
    for bad in ({"n": -3}, {"eps": "x"}, {"nonsense": 1}):
        with pytest.raises(bc.InputError):
            bc.rate("mean", "pure", **bad)
        assert result_cache.load(result_cache.request_key("rate", "mean", "pure", bad)) is None
    diskcache._flush()
    assert not [p for p in (tmp_path / "boundcalc").glob("boundcalc.results.*")]


def test_a_damaged_entry_is_recomputed(tmp_path, monkeypatch):
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path))
    api.clear_rate_cache()
    good = bc.rate("mean", "pure", n=4321)
    diskcache._flush()
    (path,) = [p for p in (tmp_path / "boundcalc").iterdir() if p.name.startswith("boundcalc.results.")]
    key = result_cache.request_key("rate", "mean", "pure", {"n": 4321})
    for damage in ({key: ["A", "os:system", [["s", "true"]]]},  # a class outside sympy and boundcalc
                   {key: ["d", [["x", ["i", "1"]]]]},  # reads back as something else than a result
                   {key: ["R", "boundcalc.render.result:RateResult", []]},  # missing fields
                   {key: json.dumps(["R", "boundcalc.render.result:RateResult", []])},  # the same, as the text kept
                   {key: "[not json"}):  # text that is not JSON
        path.write_text(json.dumps(damage))
        api.clear_rate_cache()
        again = bc.rate("mean", "pure", n=4321)
        assert again.to_text() == good.to_text()
    path.write_text("{not json")
    api.clear_rate_cache()
    assert bc.rate("mean", "pure", n=4321).to_text() == good.to_text()


def test_sharded_store_writes_one_file_per_key_and_stops_at_the_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(diskcache, "MAX_SHARDS", 3)
    store = diskcache.JsonStore("boundcalc.testshards", sharded=True)
    for i in range(5):
        store.put(f"key{i}", [i])
        diskcache._flush()  # one process after another
    files = sorted(p.name for p in (tmp_path / "boundcalc").iterdir() if p.name.startswith("boundcalc.testshards."))
    assert len(files) == 3 and all(f.endswith(f"-{diskcache.fingerprint()}.json") for f in files)
    again = diskcache.JsonStore("boundcalc.testshards", sharded=True)
    assert [again.get(f"key{i}") for i in range(5)] == [[0], [1], [2], None, None]


_SUBPROCESS_CHECK = """
import sys
from boundcalc.cli import main
code = main(["rate", "--problem", "mean", "--privacy", "approx", "--k", "4", "--n", "777"])
print("MODULES", sorted(m for m in sys.modules if m.startswith("boundcalc.problems")), file=sys.stderr)
sys.exit(code)
"""


def test_a_kept_answer_needs_no_problem_module(tmp_path):
    env = dict(os.environ, BOUNDCALC_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    env.pop("BOUNDCALC_NO_CACHE", None)
    runs = [subprocess.run([sys.executable, "-c", _SUBPROCESS_CHECK], env=env, capture_output=True, text=True,
                           timeout=300) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr[-2000:]
    assert runs[0].stdout == runs[1].stdout and "certified upper" in runs[0].stdout
    assert "boundcalc.problems.mean_central" in runs[0].stderr  # the first run computes
    assert "boundcalc.problems.local_mean" not in runs[0].stderr  # a central-mean request: the central module only
    modules = runs[1].stderr.split("MODULES", 1)[1]
    assert "boundcalc.problems" not in modules, modules


def _script():
    exe = pathlib.Path(sys.executable).with_name("boundcalc")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "boundcalc"]


def test_the_console_script_exits_quickly_but_completely(tmp_path):
    """``run`` ends with os._exit: the output, the exit code and the cache file must all still be there."""
    env = dict(os.environ, BOUNDCALC_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("BOUNDCALC_NO_CACHE", None)
    out = tmp_path / "out.json"
    with open(out, "w") as fh:  # stdout a file: everything buffered must be flushed
        res = subprocess.run(_script() + ["rate", "--problem", "support", "--privacy", "pure", "--json"],
                             env=env, stdout=fh, stderr=subprocess.PIPE, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert json.loads(out.read_text())["problem"] == "support"
    assert any(p.name.startswith("boundcalc.results.") for p in (tmp_path / "cache" / "boundcalc").iterdir())  # exit handler ran
    bad = subprocess.run(_script() + ["rate", "--problem", "mean", "--privacy", "pure", "--n", "-1"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and bad.stderr.startswith("boundcalc rate: error: --n:")
    helped = subprocess.run(_script() + ["--help"], env=env, capture_output=True, text=True, timeout=300)
    assert helped.returncode == 0 and "rate" in helped.stdout
    piped = subprocess.run(_script() + ["list"], env=env, capture_output=True, text=True, timeout=300)
    assert piped.returncode == 0 and "mean" in piped.stdout and piped.stdout.endswith("\n")


def test_a_kept_result_is_one_text_the_garbage_collector_does_not_scan(tmp_path, monkeypatch):
    """The store holds its values until the process ends: a result kept as nested lists left ~600 containers per
    request for Python's full collection to scan (40-70 ms, every ~40 new requests in a warm process); the text
    of those lists is one untracked string, and it reads back as the same result."""
    import gc

    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path))
    api.clear_rate_cache()
    good = bc.rate("mean", "pure", n=4322)
    key = result_cache.request_key("rate", "mean", "pure", {"n": 4322})
    kept = result_cache._store().get(key)
    assert type(kept) is str and not gc.is_tracked(kept)
    assert exprcodec.identical(exprcodec.decode(json.loads(kept)), good)
    diskcache._flush()
    api.clear_rate_cache()  # a new process: read from the file
    assert bc.rate("mean", "pure", n=4322).to_text() == good.to_text()
