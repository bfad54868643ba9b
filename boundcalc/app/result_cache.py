"""Whole :func:`boundcalc.rate` and :func:`boundcalc.plan` results, kept by request: a repeated request is read,
not recomputed.

A ``rate`` result is a pure function of the request (problem, privacy model, the parameters exactly as given)
and of the code that computes it: boundcalc's source, Python, numpy, scipy, sympy and mpmath. The store is a
sharded :class:`boundcalc.cache.diskcache.JsonStore` whose file names carry the fingerprint of all of these, so an
entry is read only by the very code that wrote it; a changed line anywhere in the package starts afresh.

- **What is stored.** Only successful results (a request that fails validation raises before anything is
  written), in the exact, eval-free form of :mod:`boundcalc.cache.exprcodec`: expressions node by node, floats bit
  for bit, every field of every :class:`~boundcalc.render.result.BoundValue`, kept as one JSON text (a string value of
  the store). A result is written only if it reads back identical, so a process that reads it prints byte for
  byte what computing would print.
- **The key** is the request before validation: the problem and privacy names and each parameter with its
  Python type and ``repr`` (exact for floats). Two spellings of one request (``n=1000`` and ``n=1000.0``) are
  two keys; that costs a recomputation, never a wrong answer. A parameter that is not a plain number, string,
  bool or None (an array, say) makes the request uncacheable.
- **Why it is keyed before validation.** Reading a stored answer then needs no problem module, no bound
  builder and no solver: a repeated ``boundcalc rate`` costs little more than importing sympy, which every
  answer needs (the expressions are sympy objects).

In one process, results are also kept as objects (:data:`MEMORY_SIZE` of them, least recently used dropped
first); :func:`boundcalc.app.api.rate` hands out copies, so a caller cannot alter a kept result.
"""
from __future__ import annotations

from collections import OrderedDict

#: results kept as objects in one process
MEMORY_SIZE = 256

_MEMORY: OrderedDict = OrderedDict()
_STORE = None


def request_key(kind: str, problem, privacy, params: dict) -> str | None:
    """The text key of a request, or None when a part of it is not a plain value (then nothing is cached)."""
    parts = [kind]
    for value in (problem, privacy):
        if type(value) is not str:
            return None
        parts.append(value)
    for name in sorted(params):
        value = params[name]
        if type(value) not in (str, int, float, bool, type(None)):
            return None
        parts.append((name, type(value).__name__, value))
    return repr(tuple(parts))


def _store():
    global _STORE
    if _STORE is None:
        from ..cache.diskcache import JsonStore

        _STORE = JsonStore("boundcalc.results", sharded=True)
    return _STORE


def load(key: str, kind=None):
    """The result kept for ``key`` (in this process, else on disk), or None. ``kind``: the class the result must be
    (default :class:`~boundcalc.render.result.RateResult`; :func:`boundcalc.app.planning.plan` asks for a
    :class:`~boundcalc.render.plan_result.PlanResult`, whose reading imports no sympy: it holds numbers and text)."""
    hit = _MEMORY.get(key)
    if hit is not None:
        _MEMORY.move_to_end(key)
        return hit
    stored = _store().get(key)
    if type(stored) is not str:  # missing, or not the text this module writes
        return None
    import json

    from ..cache import exprcodec

    if kind is None:
        from ..render.result import RateResult as kind
    try:
        result = exprcodec.decode(json.loads(stored))
    except Exception:  # noqa: BLE001 - an entry that does not read back is recomputed
        return None
    if not isinstance(result, kind):
        return None
    _remember(key, result)
    return result


def save(key: str, result) -> None:
    """Keep ``result`` for ``key``: as an object, and on disk if it reads back identical."""
    from ..cache import exprcodec

    _remember(key, result)
    try:
        data = exprcodec.encode(result, keep=True)  # the bound expressions: written once per process
    except exprcodec.Unencodable:
        return
    if exprcodec.roundtrips(result, data):
        import json

        # kept as one JSON text, not as the nested lists of ``data``: the store holds its values until the process
        # ends, and ~600 lists per result made Python's full garbage collection (40-70 ms in a warm process) come
        # about every 40 new results, inside this call; a string is not tracked by the collector
        try:
            text = json.dumps(data, separators=(",", ":"))
        except (TypeError, ValueError):  # not plain JSON: computed again next time, never stored
            return
        _store().put(key, text)


def _remember(key: str, result) -> None:
    _MEMORY[key] = result
    while len(_MEMORY) > MEMORY_SIZE:
        _MEMORY.popitem(last=False)


def clear() -> None:
    """Forget the results kept in this process (the disk copy, written by this very code, stays valid)."""
    _MEMORY.clear()
    if _STORE is not None:
        _STORE.clear()
