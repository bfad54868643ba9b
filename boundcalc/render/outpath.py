"""Validation of output file paths, done before any computation (a bad path is bad input: exit 2)."""
from __future__ import annotations

import os
import tempfile

from ..core.errors import InputError
from .fileio import output_target


def validate_output_path(path, option: str = "output") -> str:
    """Return ``path`` if a file can be written there, else raise :class:`InputError` naming ``option``.

    Refused: an empty path, a directory, a path whose directory does not exist, a block device or socket,
    a file name longer than the file system allows, and a directory where no file can be created (checked
    by creating and removing a temporary file there: permission bits alone do not tell, e.g. for root
    under /sys or on a read-only file system). A symbolic link is judged by its target; a character
    device or FIFO (written into, never replaced) only needs to be writable. Nothing is left behind.
    """
    target, kind = output_target(path, option)
    path = os.fspath(path)
    if os.path.exists(target) and not os.access(target, os.W_OK):
        raise InputError(option, "must be a writable file", path)
    if kind == "stream":
        return path
    directory = os.path.dirname(os.path.abspath(target))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".boundcalc-probe.", suffix=".tmp", dir=directory)
    except OSError:
        raise InputError(option, "must be in a directory where files can be written", path) from None
    os.close(fd)
    os.unlink(tmp)
    return path
