"""One table of sensible parameters per (problem, privacy) pair, shared by the tests that run over every pair.

Like the parameter tables of scipy.stats' distribution tests (``distcont``) and the cases of statsmodels'
power tests, each pair gets one set of modest values: small n (a few hundred records), small dimensions, and
levels inside the model's range, so that one :func:`boundcalc.rate` call takes about a second at most. The
values differ from the defaults where that is cheap (another dimension, loss, ball, geometry, model), so
that the battery also covers what the defaults do not. ``tests/test_every_pair.py`` checks that this table
holds exactly the pairs :func:`boundcalc.list_problems` lists: a new pair must be added here.

One choice is deliberate: density takes d = 1 (its certified lower bounds are for d = 1). linear/local takes
the l2 geometry, where the best upper bound is the PrivUnit minimiser bound, tuned numerically (once per (d, ε))
and non-increasing in n: the planning round trip checks the latter.

Other modules import :data:`PAIRS` (sorted (problem, privacy) tuples) instead of rebuilding the list.
"""
from __future__ import annotations

#: (problem, privacy) -> keyword arguments of boundcalc.rate (n always given: the planning round trip solves for it)
CASES: dict[tuple[str, str], dict] = {
    ("density", "none"): {"n": 400, "d": 1, "L": 2.0},
    ("density", "pure"): {"n": 400, "d": 1, "L": 1.0, "eps": 0.5},
    ("density", "local"): {"n": 400, "beta": 1.0, "L": 1.0, "eps": 1.0},
    ("gaussian", "local"): {"n": 300, "d": 2, "sigma": 1.0, "B": 1.0, "eps": 2.0},
    ("gaussian", "none"): {"n": 300, "d": 3, "sigma": 2.0, "B": 1.0},
    ("linear", "none"): {"n": 500, "d": 4, "r": 1.0, "M": 1.0, "geometry": "l2"},
    ("linear", "local"): {"n": 500, "d": 4, "r": 1.0, "M": 1.0, "geometry": "l2", "eps": 1.0},
    ("mean", "none"): {"n": 300, "d": 3, "r": 1.0, "k": 4.0},
    ("mean", "pure"): {"n": 500, "d": 2, "r": 1.0, "k": 2.0, "eps": 0.5},
    ("mean", "smooth"): {"n": 500, "d": 1, "r": 1.0, "k": 3.0, "eps": 1.0},
    ("mean", "approx"): {"n": 300, "d": 2, "r": 1.0, "k": 2.0, "eps": 1.0, "delta": 1e-5},
    ("mean", "tv"): {"n": 500, "d": 1, "r": 1.0, "k": 2.0, "alpha": 0.2},
    ("mean", "kl"): {"n": 500, "d": 2, "r": 1.0, "k": 2.0, "alpha": 0.5},
    ("mean", "local"): {"n": 500, "d": 2, "r": 1.0, "k": 2.0, "ball": "linf", "eps": 1.0},
    ("multinomial", "local"): {"n": 1000, "d": 5, "loss": "l1", "eps": 2.0},
    ("multinomial", "none"): {"n": 300, "d": 5, "loss": "l2sq"},
    ("point", "none"): {"n": 400, "model": "poisson"},
    ("point", "pure"): {"n": 400, "model": "bernoulli", "eps": 1.0},
    ("point", "approx"): {"n": 400, "model": "normal-mean", "eps": 1.0, "delta": 1e-6},
    ("sparse-bernoulli", "local"): {"n": 1000, "d": 10, "s": 2.0, "eps": 2.0},
    ("sparse-bernoulli", "none"): {"n": 300, "d": 10, "s": 2.0},
    ("support", "none"): {"n": 300, "theta0": 1.0, "loss": "squared"},
    ("support", "pure"): {"n": 300, "theta0": 1.0, "loss": "abs", "eps": 1.0},
    ("support", "approx"): {"n": 300, "theta0": 2.0, "loss": "abs", "eps": 1.0, "delta": 1e-6},
    ("support", "tv"): {"n": 300, "theta0": 1.0, "loss": "abs", "alpha": 0.2},
    ("support", "kl"): {"n": 300, "theta0": 1.0, "loss": "squared", "alpha": 1.0},
}

#: every (problem, privacy) pair, sorted
PAIRS: list[tuple[str, str]] = sorted(CASES)


def ids(pairs=PAIRS) -> list[str]:
    """pytest ids "problem/privacy"."""
    return [f"{p}/{q}" for p, q in pairs]
