"""File output: write a file atomically (a temporary file in the same directory, then ``os.replace``).

What an output path may name, and what happens to it (:func:`output_target`, used by :func:`write_atomic`
and checked before any computation by :func:`boundcalc.outpath.validate_output_path`):

- a new name, or an existing regular file: written to a temporary file next to it, then renamed over it
  (a reader never sees half a file; the existing file's permission bits are kept);
- a symbolic link: its target is written that way, and the link stays a link;
- a character device (``/dev/null``, a terminal) or a FIFO: opened and written into, as ``cp`` does;
  it is never replaced by a regular file;
- a directory, a block device, a socket, a name longer than the file system allows, or a path in a
  directory that does not exist: refused (:class:`~boundcalc.errors.InputError`, exit 2), naming the option.

The temporary file's name is cut so that it never exceeds the file system's limit on a name
(``NAME_MAX``, 255 bytes on most file systems) when the final name does not.
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile

from ..core.errors import InputError

#: the random part of a ``tempfile.mkstemp`` name and the suffix used here
_RANDOM_CHARS = 8
_SUFFIX = ".tmp"


def name_max(directory) -> int:
    """The longest file name (in bytes) the file system holding ``directory`` allows (255 if unknown)."""
    try:
        value = os.pathconf(directory, "PC_NAME_MAX")
    except (AttributeError, ValueError, OSError):  # no pathconf (Windows) or no such setting
        return 255
    return value if value and value > 0 else 255


def output_target(path, option: str = "output") -> tuple[str, str]:
    """Where writing ``path`` goes, and how: ``(target, kind)``, without writing anything.

    ``target`` is ``path`` itself, or for a symbolic link the file it points to (resolved fully).
    ``kind`` is ``"file"`` (a new name or a regular file: written atomically) or ``"stream"`` (a
    character device or a FIFO: opened and written into). Anything else raises
    :class:`~boundcalc.errors.InputError` naming ``option``.
    """
    if path is None or not str(path).strip():
        raise InputError(option, "must be a file path (got an empty string)")
    path = os.fspath(path)
    target = os.path.realpath(path) if os.path.islink(path) else path
    directory = os.path.dirname(os.path.abspath(target))
    for name in {os.path.basename(path), os.path.basename(target)}:
        size, limit = len(os.fsencode(name)), name_max(directory if os.path.isdir(directory) else ".")
        if size > limit:
            raise InputError(option, f"file name is {size} bytes long, more than the file system allows "
                                     f"({limit})", path)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(option, "is a symbolic link that points back to itself", path) from None
        if exc.errno == errno.ENAMETOOLONG:
            raise InputError(option, "is a path longer than the file system allows", path) from None
        if exc.errno == errno.ENOTDIR:
            raise InputError(option, "must be a path in an existing directory", path) from None
        raise InputError(option, f"cannot be used ({exc.strerror})", path) from None
    if st is None:
        if not os.path.isdir(directory):
            raise InputError(option, "must be a path in an existing directory", path)
        return target, "file"
    if stat.S_ISDIR(st.st_mode):
        raise InputError(option, "must be a file path, not a directory", path)
    if stat.S_ISREG(st.st_mode):
        return target, "file"
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return target, "stream"
    raise InputError(option, "must be a regular file, a character device or a FIFO (not a block device "
                             "or a socket)", path)


def write_atomic(path, text, *, option: str = "output", follow: bool = True) -> None:
    """Write ``text`` (str, or bytes such as a PNG) to ``path``.

    A new name or a regular file is written atomically: a temporary file in the same directory, then
    ``os.replace``; a reader never sees a half-written file, an existing file is left intact if writing
    fails, and its permission bits are kept. A symbolic link has its target written that way (the link
    stays); a character device or a FIFO is opened and written into. See the module docstring.

    ``option`` names the option in the one-line error of a path that cannot be written. ``follow=False``
    (for files boundcalc keeps for itself, such as its cache) replaces whatever is at ``path``, a
    symbolic link included, and never writes into another file.
    """
    path = os.fspath(path)
    if follow:
        target, kind = output_target(path, option)
    else:
        target, kind = path, "file"
        if os.path.isdir(path):
            raise InputError(option, "must be a file path, not a directory", path)
    binary = isinstance(text, (bytes, bytearray))
    data = bytes(text) if binary else text.encode("utf-8")
    if kind == "stream":
        _write_stream(target, data)
        return
    directory = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(directory):
        raise InputError(option, "must be a path in an existing directory", path)
    fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(os.path.basename(target), directory), suffix=_SUFFIX,
                               dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            mode = os.stat(target).st_mode & 0o777 if os.path.exists(target) else 0o666 & ~_umask()
            os.chmod(tmp, mode)
        except OSError:
            pass
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _temp_prefix(name: str, directory: str) -> str:
    """``.<name>.``, with ``name`` cut (whole characters) so that ``prefix + 8 random + .tmp`` fits."""
    budget = name_max(directory) - _RANDOM_CHARS - len(_SUFFIX) - 2
    while name and len(os.fsencode(name)) > budget:
        name = name[:-1]
    return "." + name + "."


def _write_stream(target: str, data: bytes) -> None:
    """Open a character device or FIFO for writing (no creation, no rename) and write ``data`` into it."""
    fd = os.open(target, os.O_WRONLY | getattr(os, "O_NOCTTY", 0))
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m
