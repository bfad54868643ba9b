"""Direction of every numeric change between two recordings of benchmarks/compare_rate_grid.py.

    python benchmarks/grid_direction.py BEFORE.json AFTER.json

A change that only tightens the answers is a lower bound that went up or an upper bound that went down. For every
``rate`` call this compares the reported lower and upper and every listed bound present in both files (by name),
and for every ``plan`` the necessary and sufficient sample sizes; it prints the counts of each direction, the
largest relative move against the safe direction, and the bounds found in only one of the two files.
"""
from __future__ import annotations

import json
import sys
from collections import Counter


def _val(b):
    return b.get("value") if isinstance(b, dict) else None


def _rel(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    a, b = (json.load(open(p, encoding="utf-8")) for p in argv[:2])
    count, worst, against = Counter(), {}, []
    for key in sorted(set(a["rate"]) & set(b["rate"])):
        ra, rb = a["rate"][key], b["rate"][key]
        if not (isinstance(ra, dict) and isinstance(rb, dict)):
            count["rate call not a result"] += ra != rb
            continue
        for side, good in (("lower", 1), ("upper", -1)):
            va, vb = _val(ra.get(side)), _val(rb.get(side))
            if isinstance(va, (int, float)) and isinstance(vb, (int, float)) and va != vb:
                ok = (vb - va) * good > 0
                count[f"reported {side} {'tighter' if ok else 'LOOSER'}"] += 1
                if not ok:
                    against.append((key, "reported " + side, va, vb))
            elif (va is None) != (vb is None):
                count[f"reported {side} appeared/disappeared"] += 1
            for bd in ("lowers" if side == "lower" else "uppers",):
                la = {x["name"]: x for x in ra.get(bd) or []}
                lb = {x["name"]: x for x in rb.get(bd) or []}
                count[f"{side} bounds only after"] += len(set(lb) - set(la))
                count[f"{side} bounds only before"] += len(set(la) - set(lb))
                for name in set(la) & set(lb):
                    xa, xb = _val(la[name]), _val(lb[name])
                    ca, cb = la[name].get("certified"), lb[name].get("certified")
                    if ca != cb:
                        count[f"{side} bound certified {ca} -> {cb}"] += 1
                    if isinstance(xa, (int, float)) and isinstance(xb, (int, float)) and xa != xb:
                        ok = (xb - xa) * good > 0
                        tag = f"{side} bound {'tighter' if ok else 'looser'}"
                        count[tag] += 1
                        if not ok:
                            cand = (_rel(xa, xb), (key, name, xa, xb))
                            if tag not in worst or cand[0] > worst[tag][0]:
                                worst[tag] = cand
    for key in sorted(set(a.get("plan", {})) & set(b.get("plan", {}))):
        pa, pb = a["plan"][key], b["plan"][key]
        if pa == pb:
            continue
        count["plan changed"] += 1
        for field, good in (("n_necessary", 1), ("n_sufficient", -1)):
            va, vb = (pa or {}).get(field) if isinstance(pa, dict) else None, (pb or {}).get(field) if isinstance(pb, dict) else None
            if isinstance(va, (int, float)) and isinstance(vb, (int, float)) and va != vb:
                ok = (vb - va) * good > 0
                count[f"plan {field} {'tighter' if ok else 'LOOSER'}"] += 1
                if not ok:
                    against.append((key, field, va, vb))
    for sec in ("check", "render", "table", "convert", "list_problems"):
        sa, sb = a.get(sec, {}), b.get(sec, {})
        if isinstance(sa, dict) and isinstance(sb, dict):
            count[f"{sec} entries changed"] += sum(1 for k in set(sa) & set(sb) if sa[k] != sb[k])
        else:
            count[f"{sec} entries changed"] += int(sa != sb)
    for k, v in sorted(count.items()):
        if v:
            print(f"{k}: {v}")
    for tag, (rel, where) in sorted(worst.items()):
        print(f"largest move of a {tag}: relative {rel:.3g} at {where}")
    for item in against:
        print("AGAINST THE SAFE DIRECTION:", item)
    return 1 if against else 0


if __name__ == "__main__":
    sys.exit(main())
