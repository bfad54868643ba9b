"""One table of sensible parameters per (problem, privacy) pair, shared by the tests that run over every pair.

Like the parameter tables of scipy.stats' distribution tests (``distcont``) and the cases of statsmodels'
power tests, each pair gets one set of modest values: small n (a few hundred records), small dimensions, and
levels inside the model's range, so that one :func:`boundcalc.rate` call takes about a second at most. The
values live next to the code, as the ``examples`` class attribute of each problem's
:class:`boundcalc.core.bounds.Problem` subclass (keyed by privacy model); this module only collects them, so a
new problem brings its own. ``tests/test_every_pair.py`` checks that this table holds exactly the pairs
:func:`boundcalc.list_problems` lists, so a problem without examples for one of its models fails there.

Other modules import :data:`PAIRS` (sorted (problem, privacy) tuples) instead of rebuilding the list.
"""
from __future__ import annotations

from boundcalc.app import catalog


def _collect() -> dict:
    out = {}
    for name, info in catalog.problems().items():
        for problem in info.definitions:
            for privacy in problem.privacies:
                example = problem.per_privacy(problem.examples, privacy)
                if example is not None:
                    out[(name, privacy)] = dict(example)
    return out


#: (problem, privacy) -> keyword arguments of boundcalc.rate (n always given: the planning round trip solves for it)
CASES: dict[tuple[str, str], dict] = _collect()

#: every (problem, privacy) pair, sorted
PAIRS: list[tuple[str, str]] = sorted(CASES)


def ids(pairs=PAIRS) -> list[str]:
    """pytest ids "problem/privacy"."""
    return [f"{p}/{q}" for p, q in pairs]
