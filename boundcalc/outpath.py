"""Validation of output file paths, done before any computation (a bad path is bad input: exit 2)."""
from __future__ import annotations

import os
import tempfile

from .errors import InputError


def validate_output_path(path, option: str = "output") -> str:
    """Return ``path`` if a file can be written there, else raise :class:`InputError` naming ``option``.

    Refused: an empty path, a directory, a path whose directory does not exist, and a directory where
    no file can be created (checked by creating and removing a temporary file there: permission bits
    alone do not tell, e.g. for root under /sys or on a read-only file system). Nothing is left behind.
    """
    if path is None or not str(path).strip():
        raise InputError(option, "must be a file path (got an empty string)")
    path = os.fspath(path)
    if os.path.isdir(path):
        raise InputError(option, "must be a file path, not a directory", path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError(option, "must be a path in an existing directory", path)
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise InputError(option, "must be a writable file", path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".boundcalc-probe.", suffix=".tmp", dir=directory)
    except OSError:
        raise InputError(option, "must be in a directory where files can be written", path) from None
    os.close(fd)
    os.unlink(tmp)
    return path
