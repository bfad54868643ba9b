"""Study files for ``boundcalc plan --study FILE`` (docs/methods/planning-a-study.md): TOML (``tomllib``; ``tomli`` on
Python 3.10) or JSON, read into the keyword arguments of :func:`boundcalc.app.study.plan_study`. Errors name the
key and, where it can be found, its line."""
from __future__ import annotations

from ..core.errors import InputError

#: keys a study sets once for every statistic (not allowed inside a statistic)
STUDY_LEVEL_KEYS = ("privacy", "eps", "alpha", "delta", "n", "solve", "strategy")


def load_study(path: str) -> dict:
    """Read a study file (TOML, or JSON by its ``.json`` extension or its first character) into the keyword
    arguments of :func:`plan_study` (``statistics``, ``privacy``, ``eps`` ... and ``locate`` for messages)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(1_000_001)
    except OSError as exc:
        raise InputError("study", f"cannot read the study file: {exc.strerror or exc}", path) from None
    if len(raw) > 1_000_000:
        raise InputError("study", "the study file is larger than 1 MB", path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("study", "the study file is not UTF-8 text", path) from None
    is_json = str(path).lower().endswith(".json") or text.lstrip().startswith("{")
    if is_json:
        import json

        try:
            data = json.loads(text, parse_constant=lambda c: c)
        except json.JSONDecodeError as exc:
            raise InputError("study", f"line {exc.lineno}: not valid JSON ({exc.msg})") from None
        locate = _locator(text, json_keys=True)
    else:
        try:
            import tomllib
        except ImportError:  # Python 3.10
            import tomli as tomllib
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError("study", f"not valid TOML: {exc}") from None
        locate = _locator(text, json_keys=False)
    if not isinstance(data, dict):
        raise InputError("study", "the study file must hold one table (privacy, eps, ... and [[statistic]] tables)")
    allowed = set(STUDY_LEVEL_KEYS) | {"statistic", "statistics"}
    for key in data:
        if key not in allowed:
            line = locate.top(key)
            raise InputError("study", (f"line {line}: " if line else "") + f"key {key!r} is not a study key (allowed: "
                             + ", ".join(sorted(allowed - {'statistics'})) + ")", None)
    if "statistic" in data and "statistics" in data:
        raise InputError("study", "give the statistics once, as [[statistic]] tables")
    stats = data.get("statistic", data.get("statistics"))
    if stats is None:
        raise InputError("study", "has no statistic: add [[statistic]] tables with name, problem and target")
    if not isinstance(stats, list):
        raise InputError("study", "key 'statistic' must be a list of tables ([[statistic]] in TOML)")
    out = {k: v for k, v in data.items() if k not in ("statistic", "statistics")}
    for key, val in out.items():
        if isinstance(val, (dict, list)) or isinstance(val, bool):
            line = locate.top(key)
            raise InputError("study", (f"line {line}: " if line else "") + f"key {key!r} must be a number or a word",
                             val)
    out["statistics"] = stats
    out["locate"] = locate
    return out


class _locator:
    """Line numbers of keys in a study file (TOML: the n-th ``[[statistic]]`` block; JSON: the n-th object that
    follows the ``statistic`` key), found by scanning the text; None where not found."""

    def __init__(self, text, json_keys):
        import re

        self.lines = text.splitlines()
        self.json = json_keys
        self.blocks = []
        if json_keys:
            depth, start = 0, None
            for ln, line in enumerate(self.lines, 1):
                for ch in line:
                    if ch == "{":
                        depth += 1
                        if depth == 2:
                            start = ln
                    elif ch == "}":
                        if depth == 2 and start is not None:
                            self.blocks.append((start, ln))
                        depth -= 1
        else:
            heads = [ln for ln, line in enumerate(self.lines, 1) if re.match(r"\s*\[\[\s*statistics?\s*\]\]", line)]
            for j, h in enumerate(heads):
                end = heads[j + 1] - 1 if j + 1 < len(heads) else len(self.lines)
                self.blocks.append((h, end))
        self._re = re

    def _find(self, key, a, b):
        pat = (r'\s*"' + self._re.escape(str(key)) + r'"\s*:') if self.json else \
            (r"\s*" + self._re.escape(str(key)) + r"\s*=")
        for ln in range(a, b + 1):
            if self._re.match(pat, self.lines[ln - 1]) or (self.json and self._re.search(pat, self.lines[ln - 1])):
                return ln
        return None

    def __call__(self, index, key=None):
        if index >= len(self.blocks):
            return None
        a, b = self.blocks[index]
        if key is None:
            return a
        return self._find(key, a, b) or a

    def top(self, key):
        end = self.blocks[0][0] - 1 if self.blocks else len(self.lines)
        return self._find(key, 1, max(end, 1)) if end >= 1 else None
