"""Before/after guard for restructurings: every number boundcalc prints must stay exactly the same.

    python benchmarks/compare_rate_grid.py OUT.json            # record rate/plan/table/check/convert
    python benchmarks/compare_rate_grid.py --compare A.json B.json
    python benchmarks/compare_rate_grid.py --direction A.json B.json   # after a tightening


The grid covers every registered (problem, privacy) pair at its defaults and at a few parameter points
(n, the privacy level, d, and every value of each choice parameter such as k, loss, model, geometry),
plus a few ``plan``, ``table``, ``convert`` and seeded ``check`` calls. The output is canonical JSON
(sorted keys; floats written with ``repr``, so they round-trip exactly). ``--compare`` flattens both
files to ``path -> value`` and reports every path whose value differs (exact equality, floats
included), every path present in only one file, and the counts; it exits 1 when anything differs.
"""
from __future__ import annotations

import argparse
import json
import math
import sys


def _level_points(privacy):
    if privacy == "none":
        return [{}]
    if privacy == "tv":
        return [{"eps": 0.05}, {"eps": 0.5}]
    if privacy == "approx":
        return [{"eps": 0.1, "delta": 1e-6}, {"eps": 1.0, "delta": 1e-9}, {"eps": 4.0, "delta": 1e-3}]
    return [{"eps": 0.1}, {"eps": 1.0}, {"eps": 4.0}]


def _points(problem, privacy, specs):
    """Parameter points for one (problem, privacy): defaults, each choice value, n, level, d grid."""
    names = {s.name: s for s in specs}
    pts = [{}]
    for s in specs:
        if s.kind == "choice":
            pts += [{s.name: c} for c in s.choices if c != s.default]
    for n in (10, 10**4, 10**7):
        pts.append({"n": n})
    for lv in _level_points(privacy):
        pts.append(dict(lv))
    if "d" in names:
        for d in (1, 5, 100):
            pts.append({"d": d})
    if "k" in names:
        for k in (1.5, 4, "inf"):
            pts.append({"k": k})
            pts.append({"k": k, "n": 10**6, "d": 10, **_level_points(privacy)[0]})
    # a mixed point per choice value: large n, small level
    for s in specs:
        if s.kind == "choice":
            for c in s.choices:
                pts.append({s.name: c, "n": 10**5, **_level_points(privacy)[0]})
    out, seen = [], set()
    for p in pts:
        key = json.dumps(p, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def _call(fn):
    """The call's dict, or the error it raises (an error is an outcome that must not change either)."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - recorded, compared
        return {"error": type(exc).__name__, "message": str(exc)}


def record() -> dict:
    import boundcalc as bc
    from boundcalc.core import bounds as registry

    out = {"rate": {}, "plan": {}, "table": {}, "convert": {}, "check": {}, "list_problems": None}
    out["list_problems"] = _call(lambda: bc.list_problems())
    for name, info in sorted(registry.problems().items()):
        for privacy, entry in info.entries.items():
            specs = registry.param_specs(entry)
            for p in _points(name, privacy, specs):
                key = f"{name}|{privacy}|{json.dumps(p, sort_keys=True)}"
                out["rate"][key] = _call(lambda: bc.rate(name, privacy, **p).to_dict())
    plans = [
        ("mean", "pure", {"target": 0.01}),
        ("mean", "approx", {"target": "0.01,0.001", "d": 10}),
        ("mean", "local", {"target": 0.05}),
        ("mean", "pure", {"solve": "eps", "target": 0.01, "n": 10**5}),
        ("mean", "kl", {"solve": "target", "n": 10**4}),
        ("support", "pure", {"target": 0.001}),
        ("multinomial", "local", {"target": 0.01, "d": 20}),
        ("point", "approx", {"target": 0.01, "model": "bernoulli"}),
        ("linear", "local", {"target": 0.1, "d": 3}),
        ("density", "pure", {"target": 0.01}),
    ]
    for problem, privacy, kw in plans:
        key = f"{problem}|{privacy}|{json.dumps(kw, sort_keys=True)}"
        out["plan"][key] = _call(lambda: bc.plan(problem, privacy, **kw).to_dict())
    tables = [
        ("mean", {}),
        ("mean", {"n": 10**5, "eps": 0.5, "d": 10, "k": 4}),
        ("support", {"loss": "squared"}),
        ("point", {"model": "poisson"}),
        ("all", {}),
    ]
    for problem, kw in tables:
        key = f"{problem}|{json.dumps(kw, sort_keys=True)}"
        out["table"][key] = _call(lambda: bc.table(problem, **kw).to_dict())
    converts = [("pure", "approx", {"eps": 1.0}), ("approx", "kl", {"eps": 1.0, "delta": 1e-6}),
                ("smooth", "tv", {"eps": 0.5}), ("pure", "testing", {"eps": 0.3, "group": 3}),
                ("local", "pure", {"eps": 2.0}), ("kl", "tv", {"eps": 0.2})]
    for a, b, kw in converts:
        key = f"{a}|{b}|{json.dumps(kw, sort_keys=True)}"
        out["convert"][key] = _call(lambda: bc.convert(a, b, **kw).to_dict())
    for name, info in sorted(registry.problems().items()):
        for privacy, entry in info.entries.items():
            if entry.check is None:
                continue
            key = f"{name}|{privacy}"
            out["check"][key] = _call(lambda: bc.check(name, privacy, reps=12, seed=3, ns=[50, 400]).to_dict())
    # further mechanisms (other dimensions, losses, families): each check's other branches
    more = [("gaussian", "local", {"d": 3}), ("gaussian", "local", {"d": 40, "eps": 4.0}),
            ("mean", "local", {"d": 3}), ("mean", "local", {"d": 3, "ball": "linf"}),
            ("mean", "local", {"d": 50, "eps": 4.0}), ("mean", "approx", {"d": 3, "k": "inf"}),
            ("mean", "pure", {"k": 4, "eps": 0.1}), ("multinomial", "local", {"loss": "l1", "d": 5}),
            ("multinomial", "local", {"d": 50, "eps": 3.0}), ("sparse-bernoulli", "local", {"d": 40, "s": 5, "eps": 4.0}),
            ("support", "pure", {"loss": "squared", "eps": 0.1}), ("support", "none", {"loss": "squared"}),
            ("density", "local", {"mechanism": "hist-rr"}), ("density", "local", {"mechanism": "series-linf"}),
            ("density", "local", {"mechanism": "series-laplace", "family": "sobolev", "beta": 2.0}),
            ("density", "local", {"mechanism": "uniform"}), ("density", "pure", {"d": 2}),
            ("linear", "local", {"geometry": "l1", "d": 4}), ("linear", "local", {"d": 4}),
            ("point", "approx", {"model": "bernoulli"}), ("point", "pure", {"model": "normal-mean"})]
    for name, privacy, kw in more:
        key = f"{name}|{privacy}|{json.dumps(kw, sort_keys=True)}"
        out["check"][key] = _call(lambda: bc.check(name, privacy, reps=12, seed=5, ns=[60, 600], **kw).to_dict())
    # rendered outputs (what the CLI prints), as text
    out["render"] = {}
    for problem, kw in tables:
        for fmt in ("text", "latex", "markdown", "csv", "json"):
            key = f"table|{problem}|{fmt}|{json.dumps(kw, sort_keys=True)}"
            out["render"][key] = _call(lambda: bc.table(problem, **kw).render(fmt))
    for name, privacy, kw in [("mean", "approx", {"k": 4}), ("mean", "local", {"d": 3}), ("point", "pure", {}),
                              ("support", "tv", {}), ("density", "local", {}), ("multinomial", "local", {})]:
        key = f"rate|{name}|{privacy}|{json.dumps(kw, sort_keys=True)}"
        out["render"][key + "|text"] = _call(lambda: bc.rate(name, privacy, **kw).to_text())
        out["render"][key + "|latex"] = _call(lambda: bc.rate(name, privacy, **kw).to_latex())
    for problem, privacy, kw in plans[:4]:
        key = f"plan|{problem}|{privacy}|{json.dumps(kw, sort_keys=True)}"
        out["render"][key] = _call(lambda: bc.plan(problem, privacy, **kw).to_text())
    for a, b, kw in converts:
        key = f"convert|{a}|{b}|{json.dumps(kw, sort_keys=True)}"
        out["render"][key] = _call(lambda: bc.convert(a, b, **kw).to_text())
    for name, privacy in [("mean", "pure"), ("support", "approx"), ("linear", "local")]:
        text = _call(lambda: bc.check(name, privacy, reps=12, seed=3, ns=[50, 400]).to_text())
        if isinstance(text, str):  # the last line carries the wall-clock time
            text = text.rsplit("\n", 1)[0]
        out["render"][f"check|{name}|{privacy}"] = text
    return out


VOLATILE = {"elapsed_seconds"}  # wall-clock timings: not results


def _flatten(obj, path, out):
    if isinstance(obj, dict):
        for k in sorted(obj):
            if k in VOLATILE:
                continue
            _flatten(obj[k], f"{path}/{k}", out)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _flatten(v, f"{path}[{i}]", out)
    else:
        out[path] = obj
    return out


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def compare(path_a: str, path_b: str, show: int = 40) -> int:
    with open(path_a, encoding="utf-8") as fa, open(path_b, encoding="utf-8") as fb:
        a = _flatten(json.load(fa), "", {})
        b = _flatten(json.load(fb), "", {})
    only_a = sorted(set(a) - set(b))
    only_b = sorted(set(b) - set(a))
    common = sorted(set(a) & set(b))
    diff = [k for k in common if not _same(a[k], b[k])]
    numeric = sum(1 for k in common if isinstance(a[k], (int, float)) and not isinstance(a[k], bool))
    for k in diff[:show]:
        print(f"DIFF {k}: {a[k]!r} != {b[k]!r}")
    for k in only_a[:show]:
        print(f"ONLY IN A {k}: {a[k]!r}")
    for k in only_b[:show]:
        print(f"ONLY IN B {k}: {b[k]!r}")
    print(f"compared {len(common)} values ({numeric} numbers); differing {len(diff)}; "
          f"only in A {len(only_a)}; only in B {len(only_b)}")
    return 1 if (diff or only_a or only_b) else 0


def _direction_of(path: str) -> str | None:
    """Which way a better certified answer moves the value at ``path``: "up", "down" or None (not a bound)."""
    if "/check/" in path or path.startswith("/check"):
        return None  # simulated rows: their bounds follow the rate calls, their draws are not bounds
    if "/plan/" in path or path.startswith("/plan"):
        # a plan's bound values are taken at its n necessary / n sufficient, which move: only the n's compare
        return "up" if path.endswith("/n_necessary") else "down" if path.endswith("/n_sufficient") else None
    if path.endswith("/lower/value"):
        return "up"
    if path.endswith("/upper/value") or path.endswith("/ratio"):
        return "down"
    return None


def _key_table_rows(data: dict) -> dict:
    """Table rows keyed by (problem, privacy, mechanism) instead of position, so an added row moves nothing."""
    for table in data.get("table", {}).values():
        rows = table.get("rows")
        if isinstance(rows, list):
            table["rows"] = {f"{r.get('problem')}|{r.get('privacy')}|{r.get('k', '')}|{i_same}": r
                             for i_same, r in _numbered(rows)}
            for r in table["rows"].values():
                for side in ("lower", "upper"):
                    if side in r and not isinstance(r[side], dict):
                        r[f"{side}/value"] = r.pop(side)
    return data


def _numbered(rows):
    """(occurrence number of the row's (problem, privacy, k) so far, row)."""
    seen = {}
    for r in rows:
        key = (r.get("problem"), r.get("privacy"), r.get("k"))
        seen[key] = seen.get(key, 0) + 1
        yield seen[key], r


def direction(path_a: str, path_b: str, show: int = 40) -> int:
    """After a tightening: every best lower bound (and n necessary) may only go up, every best upper bound
    (ratio, n sufficient) only down; reports the counts each way and every move the wrong way."""
    with open(path_a, encoding="utf-8") as fa, open(path_b, encoding="utf-8") as fb:
        a = _flatten(_key_table_rows(json.load(fa)), "", {})
        b = _flatten(_key_table_rows(json.load(fb)), "", {})
    counts = {"better": 0, "worse": 0, "same": 0, "other numeric changes": 0, "became null": 0,
              "became a number": 0}
    worse = []
    for k in sorted(set(a) & set(b)):
        want = _direction_of(k)
        x, y = a[k], b[k]
        if want is None:
            if not _same(x, y) and isinstance(x, (int, float)) and not isinstance(x, bool):
                counts["other numeric changes"] += 1
            continue
        if _same(x, y):
            counts["same"] += 1
        elif x is None or y is None:
            # a lower that appears (None -> number) or an upper that appears is better; a lost one is worse
            key = "became a number" if y is not None else "became null"
            counts[key] += 1
            if y is None:
                worse.append((k, x, y))
        elif (want == "up" and y > x) or (want == "down" and y < x):
            counts["better"] += 1
        else:
            counts["worse"] += 1
            worse.append((k, x, y))
    for k, x, y in worse[:show]:
        print(f"WORSE {k}: {x!r} -> {y!r}")
    print("; ".join(f"{name} {c}" for name, c in counts.items()))
    return 1 if worse else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", help="file to write the canonical JSON to")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two recorded files")
    ap.add_argument("--direction", nargs=2, metavar=("A", "B"),
                    help="after a tightening: lower bounds only up, upper bounds only down")
    args = ap.parse_args(argv)
    if args.direction:
        return direction(*args.direction)
    if args.compare:
        return compare(*args.compare)
    if not args.out:
        ap.error("give OUT.json or --compare A B")
    data = record()
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(data, f, sort_keys=True, indent=0, allow_nan=True)
    n = len(_flatten(data, "", {}))
    print(f"wrote {args.out}: {len(data['rate'])} rate calls, {n} values")
    return 0


if __name__ == "__main__":
    sys.exit(main())
