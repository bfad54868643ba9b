"""Speed of boundcalc as paired ratios (issue 15): `python benchmarks/bench_speed.py [--quick] [--only ...]`.

Parts (``--only rate|curve|warm|check``, repeatable; default all); ``--cache warm|cold|off`` chooses what the
disk cache (boundcalc.cache.diskcache) holds for each process: warm (the default: filled by each command's warm-up
run, as on a user's second call), cold (empty for every run: a first call) or off.

``--point repeat|new`` (rate part): repeat the same command, whose answer the cache then holds (the
default), or give every run an ``--n`` never asked before, so the answer is computed (from expressions,
generated code and the rest that the cache holds).

rate   ``boundcalc rate --problem P --privacy Q`` as a fresh process for every (problem, privacy) pair
       registered, against ``python -c "import sympy"`` (the floor: every answer is a sympy
       expression). The two commands are run in turn (A B A B ...), the ratio is taken pair by pair,
       and the median wall time of each and the median ratio are printed. Also the issue's headline
       command ``rate --problem mean --privacy approx --k 4``.
curve  ``bc.evaluate_curve(P, Q, n=..., eps=...)`` over 10^6 points with n and the privacy level
       varying (log-uniform), median seconds per call, in this process (after one small warm-up call).
warm   ``bc.rate(P, Q)`` in this process after a first call: median milliseconds per call.
new    the new-question table: ``rate`` at an ``--n`` never asked before (cache warm, and with an empty cache),
       ``table --problem all`` with an empty cache, ``bc.rate`` at a new n and ε and ``bc.plan`` at a new target
       in a warm process. Nothing is a repeated request.
check  every ``boundcalc check --problem P --privacy Q`` at its defaults and ``boundcalc table
       --problem all``, as fresh processes, paired against ``import sympy`` like ``rate``.

The CLI is run as ``python -c "from boundcalc.cli import run; run()" ...`` (what the console script runs) with this checkout on
PYTHONPATH, so the code measured is the code next to this script. Machines are shared and noisy:
quote the medians and ratios, not single times. Each process is timed twice: wall clock and CPU time
(user + sys of the child, from the kernel's accounting). On a loaded machine (more runnable processes
than cores) wall time mostly measures waiting; the CPU ratio is then the figure to quote. The in-process
parts print wall and CPU (process_time) seconds likewise.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else ""))
SYMPY = [sys.executable, "-c", "import sympy"]
CLI = [sys.executable, "-c", "from boundcalc.cli import run; run()"]


def _cpu_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


CACHE = {"mode": "warm", "dir": None}


def _env() -> dict:
    """The environment of one boundcalc process for the chosen cache mode (see ``--cache``)."""
    import tempfile

    env = dict(ENV)
    env.pop("BOUNDCALC_NO_CACHE", None)
    if CACHE["mode"] == "off":
        env["BOUNDCALC_NO_CACHE"] = "1"
    elif CACHE["mode"] == "cold":
        env["BOUNDCALC_CACHE_DIR"] = tempfile.mkdtemp(prefix="bc-cold-")  # empty: nothing to read
    else:
        if CACHE["dir"] is None:
            CACHE["dir"] = tempfile.mkdtemp(prefix="bc-warm-")
        env["BOUNDCALC_CACHE_DIR"] = CACHE["dir"]
    return env


POINT = {"mode": "repeat", "next_n": 2000}


def _at_point(cmd):
    """``cmd`` as run this time: unchanged (``--point repeat``), or with an ``--n`` never asked before
    (``--point new``: the answer must be computed, though the cache holds everything that does not depend on n)."""
    if POINT["mode"] == "new" and cmd is not SYMPY and "rate" in cmd:
        POINT["next_n"] += 1
        return cmd + ["--n", str(POINT["next_n"])]
    return cmd


def _run(cmd) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the child, exit code)."""
    cmd = _at_point(cmd)
    env = _env()
    c = _cpu_children()
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - t, _cpu_children() - c, proc.returncode


def paired(cmd, runs: int) -> dict:
    """Medians of ``cmd`` and of ``import sympy`` (wall and CPU) and the medians of the pair-by-pair
    ratios, plus the last exit code. One warm-up of each, then ``runs`` pairs, the order alternating
    (A B, B A, ...) so drift is shared."""
    _run(cmd)
    _run(SYMPY)
    rows, rc = [], 0
    for i in range(runs):
        if i % 2 == 0:
            a = _run(cmd)
            b = _run(SYMPY)
        else:
            b = _run(SYMPY)
            a = _run(cmd)
        rc = a[2]
        rows.append((a[0], b[0], a[0] / b[0], a[1], b[1], a[1] / max(b[1], 1e-9)))
    med = [statistics.median(col) for col in zip(*rows)]
    return {"wall": med[0], "wall_sympy": med[1], "wall_ratio": med[2], "cpu": med[3], "cpu_sympy": med[4],
            "cpu_ratio": med[5], "rc": rc}


def pairs() -> list[tuple[str, str, bool]]:
    from boundcalc.app import api

    return [(d["problem"], d["privacy"], d["check"]) for d in api.list_problems()]


HEAD = (f"  {'command':<40s} {'cpu s':>7s} {'sympy':>6s} {'ratio':>7s}   {'wall s':>7s} {'sympy':>6s} "
        f"{'ratio':>7s}")


def _row(label, cmd, runs):
    r = paired(cmd, runs)
    flag = "" if r["rc"] == 0 else f"  (exit {r['rc']})"
    print(f"  {label:<40s} {r['cpu']:7.3f} {r['cpu_sympy']:6.3f} {r['cpu_ratio']:6.2f}x   {r['wall']:7.3f} "
          f"{r['wall_sympy']:6.3f} {r['wall_ratio']:6.2f}x{flag}", flush=True)
    return r["cpu_ratio"]


def part_rate(runs):
    print(f"rate: fresh process vs python -c 'import sympy' (median of {runs} pairs; CPU = user + sys)")
    print(HEAD)
    ratios = []
    ratios.append(_row("rate mean approx --k 4", CLI + ["rate", "--problem", "mean", "--privacy", "approx", "--k", "4"],
                       runs))
    for problem, privacy, _ in pairs():
        ratios.append(_row(f"rate {problem} {privacy}", CLI + ["rate", "--problem", problem, "--privacy", privacy],
                           runs))
    print(f"  CPU ratio: worst {max(ratios):.2f}x, median {statistics.median(ratios):.2f}x\n", flush=True)


def _curve_args(privacy, size, rng):
    import numpy as np

    kw = {"n": np.round(10 ** rng.uniform(2, 8, size))}
    lo_hi = {"none": None, "tv": (-2, -0.1), "kl": (-2, 0)}.get(privacy, (-2, np.log10(4.0)))
    if lo_hi is not None:
        kw["eps"] = 10 ** rng.uniform(lo_hi[0], lo_hi[1], size)
    return kw


def part_curve(runs):
    import numpy as np

    import boundcalc as bc

    size = 10 ** 6
    print(f"curve: bc.evaluate_curve over {size:,} points, n and the level varying (median of {runs}, s per call)")
    worst = 0.0
    for problem, privacy, _ in pairs():
        rng = np.random.default_rng(0)
        kw = _curve_args(privacy, size, rng)
        try:
            bc.evaluate_curve(problem, privacy, **{k: v[:10] for k, v in kw.items()})
        except Exception as exc:  # noqa: BLE001 - a pair without a closed form is reported, not timed
            print(f"  {problem + ' ' + privacy:<28s} n/a ({type(exc).__name__}: {str(exc)[:70]})", flush=True)
            continue
        times, cpus = [], []
        for _ in range(runs):
            t, c = time.perf_counter(), time.process_time()
            vals = bc.evaluate_curve(problem, privacy, **kw)
            times.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
        med, cmed = statistics.median(times), statistics.median(cpus)
        worst = max(worst, cmed)
        fin = float(np.mean(np.isfinite(vals)))
        print(f"  {problem + ' ' + privacy:<28s} cpu {cmed:7.3f} s  wall {med:7.3f} s   (finite {fin:.3f})", flush=True)
    print(f"  worst cpu {worst:.3f} s\n", flush=True)


def part_warm(runs):
    import boundcalc as bc

    print(f"warm: bc.rate(P, Q) per call after a first call (median of {runs}, ms)")
    worst = 0.0
    for problem, privacy, _ in pairs():
        bc.rate(problem, privacy)
        times, cpus = [], []
        for _ in range(runs):
            t, c = time.perf_counter(), time.process_time()
            bc.rate(problem, privacy)
            times.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
        med, cmed = 1e3 * statistics.median(times), 1e3 * statistics.median(cpus)
        worst = max(worst, cmed)
        print(f"  {problem + ' ' + privacy:<28s} cpu {cmed:9.2f} ms  wall {med:9.2f} ms", flush=True)
    print(f"  worst cpu {worst:.2f} ms\n", flush=True)


def part_check(runs):
    print(f"check/table: fresh process vs python -c 'import sympy' (median of {runs} pairs; CPU = user + sys)")
    print(HEAD)
    _row("table --problem all", CLI + ["table", "--problem", "all"], runs)
    for problem, privacy, has_check in pairs():
        if has_check:
            _row(f"check {problem} {privacy}", CLI + ["check", "--problem", problem, "--privacy", privacy], runs)
    print(flush=True)


# ---------------------------------------------------------------------- new questions (issue 24)

#: ``boundcalc rate`` at an ``--n`` never asked before, cache warm (what does not depend on n is kept)
NEW_CLI = [("rate mean approx --k 4", ["rate", "--problem", "mean", "--privacy", "approx", "--k", "4"]),
           ("rate multinomial local --d 50", ["rate", "--problem", "multinomial", "--privacy", "local", "--d", "50"]),
           ("rate point pure", ["rate", "--problem", "point", "--privacy", "pure"])]
#: ``bc.rate`` at a new n and a new level in a warm process
NEW_API = [("mean", "approx", {"k": 4}), ("mean", "pure", {}), ("point", "pure", {}), ("multinomial", "local", {}),
           ("gaussian", "local", {}), ("sparse-bernoulli", "local", {})]
#: ``bc.plan`` at a new target in a warm process (the first target is the warm-up)
NEW_PLAN = [("mean", "pure", {}, 0.01), ("mean", "approx", {"d": 10}, 0.05), ("multinomial", "local", {"d": 100}, 0.01),
            ("gaussian", "local", {"d": 10}, 0.05), ("point", "pure", {}, 0.01), ("density", "local", {}, 0.05)]


def _new_cli_row(label, args, runs, cache):
    """Paired ratio of a CLI call at a new --n against ``import sympy``; ``cache``: warm (one directory, filled by
    a warm-up at another n) or cold (an empty directory per run)."""
    saved = dict(CACHE), dict(POINT)
    CACHE["mode"] = cache
    POINT["mode"] = "new"
    try:
        return _row(label + ("" if cache == "warm" else " (empty cache)"), CLI + args, runs)
    finally:
        CACHE.update(saved[0])
        POINT.update(saved[1])


def part_new(runs):
    """The table of issue 24: new points and cold starts, never a repeated request."""
    import random

    import boundcalc as bc

    print(f"new: fresh process at an --n never asked before vs python -c 'import sympy' (median of {runs} pairs)")
    print(HEAD)
    for label, args in NEW_CLI:
        _new_cli_row(label, args, runs, "warm")
    _new_cli_row("rate mean approx --k 4", ["rate", "--problem", "mean", "--privacy", "approx", "--k", "4"], runs,
                 "cold")
    saved = dict(CACHE)
    CACHE["mode"] = "cold"
    try:
        _row("table --problem all (empty cache)", CLI + ["table", "--problem", "all"], max(3, runs // 2))
    finally:
        CACHE.update(saved)
    _row("table --problem all (cache warm)", CLI + ["table", "--problem", "all"], max(3, runs // 2))
    # the floor: what a numeric answer imports whatever boundcalc does (the special functions of the bounds come
    # from scipy.special, whose array-API layer imports numpy.testing, numpy.f2py and numpy.ma; mpmath certifies)
    _row("floor: import numpy, scipy.special, mpmath", [sys.executable, "-c", "import numpy, scipy.special, mpmath"],
         runs)
    _row("floor + import sympy", [sys.executable, "-c", "import sympy, numpy, scipy.special, mpmath"], runs)
    # ... and every module the first row's rate imports, nothing computed: the rest of that row is computation
    _row("imports of rate mean approx, no call", [sys.executable, "-c", "import boundcalc.cli, boundcalc.app.api, "
         "boundcalc.app.catalog, boundcalc.problems.mean_central, boundcalc.core.solver, boundcalc.core.certify, "
         "boundcalc.render.result, scipy.special, mpmath"], runs)
    print(flush=True)
    rng = random.Random(24)
    print(f"new API: bc.rate at a new n and a new eps, warm process (median of {runs} calls, ms)")
    for problem, privacy, kw in NEW_API:
        bc.rate(problem, privacy, **kw)
        times, cpus = [], []
        for _ in range(runs):
            n = rng.randrange(200, 10 ** 6)
            eps = round(rng.uniform(0.2, 3.0), 6)
            t, c = time.perf_counter(), time.process_time()
            bc.rate(problem, privacy, n=n, eps=eps, **kw)
            times.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
        print(f"  {problem + ' ' + privacy + ' ' + str(kw or ''):<36s} cpu {1e3 * statistics.median(cpus):9.2f} ms  "
              f"wall {1e3 * statistics.median(times):9.2f} ms", flush=True)
    print(f"\nnew plan: bc.plan at a new target, warm process (median of {max(3, runs // 2)} calls, s)")
    for problem, privacy, kw, target in NEW_PLAN:
        bc.plan(problem, privacy, target=target, **kw)
        times, cpus = [], []
        for i in range(max(3, runs // 2)):
            t_new = target * (0.5 + rng.random())
            t, c = time.perf_counter(), time.process_time()
            bc.plan(problem, privacy, target=t_new, **kw)
            times.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
        print(f"  {problem + ' ' + privacy + ' ' + str(kw or ''):<36s} cpu {statistics.median(cpus):8.3f} s  "
              f"wall {statistics.median(times):8.3f} s", flush=True)
    print(flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats (3 pairs, 3 curve/warm calls, 1 check pair)")
    ap.add_argument("--cache", choices=["warm", "cold", "off"], default="warm",
                    help="warm: one cache directory for all runs, filled by each command's warm-up run (a user's "
                         "second call); cold: an empty cache directory for every run (a user's very first call); "
                         "off: BOUNDCALC_NO_CACHE=1")
    ap.add_argument("--point", choices=["repeat", "new"], default="repeat",
                    help="rate part: repeat the same command (a kept answer is read), or give every run an n never "
                         "asked before (the answer is computed; what does not depend on n is read from the cache)")
    ap.add_argument("--only", action="append", choices=["rate", "curve", "warm", "check", "new"],
                    help="run only this part (repeatable; new: the new-question table of issue 24)")
    args = ap.parse_args(argv)
    CACHE["mode"] = args.cache
    POINT["mode"] = args.point
    if args.cache != "warm":  # the in-process parts read the same cache as the processes
        os.environ.update({k: v for k, v in _env().items() if k.startswith("BOUNDCALC_")})
    else:
        os.environ["BOUNDCALC_CACHE_DIR"] = _env()["BOUNDCALC_CACHE_DIR"]
    sys.path.insert(0, ROOT)
    # byte-compile the package first, as an installed package is (pip compiles it; with
    # PYTHONDONTWRITEBYTECODE set, every run would otherwise compile boundcalc's source: 25-40 ms)
    import compileall

    compileall.compile_dir(os.path.join(ROOT, "boundcalc"), quiet=1)
    parts = args.only or ["rate", "curve", "warm", "check"]
    runs = {"rate": 3 if args.quick else 7, "curve": 3 if args.quick else 5, "warm": 5 if args.quick else 21,
            "check": 1 if args.quick else 3, "new": 3 if args.quick else 5}
    import platform

    print(f"boundcalc at {ROOT}; python {platform.python_version()}; {os.cpu_count()} cpus; "
          f"{time.strftime('%Y-%m-%d %H:%M:%S')}; load average {os.getloadavg()[0]:.1f}; disk cache {args.cache}; "
          f"rate point {args.point}\n",
          flush=True)
    t0 = time.perf_counter()
    for p in ["rate", "curve", "warm", "check", "new"]:
        if p in parts:
            {"rate": part_rate, "curve": part_curve, "warm": part_warm, "check": part_check, "new": part_new}[p](runs[p])
    print(f"total {time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
