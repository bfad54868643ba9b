"""A plan at a new target: the console script's lazy numpy parts (docs/engineering/speed.md, issue 29).

In the console script's process, ``numpy.f2py`` and ``numpy.testing`` are bound but not run by importing
scipy.special, and work when used; the answer is the one printed without them.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

_LAZY = """
import atexit, sys
def report():
    import numpy
    ran = sorted(m for m in ("numpy.f2py.crackfortran", "numpy.testing._private.utils") if m in sys.modules)
    bound = [type(numpy.f2py).__name__, type(numpy.testing).__name__]
    numpy.testing.assert_equal(numpy.f2py.__name__, "numpy.f2py")  # used: run now, the real modules
    print("SCIPY", "scipy.special" in sys.modules, "RAN", ran, "BOUND", bound, "AFTER", type(numpy.testing).__name__,
          file=sys.stderr)
atexit.register(report)
from boundcalc.cli import run
run()
"""


def test_the_console_script_binds_numpy_parts_lazily(tmp_path):
    env = dict(os.environ, BOUNDCALC_NO_CACHE="1", PYTHONPATH=str(ROOT), BOUNDCALC_CACHE_DIR=str(tmp_path))
    args = ["rate", "--problem", "mean", "--privacy", "pure", "--n", "100"]
    proc = subprocess.run([sys.executable, "-c", _LAZY, *args], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "SCIPY True RAN [] BOUND ['_LazyModule', '_LazyModule'] AFTER module" in proc.stderr, proc.stderr[-2000:]
    plain = subprocess.run([sys.executable, "-c", "from boundcalc.cli import main; import sys; sys.exit(main())",
                            *args], env=env, capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0 and plain.stdout == proc.stdout  # the same answer as without the lazy parts
