"""File output: write a file atomically (a temporary file in the same directory, then ``os.replace``).

What an output path may name, and what happens to it (:func:`output_target`, used by :func:`write_atomic`
and checked before any computation by :func:`boundcalc.outpath.validate_output_path`):

- a new name, or an existing regular file: written to a temporary file next to it, then renamed over it
  (a reader never sees half a file; the existing file's permission bits are kept);
- a symbolic link: its target is written that way, and the link stays a link; a link is followed only where
  the kernel's ``fs.protected_symlinks`` rule would follow it, whatever that setting is: a link in a sticky
  world-writable directory (``/tmp``) is followed only if it belongs to the user or to the directory's owner
  (:func:`resolve_path`), so that a link planted by another user cannot redirect the output onto a file of yours;
- a character device (``/dev/null``, a terminal) or a FIFO: opened and written into, as ``cp`` does;
  it is never replaced by a regular file;
- a directory, a block device, a socket, a name longer than the file system allows, or a path in a
  directory that does not exist: refused (:class:`~boundcalc.errors.InputError`, exit 2), naming the option;
- a write that fails (a full device: ``ENOSPC``, ``/dev/full``; a quota; an I/O error): the same one-line error
  with the system's reason, and no partial file is left.

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


#: how many symbolic links one path may pass through (Linux's limit, MAXSYMLINKS)
MAX_SYMLINKS = 40


def _as_path(path, option: str) -> str:
    if isinstance(path, (str, os.PathLike)):
        path = os.fspath(path)
        if isinstance(path, str):
            return path
    raise InputError(option, "must be a file path (a string)", path)


def resolve_path(path: str, option: str = "output") -> str:
    """``path`` with every symbolic link resolved (as ``os.path.realpath``), refusing a link that the kernel's
    protected-symlinks rule (``fs.protected_symlinks = 1``) would refuse to follow: one in a sticky
    world-writable directory, owned neither by the user (effective uid) nor by the directory's owner.

    The rule is applied here whatever the system's setting, at every link the path passes through. A name
    that does not exist (yet) ends the resolution: the rest of the path is taken literally.
    """
    pending = list(reversed(os.path.abspath(path).split(os.sep)))
    resolved, hops = os.sep, 0
    while pending:
        comp = pending.pop()
        if comp in ("", "."):
            continue
        if comp == "..":
            resolved = os.path.dirname(resolved)
            continue
        cand = os.path.join(resolved, comp)
        try:
            st = os.lstat(cand)
        except OSError:  # a new name (or an unreadable one): the rest of the path is literal
            return os.path.join(cand, *reversed(pending)) if pending else cand
        if not stat.S_ISLNK(st.st_mode):
            resolved = cand
            continue
        hops += 1
        if hops > MAX_SYMLINKS:
            raise InputError(option, "is a symbolic link that points back to itself", path)
        _check_protected(cand, st, resolved, path, option)
        link = os.readlink(cand)
        if link.startswith(os.sep):
            resolved = os.sep
        pending.extend(reversed(link.split(os.sep)))
    return resolved


def _check_protected(link: str, st_link, directory: str, path: str, option: str) -> None:
    try:
        st_dir = os.stat(directory)
    except OSError:
        return
    sticky_public = st_dir.st_mode & stat.S_ISVTX and st_dir.st_mode & stat.S_IWOTH
    if sticky_public and st_link.st_uid not in (os.geteuid(), st_dir.st_uid):
        raise InputError(option, f"the symbolic link {link} belongs to another user (uid {st_link.st_uid}) in the "
                                 "sticky world-writable directory it is in: not followed (the kernel's "
                                 "protected-symlinks rule)")


def output_target(path, option: str = "output") -> tuple[str, str]:
    """Where writing ``path`` goes, and how: ``(target, kind)``, without writing anything.

    ``target`` is ``path`` itself, or for a symbolic link the file it points to (resolved fully).
    ``kind`` is ``"file"`` (a new name or a regular file: written atomically) or ``"stream"`` (a
    character device or a FIFO: opened and written into). Anything else raises
    :class:`~boundcalc.errors.InputError` naming ``option``.
    """
    if path is None or (isinstance(path, str) and not path.strip()):
        raise InputError(option, "must be a file path (got an empty string)")
    path = _as_path(path, option)
    if not path.strip():
        raise InputError(option, "must be a file path (got an empty string)")
    try:
        target = resolve_path(path, option)
    except OSError as exc:  # a component that cannot be read (a link in a directory without permission)
        raise InputError(option, f"cannot be used ({exc.strerror})", path) from None
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
    path = _as_path(path, option)
    if follow:
        target, kind = output_target(path, option)
    else:
        target, kind = path, "file"
        if os.path.isdir(path):
            raise InputError(option, "must be a file path, not a directory", path)
    binary = isinstance(text, (bytes, bytearray))
    data = bytes(text) if binary else text.encode("utf-8")
    try:
        _write(target, kind, data, path, option)
    except OSError as exc:  # ENOSPC (/dev/full), EDQUOT, EIO, EACCES ...: bad input with the system's reason
        reason = exc.strerror or str(exc)
        raise InputError(option, f"could not be written: {reason}", path) from None


def _write(target, kind, data, path, option):
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
    # the target is resolved already: a link put in its place since is not followed
    fd = os.open(target, os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NOFOLLOW", 0))
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
