"""A persistent memo for certified numeric tables that are expensive to recompute in every process.

Some certified constants are numeric sums or envelopes evaluated at a few hundred points per ``rate`` call
(e.g. the Lemma C′ envelope g*(p, ε) of the local mean, the exact threshold-scheme risk of the Gaussian
location problem): pure functions of a few numbers, costing most of a fresh process's time. :func:`persistent`
wraps such a function with an in-process memo and a JSON file per function in the cache directory, written
atomically at exit and merged with what other processes wrote. The other caches of the package (expressions,
generated code, solver optima, whole results) are :class:`JsonStore` files in the same directory.

**Where.** The cache root is ``$BOUNDCALC_CACHE_DIR``, else ``$XDG_CACHE_HOME``, else ``~/.cache``; the files
live in a ``boundcalc`` subdirectory of it (:func:`cache_dir`), created with mode 0700, files with mode 0600.

**What is read** (:func:`trusted`). The directory holds generated code that is compiled and run, so a file
is read only if this user alone can have written it: every directory from the cache root down to the file,
and the file, belongs to the current user and is writable by neither group nor others (no ``0o022`` bit),
judged after resolving symbolic links (a linked file must resolve into the cache directory itself). Anything
else is a miss, as is any failure to read or decode an entry (a corrupt, truncated or deeply nested file):
it costs a recomputation, never an error and never a different number.

**A stale entry can never give a different number**: the file name carries a fingerprint of the whole package
source (every ``boundcalc/**/*.py``), the Python version and the numpy, scipy, sympy and mpmath versions, so any
change of the code or of a library starts a new file; keys are the exact ``repr`` of the arguments and values
are stored as ``float.hex`` (exact round trip). ``BOUNDCALC_NO_CACHE=1`` turns the disk cache off.

**What is deleted, and when.** Only files that boundcalc names as its own (``boundcalc.<store>-<fingerprint>.json``
and its unfinished temporary files) in the ``boundcalc`` subdirectory, never anything else. The directory is
checked each time about 5 % of the size limit has been written (a count kept in one small file, so a call that
writes does not list the directory): files of another fingerprint unused for two weeks are deleted
(:func:`prune`), then the least recently used files until the total is within ``$BOUNDCALC_CACHE_MAX_MB``
megabytes (default :data:`DEFAULT_MAX_MB`; :func:`evict`).
"""
from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import pathlib
import re
import stat

_FINGERPRINT = None
_DIRTY: dict = {}  # file path -> {key: value} computed in this process
_SHARDED: dict = {}  # file path of a sharded store's key -> the file-name prefix of its store
_MAX_ENTRIES = 200_000
_MAX_BYTES = 32 * 2**20
#: entries one store keeps in memory; beyond it new values are returned but not kept
MAX_MEMORY_ENTRIES = 100_000
#: files a sharded store keeps per fingerprint; beyond it new keys are not written
MAX_SHARDS = 2000
#: the subdirectory of the cache root that holds boundcalc's files
CACHE_SUBDIR = "boundcalc"


def cache_root() -> pathlib.Path | None:
    """The directory the user names for caches: ``$BOUNDCALC_CACHE_DIR``, else ``$XDG_CACHE_HOME``, else
    ``~/.cache``; None when the cache is off or there is no absolute place for it."""
    if os.environ.get("BOUNDCALC_NO_CACHE"):
        return None
    if os.environ.get("BOUNDCALC_CACHE_DIR"):
        return pathlib.Path(os.environ["BOUNDCALC_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):  # no home directory to speak of: no disk cache (never a relative path)
        return None
    return pathlib.Path(base)


def cache_dir() -> pathlib.Path | None:
    """The directory boundcalc keeps its files in: a ``boundcalc`` subdirectory of :func:`cache_root`, which
    boundcalc creates and where nothing but its own files is ever deleted."""
    root = cache_root()
    return None if root is None else root / CACHE_SUBDIR


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
        root = pathlib.Path(__file__).resolve().parents[1]  # the package: boundcalc/cache/ -> boundcalc/
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


def _private(st, kind) -> bool:
    """Whether ``st`` (an ``os.stat`` result) is of ``kind`` (``stat.S_ISREG``/``S_ISDIR``), belongs to this
    user and is writable by nobody else (no group or other write bit)."""
    return kind(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def trusted_dir(directory) -> str | None:
    """The real path of cache directory ``directory`` if it may be read, else None.

    Every directory from the real path of the cache root (``directory``'s parent) down to the real path of
    ``directory`` must be a directory that belongs to this user and that neither group nor others may write;
    symbolic links are resolved and their targets judged, and a ``directory`` whose target lies outside the
    root is refused."""
    if not hasattr(os, "getuid"):  # pragma: no cover - no POSIX ownership to check
        return os.path.realpath(directory)
    try:
        directory = os.fspath(directory)
        top = os.path.realpath(os.path.dirname(os.path.abspath(directory)))
        real = os.path.realpath(directory)
        if real != top and not real.startswith(top.rstrip(os.sep) + os.sep):
            return None
        p = real
        while True:
            if not _private(os.stat(p), stat.S_ISDIR):
                return None
            if p == top:
                return real
            p = os.path.dirname(p)
    except (OSError, ValueError):
        return None


def _open_trusted(path, real_dir: str):
    """A read-only descriptor of cache file ``path`` (in the directory whose real path is ``real_dir``, already
    judged by :func:`trusted_dir`) with its ``os.stat`` result, or None when the file may not be read.

    The file read must be a regular file that belongs to this user and that neither group nor others may
    write, judged on the open descriptor (the very file read); a symbolic link is judged by its target, which
    must lie in ``real_dir`` itself."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        if os.path.dirname(os.path.realpath(path)) != real_dir:
            return None
    elif not stat.S_ISREG(st.st_mode):
        return None
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO target must not block the open
    try:
        st = os.fstat(fd)
        if hasattr(os, "getuid") and not _private(st, stat.S_ISREG):
            os.close(fd)
            return None
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def trusted(path) -> bool:
    """Whether cache file ``path`` may be read (:func:`trusted_dir` for its directory, then the file itself).

    The cache holds generated code that is run, so it is trusted as Python trusts ``__pycache__``, and
    more strictly: only what this user alone can have written is read."""
    path = pathlib.Path(path)
    try:
        real_dir = trusted_dir(path.parent)
        opened = None if real_dir is None else _open_trusted(path, real_dir)
    except OSError:
        return False
    if opened is None:
        return False
    os.close(opened[0])
    return True


#: a file used within this many seconds of its last use is not marked again (least-recently-used order)
_TOUCH_AFTER = 3600


def _read(path: pathlib.Path) -> dict:
    """The JSON object in cache file ``path``, or ``{}`` when it is missing, untrusted (:func:`trusted`) or
    does not read back as a JSON object for any reason (a deeply nested file raises RecursionError, say):
    a cache that cannot be used only costs time. A file read is marked as used (its modification time) for
    the least-recently-used order of :func:`evict`."""
    try:
        real_dir = trusted_dir(path.parent)
        if real_dir is None:
            return {}
        opened = _open_trusted(path, real_dir)
        if opened is None:
            return {}
        fd, st = opened
        with os.fdopen(fd, "rb") as fh:
            if st.st_size > _MAX_BYTES:  # boundcalc never writes more (its JSON is ASCII): not one of its files
                return {}
            data = json.loads(fh.read())
            if not isinstance(data, dict):
                return {}
            if _now() - st.st_mtime > _TOUCH_AFTER:
                try:
                    os.utime(fh.fileno() if os.utime in os.supports_fd else path)
                except OSError:
                    pass
        return data
    except Exception:  # noqa: BLE001 - any failure to read an entry is a miss, never an error
        return {}


def _now() -> float:
    import time

    return time.time()


def _make_dir(directory: pathlib.Path) -> str | None:
    """Create ``directory`` (and missing parents) readable and writable by this user only (mode 0700); its
    real path if it may then be used (:func:`trusted_dir`), else None."""
    missing = []
    p = pathlib.Path(os.path.abspath(directory))
    while not p.exists() and p.parent != p:
        missing.append(p)
        p = p.parent
    for q in reversed(missing):
        try:
            os.mkdir(q, 0o700)
        except FileExistsError:
            pass
    return trusted_dir(directory)


#: the prefix of a file being written (renamed to its name once complete)
_TMP_PREFIX = ".boundcalc-tmp-"


def _write(path: pathlib.Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a new file of mode 0600 in the same directory, then renamed)."""
    tmp = os.path.join(os.path.dirname(path), f"{_TMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _flush() -> None:
    """Merge this process's new entries into their files (atomic replace; errors ignored), then count what was
    written towards the size check (:func:`_account`)."""
    written: dict = {}  # directory -> bytes written
    shards: dict = {}  # (directory, store prefix) -> files of the current fingerprint (counted once)
    usable: dict = {}  # directory -> whether it is created and trusted
    for path, new in list(_DIRTY.items()):
        if not new:
            continue
        try:
            if path.parent not in usable:
                usable[path.parent] = _make_dir(path.parent) is not None
            if not usable[path.parent]:  # a directory others could write: never read, so not written
                new.clear()
                continue
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
                _write(path, text)
                written[path.parent] = written.get(path.parent, 0) + len(text)
        except Exception:  # noqa: BLE001 - a cache that cannot be written only costs time
            pass
        new.clear()
    for directory, nbytes in written.items():
        _account(directory, nbytes)


def _shard_count(directory: pathlib.Path, prefix: str) -> int:
    """How many files of the current fingerprint the sharded store with file-name ``prefix`` has."""
    suffix = f"-{fingerprint()}.json"
    try:
        return sum(1 for e in os.scandir(directory) if e.name.startswith(prefix) and e.name.endswith(suffix))
    except OSError:
        return 0


# ------------------------------------------------------------------ what may be deleted, and when

#: the total size of the cache directory, in MB (10**6 bytes), unless ``$BOUNDCALC_CACHE_MAX_MB`` says otherwise
DEFAULT_MAX_MB = 200
#: the directory is checked (:func:`evict`) each time about this fraction of the size limit has been written
CHECK_FRACTION = 0.05
#: the file that counts the bytes written since the last check (it holds one decimal number)
_COUNTER = "boundcalc.bytes-written"
#: the name of every cache file boundcalc writes: ``boundcalc.<store>-<fingerprint>.json``
_OURS = re.compile(r"boundcalc\.[A-Za-z0-9_.<>-]+-[0-9a-f]{20}\.json")
#: files of another fingerprint (an older boundcalc or library version) unused this long are deleted
STALE_AFTER_DAYS = 14
#: a temporary file (a write interrupted by a crash) older than this many seconds is deleted
_TMP_STALE = 3600


def max_bytes() -> int:
    """The size limit of the cache directory in bytes: ``$BOUNDCALC_CACHE_MAX_MB`` megabytes (a value that is
    not a non-negative number is ignored), else :data:`DEFAULT_MAX_MB`."""
    import math

    mb = DEFAULT_MAX_MB
    raw = os.environ.get("BOUNDCALC_CACHE_MAX_MB")
    if raw:
        try:
            value = float(raw)
            if math.isfinite(value) and value >= 0:
                mb = value
        except ValueError:
            pass
    return int(mb * 10**6)


def _account(directory: pathlib.Path, nbytes: int) -> None:
    """Add ``nbytes`` to the directory's count of bytes written since its last check; once the count reaches
    :data:`CHECK_FRACTION` of the size limit (or there is no count yet), reset it and check the directory
    (:func:`prune`, :func:`evict`). So the directory is listed once per twenty limit-fractions written, not at
    every call, and it exceeds the limit by at most about that fraction between checks."""
    limit = max_bytes()
    try:
        fd = os.open(directory / _COUNTER, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return
    try:
        st = os.fstat(fd)
        if hasattr(os, "getuid") and not _private(st, stat.S_ISREG):
            return
        raw = os.read(fd, 32)
        try:
            count = max(int(raw), 0) + nbytes
            due = count >= max(limit * CHECK_FRACTION, 1)
        except ValueError:  # no count yet (a new directory, or one an older version kept): check now
            count, due = 0, True
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        os.write(fd, b"0" if due else str(count).encode())
    except OSError:
        return
    finally:
        os.close(fd)
    if due:
        prune(directory)
        evict(directory, limit)


def _entries(directory) -> list:
    """(last use, size, path, name) of each file boundcalc wrote in ``directory`` (by name: a cache file or an
    unfinished temporary file), only if the directory may be used (:func:`trusted_dir`); other files, links and
    directories are never listed, so never deleted."""
    if trusted_dir(directory) is None:
        return []
    out = []
    try:
        with os.scandir(directory) as it:
            for e in it:
                name = e.name
                if not (_OURS.fullmatch(name) or name.startswith(_TMP_PREFIX)):
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and (not hasattr(os, "getuid") or st.st_uid == os.getuid()):
                    out.append((st.st_mtime, st.st_size, e.path, name))
    except OSError:
        return []
    return out


def _unlink(path) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


def prune(directory: pathlib.Path, now: float | None = None) -> int:
    """Delete this package's cache files that carry another fingerprint and were last used more than
    :data:`STALE_AFTER_DAYS` ago (this version never reads them, and another installed version that still
    does only has to recompute them), and temporary files left by an interrupted write. Only files named as
    boundcalc names its own, in a directory this user alone may write (see :func:`_entries`), are ever
    deleted. Returns how many were deleted; errors are ignored."""
    now = _now() if now is None else now
    current = f"-{fingerprint()}.json"
    removed = 0
    for mtime, _, path, name in _entries(directory):
        if name.startswith(_TMP_PREFIX):
            stale = now - mtime > _TMP_STALE
        else:
            stale = not name.endswith(current) and now - mtime > STALE_AFTER_DAYS * 86400
        removed += stale and _unlink(path)
    return removed


def evict(directory: pathlib.Path, limit: int | None = None) -> int:
    """Delete boundcalc's files in ``directory``, least recently used first (a read or a write marks a file
    used), until their total size is at most ``limit`` bytes (:func:`max_bytes` by default). Only files
    :func:`_entries` lists are counted and deleted. Returns how many were deleted."""
    limit = max_bytes() if limit is None else limit
    entries = _entries(directory)
    total = sum(e[1] for e in entries)
    removed = 0
    for _, size, path, _ in sorted(entries):
        if total <= limit:
            break
        if _unlink(path):
            total -= size
            removed += 1
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
            except Exception:  # noqa: BLE001 - an entry that does not decode is recomputed
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

    def known(*args) -> bool:
        """Whether ``fn(*args)`` is at hand (in memory or on disk) without computing it."""
        key = repr(args)
        return key in memo or store.get(key) is not None

    wrapper.cache_clear = cache_clear
    wrapper.known = known
    return wrapper
