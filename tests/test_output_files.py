"""Output files (`table --output`, `plot --output`, `check --plot`): what an existing path is, stays.

A character device or FIFO is written into (never replaced by a regular file), a symbolic link has its
target written (the link stays), a 250-character name works (the temporary file's name is cut to the
file system's limit), a 300-character name is one line and exit 2, and a figure's format follows its
extension (``.svg`` gets SVG, an unknown extension is refused).
"""
from __future__ import annotations

import os
import stat
import threading

import pytest

from boundcalc.cli import main
from boundcalc.core.errors import InputError
from boundcalc.render.fileio import write_atomic


def name_max(directory):
    try:
        return os.pathconf(directory, "PC_NAME_MAX")
    except (AttributeError, ValueError, OSError):
        return 255

TABLE = ["table", "--problem", "mean", "--k", "4", "--privacy", "pure", "--format", "csv"]


def _table(out, capsys):
    rc = main(TABLE + ["--output", str(out)])
    return rc, capsys.readouterr()


def _read_fifo(path, sink):
    with open(path, "rb") as fh:  # blocks until a writer opens the FIFO
        sink.append(fh.read())


def _unblock(path):
    """Let a reader still waiting in open() go (it saw no writer): open for writing and close."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
    except OSError:
        pass


def test_fifo_is_written_into(tmp_path, capsys):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=_read_fifo, args=(fifo, got), daemon=True)
    reader.start()
    try:
        rc, cap = _table(fifo, capsys)
        reader.join(timeout=20)
    finally:
        if reader.is_alive():
            _unblock(fifo)
    assert rc == 0, cap.err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
    assert got and got[0].startswith(b"problem,privacy,") and b"\nmean,pure," in got[0]
    assert os.listdir(tmp_path) == ["pipe.csv"]  # no temporary left behind


def _char_device_clone(directory):
    """A character device with /dev/null's numbers in ``directory`` (root only), or None."""
    st = os.stat("/dev/null")
    node = os.path.join(directory, "null")
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, st.st_rdev)
        with open(node, "wb") as fh:  # a file system mounted nodev refuses device files
            fh.write(b"x")
    except (OSError, AttributeError):
        return None
    return node


def test_character_device_clone_is_written_into(tmp_path, capsys):
    node = _char_device_clone(tmp_path)
    if node is None:
        pytest.skip("creating a character device needs root and a file system without nodev")
    rc, cap = _table(node, capsys)
    assert rc == 0, cap.err
    assert stat.S_ISCHR(os.lstat(node).st_mode), "the device node was replaced by a regular file"
    assert sorted(os.listdir(tmp_path)) == ["null"]


def _into_dev_null(args, directory, capsys):
    """Run ``args + [/dev/null]``; first on a copy of the device node (when one can be made), so that a
    version that replaces device nodes fails here without destroying the real /dev/null."""
    node = _char_device_clone(directory)
    if node is not None:
        rc = main(args + [node])
        assert rc == 0 and stat.S_ISCHR(os.lstat(node).st_mode), capsys.readouterr().err
    rc = main(args + ["/dev/null"])
    return rc, capsys.readouterr()


def test_dev_null_stays_a_character_device(tmp_path, capsys):
    before = os.lstat("/dev/null")
    assert stat.S_ISCHR(before.st_mode)
    rc, cap = _into_dev_null(TABLE + ["--output"], tmp_path, capsys)
    assert rc == 0, cap.err
    after = os.lstat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev and after.st_ino == before.st_ino


def test_symlink_writes_its_target(tmp_path, capsys):
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    rc, cap = _table(link, capsys)
    assert rc == 0, cap.err
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text().startswith("problem,privacy,")
    assert sorted(os.listdir(tmp_path)) == ["link.csv", "real.csv"]


def test_dangling_symlink_creates_its_target(tmp_path, capsys):
    sub = tmp_path / "sub"
    sub.mkdir()
    link = tmp_path / "link.csv"
    link.symlink_to(sub / "new.csv")
    rc, cap = _table(link, capsys)
    assert rc == 0, cap.err
    assert link.is_symlink() and (sub / "new.csv").read_text()


def test_symlink_loop_is_bad_input(tmp_path, capsys):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.symlink_to(b)
    b.symlink_to(a)
    rc, cap = _table(a, capsys)
    assert rc == 2 and cap.err.count("\n") == 1 and "--output" in cap.err


def test_write_atomic_symlink_and_private_mode(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_atomic(link, "[1]")
    assert link.is_symlink() and real.read_text() == "[1]"
    # follow=False (files boundcalc keeps for itself): the link is replaced, its target never written
    write_atomic(link, "[2]", follow=False)
    assert not link.is_symlink() and link.read_text() == "[2]" and real.read_text() == "[1]"


def _long_name(tmp_path, length, ext=".csv"):
    limit = name_max(str(tmp_path))
    if length > limit and length <= 255:
        pytest.skip(f"the file system allows only {limit}-byte names")
    return tmp_path / ("r" * (length - len(ext)) + ext)


def test_250_character_name_table(tmp_path, capsys):
    out = _long_name(tmp_path, 250)
    rc, cap = _table(out, capsys)
    assert rc == 0, cap.err
    assert out.read_text() and os.listdir(tmp_path) == [out.name]


def test_250_character_name_multibyte(tmp_path):
    # 83 three-byte characters + ".csv": 253 bytes, 87 characters; the temporary name is cut in bytes
    out = tmp_path / ("€" * 83 + ".csv")
    if len(os.fsencode(out.name)) > name_max(str(tmp_path)):
        pytest.skip("the file system allows shorter names")
    write_atomic(out, "x")
    assert out.read_text() == "x" and os.listdir(tmp_path) == [out.name]


def test_300_character_name_is_bad_input(tmp_path, capsys):
    out = _long_name(tmp_path, 300)
    rc, cap = _table(out, capsys)
    assert rc == 2 and cap.err.count("\n") == 1 and "--output" in cap.err and "file system" in cap.err
    with pytest.raises(InputError, match="--plot"):
        write_atomic(out, "x", option="plot")
    assert os.listdir(tmp_path) == []


PLOT = ["plot", "--problem", "mean", "--privacy", "pure", "--k", "4", "--points", "3"]
CHECK = ["check", "--problem", "mean", "--privacy", "pure", "--k", "4", "--ns", "100,200", "--reps", "10"]


def test_plot_and_check_long_names(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = _long_name(tmp_path, 250, ".png")
    assert main(PLOT + ["--output", str(out)]) == 0, capsys.readouterr().err
    assert out.read_bytes().startswith(b"\x89PNG")
    out.unlink()
    rc = main(CHECK + ["--plot", str(out)])
    assert rc in (0, 3), capsys.readouterr().err  # the check's verdict is not what is tested here
    assert out.read_bytes().startswith(b"\x89PNG")
    capsys.readouterr()
    too_long = _long_name(tmp_path, 300, ".png")
    assert main(PLOT + ["--output", str(too_long)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--output" in err
    assert main(CHECK + ["--plot", str(too_long)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--plot" in err


def test_plot_format_follows_extension(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    svg = tmp_path / "risk.svg"
    assert main(PLOT + ["--output", str(svg)]) == 0, capsys.readouterr().err
    head = svg.read_bytes()[:200]
    assert b"<svg" in head or b"<?xml" in head
    assert not head.startswith(b"\x89PNG")
    capsys.readouterr()
    for bad in ("risk.xyz", "risk.txt"):
        assert main(PLOT + ["--output", str(tmp_path / bad)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--output" in err and ".svg" in err
        assert main(CHECK + ["--plot", str(tmp_path / bad)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--plot" in err
    assert sorted(os.listdir(tmp_path)) == ["risk.svg"]


def test_plot_into_dev_null(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    rc, cap = _into_dev_null(PLOT + ["--output"], tmp_path, capsys)
    assert rc == 0, cap.err
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def test_block_device_or_socket_is_refused(tmp_path, capsys):
    import socket

    path = str(tmp_path / "s.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(path)
        rc, cap = _table(path, capsys)
    finally:
        sock.close()
    assert rc == 2 and cap.err.count("\n") == 1 and "--output" in cap.err
    assert stat.S_ISSOCK(os.lstat(path).st_mode)
