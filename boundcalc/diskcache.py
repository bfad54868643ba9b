"""A persistent memo for certified numeric tables that are expensive to recompute in every process.

Some certified constants are numeric sums or envelopes evaluated at a few hundred points per ``rate`` call
(e.g. the Lemma C′ envelope g*(p, ε) of the local mean, the exact threshold-scheme risk of the Gaussian
location problem): pure functions of a few numbers, costing most of a fresh process's time. :func:`persistent`
wraps such a function with an in-process memo and a JSON file per function under the user's cache directory
(``$BOUNDCALC_CACHE_DIR``, else ``$XDG_CACHE_HOME/boundcalc``, else ``~/.cache/boundcalc``), written atomically
at exit and merged with what other processes wrote.

A stale entry can never give a different number: the file name carries a fingerprint of the whole package
source (every ``boundcalc/**/*.py``), the Python version and the numpy, scipy, sympy and mpmath versions, so any change of the code
or of a library starts a new file; keys are the exact ``repr`` of the arguments and values are stored as
``float.hex`` (exact round trip). A missing, unreadable, corrupt or unwritable cache only costs time: the
function is then computed as without the cache. ``BOUNDCALC_NO_CACHE=1`` turns the disk cache off. Files of
another fingerprint are deleted once they have not been written for two weeks (:func:`prune`).
"""
from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import pathlib

_FINGERPRINT = None
_DIRTY: dict = {}  # file path -> {key: value} computed in this process
_SHARDED: dict = {}  # file path of a sharded store's key -> the file-name prefix of its store
_MAX_ENTRIES = 200_000
_MAX_BYTES = 32 * 2**20
#: entries one store keeps in memory; beyond it new values are returned but not kept
MAX_MEMORY_ENTRIES = 100_000
#: files a sharded store keeps per fingerprint; beyond it new keys are not written
MAX_SHARDS = 2000


def cache_dir() -> pathlib.Path | None:
    if os.environ.get("BOUNDCALC_NO_CACHE"):
        return None
    if os.environ.get("BOUNDCALC_CACHE_DIR"):
        return pathlib.Path(os.environ["BOUNDCALC_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):  # no home directory to speak of: no disk cache (never a relative path)
        return None
    return pathlib.Path(base) / "boundcalc"


#: (package, file in it that states the installed version); the file's bytes enter the fingerprint
_VERSION_FILES = (("numpy", "version.py"), ("scipy", "version.py"), ("sympy", "release.py"),
                  ("mpmath", "__init__.py"))


def _version_file_bytes(lib: str, version_file: str) -> bytes:
    """The bytes of ``lib``'s version file, found without importing ``lib``; ``b"?"`` when it has none."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(lib)
        return (pathlib.Path(spec.origin).parent / version_file).read_bytes()
    except (ImportError, AttributeError, TypeError, ValueError, OSError):  # pragma: no cover - not installed
        return b"?"


def fingerprint() -> str:
    """sha256 of the package source, the Python version and the numeric libraries' version files (computed once
    per process)."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        import sys

        h = hashlib.sha256()
        root = pathlib.Path(__file__).resolve().parent
        for path in sorted(root.rglob("*.py")):
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
        h.update(sys.version.encode())
        for lib, version_file in _VERSION_FILES:  # the installed versions, read from the packages' own files
            h.update(f"{lib}=".encode())  # (importlib.metadata scans every distribution: 15 ms; importing
            h.update(_version_file_bytes(lib, version_file))  # scipy to read __version__ costs 8 ms)
        _FINGERPRINT = h.hexdigest()[:20]
    return _FINGERPRINT


def _encode(value):
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return f"int:{value}"
    return float(value).hex()


def _decode(value):
    if isinstance(value, list):
        return tuple(_decode(v) for v in value)
    if value.startswith("int:"):
        return int(value[4:])
    return float.fromhex(value)


def trusted(path: pathlib.Path) -> bool:
    """Whether a cache file may be read: it and its directory belong to this user and are not writable by
    others (the cache holds generated code that is run, so it is trusted like ``__pycache__``)."""
    if not hasattr(os, "getuid"):  # pragma: no cover - no POSIX ownership to check
        return True
    try:
        for p in (path, path.parent):
            st = p.stat()
            if st.st_uid != os.getuid() or st.st_mode & 0o002:
                return False
    except OSError:
        return False
    return True


def _read(path: pathlib.Path) -> dict:
    try:
        if not trusted(path):
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _flush() -> None:
    """Merge this process's new entries into their files (atomic replace; errors ignored)."""
    from .fileio import write_atomic

    wrote = set()
    shards: dict = {}  # (directory, store prefix) -> files of the current fingerprint (counted once)
    for path, new in list(_DIRTY.items()):
        if not new:
            continue
        wrote.add(path.parent)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path in _SHARDED and not path.exists():
                store = (path.parent, _SHARDED[path])
                if store not in shards:
                    shards[store] = _shard_count(*store)
                if shards[store] >= MAX_SHARDS:
                    new.clear()
                    continue
                shards[store] += 1
            merged = _read(path)
            merged.update(new)
            text = json.dumps(merged, separators=(",", ":"))
            if len(merged) <= _MAX_ENTRIES and len(text) <= _MAX_BYTES:  # a full file is no longer extended
                write_atomic(path, text)
        except Exception:  # noqa: BLE001 - a cache that cannot be written only costs time
            pass
        new.clear()
    for directory in wrote:
        prune(directory)


def _shard_count(directory: pathlib.Path, prefix: str) -> int:
    """How many files of the current fingerprint the sharded store with file-name ``prefix`` has."""
    suffix = f"-{fingerprint()}.json"
    try:
        return sum(1 for e in os.scandir(directory) if e.name.startswith(prefix) and e.name.endswith(suffix))
    except OSError:
        return 0


#: files of another fingerprint (an older boundcalc or library version) unused this long are deleted
STALE_AFTER_DAYS = 14


def prune(directory: pathlib.Path, now: float | None = None) -> int:
    """Delete this package's cache files that carry another fingerprint and were last written more than
    :data:`STALE_AFTER_DAYS` ago: this version never reads them, and another installed version that still does
    only has to recompute them. Returns how many were deleted; errors are ignored."""
    import time

    now = time.time() if now is None else now
    current = f"-{fingerprint()}.json"
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        name = entry.name
        if not (name.startswith("boundcalc.") and name.endswith(".json")) or name.endswith(current):
            continue
        try:
            if now - entry.stat().st_mtime > STALE_AFTER_DAYS * 86400:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            pass
    return removed


atexit.register(_flush)


class JsonStore:
    """One cache file of JSON values by string key: read lazily on first use, merged back at exit.

    ``name`` names the file (``<name>-<fingerprint>.json`` in :func:`cache_dir`); with no cache directory the
    store is memory only. Values must be JSON-serialisable; :meth:`get` returns None for a missing key.

    A ``sharded`` store keeps each key in its own small file, ``<name>.<digest of the key>-<fingerprint>.json``,
    read only when that key is asked for: for large values (whole results) of which a process reads one or two,
    so that a process never parses what it does not use. At most :data:`MAX_SHARDS` files are kept per store
    and fingerprint; beyond that new keys are computed but not written.
    """

    def __init__(self, name: str, sharded: bool = False):
        self.name = name
        self.sharded = sharded
        self.memo: dict = {}
        self.path: pathlib.Path | None = None
        self._loaded = False

    def _load(self) -> None:
        self._loaded = True
        d = cache_dir()
        if d is not None:
            self.path = d / f"{self.name}-{fingerprint()}.json"
            if not self.sharded:
                self.memo.update(_read(self.path))

    def _shard(self, key: str) -> pathlib.Path | None:
        if self.path is None:
            return None
        digest = hashlib.sha256(key.encode()).hexdigest()[:24]
        return self.path.parent / f"{self.name}.{digest}-{fingerprint()}.json"

    def get(self, key: str):
        if not self._loaded:
            self._load()
        if self.sharded and key not in self.memo:
            path = self._shard(key)
            if path is not None:
                value = _read(path).get(key)
                if value is not None:
                    self.memo[key] = value
        return self.memo.get(key)

    def put(self, key: str, value) -> None:
        if not self._loaded:
            self._load()
        if len(self.memo) >= MAX_MEMORY_ENTRIES:  # a long-running process keeps its memory bounded
            return
        self.memo[key] = value
        path = self._shard(key) if self.sharded else self.path
        if path is not None:
            _DIRTY.setdefault(path, {})[key] = value
            if self.sharded:
                _SHARDED[path] = f"{self.name}."

    def clear(self) -> None:
        """Forget this process's copy (the file is re-read on next use)."""
        self.memo.clear()
        self._loaded = False


def persistent(fn):
    """Memoise ``fn`` (a pure function of numbers returning a float or a tuple of floats) in memory and on
    disk (see the module docstring)."""
    store = JsonStore(f"{fn.__module__}.{fn.__qualname__}")
    memo: dict = {}

    @functools.wraps(fn)
    def wrapper(*args):
        key = repr(args)
        if key in memo:
            return memo[key]
        stored = store.get(key)
        if stored is not None:
            try:
                value = memo[key] = _decode(stored)
                return value
            except (TypeError, ValueError, AttributeError):
                pass
        value = fn(*args)
        memo[key] = value
        try:
            store.put(key, _encode(value))
        except (TypeError, ValueError):
            pass
        return value

    def cache_clear():
        memo.clear()
        store.clear()

    wrapper.cache_clear = cache_clear
    return wrapper
