"""A seeded fuzzer of the command line and the Python API: extreme values for every numeric parameter.

    python benchmarks/fuzz_cli.py                  # 400 calls, seed 0, 10 s CPU per call
    python benchmarks/fuzz_cli.py --calls 50 --seed 3 --limit 5 --json out.json

Each call is ``rate``, ``plan``, ``table`` or ``check`` (at 2-3 repetitions) on a random registered
(problem, privacy) pair, with one to three of its parameters (and the command's own: ``--target``, ``--solve``,
``--reps``, ``--ns``, ``--seed``) set to an extreme value: 0, negative, 5e-324, 1e-300, the edges of the
parameter's range and just beyond, 1e18, 1e19, 1e300, inf, nan, 1j, a 400-digit integer, an empty string, ...
A quarter of the calls go through the Python API with Python objects instead of strings (numpy scalars and
arrays, None, True, complex, Fraction, huge ints).

Command-line calls run :func:`boundcalc.cli.main` in this process (the console script's own code, without a
process start per call). Every call ends as one of:

- ``ok``: an answer (exit 0, or 3 for a check whose simulation ran), whose JSON holds no NaN;
- ``bad-input``: exit 2 with one stderr line naming an option (API: :class:`InputError`);
- ``internal``: exit 1 or any other exception: a bug;
- ``nan``: an answer with NaN in it; ``messy``: exit 2 but not one line naming an option;
- ``slow``: more than ``--limit`` seconds of CPU (a profiling timer stops it).

The last three and ``internal`` are findings; the script prints them and exits 1 when there is any.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import random
import signal
import sys
import time
from fractions import Fraction

#: extreme values tried for a numeric parameter (strings, as typed at the command line)
EXTREMES = ["0", "-0", "-1", "5e-324", "1e-300", "1e-12", "1e-6", "0.5", "0.999999", "1", "2", "3", "7", "1e4",
            "10000.5", "1e6", "1e9", "1e18", "1e19", "1e300", "1e400", "inf", "-inf", "nan", "1j", "", " ", "0x10",
            "1_000", "9" * 400, "2.5", "-1e-300", "1e-320"]
#: Python objects tried through the API
OBJECTS = [None, True, 0, -1, 5e-324, 1e-300, 1e300, float("inf"), float("nan"), 1j, 10 ** 400, Fraction(1, 3), "1",
           b"1", [1, 2], (), {}]


class Slow(BaseException):
    """Raised by the CPU timer (a BaseException: the CLI's own handlers let it through)."""


def _on_timer(signum, frame):
    raise Slow()


def pairs():
    from boundcalc.app import catalog

    out = []
    for name, info in sorted(catalog.problems().items()):
        for priv, entry in info.entries.items():
            out.append((name, priv, entry))
    return out


def _spec_values(spec, rng):
    """An extreme string for one ParamSpec: three times in four one the parameter accepts (its edges, tiny and
    huge values inside its range), else any of the generic list (mostly refused)."""
    if spec.kind == "choice":
        return rng.choice(list(spec.choices) * 3 + ["", "none", "INF", "all", "x" * 300])
    vals = list(EXTREMES)
    for edge in (spec.low, spec.high):
        if edge is not None and math.isfinite(edge):
            for f in (1.0, 1 - 1e-12, 1 + 1e-12):
                vals.append(repr(edge * f))
            vals.append(repr(math.nextafter(edge, math.inf)))
            vals.append(repr(math.nextafter(edge, -math.inf)))
            if spec.kind == "int":
                vals += [str(int(edge)), str(int(edge) + 1), str(int(edge) - 1)]
    valid = []
    for v in vals:
        try:
            spec.parse(v)
            valid.append(v)
        except Exception:  # noqa: BLE001 - refused: not a valid extreme
            pass
    if valid and rng.random() < 0.75:
        return rng.choice(valid)
    return rng.choice(vals)


def cli_call(rng, table):
    from boundcalc.app import catalog

    name, priv, entry = rng.choice(table)
    command = rng.choice(["rate", "rate", "plan", "table", "check"])
    specs = {s.name: s for s in catalog.param_specs(entry)}
    args = [command, "--problem", name]
    if command == "table":
        if rng.random() < 0.3:
            args[-1] = rng.choice(["all", name + ",support", "mean," + name])
        if rng.random() < 0.7:
            args += ["--privacy", priv]
    else:
        args += ["--privacy", priv]
    chosen = rng.sample(sorted(specs), k=min(len(specs), rng.randint(1, 3)))
    if command == "check":
        chosen = [c for c in chosen if c != "n"]
        args += ["--reps", rng.choice(["2", "3"])]
        if rng.random() < 0.5:
            args += ["--ns", rng.choice(["50,100", "2,3", "10,1000", "100,200,400", "2,1e5"])]
        if rng.random() < 0.3:
            args += ["--seed", rng.choice(["0", "9223372036854775807", "1" + "0" * 60, "-1", "1e3"])]
    if command == "plan":
        chosen = [c for c in chosen if c != "n"]
        solve = rng.choice(["n", "n", "eps", "target"])
        if solve != "n":
            args += ["--solve", solve]
        if solve == "eps":
            chosen = [c for c in chosen if c != "eps"]
            args += ["--n", rng.choice(["10", "1000", "1e6", "1e18"])]
        if solve != "target":
            args += ["--target", rng.choice(["0.01", "1e-300", "5e-324", "1e300", "0.5", "1e-3,1e-4", "0", "2"])]
    for c in chosen:
        args += [f"--{c}", _spec_values(specs[c], rng)]
    if command == "rate" and rng.random() < 0.3:
        args.append(rng.choice(["--json", "--latex", "--explain"]))
    if command in ("plan", "check", "table") and rng.random() < 0.3:
        args += ["--format", "json"] if command == "table" else ["--json"]
    return args


def api_call(rng, table):
    import numpy as np

    from boundcalc.app import catalog

    name, priv, entry = rng.choice(table)
    specs = {s.name: s for s in catalog.param_specs(entry)}
    objects = OBJECTS + [np.True_, np.float64("nan"), np.int64(7), np.array([]), np.array([1.0, 2.0, 3.0]),
                         np.array([[1.0], [2.0]]), np.float32(1e-45), np.array(["a"])]
    kw = {}
    for c in rng.sample(sorted(specs), k=min(len(specs), rng.randint(1, 2))):
        if rng.random() < 0.5:
            kw[c] = rng.choice(objects)
        else:  # a valid extreme, as a float (or the choice string)
            v = _spec_values(specs[c], rng)
            try:
                kw[c] = float(v) if specs[c].kind != "choice" else v
            except ValueError:
                kw[c] = v
    fn = rng.choice(["rate", "rate", "evaluate_curve", "plan", "table"])
    return fn, name, priv, kw


def _has_nan(text: str) -> bool:
    return "NaN" in text or "nan" in text.replace("nanosecond", "")


def run_cli(args):
    from boundcalc.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(args))
    text, errs = out.getvalue(), err.getvalue()
    if rc == 1 or "Traceback" in errs:
        return "internal", errs.strip()[-300:]
    if rc == 2:
        lines = errs.strip().splitlines()
        if len(lines) == 1 and "--" in lines[0] and not text:
            return "bad-input", lines[0][:200]
        return "messy", errs[-300:]
    if rc in (0, 3):
        if _has_nan(text):
            return "nan", text[-300:]
        return "ok", ""
    return "internal", f"exit {rc}: {errs[-200:]}"


def run_api(call):
    import boundcalc as bc

    fn, name, priv, kw = call
    try:
        if fn == "rate":
            res = bc.rate(name, priv, **kw)
            text = json.dumps(res.to_dict(), allow_nan=False, default=str)
        elif fn == "evaluate_curve":
            import numpy as np

            res = bc.evaluate_curve(name, priv, **kw)
            text = "nan" if np.isnan(np.asarray(res, float)).any() else "ok"
        elif fn == "plan":
            res = bc.plan(name, priv, target=0.01, **{k: v for k, v in kw.items() if k != "n"})
            text = json.dumps(res.to_dict(), allow_nan=False, default=str)
        else:
            res = bc.table(name, privacies=[priv], **kw)
            text = res.render("json")
    except bc.InputError as exc:
        return "bad-input", str(exc)[:200]
    except ValueError as exc:  # json.dumps(allow_nan=False) of a NaN
        if "Out of range float values" in str(exc):
            return "nan", str(exc)[:200]
        return "internal", f"{type(exc).__name__}: {exc}"[:300]
    except Exception as exc:  # noqa: BLE001 - the fuzzer's job
        return "internal", f"{type(exc).__name__}: {exc}"[:300]
    return ("nan", text[-200:]) if _has_nan(text) else ("ok", "")


def make_calls(calls: int = 400, seed: int = 0, api_share: float = 0.25) -> list:
    """The fuzzed calls: ("cli", argv) or ("api", (function, problem, privacy, kwargs))."""
    rng = random.Random(seed)
    table = pairs()
    out = []
    for _ in range(calls):
        if rng.random() < api_share:
            out.append(("api", api_call(rng, table)))
        else:
            out.append(("cli", cli_call(rng, table)))
    return out


def fuzz(calls: int = 400, seed: int = 0, limit: float = 10.0, api_share: float = 0.25, log=None, plan=None):
    """Run ``calls`` fuzzed calls (or the list ``plan`` of :func:`make_calls`); returns (counts by outcome,
    findings [(outcome, call, detail, cpu)])."""
    plan = make_calls(calls, seed, api_share) if plan is None else plan
    counts: dict = {}
    findings = []
    old = signal.signal(signal.SIGPROF, _on_timer)
    try:
        for i, (kind, call) in enumerate(plan):
            if kind == "api":
                runner = run_api
                shown = f"bc.{call[0]}({call[1]!r}, {call[2]!r}, **{call[3]!r})"
            else:
                runner = run_cli
                shown = "boundcalc " + " ".join(a if a and " " not in a and len(a) < 60 else repr(a[:60]) for a in call)
            # a table of several problems is many rate calls (`table --problem all`: 26 rows, 16 s at its defaults);
            # a check simulates (n d reps draws per instance: d = 1e5 takes its time)
            several = runner is run_cli and call[0] == "table" and ("all" in call or "," in call[2])
            budget = limit * (6 if several else 3 if runner is run_cli and call[0] == "check" else 1)
            t = time.process_time()
            signal.setitimer(signal.ITIMER_PROF, budget)
            try:
                outcome, detail = runner(call)
            except Slow:
                outcome, detail = "slow", f"more than {budget:g} s of CPU"
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            cpu = time.process_time() - t
            counts[outcome] = counts.get(outcome, 0) + 1
            if outcome not in ("ok", "bad-input"):
                findings.append((outcome, shown, detail, cpu))
            if log is not None:
                print(f"{i:4d} {outcome:9s} {cpu:6.2f}s  {shown[:150]}" + (f"\n      {detail}" if
                      outcome not in ("ok", "bad-input") else ""), file=log, flush=True)
    finally:
        signal.signal(signal.SIGPROF, old)
    return counts, findings


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=400)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=float, default=10.0, help="CPU seconds per call (default 10)")
    p.add_argument("--json", help="write the counts and findings to this file")
    p.add_argument("--quiet", action="store_true", help="print only the summary")
    p.add_argument("--save", help="write the generated calls to this file (pickle) and run them")
    p.add_argument("--replay", help="run the calls of this file (from --save), e.g. on another version")
    a = p.parse_args(argv)
    import pickle

    if a.replay:
        with open(a.replay, "rb") as fh:
            plan = pickle.load(fh)
    else:
        plan = make_calls(a.calls, a.seed)
    if a.save:
        with open(a.save, "wb") as fh:
            pickle.dump(plan, fh)
    t = time.process_time()
    counts, findings = fuzz(log=None if a.quiet else sys.stdout, limit=a.limit, plan=plan)
    print(f"\n{len(plan)} calls" + ("" if a.replay else f", seed {a.seed}") + f", {time.process_time() - t:.0f} s CPU: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for outcome, shown, detail, cpu in findings:
        print(f"{outcome}: {shown}\n    {detail} ({cpu:.1f} s)")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"counts": counts, "findings": findings}, fh, indent=1)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
