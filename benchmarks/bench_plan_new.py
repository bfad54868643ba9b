"""Planning at new questions (issue 29, item 5): CPU seconds of ``plan`` where nothing is a repeated request.

    python benchmarks/bench_plan_new.py [--quick] [--only readme|rate|sweep|plan] [--root DIR] [--json OUT]
    python benchmarks/bench_plan_new.py --compare BEFORE.json [...] --to AFTER.json [...]   # ratios

Parts (``--only``, repeatable; default all):

readme-first  every README ``plan`` example at its own target as a first run: generated code and expressions
        cached, no answer (the result, solver and subset-search stores removed before each run); and the import
        floor ``python -c "import boundcalc, sympy, scipy.special"``.
readme  every ``boundcalc plan`` example of README.md as a fresh process (what the console script runs), the disk
        cache warm (expressions, generated code, tables: filled by the README command itself, run once first) but
        the question new: the README's command at a target never asked before (a random factor in [0.8, 1.25)),
        so every sample size the plan evaluates is computed. CPU = user + sys of the child.
rate    ``bc.rate("multinomial", "local", n=..., eps=...)`` at new points (log-uniform n in [200, 10^6], ε in
        [0.2, 3]; d = 10, the default, and d = 100) in a warm process: median and largest CPU ms per call.
sweep   what a five-statistic local study asks: ``bc.plan(..., target=...)`` (solve n) for each statistic at 15
        ε shares (log-spaced over [0.2, 2], each shifted by a random factor so that no share repeats an earlier
        run's), in a warm process; CPU seconds per statistic (the sum over its 15 shares) and in total.
plan    ``bc.plan`` at a new target of a known question, warm process (the ``new plan`` table of bench_speed.py).

``--root DIR`` measures the boundcalc checkout at DIR (default: the one next to this script), so that a before and
an after run use the same script: ``--root /tmp/base`` on an export of the old commit. Each run uses a fresh
cache directory of its own (``$BOUNDCALC_CACHE_DIR`` is set to a new temporary directory), warmed by the
first call of each question at other parameters. Machines are shared and noisy: quote CPU medians, not wall times.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: the ``boundcalc plan`` examples of README.md (checked against the README by ``readme_examples``)
README_PLANS = [
    ["plan", "--problem", "mean", "--privacy", "pure", "--k", "4", "--target", "0.01"],
    ["plan", "--problem", "multinomial", "--privacy", "local", "--d", "100", "--eps", "1", "--target", "0.01"],
]

#: the statistics of a five-statistic local study: (label, problem, parameters, target)
STUDY = [
    ("multinomial d=100", "multinomial", {"d": 100}, 0.01),
    ("mean", "mean", {}, 0.01),
    ("gaussian d=10", "gaussian", {"d": 10}, 0.05),
    ("sparse-bernoulli", "sparse-bernoulli", {}, 0.01),
    ("multinomial d=2", "multinomial", {"d": 2}, 0.01),
]
SHARES = 15

#: ``bc.plan`` at a new target of a known question (bench_speed.py's NEW_PLAN)
NEW_PLAN = [("mean", "pure", {}, 0.01), ("mean", "approx", {"d": 10}, 0.05), ("multinomial", "local", {"d": 100}, 0.01),
            ("gaussian", "local", {"d": 10}, 0.05), ("point", "pure", {}, 0.01), ("density", "local", {}, 0.05)]


def readme_examples(root) -> list[list[str]]:
    """The ``$ boundcalc plan ...`` lines of README.md, as argument lists."""
    out = []
    with open(os.path.join(root, "README.md"), encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("$ boundcalc plan "):
                out.append(line[len("$ boundcalc "):].split())
    return out


def _cpu_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _cli(root, args, env) -> tuple[float, int]:
    c = _cpu_children()
    proc = subprocess.run([sys.executable, "-c", "from boundcalc.cli import run; run()"] + args, env=env, cwd=root,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return _cpu_children() - c, proc.returncode


def part_readme(root, runs, rng, out):
    env = dict(os.environ, PYTHONPATH=root, BOUNDCALC_CACHE_DIR=os.environ["BOUNDCALC_CACHE_DIR"])
    examples = readme_examples(root)
    missing = [e for e in examples if e not in README_PLANS]
    if missing:
        print(f"  note: README examples not in README_PLANS: {missing}")
    print(f"readme: `boundcalc plan` examples of README.md at a new target, fresh process, cache warm "
          f"(median of {runs}, CPU s)")
    for args in examples:
        _cli(root, args, env)  # fills the cache with what does not depend on the target
        i = args.index("--target")
        cpus = []
        for _ in range(runs):
            t = float(args[i + 1]) * rng.uniform(0.8, 1.25)
            new = args[:i + 1] + [f"{t:.6g}"] + args[i + 2:]
            cpu, rc = _cli(root, new, env)
            cpus.append(cpu)
            if rc != 0:
                print(f"  exit {rc}: {' '.join(new)}")
        label = " ".join(args)
        out["readme"][label] = {"median": statistics.median(cpus), "all": cpus}
        print(f"  {label:<92s} cpu {statistics.median(cpus):6.3f} s  (max {max(cpus):.3f})", flush=True)


#: the disk stores that hold answers at the question's numbers (whole results, solver optima, the projected
#: subset-selection searches); the others hold expressions, generated code and tables, which do not depend on them
ANSWER_STORES = ("boundcalc.results", "boundcalc.solver", "boundcalc.mechanisms.subset_tail.")


def part_readme_first(root, runs, out):
    """Every README ``plan`` example at its own target as a user's first run of that command: the disk cache holds
    the expressions and generated code (filled by the same command at another target) but no answer (every store
    of :data:`ANSWER_STORES` removed before each run); beside it the import floor."""
    import shutil

    base = tempfile.mkdtemp(prefix="bc-plan-first-")
    env = dict(os.environ, PYTHONPATH=root, BOUNDCALC_CACHE_DIR=base)
    print(f"readme-first: `boundcalc plan` examples of README.md at their own target, fresh process, code cached but "
          f"no answer (median of {runs}, CPU s)")
    floor = []
    for _ in range(runs):
        c = _cpu_children()
        subprocess.run([sys.executable, "-c", "import boundcalc, sympy, scipy.special"], env=env, cwd=root, check=True)
        floor.append(_cpu_children() - c)
    out["readme_first"]["import boundcalc, sympy, scipy.special"] = {"median": statistics.median(floor), "all": floor}
    label = "python -c 'import boundcalc, sympy, scipy.special'"
    print(f"  {label:<92s} cpu {statistics.median(floor):6.3f} s")
    for args in readme_examples(root):
        i = args.index("--target")
        _cli(root, args[:i + 1] + [f"{float(args[i + 1]) * 1.37:.6g}"] + args[i + 2:], env)  # expressions, code
        cpus = []
        for _ in range(runs):
            run_dir = tempfile.mkdtemp(prefix="bc-plan-first-run-")
            shutil.copytree(os.path.join(base, "boundcalc"), os.path.join(run_dir, "boundcalc"))
            for name in os.listdir(os.path.join(run_dir, "boundcalc")):
                if name.startswith(ANSWER_STORES):
                    os.remove(os.path.join(run_dir, "boundcalc", name))
            cpu, rc = _cli(root, args, dict(env, BOUNDCALC_CACHE_DIR=run_dir))
            shutil.rmtree(run_dir, ignore_errors=True)
            cpus.append(cpu)
            if rc != 0:
                print(f"  exit {rc}: {' '.join(args)}")
        label = " ".join(args)
        out["readme_first"][label] = {"median": statistics.median(cpus), "all": cpus}
        print(f"  {label:<92s} cpu {statistics.median(cpus):6.3f} s  (max {max(cpus):.3f})", flush=True)
    shutil.rmtree(base, ignore_errors=True)


def _timed(fn):
    c = time.process_time()
    fn()
    return time.process_time() - c


def part_rate(runs, rng, out):
    import boundcalc as bc

    print(f"rate: bc.rate multinomial local at a new n and eps, warm process ({runs} points, CPU ms)")
    for kw in ({}, {"d": 100}):
        bc.rate("multinomial", "local", **kw)
        cpus, walls = [], []
        for _ in range(runs):
            n = int(round(10 ** rng.uniform(2.3, 6)))
            eps = round(10 ** rng.uniform(-0.7, 0.477), 6)
            w = time.perf_counter()
            cpus.append(1e3 * _timed(lambda: bc.rate("multinomial", "local", n=n, eps=eps, **kw)))
            walls.append(1e3 * (time.perf_counter() - w))
        label = f"multinomial local {kw or ''}"
        out["rate"][label] = {"median": statistics.median(cpus), "max": max(cpus), "all": cpus,
                              "wall_median": statistics.median(walls), "wall_all": walls}
        print(f"  {label:<36s} median {statistics.median(cpus):8.2f} ms  max {max(cpus):8.2f} ms  "
              f"(wall median {statistics.median(walls):8.2f} ms)", flush=True)


def part_sweep(rng, out, shares=SHARES):
    import boundcalc as bc

    print(f"sweep: bc.plan (solve n) of each statistic of a five-statistic local study at {shares} new eps shares "
          f"in [0.2, 2], warm process (CPU s)")
    total = 0.0
    for label, problem, kw, target in STUDY:
        bc.plan(problem, "local", target=target, eps=1.2345, **kw)  # warm: expressions, code, tables
        cpus, answers = [], []
        for j in range(shares):
            eps = 0.2 * 10 ** (j / (shares - 1)) * rng.uniform(0.97, 1.03)
            eps = float(f"{eps:.6g}")
            res = None

            def call():
                nonlocal res
                res = bc.plan(problem, "local", target=target, eps=eps, **kw)

            cpus.append(_timed(call))
            answers.append((eps, res.n_necessary, res.n_sufficient))
        total += sum(cpus)
        out["sweep"][label] = {"sum": sum(cpus), "median": statistics.median(cpus), "max": max(cpus),
                               "all": cpus, "answers": answers}
        print(f"  {label:<22s} sum {sum(cpus):7.2f} s  median {statistics.median(cpus):6.3f} s  "
              f"max {max(cpus):6.3f} s", flush=True)
    out["sweep_total"] = total
    print(f"  total {total:.2f} s", flush=True)


def part_plan(runs, rng, out):
    import boundcalc as bc

    print(f"plan: bc.plan at a new target of a known question, warm process (median of {runs}, CPU s)")
    for problem, privacy, kw, target in NEW_PLAN:
        bc.plan(problem, privacy, target=target, **kw)
        cpus = []
        for _ in range(runs):
            t_new = target * (0.5 + rng.random())
            cpus.append(_timed(lambda: bc.plan(problem, privacy, target=t_new, **kw)))
        label = f"{problem} {privacy} {kw or ''}"
        out["plan"][label] = {"median": statistics.median(cpus), "all": cpus}
        print(f"  {label:<36s} cpu {statistics.median(cpus):7.3f} s", flush=True)


def compare(before_files, after_files):
    """Print before/after CPU figures and their ratios from the JSON files of two sets of runs."""
    def load(files):
        out = {"readme_first": {}, "readme": {}, "rate": {}, "sweep": {}, "plan": {}, "commit": None}
        for f in files:
            with open(f, encoding="utf-8") as fh:
                d = json.load(fh)
            out["commit"] = d.get("commit")
            for part in ("readme_first", "readme", "rate", "sweep", "plan"):
                out[part].update(d.get(part, {}))
        return out

    a, b = load(before_files), load(after_files)
    print(f"before: {a['commit']} ({', '.join(before_files)}); after: {b['commit']} ({', '.join(after_files)})")
    print("CPU seconds (rate: ms); ratio = before / after\n")
    rows = []
    for part, key, unit in (("readme_first", "median", "s"), ("readme", "median", "s"), ("rate", "median", "ms"), ("rate", "max", "ms"),
                            ("sweep", "sum", "s"), ("sweep", "median", "s"), ("plan", "median", "s")):
        for label in a[part]:
            if label in b[part]:
                x, y = a[part][label][key], b[part][label][key]
                rows.append((f"{part} {key}", label, x, y, unit))
    for part, key, label, x, y, unit in [(r[0].split()[0], r[0].split()[1], r[1], r[2], r[3], r[4]) for r in rows]:
        print(f"  {part + ' ' + key:<14s} {label:<80s} {x:9.3f} -> {y:9.3f} {unit:<2s} {x / y:6.2f}x")
    sa = sum(v["sum"] for v in a["sweep"].values())
    sb = sum(v["sum"] for v in b["sweep"].values())
    if sa and sb:
        print(f"  {'sweep total':<14s} {'five statistics x 15 shares':<80s} {sa:9.3f} -> {sb:9.3f} s  {sa / sb:6.2f}x")
    same = all(a["sweep"][k]["answers"] == b["sweep"][k]["answers"] for k in a["sweep"] if k in b["sweep"])
    if a["sweep"] and b["sweep"]:
        print(f"\n  sweep answers (eps, n_necessary, n_sufficient) identical before and after: {same}")


def main(argv=None):
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--compare":
        argv = sys.argv[1:]
    if argv and argv[0] == "--compare":
        i = argv.index("--to")
        return compare(argv[1:i], argv[i + 1:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--only", action="append", choices=["readme-first", "readme", "rate", "sweep", "plan"])
    ap.add_argument("--root", default=HERE, help="the boundcalc checkout to measure (default: this one)")
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--seed", type=int, default=29)
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    os.environ["BOUNDCALC_CACHE_DIR"] = tempfile.mkdtemp(prefix="bc-plan-new-")
    os.environ.pop("BOUNDCALC_NO_CACHE", None)
    sys.path.insert(0, root)
    import compileall

    compileall.compile_dir(os.path.join(root, "boundcalc"), quiet=1)
    import platform

    commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "(no git)"
    print(f"boundcalc at {root} ({commit}); python {platform.python_version()}; {os.cpu_count()} cpus; "
          f"{time.strftime('%Y-%m-%d %H:%M:%S')}; load average {os.getloadavg()[0]:.1f}\n", flush=True)
    parts = args.only or ["readme-first", "readme", "rate", "sweep", "plan"]
    out = {"root": root, "commit": commit, "readme_first": {}, "readme": {}, "rate": {}, "sweep": {}, "plan": {}}
    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    if "readme-first" in parts:
        part_readme_first(root, 3 if args.quick else 5, out)
    if "readme" in parts:
        part_readme(root, 3 if args.quick else 5, rng, out)
    if "rate" in parts:
        part_rate(7 if args.quick else 21, rng, out)
    if "sweep" in parts:
        part_sweep(rng, out, 5 if args.quick else SHARES)
    if "plan" in parts:
        part_plan(3, rng, out)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.1f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
