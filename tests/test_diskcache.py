"""The persistent memo of certified numeric tables: bit-identical values, and a bad cache only costs time."""
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from boundcalc.cache import diskcache


def _fresh(fn_name, tmp_path, monkeypatch):
    """A new persistent wrapper of a module-level test function, caching under tmp_path."""
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("BOUNDCALC_NO_CACHE", raising=False)

    def f(x, y):
        return math.exp(-x) * math.sin(y) / 3.0, int(x * 10), y

    f.__qualname__ = fn_name
    return diskcache.persistent(f), f


def test_cached_values_are_bit_identical_after_a_round_trip_through_disk(tmp_path, monkeypatch):
    g, f = _fresh("probe_roundtrip", tmp_path, monkeypatch)
    rng = np.random.default_rng(0)
    args = [(float(a), float(b)) for a, b in rng.normal(size=(200, 2)) * 50] + [(0.0, -0.0), (1e-300, 1e300)]
    first = [g(*a) for a in args]
    diskcache._flush()
    files = list(diskcache.cache_dir().glob("*probe_roundtrip*.json"))
    assert len(files) == 1
    g2, _ = _fresh("probe_roundtrip", tmp_path, monkeypatch)  # a new process would start like this
    again = [g2(*a) for a in args]
    for a, x, y in zip(args, first, again):
        assert x == f(*a) and y == f(*a) and type(y[1]) is int
        assert all(math.copysign(1, u) == math.copysign(1, v) for u, v in zip(x, y) if isinstance(u, float))


def test_a_corrupt_or_tampered_file_is_ignored_or_keyed_away(tmp_path, monkeypatch):
    g, f = _fresh("probe_corrupt", tmp_path, monkeypatch)
    g(1.0, 2.0)
    diskcache._flush()
    (path,) = diskcache.cache_dir().glob("*probe_corrupt*.json")
    path.write_text("{not json", encoding="utf-8")
    g2, _ = _fresh("probe_corrupt", tmp_path, monkeypatch)
    assert g2(1.0, 2.0) == f(1.0, 2.0)
    path.write_text(json.dumps({repr((1.0, 2.0)): ["zz", "int:x"]}), encoding="utf-8")
    g3, _ = _fresh("probe_corrupt", tmp_path, monkeypatch)
    assert g3(1.0, 2.0) == f(1.0, 2.0)


def test_the_file_name_carries_the_source_fingerprint(tmp_path, monkeypatch):
    """Another package source (or library version) means another file: an entry written by other code is
    never read."""
    g, f = _fresh("probe_stale", tmp_path, monkeypatch)
    g(1.0, 2.0)
    diskcache._flush()
    (path,) = diskcache.cache_dir().glob("*probe_stale*.json")
    assert diskcache.fingerprint() in path.name
    path.write_text(json.dumps({repr((3.0, 4.0)): [(123.0).hex(), "int:1", (4.0).hex()]}), encoding="utf-8")
    monkeypatch.setattr(diskcache, "_FINGERPRINT", "0" * 20)  # the code changed
    g2, _ = _fresh("probe_stale", tmp_path, monkeypatch)
    assert g2(3.0, 4.0) == f(3.0, 4.0)


def test_the_fingerprint_follows_the_libraries_version_files(monkeypatch):
    """Each numeric library's version file is part of the fingerprint (read without importing the library)."""
    monkeypatch.setattr(diskcache, "_FINGERPRINT", None)
    base = diskcache.fingerprint()
    for lib, version_file in diskcache._VERSION_FILES:
        text = diskcache._version_file_bytes(lib, version_file)
        assert text != b"?" and b"version" in text.lower(), lib  # the file exists and states a version
        real = diskcache._version_file_bytes
        monkeypatch.setattr(diskcache, "_version_file_bytes",
                            lambda name, f, lib=lib, real=real: b"9.9" if name == lib else real(name, f))
        monkeypatch.setattr(diskcache, "_FINGERPRINT", None)
        assert diskcache.fingerprint() != base, lib  # an upgrade of this library starts new files
        monkeypatch.setattr(diskcache, "_version_file_bytes", real)
    monkeypatch.setattr(diskcache, "_FINGERPRINT", None)
    assert diskcache.fingerprint() == base


def test_unwritable_or_disabled_cache_still_computes(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(blocker / "sub"))  # cannot be created
    g = diskcache.persistent(lambda x: x * 2.0)
    assert g(2.5) == 5.0
    diskcache._flush()  # must not raise
    monkeypatch.setenv("BOUNDCALC_NO_CACHE", "1")
    assert diskcache.cache_dir() is None
    h = diskcache.persistent(lambda x: x + 1.0)
    assert h(1.0) == 2.0


def test_no_home_means_no_relative_cache_dir(monkeypatch):
    monkeypatch.delenv("BOUNDCALC_CACHE_DIR", raising=False)
    monkeypatch.delenv("BOUNDCALC_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")
    assert diskcache.cache_dir() is None
    monkeypatch.setenv("XDG_CACHE_HOME", "/abs/dir")
    assert str(diskcache.cache_dir()) == "/abs/dir/boundcalc"


def test_rate_is_identical_cold_and_warm(tmp_path):
    """The real tables (local mean g*, Gaussian threshold risk): a cold process, a warm one and one with the
    cache off print the same JSON."""
    outs = []
    for env_extra in ({}, {}, {"BOUNDCALC_NO_CACHE": "1"}):
        env = {**os.environ, "BOUNDCALC_CACHE_DIR": str(tmp_path), **env_extra}
        env.pop("BOUNDCALC_NO_CACHE", None) if not env_extra else None
        r = subprocess.run([sys.executable, "-m", "boundcalc", "rate", "--problem", "gaussian", "--privacy", "local",
                            "--json"], capture_output=True, text=True, env=env, check=True)
        outs.append(r.stdout)
    assert list((tmp_path / "boundcalc").glob("*threshold_worst_risk*.json"))
    assert outs[0] == outs[1] == outs[2]


def test_prune_deletes_only_old_files_of_other_fingerprints(tmp_path):
    import os
    import time

    fp = diskcache.fingerprint()
    now = time.time()
    old = now - (diskcache.STALE_AFTER_DAYS + 1) * 86400
    files = {
        f"boundcalc.x-{fp}.json": old,  # current fingerprint: kept however old
        "boundcalc.x-0123456789abcdef0123.json": old,  # other fingerprint, old: deleted
        "boundcalc.y-0123456789abcdef0123.json": now - 3600,  # other fingerprint, recent: kept
        "notes.json": old,  # not ours: kept
    }
    for name, mtime in files.items():
        path = tmp_path / name
        path.write_text("{}")
        os.utime(path, (mtime, mtime))
    assert diskcache.prune(tmp_path, now=now) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(set(files) - {"boundcalc.x-0123456789abcdef0123.json"})
    assert diskcache.prune(tmp_path / "missing", now=now) == 0


def test_a_store_keeps_at_most_its_memory_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(diskcache, "MAX_MEMORY_ENTRIES", 3)
    store = diskcache.JsonStore("boundcalc.test-limit")
    for i in range(10):
        store.put(f"k{i}", i)
    assert len(store.memo) == 3 and store.get("k2") == 2 and store.get("k9") is None


def test_a_file_writable_by_others_is_not_read(tmp_path):
    import json
    import os

    path = tmp_path / "boundcalc.x-test.json"
    path.write_text(json.dumps({"k": 1}))
    os.chmod(path, 0o644)
    assert diskcache._read(path) == {"k": 1}
    os.chmod(path, 0o666)  # anyone may write it: it could hold someone else's code
    assert diskcache._read(path) == {}
    os.chmod(path, 0o644)
    os.chmod(tmp_path, 0o777)
    try:
        assert diskcache._read(path) == {}
    finally:
        os.chmod(tmp_path, 0o755)
