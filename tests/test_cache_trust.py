"""What the disk cache (boundcalc.cache.diskcache) reads and what it deletes.

A cache file is read only if this user alone can have written it: the file and every directory from the cache
root down (links resolved) belong to the user and are writable by neither group nor others. Each attack below
plants an entry that, if read, would change what boundcalc prints (or would run planted code), checks first
that the very same entry *is* read when the files are private (so the test can fail), then applies the attack
and checks that the number printed is the computed one. Any failure to read an entry is a miss (exit 0, the
right number); pruning and the size limit delete only boundcalc's own files, least recently used first.

The attacks are made with file modes, symbolic links and a patched ``os.getuid``, so the tests hold under any
user, root included (the checks are boundcalc's own, not the kernel's permissions).
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest
import sympy as sp

from boundcalc.app import api
from boundcalc import cli
from boundcalc.cache import diskcache
from boundcalc.core import symbolic as S

ROOT = pathlib.Path(__file__).resolve().parents[1]
# a question whose answer passes through every kind of store (whole results, solver optima, sympy operations, generated
# code, persistent functions) at about a fifth of the cost of --privacy approx (1.1 s against 5.1 s cold): each attack
# recomputes it from nothing
TARGET = ["rate", "--problem", "mean", "--privacy", "tv", "--k", "4", "--json"]
OTHER = ["rate", "--problem", "mean", "--privacy", "tv", "--k", "4", "--n", "37", "--json"]


def _cli(argv):
    """(exit code, stdout) of ``boundcalc <argv>`` in this process, nothing kept in memory beforehand."""
    api.clear_rate_cache()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(list(argv))
    return code, out.getvalue()


def _results(directory):
    return set(pathlib.Path(directory).glob("boundcalc.results.*"))


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A cache root holding the kept answers of TARGET and OTHER, and both printed outputs."""
    root = tmp_path_factory.mktemp("template") / "root"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BOUNDCALC_CACHE_DIR", str(root))
        mp.delenv("BOUNDCALC_NO_CACHE", raising=False)
        code, truth = _cli(TARGET)
        diskcache._flush()
        (target_file,) = _results(diskcache.cache_dir())
        code2, other = _cli(OTHER)
        diskcache._flush()
        (other_file,) = _results(diskcache.cache_dir()) - {target_file}
        api.clear_rate_cache()
    assert code == code2 == 0 and truth != other
    assert json.loads(truth)["upper"] != json.loads(other)["upper"]
    return {"root": root, "target": target_file.relative_to(root), "other": other_file.relative_to(root),
            "truth": truth, "other_out": other}


def _plant_result(template, tmp_path, monkeypatch):
    """A private copy of the template cache whose TARGET entry holds OTHER's answer; returns its file."""
    root = tmp_path / "root"
    shutil.copytree(template["root"], root, symlinks=True)
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(root))
    monkeypatch.delenv("BOUNDCALC_NO_CACHE", raising=False)
    target, other = root / template["target"], root / template["other"]
    ((key, _),) = json.loads(target.read_text()).items()
    ((_, planted),) = json.loads(other.read_text()).items()
    target.write_text(json.dumps({key: planted}))
    os.chmod(target, 0o600)
    return target


def _attack(kind, path, tmp_path, monkeypatch):
    """Make cache file ``path`` (in the cache directory, under the cache root) one that others could have
    written, in the way ``kind`` names."""
    cache = path.parent
    root = cache.parent if cache.name == "boundcalc" else cache  # (the cache directory is the root's subdirectory)
    if kind == "group-writable file":
        os.chmod(path, 0o664)
    elif kind == "world-writable file":
        os.chmod(path, 0o606)
    elif kind == "group-writable directory":
        os.chmod(cache, 0o775)
    elif kind == "group-writable root":
        os.chmod(cache.parent, 0o775)
    elif kind == "link to a file in a writable directory":
        shared = tmp_path / "shared"
        shared.mkdir(mode=0o700)
        os.chmod(shared, 0o777)
        os.replace(path, shared / path.name)  # the file itself stays private (0600)
        os.symlink(shared / path.name, path)
    elif kind == "linked root in a writable directory":
        shared = tmp_path / "shared-root"
        os.replace(root, shared)
        os.chmod(shared, 0o775)
        os.symlink(shared, root)
    elif kind == "another owner":
        uid = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: uid + 1)  # every file is now someone else's
    else:  # pragma: no cover
        raise AssertionError(kind)


ATTACKS = ["group-writable file", "world-writable file", "group-writable directory", "group-writable root",
           "link to a file in a writable directory", "linked root in a writable directory", "another owner"]


@pytest.mark.parametrize("kind", ATTACKS)
def test_a_planted_result_never_changes_the_printed_number(kind, template, tmp_path, monkeypatch):
    target = _plant_result(template, tmp_path, monkeypatch)
    assert _cli(TARGET) == (0, template["other_out"])  # private: the planted answer is read (the test can fail)
    _attack(kind, target, tmp_path, monkeypatch)
    assert _cli(TARGET) == (0, template["truth"])


def test_a_link_within_the_cache_directory_is_followed(template, tmp_path, monkeypatch):
    """A link is judged by its target: a private file in the cache directory itself is read through it."""
    target = _plant_result(template, tmp_path, monkeypatch)
    os.replace(target, target.with_name("boundcalc.moved.json"))
    os.symlink(target.with_name("boundcalc.moved.json"), target)
    assert _cli(TARGET) == (0, template["other_out"])


_MARKER_SOURCE = """open({marker!r}, "w").write("ran")
def _lambdifygenerated(x_planted):
    return 0.0
"""


@pytest.mark.parametrize("kind", ATTACKS)
def test_planted_generated_code_is_never_run(kind, tmp_path, monkeypatch):
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path / "root"))
    monkeypatch.delenv("BOUNDCALC_NO_CACHE", raising=False)
    x = sp.Symbol("x_planted")
    expr = sp.exp(-x) * x + 3
    store = S._code_store()
    store.clear()
    assert S._numpy_lambdify((x,), expr)(1.0) == pytest.approx(3 + 1 / 2.718281828459045)
    diskcache._flush()
    (path,) = diskcache.cache_dir().glob("boundcalc.generated-code-*.json")
    marker = tmp_path / "marker"
    data = json.loads(path.read_text())
    assert data  # the generated source was kept
    path.write_text(json.dumps({k: _MARKER_SOURCE.format(marker=str(marker)) for k in data}))
    os.chmod(path, 0o600)
    store.clear()
    assert S._numpy_lambdify((x,), expr)(1.0) == 0.0 and marker.exists()  # private: the planted code runs
    marker.unlink()
    _attack(kind, path, tmp_path, monkeypatch)
    store.clear()
    assert S._numpy_lambdify((x,), expr)(1.0) == pytest.approx(3 + 1 / 2.718281828459045)
    assert not marker.exists()
    monkeypatch.undo()
    store.clear()


def test_a_deeply_nested_cache_file_is_a_miss(template, tmp_path):
    """Every cache file replaced by '[' * 100000 + ']' * 100000 (valid JSON that exhausts the parser's recursion):
    a fresh process prints the computed answer and exits 0."""
    root = tmp_path / "root"
    shutil.copytree(template["root"], root)
    files = list((root / template["target"]).parent.glob("boundcalc.*.json"))
    assert len(files) >= 2
    for f in files:
        f.write_text("[" * 100000 + "]" * 100000)
        os.chmod(f, 0o600)
    env = dict(os.environ, BOUNDCALC_CACHE_DIR=str(root), PYTHONPATH=str(ROOT))
    env.pop("BOUNDCALC_NO_CACHE", None)
    res = subprocess.run([sys.executable, "-m", "boundcalc"] + TARGET, env=env, capture_output=True, text=True,
                         timeout=300)
    assert (res.returncode, res.stderr) == (0, "")
    assert res.stdout == template["truth"]


def test_any_failure_to_decode_an_entry_is_a_miss(tmp_path, monkeypatch):
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("BOUNDCALC_NO_CACHE", raising=False)

    def f(x):
        return x / 4

    f.__qualname__ = "probe_deep"
    g = diskcache.persistent(f)
    assert g(2.0) == 0.5
    diskcache._flush()
    (path,) = diskcache.cache_dir().glob("*probe_deep*.json")
    deep = "[" * 800 + "]" * 800  # parses, but decoding it (two frames a level) exhausts the recursion limit
    with pytest.raises(RecursionError):
        diskcache._decode(json.loads(deep))
    path.write_text(json.dumps({repr((2.0,)): json.loads(deep)}))
    g.cache_clear()
    assert g(2.0) == 0.5


def test_pruning_and_the_size_limit_never_delete_a_users_file(tmp_path, monkeypatch):
    root = tmp_path / "root"
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(root))
    monkeypatch.delenv("BOUNDCALC_NO_CACHE", raising=False)
    cache = diskcache.cache_dir()
    cache.mkdir(parents=True, mode=0o700)
    old = time.time() - (diskcache.STALE_AFTER_DAYS + 30) * 86400
    outside = tmp_path / "elsewhere.json"
    users = [root / "boundcalc.my-table.json", root / "notes.json", cache / "boundcalc.my-table.json",
             cache / "boundcalc.notes-0123456789abcdef0123.txt", outside]
    for p in users:
        p.write_text("{}")
        os.chmod(p, 0o600)
        os.utime(p, (old, old))
    stale = cache / "boundcalc.x-0123456789abcdef0123.json"  # boundcalc's own, of another version, unused
    stale.write_text("{}")
    os.utime(stale, (old, old))
    link = cache / "boundcalc.y-0123456789abcdef0123.json"  # named like ours, but a link to a user's file
    os.symlink(outside, link)
    monkeypatch.setenv("BOUNDCALC_CACHE_MAX_MB", "0")  # everything of boundcalc's must go
    store = diskcache.JsonStore("boundcalc.test-prune")
    store.put("k", [1, 2, 3])
    diskcache._flush()  # a first write checks the directory: prunes, then evicts down to the limit
    for p in users:
        assert p.read_text() == "{}", p
    assert os.path.islink(link)
    assert not stale.exists()
    assert not list(cache.glob("boundcalc.test-prune-*.json"))
    assert diskcache.evict(cache) == 0 and diskcache.prune(cache, now=time.time() + 10**9) == 0
    for p in users:
        assert p.read_text() == "{}", p


def _shard_files(cache, name):
    return sorted(cache.glob(f"{name}.*-{diskcache.fingerprint()}.json"))


def test_the_size_limit_evicts_the_least_recently_used(tmp_path, monkeypatch):
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("BOUNDCALC_NO_CACHE", raising=False)
    monkeypatch.setenv("BOUNDCALC_CACHE_MAX_MB", "1000")
    store = diskcache.JsonStore("boundcalc.test-lru", sharded=True)
    for i in range(5):
        store.put(f"key{i}", ["x" * 1000, i])
    diskcache._flush()
    cache = diskcache.cache_dir()
    files = {diskcache._read(p).popitem()[0]: p for p in _shard_files(cache, "boundcalc.test-lru")}
    assert len(files) == 5
    now = time.time()
    for i in range(5):  # key0 the least recently used, key4 the most
        t = now - (10 - i) * 86400
        os.utime(files[f"key{i}"], (t, t))
    fresh = diskcache.JsonStore("boundcalc.test-lru", sharded=True)
    assert fresh.get("key0") == ["x" * 1000, 0]  # a read marks key0 used now
    size = files["key0"].stat().st_size
    assert diskcache.evict(cache, limit=3 * size + size // 2) == 2
    assert sorted(k for k, p in files.items() if p.exists()) == ["key0", "key3", "key4"]


def test_the_directory_is_listed_only_once_enough_has_been_written(tmp_path, monkeypatch):
    """The size check runs when a count of bytes written reaches 5 % of the limit, not at every write."""
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("BOUNDCALC_NO_CACHE", raising=False)
    checks = []
    real = diskcache.evict
    monkeypatch.setattr(diskcache, "evict", lambda d, limit=None: checks.append(limit) or real(d, limit))
    store = diskcache.JsonStore("boundcalc.test-count", sharded=True)
    store.put("key0", ["y" * 1000])
    diskcache._flush()  # no count yet: checked
    (first,) = _shard_files(diskcache.cache_dir(), "boundcalc.test-count")
    size = first.stat().st_size
    monkeypatch.setenv("BOUNDCALC_CACHE_MAX_MB", repr(50.5 * size / 1e6))  # 5 %: two and a half files
    seen = []
    for i in range(1, 7):
        store.put(f"key{i}", ["y" * 1000])
        diskcache._flush()
        seen.append(len(checks))
    assert seen == [1, 1, 2, 2, 2, 3]


def test_files_are_private_whatever_the_umask(tmp_path, monkeypatch):
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path / "a" / "b"))
    monkeypatch.delenv("BOUNDCALC_NO_CACHE", raising=False)
    old = os.umask(0o002)
    try:
        store = diskcache.JsonStore("boundcalc.test-umask")
        store.put("k", 1)
        diskcache._flush()
    finally:
        os.umask(old)
    (path,) = diskcache.cache_dir().glob("boundcalc.test-umask-*.json")
    assert path.stat().st_mode & 0o777 == 0o600
    for d in (tmp_path / "a", tmp_path / "a" / "b", diskcache.cache_dir()):
        assert d.stat().st_mode & 0o777 == 0o700, d
    assert diskcache._read(path) == {"k": 1}
