"""File output: write a file atomically (a temporary file in the same directory, then ``os.replace``)."""
from __future__ import annotations

import os
import tempfile

from .errors import InputError


def write_atomic(path, text) -> None:
    """Write ``text`` (str, or bytes such as a PNG) to ``path`` atomically: a temporary file in the
    same directory, then os.replace.

    A reader never sees a half-written file, and an existing file is left intact if writing fails.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError("output", "must be a path in an existing directory", path)
    if os.path.isdir(path):
        raise InputError("output", "must be a file path, not a directory", path)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        binary = isinstance(text, (bytes, bytearray))
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")) as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else 0o666 & ~_umask()
            os.chmod(tmp, mode)
        except OSError:
            pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m
