"""The README's ``boundcalc plan`` examples as fresh processes, paired before/after (issue 29: each within 1 s).

    python benchmarks/bench_plan_cli.py [--runs 5] [--base DIR] [--only repeat|new|first] [--json OUT]

Each README example (the ``$ boundcalc plan`` lines of README.md) is run as the console script runs it
(``python -c "from boundcalc.cli import run; run()" plan ...``), with the checkout next to this script on PYTHONPATH,
and, with ``--base DIR``, the same command with the checkout at DIR (an export of an older commit): the two in turn,
A B A B ..., so that each ratio is taken between runs made at the same moment. Three cases:

repeat  the README command itself, asked again: the disk cache holds whatever the first run kept (for a plan read
        whole from the result cache, that is the answer).
new     the README command at a target never asked before (the README's target times a factor in [0.8, 1.25), the
        same target for both checkouts): generated code and expressions are cached, the answer is computed.
first   the README command on an empty cache directory: a user's first run.

Per run: wall seconds and CPU seconds (user + sys of the child, the kernel's accounting). Printed: medians over
the runs, and with ``--base`` the median of the pairwise ratios base / this (above 1: this checkout is faster).
Also the floor ``python -c "import sympy"``. Machines are shared and noisy: quote medians and ratios.

Every process reads byte-compiled modules, as an installed package does (pip compiles it): the children run with
``PYTHONPYCACHEPREFIX`` set to a directory of the benchmark's own (so no checkout is written to) and without
``PYTHONDONTWRITEBYTECODE``, each checkout's package is compiled there first, and the libraries are compiled by
the first (untimed) run. Without it, a checkout's ~45 modules imported by a plan are compiled from source in every
run (about 0.1 s).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = [sys.executable, "-c", "from boundcalc.cli import run; run()"]


def readme_examples(root) -> list[list[str]]:
    """The ``$ boundcalc plan ...`` lines of README.md, as argument lists."""
    with open(os.path.join(root, "README.md"), encoding="utf-8") as fh:
        return [line[len("$ boundcalc "):].split() for line in fh if line.startswith("$ boundcalc plan ")]


def _cpu_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


#: the bytecode of every child (``PYTHONPYCACHEPREFIX``), set by :func:`main`
PYCACHE = None


def child_env(root, cache_dir) -> dict:
    env = dict(os.environ, PYTHONPATH=root, BOUNDCALC_CACHE_DIR=cache_dir)
    env.pop("BOUNDCALC_NO_CACHE", None)
    if PYCACHE is not None:
        env["PYTHONPYCACHEPREFIX"] = PYCACHE
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def compile_package(root, cache_dir) -> None:
    """Byte-compile the checkout's package into :data:`PYCACHE`, as installing it would."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(root, "boundcalc")],
                   env=child_env(root, cache_dir), check=True, capture_output=True)


def timed(cmd, root, cache_dir) -> tuple[float, float, str]:
    """(wall s, CPU s, stdout) of one fresh process."""
    env = child_env(root, cache_dir)
    c, w = _cpu_children(), time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=root, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - w, _cpu_children() - c
    if proc.returncode != 0:
        raise SystemExit(f"exit {proc.returncode}: {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return wall, cpu, proc.stdout


def with_target(args, factor):
    i = args.index("--target")
    return args[:i + 1] + [f"{float(args[i + 1]) * factor:.6g}"] + args[i + 2:]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--base", help="a checkout to pair against (e.g. an export of the commit before)")
    ap.add_argument("--only", action="append", choices=("repeat", "new", "first"))
    ap.add_argument("--json", help="write every run's figures here")
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--source", action="store_true",
                    help="compile modules from source in every run (no bytecode kept), as before 2026-12-02")
    a = ap.parse_args(argv)
    global PYCACHE
    parts = a.only or ["repeat", "new", "first"]
    roots = {"this": HERE}
    if a.base:
        roots = {"base": os.path.abspath(a.base), "this": HERE}
    rng = random.Random(a.seed)
    tmp = tempfile.mkdtemp(prefix="bc-plan-cli-")
    out = {"runs": a.runs, "roots": roots, "results": {}}
    warm = {name: os.path.join(tmp, f"warm-{name}") for name in roots}
    if not a.source:
        PYCACHE = os.path.join(tmp, "pycache")
        for name, root in roots.items():
            compile_package(root, warm[name])
        timed([sys.executable, "-c", "import sympy"], HERE, tmp)  # sympy's bytecode for the floor below
    out["bytecode"] = "compiled from source in every run" if a.source else "byte-compiled first"

    floor = [timed([sys.executable, "-c", "import sympy"], HERE, tmp) for _ in range(a.runs)]
    out["results"]["import sympy"] = {"this": {"wall": [f[0] for f in floor], "cpu": [f[1] for f in floor]}}
    print(f'python -c "import sympy": wall {statistics.median(f[0] for f in floor):.3f} s, '
          f"cpu {statistics.median(f[1] for f in floor):.3f} s (median of {a.runs})")
    for args in readme_examples(HERE):
        for name, root in roots.items():  # the code cache: the README command at another target
            timed(CLI + with_target(args, 1.37), root, warm[name])
        for part in parts:
            if part == "repeat":
                for name, root in roots.items():
                    timed(CLI + args, root, warm[name])  # the first ask; the runs below repeat it
            figures = {name: {"wall": [], "cpu": []} for name in roots}
            outputs = {name: [] for name in roots}  # run i of each checkout answers the same command
            for i in range(a.runs):
                cmd = CLI + (with_target(args, rng.uniform(0.8, 1.25)) if part == "new" else args)
                order = list(roots.items()) if i % 2 == 0 else list(roots.items())[::-1]
                for name, root in order:
                    if part == "first":
                        cache = tempfile.mkdtemp(dir=tmp)
                    else:
                        cache = warm[name]
                    wall, cpu, text = timed(cmd, root, cache)
                    if part == "first":
                        shutil.rmtree(cache, ignore_errors=True)
                    figures[name]["wall"].append(wall)
                    figures[name]["cpu"].append(cpu)
                    outputs[name].append(text)
            label = f"{part}: boundcalc {' '.join(args)}"
            out["results"][label] = figures
            line = "  ".join(f"{name} wall {statistics.median(f['wall']):.3f} s cpu {statistics.median(f['cpu']):.3f} s"
                             for name, f in figures.items())
            if "base" in figures:
                rw = statistics.median(b / t for b, t in zip(figures["base"]["wall"], figures["this"]["wall"]))
                rc = statistics.median(b / t for b, t in zip(figures["base"]["cpu"], figures["this"]["cpu"]))
                line += f"  ratio base/this wall {rw:.2f}x cpu {rc:.2f}x"
                same = outputs["base"] == outputs["this"]
                line += "  (same output)" if same else "  (OUTPUTS DIFFER)"
            print(label)
            print("    " + line, flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
