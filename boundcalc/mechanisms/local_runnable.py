"""Runnable ε-LDP randomizers of the local problems (docs/methods/local-randomizers.md).

Each class here is the mechanism behind a certified upper bound of a local problem, tuned at the solver's
parameters, as an object a user runs on records: the client side ``privatize(record, rng)`` /
``privatize_all(records, rng)``, the server side ``estimate(reports)``, the exact channel ``channel()`` where the
output set is finite, and ``simulate(distribution, n, rng, reps)``, the fast path that the problem's ``check``
runs (the exact law of the reports' sufficient statistic, or the same per-user code in a loop).

``check_privacy()`` re-derives the privacy level independently of the code that builds the mechanism:
exact likelihood ratios for finite output sets (``max_{y,x,x'} Q[y|x]/Q[y|x']``, compared with e^ε with a
relative margin of 1e-9 for the floating-point rounding of the probabilities), and for continuous outputs the
calibration formula evaluated afresh (Laplace: sensitivity/scale; ℓ2 sampling and PrivUnit: the ratio of the
two density levels on the sphere).

These are numpy reference implementations: they are not hardened against floating-point attacks on the noise.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..core.errors import InputError
from .large_eps import flip_probability, release_level
from .runnable import LOCAL_NEIGHBOURS, Guarantee, LocalMechanism, as_rng, no_mechanism

#: relative margin on e^ε for likelihood ratios computed from float64 probabilities (rounding only: a real
#: violation, such as the e^ε + 1 of the 'both halves' ℓ∞ sampling variant, is many orders larger)
RATIO_MARGIN = 1e-9
#: finite channels are enumerated up to this many outputs (beyond, the ratio is computed per output class)
CHANNEL_LIMIT = 5000


def _ratio_verdict(log_ratio: float, eps: float, method: str, **more) -> dict:
    ok = bool(math.isfinite(log_ratio) or log_ratio == -math.inf) and log_ratio <= eps + math.log1p(RATIO_MARGIN)
    return {"method": method, "passed": ok, "eps": float(eps), "log_ratio": float(log_ratio),
            "ratio": float(math.exp(min(log_ratio, 700.0))), **more}


def channel_log_ratio(Q) -> float:
    """log max_{y,x,x'} Q[y,x]/Q[y,x'] of a channel matrix Q[y, x] (rows: outputs, columns: inputs).
    +inf if an output has probability 0 under one input and not under another."""
    Q = np.asarray(Q, float)
    if Q.ndim != 2 or not np.all(np.isfinite(Q)) or np.any(Q < 0):
        return math.inf
    hi, lo = Q.max(axis=1), Q.min(axis=1)
    used = hi > 0
    if np.any(lo[used] == 0):
        return math.inf
    return float(np.max(np.log(hi[used]) - np.log(lo[used]))) if used.any() else 0.0


def _finite_records(records, name="records") -> np.ndarray:
    try:
        x = np.asarray(records, dtype=float)
    except (TypeError, ValueError):
        raise InputError(name, "must be a numeric array", type(records).__name__) from None
    if x.dtype == object or not np.all(np.isfinite(x)):
        raise InputError(name, "must be finite numbers (no NaN or infinity)")
    return x


class LocalRandomizer(LocalMechanism):
    """Common parts of the local randomizers: attributes, the guarantee, rng handling, ``privatize``."""

    problem = ""
    #: the shape of one record: () (a scalar or a symbol) or (d,)
    record_ndim = 0
    #: True for the estimators that use no data (their reports are empty)
    no_data = False

    def __init__(self, *, problem: str, label: str, name: str, eps: float, n: int, certified_risk,
                 parameters: dict, notes: tuple = (), values: dict | None = None, level: float | None = None):
        """``eps``: the level claimed (the guarantee); ``level``: the level the randomizer is released at, at most
        ``eps`` (:func:`boundcalc.mechanisms.large_eps.release_level`; default ``eps``)."""
        level = float(eps) if level is None else float(level)
        if level < float(eps):
            notes = tuple(notes) + (f"released at ε' = {level:.6g} < ε = {float(eps):.6g}: in float64 randomized "
                                    "response at more than about 36.7 would never flip (docs/methods/"
                                    "local-randomizers.md, \"Very large ε\"); an ε'-LDP mechanism is ε-LDP",)
        super().__init__(problem, "local", label, parameters, Guarantee("local", float(eps), None, LOCAL_NEIGHBOURS),
                         certified_risk, n, reference=True, bound=name, notes=tuple(notes) + self.default_notes(),
                         values=values)
        self.eps = level

    def default_notes(self) -> tuple:
        """What a user should know about the records this randomizer accepts (domain, clamping)."""
        return ()

    def _records(self, records) -> np.ndarray:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def privatize(self, record, rng=None):
        """One user's report (the same code as :meth:`privatize_all` on one record)."""
        x = np.asarray(record)
        if x.ndim != self.record_ndim:
            what = "a single value" if self.record_ndim == 0 else f"one vector of length {self.parameters.get('d')}"
            raise InputError("record", f"must be {what} (give many records to privatize_all)", x.shape)
        return self.privatize_all(x[None, ...], rng)[0]

    def channel(self):
        return None

    def check_privacy(self) -> dict:
        """The privacy level re-derived from the mechanism's calibration (see :meth:`_privacy`: exact likelihood
        ratios of the finite channel, or the calibration formula re-evaluated), compared with the level the
        guarantee claims: ``passed`` when the worst log likelihood ratio is at most ε (relative margin
        :data:`RATIO_MARGIN` for float rounding)."""
        out = dict(self._privacy())
        claim = float(self.guarantee.eps)
        lr = out.get("log_ratio")
        if lr is None:
            lr = math.log(out["ratio"]) if out.get("ratio", 0) > 0 else math.inf
        out.update(eps=claim, log_ratio=float(lr),
                   passed=bool(out["passed"]) and lr <= claim + math.log1p(RATIO_MARGIN))
        return out

    def _privacy(self) -> dict:
        Q = self.channel()
        if Q is None:
            raise NotImplementedError
        return _ratio_verdict(channel_log_ratio(Q), self.eps, "exact likelihood ratios of the finite channel",
                              outputs=int(np.asarray(Q).shape[0]))


# ============================================================================== multinomial (discrete.py)

class DiscreteRandomizer(LocalRandomizer):
    """k-RR, randomized response on the one-hot vector, Laplace on the one-hot vector or subset selection
    (:mod:`boundcalc.mechanisms.discrete`), with the unbiased linear estimator, optionally projected onto the
    simplex (``project``). A record is a symbol index in {0, …, d-1}; any other value is refused."""

    problem = "multinomial"
    #: randomized responses composed per family (release_level: randomized response on the one-hot vector is two
    #: bits at ε/2; Laplace noise is calibrated exactly at every ε)
    RELEASES = {"krr": 1, "subset": 1, "rr": 2, "laplace": math.inf}

    def __init__(self, kind: str, d: int, eps: float, s: int | None = None, project: bool = False, **kw):
        from . import discrete as DM

        self.family, self.d, self.s, self.project = kind, int(d), (None if s is None else int(s)), bool(project)
        e = release_level(eps, self.RELEASES[kind])
        params = {"d": self.d, "eps": e}
        if kind == "subset":
            params["s_sub"] = self.s
        if kind == "laplace":
            params["scale"] = 2.0 / e
        super().__init__(eps=eps, level=e, parameters={**params, **kw.pop("parameters", {})}, **kw)
        self._DM = DM
        if kind == "krr":
            D = math.exp(min(e, 700.0)) + self.d - 1
            self.keep = math.exp(min(e, 700.0)) / D if e < 700 else 1.0 - (self.d - 1) * math.exp(-e)
            self.a, self.b = self.keep, 1.0 / D
        elif kind == "rr":
            self.q = 1.0 / (1.0 + math.exp(-e / 2))
        elif kind == "subset":
            from .subset_tail import subset_constants

            self.ps, self.qs, self.D = subset_constants(e, self.d, self.s)

    # ---------------------------------------------------------------- client
    def default_notes(self):
        return (f"records: symbol indices 0..{self.d - 1} (an array of shape (n,)); any other value is refused",
                "reports: " + {"krr": "one symbol index per user", "rr": "a 0/1 vector of length d per user",
                               "laplace": "a real vector of length d per user",
                               "subset": "a boolean membership vector of length d per user (an s-subset)"}[self.family])

    def _records(self, records) -> np.ndarray:
        x = _finite_records(records)
        if x.ndim != 1:
            raise InputError("records", "must be a one-dimensional array of symbol indices 0..d-1", x.shape)
        if x.size and (np.any(x != np.round(x)) or x.min() < 0 or x.max() > self.d - 1):
            raise InputError("records", f"must be symbol indices (integers) in 0..{self.d - 1}")
        return x.astype(np.int64)

    def privatize_all(self, records, rng=None):
        """Reports of n users: k-RR an int array (n,); RR a 0/1 array (n, d); Laplace a float array (n, d);
        subset selection a boolean membership array (n, d)."""
        x = self._records(records)
        rng = as_rng(rng)
        n, d = x.size, self.d
        if self.family == "krr":
            keep = rng.random(n) < self.keep
            other = (x + rng.integers(1, d, size=n)) % d  # uniform over the other d-1 symbols
            return np.where(keep, x, other)
        onehot = np.zeros((n, d))
        onehot[np.arange(n), x] = 1.0
        if self.family == "rr":
            keep = rng.random((n, d)) < self.q
            return np.where(keep, onehot, 1.0 - onehot).astype(np.int8)
        if self.family == "laplace":
            return onehot + rng.laplace(0.0, 2.0 / self.eps, size=(n, d))
        # subset selection: the true symbol is in the subset w.p. p*; the other members are the smallest of
        # d-1 i.i.d. uniform keys (a uniform (s-1)- or s-subset of the other symbols)
        inc = rng.random(n) < self.ps
        keys = rng.random((n, d))
        keys[np.arange(n), x] = np.inf
        member = self._DM.smallest_members(keys, np.where(inc, self.s - 1, self.s))
        member[np.arange(n), x] = inc
        return member

    # ---------------------------------------------------------------- server
    def _linear(self, reports) -> np.ndarray:
        R = np.asarray(reports)
        d = self.d
        if self.family == "krr":
            x = _finite_records(R, "reports")
            if x.ndim != 1 or (x.size and (np.any(x != np.round(x)) or x.min() < 0 or x.max() > d - 1)):
                raise InputError("reports", f"must be k-RR reports: symbol indices 0..{d - 1}, one per user")
            if x.size == 0:
                raise InputError("reports", "must hold at least one report")
            T = np.bincount(x.astype(np.int64), minlength=d)
            return (T / x.size - self.b) / (self.a - self.b)
        x = _finite_records(R, "reports")
        if x.ndim != 2 or x.shape[1] != d or x.shape[0] == 0:
            raise InputError("reports", f"must be an array (n, {d}) of reports, n >= 1", x.shape)
        mean = x.mean(axis=0)
        if self.family == "rr":
            return (mean - (1 - self.q)) / (2 * self.q - 1)
        if self.family == "laplace":
            return mean
        return (mean - self.qs) / self.D

    def estimate(self, reports):
        """θ̂ (d,): the unbiased linear estimate (projected onto the simplex for the projected bounds)."""
        est = self._linear(reports)
        return self._DM.project_simplex(est)[0] if self.project else est

    def simulate(self, distribution, n, rng, reps):
        """``reps`` estimates (reps, d) from n users drawn from θ = ``distribution``: the exact law of the
        released counts (:func:`boundcalc.mechanisms.discrete.estimate`), then the same post-processing."""
        theta = np.asarray(distribution, float)
        est = self._DM.estimate(self.family, theta, int(n), self.eps, int(reps), as_rng(rng), s=self.s)
        return self._DM.project_simplex(est) if self.project else est

    # ---------------------------------------------------------------- channel and privacy
    def _outputs(self) -> int:
        if self.family == "krr":
            return self.d
        if self.family == "rr":
            return 2 ** self.d if self.d < 60 else math.inf
        if self.family == "subset":
            return math.comb(self.d, self.s)
        return math.inf

    def channel(self):
        """Q[y, x] = P(report y | symbol x) over the enumerated outputs (k-RR: the d symbols; RR: the 2^d bit
        vectors; subset selection: the s-subsets in lexicographic order); None for Laplace (continuous) or when
        the outputs number more than :data:`CHANNEL_LIMIT`."""
        if self.family == "laplace" or self._outputs() > CHANNEL_LIMIT:
            return None
        Q, _ = self._DM.channel(self.family, self.d, self.eps, self.s)
        return Q.T

    def _privacy(self) -> dict:
        if self.family == "laplace":
            # one-hot vectors of two symbols differ by 2 in ℓ1; Laplace(b) per coordinate gives level 2/b
            b = self.parameters["scale"]
            return _ratio_verdict(2.0 / b, self.eps, "calibration: ℓ1 sensitivity 2 of the one-hot vector / "
                                  "Laplace scale", sensitivity=2.0, scale=b)
        if self._outputs() <= CHANNEL_LIMIT:
            return super()._privacy()
        # exact rational arithmetic on the float probabilities, per class of outputs
        e = Fraction(math.exp(self.eps)) if self.eps < 700 else None
        if self.family == "rr":
            # one output bit per symbol; two inputs differ in two bits, each contributing q/(1-q)
            q = Fraction(self.q)
            ratio = (q / Fraction(flip_probability(self.eps / 2))) ** 2  # 1 - q taken directly (large ε)
            method = "exact ratio per output bit (two one-hot vectors differ in two bits), rational arithmetic"
        else:
            # every s-subset has probability e^ε/Z (contains x) or 1/Z (does not), Z the same for every x
            Z = math.comb(self.d - 1, self.s - 1) * e + math.comb(self.d - 1, self.s)
            ratio = (e / Z) / (1 / Z)
            method = "exact ratio of the two probability levels of an s-subset, rational arithmetic"
        if e is not None and ratio <= e * (1 + Fraction(RATIO_MARGIN)):
            return {"method": method, "passed": True, "eps": self.eps, "ratio": float(ratio)}
        return _ratio_verdict(math.log(float(ratio)), self.eps, method)


class UniformEstimator(LocalRandomizer):
    """θ̂ = the uniform distribution: uses no data (every report is empty, the channel has one output)."""

    problem = "multinomial"
    no_data = True

    def __init__(self, d: int, eps: float, **kw):
        self.d = int(d)
        super().__init__(eps=eps, parameters={"d": self.d}, **kw)

    def _records(self, records):
        return DiscreteRandomizer._records(self, records)

    def privatize_all(self, records, rng=None):
        x = self._records(records)
        return np.zeros((x.size, 0))

    def estimate(self, reports):
        return np.full(self.d, 1.0 / self.d)

    def simulate(self, distribution, n, rng, reps):
        return np.tile(self.estimate(None), (int(reps), 1))

    def channel(self):
        return np.ones((1, self.d))


def _build(problem: str, table: dict, values: dict, upper, **extra) -> LocalRandomizer:
    """The randomizer of ``upper`` from a problem's table {bound name: builder(c)}; ``c`` holds the values, the
    bound's free parameters and the common keyword arguments (InputError for a bound without a builder)."""
    from types import SimpleNamespace

    builder = table.get(upper.name)
    if builder is None:
        raise no_mechanism(problem, "local", upper.label)
    v = values
    c = SimpleNamespace(v=v, free=dict(upper.free_parameters), eps=float(v["eps"]), n=int(v["n"]),
                        d=int(v["d"]) if "d" in v else 1, name=upper.name, **extra,
                        common=dict(problem=problem, label=upper.label, name=upper.name, n=int(v["n"]),
                                    certified_risk=upper.value, values=values))
    return builder(c)


def _projected_subset(route: str):
    def build(c):
        from . import subset_tail as ST

        s_ = int(ST.best(route, c.n, c.eps, c.d, c.v["loss"])[1])  # the size chosen inside the certified computation
        return DiscreteRandomizer("subset", c.d, c.eps, s=s_, project=True, **c.common)
    return build


def _subset_l1_mad(c):
    from . import discrete as DM

    s_ = int(DM.subset_l1_mad(c.n, c.eps, c.d)[1])  # the size chosen inside the certified computation
    return DiscreteRandomizer("subset", c.d, c.eps, s=s_, **c.common)


def _discrete(kind: str):
    return lambda c: DiscreteRandomizer(kind, c.d, c.eps, s=(int(c.free["s_sub"]) if "s_sub" in c.free else None),
                                        **c.common)


#: multinomial upper bound -> its randomizer
MULTINOMIAL = {"uniform": lambda c: UniformEstimator(c.d, c.eps, **c.common),
               **{k: _discrete(k) for k in ("rr", "laplace", "krr", "subset")},
               "subset-projected": _projected_subset("max"),
               "subset-projected-threshold": _projected_subset("threshold"),
               "subset-l1-mad": _subset_l1_mad}


def multinomial_mechanism(values: dict, upper, bound=None) -> LocalRandomizer:
    """The randomizer of a multinomial upper bound (the hook ``Multinomial.mechanism_local``)."""
    return _build("multinomial", MULTINOMIAL, values, upper)


# ============================================================================== local mean (local_scalar.py, sampling.py, privunit.py)

class ScalarRandomizer(LocalRandomizer):
    """One truncated scalar: truncation at T then one-bit, Laplace(2T/ε) or quantised (2m+1)-RR
    (:mod:`boundcalc.mechanisms.local_scalar`). Records are real numbers; values outside [-T, T] are truncated
    to [-T, T] (that is the mechanism: the certified risk accounts for its bias). The estimate is the mean of the
    unbiased reports times the shrinkage factor ``shrink`` = 1 - σ (1: the plain mean; post-processing)."""

    problem = "mean"

    def __init__(self, kind: str, T: float, eps: float, m: int = 1, shrink: float = 1.0, **kw):
        self.family, self.T, self.m, self.shrink = kind, float(T), int(m), float(shrink)
        e = release_level(eps, math.inf if kind == "laplace" else 1)
        params = {"T": self.T, "eps": e, **({"shrink_factor": self.shrink} if self.shrink != 1.0 else {})}
        if kind == "laplace":
            params["scale"] = 2 * self.T / e
        if kind == "levels-rr":
            params["m_levels"] = self.m
        super().__init__(eps=eps, level=e, parameters={**params, **kw.pop("parameters", {})}, **kw)

    def default_notes(self):
        return (f"records: real numbers (an array of shape (n,)); values outside [-T, T] = [{-self.T:.6g}, {self.T:.6g}] "
                "are truncated to it (the certified risk includes the truncation bias)",)

    def _records(self, records):
        x = _finite_records(records)
        if x.ndim == 2 and x.shape[1] == 1:
            x = x[:, 0]
        if x.ndim != 1:
            raise InputError("records", "must be a one-dimensional array of real numbers (d = 1)", x.shape)
        return x

    def privatize_all(self, records, rng=None):
        return self._release(self._records(records), as_rng(rng))

    def _release(self, x, rng):
        from . import local_scalar as LS

        if self.family == "levels-rr":
            return LS.levels_rr(x, self.T, self.eps, rng, m=self.m)
        return LS.MECHANISMS[self.family](x, self.T, self.eps, rng)

    def estimate(self, reports):
        z = _finite_records(reports, "reports")
        if z.ndim != 1 or z.size == 0:
            raise InputError("reports", "must be a one-dimensional array of at least one report", z.shape)
        return self.shrink * float(z.mean())

    def simulate(self, distribution, n, rng, reps):
        """``reps`` estimates from n users drawn from a discrete law ``distribution = (atoms, probs)``: the atom
        counts are multinomial, then the exact law of the reports' sum given the counts. ``distribution`` may also
        be a sampler ``distribution(m) -> m records``: then :meth:`privatize_all` and :meth:`estimate` per
        repetition (the per-user code itself)."""
        rng = as_rng(rng)
        if callable(distribution):  # a sampler of records: the per-user code, repetition by repetition
            return np.array([self.estimate(self._release(self._records(distribution(int(n))), rng))
                             for _ in range(int(reps))])
        atoms, probs = distribution
        counts = rng.multinomial(int(n), np.asarray(probs, float), size=int(reps))
        xt = np.clip(np.asarray(atoms, float), -self.T, self.T)
        return self.shrink * SIM_1D[self.family](counts, xt, self.T, int(n), self.eps, int(reps), rng, m=self.m)

    def channel(self):
        """levels-rr: the (2m+1)-RR matrix on the grid levels (Q[y, j]); the input's randomised rounding to a level
        happens before it, so the ratios of the whole channel are at most these. None for the others (continuous
        input or output; see :meth:`check_privacy`)."""
        if self.family == "levels-rr" and 2 * self.m + 1 <= CHANNEL_LIMIT:
            from .local_scalar import levels_rr_channel

            return levels_rr_channel(self.m, self.eps).T
        return None

    def _privacy(self) -> dict:
        if self.family == "levels-rr":
            if 2 * self.m + 1 <= CHANNEL_LIMIT:
                return super()._privacy()
            # (2m+1)-RR per output class: an output level has weight e^ε (its own input) or 1 (any other) before
            # the common normalisation, so the worst ratio is the diagonal over the off-diagonal weight
            return _ratio_verdict(math.log1p(math.expm1(self.eps)) if self.eps < 700 else self.eps, self.eps,
                                  "exact likelihood ratio of (2m+1)-ary randomized response per output class "
                                  "(diagonal / off-diagonal weight)", outputs=2 * self.m + 1)
        if self.family == "laplace":
            b = self.parameters["scale"]
            return _ratio_verdict(2 * self.T / b, self.eps, "calibration: sensitivity 2T of the truncated value / "
                                  "Laplace scale", sensitivity=2 * self.T, scale=b)
        # one-bit: P(+|x) is affine in the truncated x, so the extreme ratios are at x = ±T
        return _onebit_verdict(self.T, self.eps, 1, "one-bit")


def _onebit_probs(T: float, level: float):
    """P(Z = +) at x = -T and x = +T of the one-bit mechanism at ``level``, recomputed from its definition
    P(+|x) = 1/2 + x/(2T coth(level/2)) (not from the sampler): 1/(e^ℓ+1) and e^ℓ/(e^ℓ+1), the first taken
    directly (1/2 - 1/(2 coth) loses its digits from ℓ ≈ 18)."""
    c = (math.exp(level) + 1) / math.expm1(level) if level < 700 else 1.0
    return flip_probability(level), 0.5 + 1 / (2 * c)


def _onebit_verdict(T: float, eps: float, k: int, what: str) -> dict:
    lo, hi = _onebit_probs(T, eps / k)
    # P(-|x) = P(+|-x): the ratio of the minus probabilities is that of the plus ones
    per = math.log(hi) - math.log(lo) if lo > 0 else math.inf
    return _ratio_verdict(k * per, eps, f"exact likelihood ratio of {what} at the extreme inputs ±T (probabilities "
                          f"affine in the input), {k} release(s) composed", per_release_log_ratio=per, releases=k)


class VectorRandomizer(LocalRandomizer):
    """A d-dimensional record projected onto the ℓ2 ball of radius T (``ball = "l2"``) or clipped to [-T, T]^d
    (``"linf"``), then released by ℓ2 sampling, ℓ∞ sampling, PrivUnit or a coordinate mechanism
    (:mod:`boundcalc.mechanisms.sampling`, :mod:`boundcalc.mechanisms.privunit`). Each report is an unbiased
    view of the projected record; the estimate is their mean times the shrinkage factor ``shrink`` = 1 - σ
    (1: the plain mean; post-processing)."""

    problem = "mean"
    record_ndim = 1

    def __init__(self, kind: str, T: float, ball: str, d: int, eps: float, k: int = 1, shrink: float = 1.0, **kw):
        self.family, self.T, self.ball, self.d, self.k = kind, float(T), ball, int(d), int(k)
        self.shrink = float(shrink)
        releases = {"coordinate-composition": self.d, "coordinate-subsampling": self.k,
                    "laplace-composition": math.inf}.get(kind, 1)
        e = release_level(eps, releases)
        params = {"T": self.T, "eps": e, "d": self.d, "ball": ball,
                  **({"shrink_factor": self.shrink} if self.shrink != 1.0 else {})}
        if kind == "coordinate-subsampling":
            params["k_sub"] = self.k
        if kind == "laplace-composition":
            params["scale"] = 2 * self.T * self.d / e
        super().__init__(eps=eps, level=e, parameters={**params, **kw.pop("parameters", {})}, **kw)

    def default_notes(self):
        where = (f"projected onto the ℓ2 ball of radius T = {self.T:.6g}" if self.ball == "l2" else
                 f"clipped coordinate-wise to [-T, T], T = {self.T:.6g}")
        return (f"records: vectors of length {self.d} (an array of shape (n, {self.d})); each record is {where} "
                "before it is privatized (the certified risk includes that bias)",)

    def _records(self, records):
        x = _finite_records(records)
        if x.ndim != 2 or x.shape[1] != self.d:
            raise InputError("records", f"must be an array (n, {self.d}) of records, one row per user", x.shape)
        return x

    def project(self, x):
        """The documented treatment of records outside the ball: projection (ℓ2) or clipping (ℓ∞) at T."""
        if self.ball == "l2":
            nr = np.linalg.norm(x, axis=1, keepdims=True)
            return x * np.minimum(1.0, self.T / np.maximum(nr, 1e-300))
        return np.clip(x, -self.T, self.T)

    def _release(self, x, rng):
        from . import privunit as PU
        from . import sampling as SM

        if self.family == "privunit":
            return PU.privunit(x, self.T * (1 if self.ball == "l2" else math.sqrt(self.d)), self.eps, rng)
        if self.family == "coordinate-subsampling":
            return SM.coordinate_subsampling(x, self.T, self.eps, rng, k=self.k)
        if self.family == "laplace-composition":
            from .local_scalar import laplace

            return laplace(x, self.T, self.eps / self.d, rng)
        return SM.SAMPLERS[self.family](x, self.T, self.eps, rng)

    def privatize_all(self, records, rng=None):
        return self._release(self.project(self._records(records)), as_rng(rng))

    def estimate(self, reports):
        z = _finite_records(reports, "reports")
        if z.ndim != 2 or z.shape[1] != self.d or z.shape[0] == 0:
            raise InputError("reports", f"must be an array (n, {self.d}) of reports, n >= 1", z.shape)
        return self.shrink * z.mean(axis=0)

    def simulate(self, distribution, n, rng, reps):
        """``reps`` estimates (reps, d): ``distribution(m)`` draws m records (rows); each repetition runs
        :meth:`privatize_all` and :meth:`estimate` on n users (the per-user code itself)."""
        rng = as_rng(rng)
        est = np.empty((int(reps), self.d))
        for i in range(int(reps)):
            est[i] = self.estimate(self._release(self.project(np.asarray(distribution(int(n)), float)), rng))
        return est

    def channel(self):
        """ℓ∞ sampling: the law of the sign vector w given the sign vector of Ṽ, Q[w, s] over {±1}^d (d <= 12; the
        record enters only through Ṽ, so the whole channel's ratios are at most these). None otherwise."""
        if self.family == "linf-sampling" and self.d <= 12:
            import itertools

            from .sampling import linf_sampling_law

            signs = list(itertools.product([-1.0, 1.0], repeat=self.d))
            return np.column_stack([linf_sampling_law(s, self.eps)[1] for s in signs])
        return None

    def _privacy(self) -> dict:
        from . import sampling as SM

        e = self.eps
        if self.family == "coordinate-splitting":
            return _onebit_verdict(self.T, e, 1, "one-bit on one uniformly chosen coordinate")
        if self.family == "coordinate-composition":
            return _onebit_verdict(self.T, e, self.d, f"one-bit at level ε/{self.d} per coordinate")
        if self.family == "coordinate-subsampling":
            return _onebit_verdict(self.T, e, self.k, f"one-bit at level ε/{self.k} on {self.k} coordinates")
        if self.family == "laplace-composition":
            b = self.parameters["scale"]
            return _ratio_verdict(self.d * 2 * self.T / b, e, "calibration: d coordinates, each of sensitivity 2T, "
                                  "Laplace scale b per coordinate (basic composition: d·2T/b)", scale=b)
        if self.family == "linf-sampling":
            if self.d <= 12:
                return super()._privacy()
            # every w has probability e^ε/Z or 1/Z given Ṽ, with the same Z for every Ṽ
            pi = SM._linf_pi(self.d, e)
            x = 0.0 if self.d % 2 else math.exp(math.lgamma(self.d + 1) - 2 * math.lgamma(self.d / 2 + 1)
                                                - self.d * math.log(2))
            K = (1 - x) / 2  # strict half, as a fraction of 2^d; boundary fraction x
            # near-half points: π'/K each; far closed half: (1-π')/(K + x) each
            t = (1.0 + 2.0 * x / (1.0 - x)) * math.exp(-e)  # 1 - π' = t/(1 + t), taken directly
            lr = math.log(pi / K) - math.log(t / (1.0 + t) / (K + x))
            return _ratio_verdict(lr, e, "ratio of the two probability levels of ℓ∞ sampling (near strict half, "
                                  "far closed half)")
        if self.family == "l2-sampling":
            pi = SM._pi(e)
            return _ratio_verdict(math.log(pi) - math.log(flip_probability(e)), e, "ratio of the two density levels on the "
                                  "sphere (near and far half)", near_half_probability=pi)
        return _privunit_verdict(self.d, e)


def _privunit_verdict(d: int, e: float) -> dict:
    """PrivUnit: density p/C on the cap {<V,u> >= γ} (C its area fraction), (1-p)/(1-C) off it; C recomputed from
    the Beta law of <V,u> (W = 1 - 2B, B ~ Beta((d-1)/2, (d-1)/2)), not from the builder's log-space formula."""
    from scipy import special

    from .privunit import privunit_parameters

    m, g, p, _ = privunit_parameters(int(d), e)
    a = (d - 1) / 2.0
    C = float(special.betainc(a, a, (1.0 - g) / 2.0))
    # 1 - p = (1 - C)/(e^ε C + 1 - C) from the definition, taken directly (1 - p loses its digits near p = 1)
    q = (1.0 - C) / (math.exp(e) * C + 1.0 - C) if 0 < C < 1 else 0.0
    lr = (math.log(p) - math.log(q)) + (math.log1p(-C) - math.log(C)) if 0 < C < 1 and 0 < p < 1 and q > 0 else math.inf
    return _ratio_verdict(lr, e, "ratio of the two density levels of PrivUnit (cap and its complement), cap "
                          "area recomputed from the Beta law", cap_threshold=g, cap_probability=p, cap_area=C)


class ZeroEstimator(LocalRandomizer):
    """θ̂ = 0: uses no data (every report is empty)."""

    no_data = True
    def __init__(self, d: int, eps: float, problem: str = "mean", **kw):
        self.d = int(d)
        super().__init__(eps=eps, problem=problem, parameters={"d": self.d}, **kw)
        self.record_ndim = 0 if self.d == 1 else 1

    def _records(self, records):
        x = _finite_records(records)
        if self.d == 1 and x.ndim == 2 and x.shape[1] == 1:
            x = x[:, 0]
        if (self.d == 1 and x.ndim != 1) or (self.d > 1 and (x.ndim != 2 or x.shape[1] != self.d)):
            raise InputError("records", f"must be an array of records of dimension {self.d}", x.shape)
        return x

    def privatize_all(self, records, rng=None):
        return np.zeros((self._records(records).shape[0], 0))

    def estimate(self, reports):
        return 0.0 if self.d == 1 else np.zeros(self.d)

    def simulate(self, distribution, n, rng, reps):
        return np.zeros(int(reps)) if self.d == 1 else np.zeros((int(reps), self.d))

    def channel(self):
        return np.ones((1, 1))


# --- the 1-D fast paths: exact law of the sum of the reports given the counts of each (truncated) atom

def _onebit_1d(counts, xt, T, n, eps, reps, rng, m=1):
    from .local_scalar import coth_half_np

    c = float(coth_half_np(eps))
    pplus = 0.5 + xt / (2 * T * c)
    plus = rng.binomial(counts, pplus[None, :]).sum(axis=1)
    return T * c * (2 * plus - n) / n


def _laplace_1d(counts, xt, T, n, eps, reps, rng, m=1):
    b = 2 * T / eps
    noise = rng.gamma(n, b, size=reps) - rng.gamma(n, b, size=reps)
    return (counts @ xt + noise) / n


def _levels_1d(counts, xt, T, n, eps, reps, rng, m=1):
    """Truncation + unbiased rounding to the grid jT/m + (2m+1)-RR, from the atom counts (exact law)."""
    h = T / m
    lo = np.floor(xt / h)
    frac = xt / h - lo
    lam = float(np.expm1(eps) / (np.expm1(eps) + 2 * m + 1))
    ups = rng.binomial(counts, frac[None, :])  # users of each atom rounded up
    kept_lo = rng.binomial(counts - ups, lam)
    kept_up = rng.binomial(ups, lam)
    jsum = (kept_lo * lo[None, :] + kept_up * np.minimum(lo + 1, m)[None, :]).sum(axis=1)
    n_unif = n - (kept_lo + kept_up).sum(axis=1)
    if 2 * m + 1 <= CHANNEL_LIMIT:
        unif = rng.multinomial(n_unif, np.full(2 * m + 1, 1.0 / (2 * m + 1)))  # (reps, 2m+1)
        jsum = jsum + unif @ np.arange(-m, m + 1)
    else:  # many levels: the uniform levels drawn one by one (the same law)
        jsum = jsum + np.array([rng.integers(-m, m + 1, size=int(u)).sum() for u in n_unif])
    return jsum * h / lam / n


SIM_1D = {"one-bit": _onebit_1d, "laplace": _laplace_1d, "levels-rr": _levels_1d}


def _mean_shrink(c) -> float:
    """The factor 1 - σ of the bound's tuned shrinkage (1 where the bound has none)."""
    return 1.0 - float(c.free.get("sigma_shrink", 0.0))


def _mean_vector(c):
    return VectorRandomizer(c.name, float(c.free.get("T", c.v["r"])), c.v["ball"], c.d, c.eps,
                            k=int(c.free.get("k_sub", 1)), shrink=_mean_shrink(c), **c.common)


def _mean_scalar(c):
    return ScalarRandomizer(c.name, float(c.free.get("T", c.v["r"])), c.eps, m=int(c.free.get("m_levels", 1)),
                            shrink=_mean_shrink(c), **c.common)


#: local mean upper bound -> its randomizer, d = 1 and d > 1
MEAN_1D = {"zero": lambda c: ZeroEstimator(c.d, c.eps, **c.common), **{k: _mean_scalar for k in SIM_1D}}
MEAN_DD = {"zero": MEAN_1D["zero"], **{k: _mean_vector for k in (
    "l2-sampling", "linf-sampling", "privunit", "coordinate-splitting", "coordinate-composition",
    "coordinate-subsampling")}}


def mean_mechanism(values: dict, upper, bound=None) -> LocalRandomizer:
    """The randomizer of a local mean upper bound (the hook ``LocalMean.mechanism_local``)."""
    return _build("mean", MEAN_1D if int(values["d"]) == 1 else MEAN_DD, values, upper)


# ============================================================================== Gaussian location (local_scalar.py: threshold scheme)

def _split_columns(n: int, k: int, d: int) -> np.ndarray:
    """(n, k): the coordinates user i reports, ik, …, ik+k-1 (mod d) (public, fixed by the user's index)."""
    return (np.arange(n)[:, None] * k + np.arange(k)[None, :]) % d


def _rr_bit_verdict(level: float, k: int, eps: float, what: str) -> dict:
    q = 1.0 / (1.0 + math.exp(-level))
    per = math.log(q) - math.log(flip_probability(level))
    return _ratio_verdict(k * per, eps, f"exact likelihood ratio of randomized response of {what} (keep probability "
                          f"e^ε'/(e^ε'+1), ε' = {level:.6g}), {k} bit(s) per user composed",
                          per_release_log_ratio=per, releases=k)


class GaussThresholdRandomizer(LocalRandomizer):
    """Threshold + randomized response (docs/problems/gaussian.md): user i reports the k coordinates
    ik, …, ik+k-1 (mod d) as randomized response of the bits 1{x_j > 0} at level ε/k (k = 1 when d = 1). The server
    debiases each coordinate's frequency (with the scheme's choice of how many reports it uses and a shrinkage λ,
    :func:`boundcalc.mechanisms.local_scalar.threshold_scheme`, unless ``closed``: all reports, λ = 1), clips it to
    [Φ(-B/σ), Φ(B/σ)] and returns σΦ^{-1}(p̂). Reports: an array (n, k) of 0/1 bits, row i = user i (the row
    index fixes the coordinates)."""

    problem = "gaussian"
    record_ndim = 1

    def __init__(self, d: int, k: int, sigma: float, B: float, eps: float, closed: bool, **kw):
        self.d, self.k, self.sigma, self.B, self.closed = int(d), int(k), float(sigma), float(B), bool(closed)
        e = release_level(eps, self.k)  # k bits (stage 1 of the two-stage scheme: k one-bit values) at ε/k
        params = {"d": self.d, "eps": e, "sigma": self.sigma, "B": self.B}
        if self.d > 1:
            params["k_sub"] = self.k
        super().__init__(eps=eps, level=e, parameters={**params, **kw.pop("parameters", {})}, **kw)
        self.level = e / self.k

    def default_notes(self):
        return (f"records: vectors of length {self.d} (an array of shape (n, {self.d})); user i (row i) reports "
                f"coordinates i·k, …, i·k+k-1 mod d, k = {self.k}",
                "reports: an array (n, k) of 0/1 bits (row i from user i)")

    def _records(self, records):
        x = _finite_records(records)
        if self.d == 1 and x.ndim == 1:
            x = x[:, None]
        if x.ndim != 2 or x.shape[1] != self.d:
            raise InputError("records", f"must be an array (n, {self.d}) of records, one row per user", x.shape)
        return x

    def privatize(self, record, rng=None, user: int = 0):
        """One user's report: the k bits of the coordinates user number ``user`` (0-based) is assigned."""
        x = self._records(np.asarray(record, float).reshape(1, -1))
        if isinstance(user, bool) or not isinstance(user, (int, np.integer)) or user < 0:
            raise InputError("user", "must be the user's index, an integer >= 0", user)
        cols = (int(user) * self.k + np.arange(self.k)) % self.d
        return self._bits(x[0, cols][None, :], as_rng(rng))[0]

    def _bits(self, xcols, rng):
        from .local_scalar import threshold_rr_bits

        return threshold_rr_bits(xcols, self.level, rng)

    def privatize_all(self, records, rng=None):
        x = self._records(records)
        cols = _split_columns(x.shape[0], self.k, self.d)
        return self._bits(np.take_along_axis(x, cols, axis=1), as_rng(rng))

    def _plan(self, n: int):
        """(cols, use, m, λ) for n reports: which reports the server uses and its shrinkage."""
        from .local_scalar import threshold_scheme

        k, d = self.k, self.d
        cols = _split_columns(n, k, d)
        if self.closed:  # all reports, λ = 1
            return cols, np.ones((n, k), bool), np.bincount(cols.ravel(), minlength=d), 1.0
        _, lam, m_used, _ = threshold_scheme(n * k // d, self.level, self.B / self.sigma)
        flat = cols.ravel()
        order = np.argsort(flat, kind="stable")
        rank = np.empty(flat.size, np.int64)
        start = np.searchsorted(flat[order], flat[order], side="left")
        rank[order] = np.arange(flat.size) - start  # the index of each report among its coordinate's reports
        use = (rank < m_used).reshape(n, k)
        return cols, use, np.bincount(cols[use], minlength=d), lam

    def _finish(self, ones, m, lam):
        from .local_scalar import threshold_estimate

        return np.where(m > 0, lam * threshold_estimate(ones, np.maximum(m, 1), self.level, self.sigma, self.B), 0.0)

    def estimate(self, reports):
        z = _finite_records(reports, "reports")
        if z.ndim != 2 or z.shape[1] != self.k or z.shape[0] == 0 or np.any((z != 0) & (z != 1)):
            raise InputError("reports", f"must be an array (n, {self.k}) of 0/1 bits, n >= 1", z.shape)
        cols, use, m, lam = self._plan(z.shape[0])
        ones = np.bincount(cols[use], weights=z[use], minlength=self.d)
        est = self._finish(ones, m, lam)
        return float(est[0]) if self.d == 1 else est

    def simulate(self, distribution, n, rng, reps):
        """``reps`` estimates (reps, d) for X ~ N(θ, σ²I), ``distribution = θ``: each user's assigned coordinates
        only are drawn (the others are independent of the report), then the same bits and estimate."""
        theta = np.asarray(distribution, float).reshape(self.d)
        rng, n = as_rng(rng), int(n)
        cols, use, m, lam = self._plan(n)
        est = np.empty((int(reps), self.d))
        for rep in range(int(reps)):
            z = self._bits(theta[cols] + self.sigma * rng.standard_normal((n, self.k)), rng)
            est[rep] = self._finish(np.bincount(cols[use], weights=z[use], minlength=self.d), m, lam)
        return est

    def channel(self):
        """Q[y, b] of one user: the k released bits y given the k threshold bits b (2^k × 2^k, k <= 10); the record
        enters only through b."""
        if self.k > 10:
            return None
        import itertools

        q = 1.0 / (1.0 + math.exp(-self.level))
        pts = np.array(list(itertools.product([0, 1], repeat=self.k)))
        agree = pts[:, None, :] == pts[None, :, :]
        return np.prod(np.where(agree, q, flip_probability(self.level)), axis=2)

    def _privacy(self) -> dict:
        if self.k <= 10:
            out = super()._privacy()
            out["method"] += f" (k = {self.k} randomized-response bits at ε/k)"
            return out
        return _rr_bit_verdict(self.level, self.k, self.eps, "threshold bits")


class GaussTwoStageRandomizer(GaussThresholdRandomizer):
    """Two stages (docs/problems/gaussian.md): users i < ⌊αn⌋ release clip(x_j, ±(B+τ)) of their k coordinates by the
    one-bit mechanism at ε/k; the server's centre c_j is their mean per coordinate projected on [-B, B]; the other
    users release randomized response of 1{x_j > c_j} at ε/k, and θ̂_j = c_j + σΦ^{-1}(clip(p̂, Φ(-w), Φ(w)))
    projected on [-B, B]. Sequentially interactive: stage 2 needs c (``privatize(..., user=i, centre=c)``;
    :meth:`centre` computes it from the stage-1 reports). Reports: an array (n, k), stage-1 rows the one-bit values,
    stage-2 rows 0/1 bits."""

    def __init__(self, d, k, sigma, B, eps, alpha: float, w: float, tau: float, **kw):
        self.alpha, self.w, self.tau = float(alpha), float(w), float(tau)
        super().__init__(d, k, sigma, B, eps, closed=True,
                         parameters={"alpha": self.alpha, "w": self.w, "tau": self.tau, **kw.pop("parameters", {})},
                         **kw)
        self.L = self.B + self.tau

    def default_notes(self):
        return (f"records: vectors of length {self.d} (an array of shape (n, {self.d})); users 0..⌊αn⌋-1 form stage 1 "
                f"(α = {self.alpha:.4g}); user i reports coordinates i·k, …, i·k+k-1 mod d, k = {self.k}",
                "stage 1 clips each coordinate to [-(B+τ), B+τ] before the one-bit release",
                "reports: an array (n, k): one-bit values (stage 1 rows), 0/1 bits (stage 2 rows)")

    def _n1(self, n: int) -> int:
        return int(math.floor(self.alpha * n))

    def _stage1(self, xcols, rng):
        from .local_scalar import onebit

        return onebit(xcols, self.L, self.level, rng)

    def centre(self, stage1_reports, n: int):
        """c (d,): the stage-1 mean per coordinate projected on [-B, B] (0 where a coordinate has no report)."""
        z1 = np.asarray(stage1_reports, float)
        c1 = _split_columns(n, self.k, self.d)[: z1.shape[0]]
        m1 = np.bincount(c1.ravel(), minlength=self.d)
        c = np.clip(np.bincount(c1.ravel(), weights=z1.ravel(), minlength=self.d) / np.maximum(m1, 1), -self.B, self.B)
        return np.where(m1 > 0, c, 0.0)

    def privatize(self, record, rng=None, user: int = 0, n: int | None = None, centre=None):
        """One user's report; ``n`` (default: the tuned n) fixes the stages; stage-2 users need ``centre``."""
        x = self._records(np.asarray(record, float).reshape(1, -1))
        n = self.n if n is None else int(n)
        if isinstance(user, bool) or not isinstance(user, (int, np.integer)) or not 0 <= user < n:
            raise InputError("user", f"must be the user's index, an integer in [0, n) with n = {n}", user)
        cols = (int(user) * self.k + np.arange(self.k)) % self.d
        rng = as_rng(rng)
        if user < self._n1(n):
            return self._stage1(x[0, cols][None, :], rng)[0]
        if centre is None:
            raise InputError("centre", "is needed for a stage-2 user: the server's centre(stage-1 reports)")
        c = np.asarray(centre, float).reshape(self.d)
        return self._bits((x[0, cols] - c[cols])[None, :], rng)[0]

    def privatize_all(self, records, rng=None):
        """Both stages for n users (the server's centre computed in between from the stage-1 reports)."""
        x = self._records(records)
        rng, n = as_rng(rng), x.shape[0]
        cols, n1 = _split_columns(n, self.k, self.d), self._n1(n)
        xc = np.take_along_axis(x, cols, axis=1)
        z1 = self._stage1(xc[:n1], rng)
        c = self.centre(z1, n)
        z2 = self._bits(xc[n1:] - c[cols[n1:]], rng)
        return np.vstack([z1, z2.astype(float)])

    def _second(self, c, z2, c2, m2):
        from .local_scalar import threshold_estimate

        ones = np.bincount(c2.ravel(), weights=z2.ravel(), minlength=self.d)
        est = c + threshold_estimate(ones, np.maximum(m2, 1), self.level, self.sigma, self.sigma * self.w)
        return np.clip(np.where(m2 > 0, est, c), -self.B, self.B)

    def estimate(self, reports):
        z = _finite_records(reports, "reports")
        if z.ndim != 2 or z.shape[1] != self.k or z.shape[0] == 0:
            raise InputError("reports", f"must be an array (n, {self.k}) of reports, n >= 1", z.shape)
        n = z.shape[0]
        n1 = self._n1(n)
        if np.any((z[n1:] != 0) & (z[n1:] != 1)):
            raise InputError("reports", f"stage-2 rows (from row {n1}) must be 0/1 bits")
        cols = _split_columns(n, self.k, self.d)
        c = self.centre(z[:n1], n)
        est = self._second(c, z[n1:], cols[n1:], np.bincount(cols[n1:].ravel(), minlength=self.d))
        return float(est[0]) if self.d == 1 else est

    def simulate(self, distribution, n, rng, reps):
        theta = np.asarray(distribution, float).reshape(self.d)
        rng, n = as_rng(rng), int(n)
        cols, n1 = _split_columns(n, self.k, self.d), self._n1(n)
        c1, c2 = cols[:n1], cols[n1:]
        m2 = np.bincount(c2.ravel(), minlength=self.d)
        est = np.empty((int(reps), self.d))
        for rep in range(int(reps)):
            z1 = self._stage1(theta[c1] + self.sigma * rng.standard_normal(c1.shape), rng)
            c = self.centre(z1, n)
            z2 = self._bits(theta[c2] + self.sigma * rng.standard_normal(c2.shape) - c[c2], rng)
            est[rep] = self._second(c, z2, c2, m2)
        return est

    def channel(self):
        return None

    def _privacy(self) -> dict:
        one = _onebit_verdict(self.L, self.eps, self.k, "stage 1 (one-bit at ε/k)")
        two = _rr_bit_verdict(self.level, self.k, self.eps, "stage-2 threshold bits")
        return {"method": "each user takes part in one stage: " + one["method"] + "; " + two["method"],
                "passed": one["passed"] and two["passed"], "eps": self.eps,
                "log_ratio": max(one["log_ratio"], two["log_ratio"]), "stage1": one, "stage2": two}


def _gauss_threshold(closed: bool):
    return lambda c: GaussThresholdRandomizer(c.d, c.k, float(c.v["sigma"]), float(c.v["B"]), c.eps, closed=closed,
                                              **c.common)


def _gauss_two_stage(c):
    f = c.free
    return GaussTwoStageRandomizer(c.d, c.k, float(c.v["sigma"]), float(c.v["B"]), c.eps, alpha=f["alpha"], w=f["w"],
                                   tau=f["tau"], **c.common)


def _gauss_clipped(cls):
    def build(c):
        tau, B = float(c.free.get("tau", 0.0)), float(c.v["B"])
        extra = {"parameters": {"tau": tau, "B": B, "sigma": float(c.v["sigma"])}}
        if cls is ScalarRandomizer:
            return ScalarRandomizer(c.name, B + tau, c.eps, **c.common, **extra)
        return VectorRandomizer(c.name, B + tau, "linf", c.d, c.eps, k=c.k, **c.common, **extra)
    return build


_GAUSS_COMMON = {"zero": lambda c: ZeroEstimator(c.d, c.eps, **c.common),
                 "threshold-rr": _gauss_threshold(False), "threshold-rr-split": _gauss_threshold(True),
                 "threshold-rr-split-exact": _gauss_threshold(False), "two-stage-threshold": _gauss_two_stage}
#: Gaussian location upper bound -> its randomizer, d = 1 and d > 1
GAUSSIAN_1D = {**_GAUSS_COMMON, "one-bit": _gauss_clipped(ScalarRandomizer),
               "laplace": _gauss_clipped(ScalarRandomizer)}
GAUSSIAN_DD = {**_GAUSS_COMMON, **{k: _gauss_clipped(VectorRandomizer) for k in (
    "coordinate-splitting", "linf-sampling", "coordinate-composition", "coordinate-subsampling", "laplace-composition")}}


def gaussian_mechanism(values: dict, upper, bound=None) -> LocalRandomizer:
    """The randomizer of a Gaussian location (local) upper bound (the hook ``Gaussian.mechanism_local``)."""
    d = int(values["d"])
    k = int(dict(upper.free_parameters).get("k_sub", 1)) if d > 1 else 1
    return _build("gaussian", GAUSSIAN_1D if d == 1 else GAUSSIAN_DD, values, upper, k=k)


# ============================================================================== sparse Bernoulli (sparse_binary.py, sampling.py)

class SparseBinaryRandomizer(LocalRandomizer):
    """A 0/1 vector of length d per user (docs/problems/sparse-bernoulli.md):

    - ``coordinate-subsampling``: x - 1/2 ∈ [-1/2, 1/2]^d, k random coordinates, one-bit at level ε/k; θ̂ = 1/2 + mean;
    - ``truncated-rr`` / ``projected-truncated-rr``: keep at most K ones (the dropped ones uniformly at random), then
      randomized response on every bit at level ε/(2K); θ̂ the debiased mean (projected onto
      C = {θ ∈ [0,1]^d : Σθ <= s} for the projected bound);
    - ``truncated-privunit`` / ``projected-privunit``: keep at most K ones, centre at κ1 (κ = min{K, d/2}/d), PrivUnit
      on the ℓ2 ball of radius r = sqrt(K̃ - K̃²/d); θ̂ = κ1 + mean (projected onto C for the projected bound).

    Records must be 0/1 (any other value is refused); a record may have any number of ones (the truncation to K
    is part of the mechanism, its bias is in the certified risk)."""

    problem = "sparse-bernoulli"
    record_ndim = 1

    def __init__(self, family: str, d: int, s: float, eps: float, K: int = 1, k: int = 1, **kw):
        self.family, self.d, self.s, self.K, self.k = family, int(d), float(s), int(K), int(k)
        params = {"d": self.d, "s": self.s, "eps": float(eps)}
        if family == "coordinate-subsampling":
            params["k_sub"] = self.k
        else:
            params["K"] = self.K
        if "privunit" in family:
            Kt = min(self.K, self.d / 2)
            self.kappa, self.radius = Kt / self.d, math.sqrt(Kt - Kt * Kt / self.d)
            params.update(kappa=self.kappa, radius=self.radius)
        # randomized response of the truncated vector: two inputs differ in at most 2K bits, each at ε/(2K)
        e = release_level(eps, self.k if family == "coordinate-subsampling" else
                          1 if "privunit" in family else 2 * self.K)
        params["eps"] = e
        self.q = 1.0 / (1.0 + math.exp(-e / (2 * self.K)))
        self.flip = flip_probability(e / (2 * self.K))
        self.projected = family.startswith("projected")
        super().__init__(eps=eps, level=e, parameters={**params, **kw.pop("parameters", {})}, **kw)

    def default_notes(self):
        out = [f"records: 0/1 vectors of length {self.d} (an array of shape (n, {self.d})); other values are refused"]
        if self.family != "coordinate-subsampling":
            out.append(f"a record with more than K = {self.K} ones keeps a uniformly random K of them")
        if self.projected:
            out.append(f"the estimate is projected onto {{θ ∈ [0,1]^d : Σθ <= s}}, s = {self.s:.6g}")
        return tuple(out)

    def _records(self, records):
        x = _finite_records(records)
        if x.ndim != 2 or x.shape[1] != self.d:
            raise InputError("records", f"must be an array (n, {self.d}) of 0/1 records, one row per user", x.shape)
        if np.any((x != 0) & (x != 1)):
            raise InputError("records", "must be 0/1 vectors (binary records)")
        return x

    def privatize_all(self, records, rng=None):
        from . import privunit as PU
        from . import sampling as SM

        x, rng = self._records(records), as_rng(rng)
        if self.family == "coordinate-subsampling":
            return SM.coordinate_subsampling(x - 0.5, 0.5, self.eps, rng, k=self.k)
        xt = SM.truncate_ones(x, self.K, rng)
        if "privunit" in self.family:
            return PU.privunit(xt - self.kappa, self.radius, self.eps, rng)
        keep = rng.random(xt.shape) < self.q
        return np.where(keep, xt, ~xt).astype(np.int8)

    def _post(self, y):
        from .sparse_binary import project_capped_simplex

        return project_capped_simplex(y, self.s) if self.projected else y

    def estimate(self, reports):
        z = _finite_records(reports, "reports")
        if z.ndim != 2 or z.shape[1] != self.d or z.shape[0] == 0:
            raise InputError("reports", f"must be an array (n, {self.d}) of reports, n >= 1", z.shape)
        mean = z.mean(axis=0)
        if self.family == "coordinate-subsampling":
            y = 0.5 + mean
        elif "privunit" in self.family:
            y = self.kappa + mean
        else:
            y = (mean - (1 - self.q)) / (2 * self.q - 1)
        return self._post(y[None, :])[0] if self.projected else y

    def simulate(self, distribution, n, rng, reps):
        """``reps`` estimates (reps, d) for independent X_ij ~ Bern(θ_j), ``distribution = θ``, from the exact law of
        the released sums (randomized response: the truncated column sums, then binomial flips; coordinate
        subsampling: per coordinate the number of users releasing it and their + bits, exact in law per coordinate,
        the coordinates drawn jointly for k = 1) or user by user (PrivUnit)."""
        from . import sparse_binary as SB
        from .local_scalar import coth_half_np
        from .sampling import sparse_vector_rr_counts_from_theta

        theta, rng, n, reps = np.asarray(distribution, float), as_rng(rng), int(n), int(reps)
        d, eps = self.d, self.eps
        if self.family == "coordinate-subsampling":
            k = self.k
            c = float(coth_half_np(eps / k))
            Nj = rng.multinomial(n, np.full(d, 1.0 / d), size=reps) if k == 1 else rng.binomial(n, k / d, size=(reps, d))
            plus = rng.binomial(Nj, np.clip(0.5 + (theta - 0.5) / c, 0.0, 1.0))
            return 0.5 + (d / k) * 0.5 * c * (2 * plus - Nj) / n  # Σ_i Z_ij, Z = ±(d/k)(1/2)c
        if self.family == "truncated-rr":
            q = self.q
            return np.stack([(sparse_vector_rr_counts_from_theta(theta, n, self.K, eps, rng) / n - (1 - q)) / (2 * q - 1)
                             for _ in range(reps)])
        if self.family == "projected-truncated-rr":
            return self._post(SB.rr_debiased_means(theta, n, self.K, eps, reps, rng))
        return self._post(SB.truncated_privunit_means(theta, n, self.K, eps, reps, rng))

    def channel(self):
        """Randomized response (d <= 10): Q[y, x] over the 2^d released bit vectors y and the truncated inputs x
        (at most K ones); the truncation is a randomisation before it, so the whole channel's ratios are at most
        these. None otherwise."""
        if "rr" not in self.family or self.d > 10:
            return None
        import itertools

        pts = np.array(list(itertools.product([0, 1], repeat=self.d)))
        ins = pts[pts.sum(axis=1) <= self.K]
        agree = pts[:, None, :] == ins[None, :, :]
        return np.prod(np.where(agree, self.q, self.flip), axis=2)

    def _privacy(self) -> dict:
        if self.family == "coordinate-subsampling":
            return _onebit_verdict(0.5, self.eps, self.k, f"one-bit at level ε/{self.k} on {self.k} coordinates")
        if "privunit" in self.family:
            return _privunit_verdict(self.d, self.eps)
        if self.d <= 10:
            return super()._privacy()
        # two truncated vectors differ in at most 2K bits (at most K ones each), each bit's ratio q/(1-q)
        return _rr_bit_verdict(self.eps / (2 * self.K), min(2 * self.K, self.d), self.eps,
                               "bits of the truncated vector (two of them differ in at most 2K bits)")


class PatternRRRandomizer(LocalRandomizer):
    """k-ary randomized response on the whole 0/1 pattern (:mod:`boundcalc.mechanisms.pattern_rr`): the record is
    reported unchanged w.p. 1 - q_change, else a uniformly random other pattern of {0,1}^d;
    θ̂ = (Ȳ - c)/a with the channel's a = p - q, c = q 2^{d-1}."""

    problem = "sparse-bernoulli"
    record_ndim = 1

    def __init__(self, d: int, s: float, eps: float, **kw):
        from . import pattern_rr as PR

        self.d, self.s, self._PR = int(d), float(s), PR
        e = release_level(eps)
        self.q_change = PR.change_probability(e, self.d)
        self.a, self.c = PR.coefficients(self.q_change, self.d)
        params = {"d": self.d, "s": self.s, "eps": e, "q_change": self.q_change}
        super().__init__(eps=eps, level=e, parameters={**params, **kw.pop("parameters", {})}, **kw)

    def default_notes(self):
        return (f"records: 0/1 vectors of length {self.d} (an array of shape (n, {self.d})); other values are refused",)

    _records = SparseBinaryRandomizer._records

    def privatize_all(self, records, rng=None):
        return self._PR.privatize(self._records(records), self.q_change, as_rng(rng))

    def estimate(self, reports):
        z = _finite_records(reports, "reports")
        if z.ndim != 2 or z.shape[1] != self.d or z.shape[0] == 0:
            raise InputError("reports", f"must be an array (n, {self.d}) of reports, n >= 1", z.shape)
        return (z.mean(axis=0) - self.c) / self.a

    def simulate(self, distribution, n, rng, reps):
        """``reps`` estimates (reps, d), every user simulated with the privatize code."""
        m = self._PR.simulate_means(distribution, int(n), self.q_change, as_rng(rng), int(reps))
        return (m - self.c) / self.a

    def channel(self):
        """Q[y, x] over the 2^d patterns (d <= 10): 1 - q_change on the diagonal, q_change/(2^d - 1) elsewhere."""
        if self.d > 10:
            return None
        m = 2 ** self.d
        Q = np.full((m, m), self.q_change / (m - 1))
        np.fill_diagonal(Q, 1.0 - self.q_change)
        return Q

    def _privacy(self) -> dict:
        if self.d <= 10:
            return super()._privacy()
        return _ratio_verdict(self._PR.log_ratio(self.q_change, self.d), self.eps,
                              "exact likelihood ratio (1 - q_change)(2^d - 1)/q_change of the pattern channel")


def _sparse(K_name: str | None):
    def build(c):
        if K_name is None:
            return SparseBinaryRandomizer(c.name, c.d, float(c.v["s"]), c.eps, k=int(c.free.get("k_sub", 1)), **c.common)
        return SparseBinaryRandomizer(c.name, c.d, float(c.v["s"]), c.eps, K=int(c.free[K_name]), **c.common)
    return build


class BlockOUERandomizer(LocalRandomizer):
    """Block-sampled one-hot OUE (:mod:`boundcalc.mechanisms.block_oue`, docs/problems/sparse-bernoulli.md,
    "block-oue"), tuned (m, c, τ) from (n, ε, d, s) only.

    **Groups and blocks.** User i belongs to group g = ⌊i/m⌋ and takes block l = i mod m of its group; the users
    i >= ⌊n/m⌋ m (n the number of records given) report nothing. The share-out is *public* randomness: group g's
    permutation of [d] is ``numpy.random.default_rng([seed, g]).permutation(d)``, cut into m consecutive blocks
    (the first d mod m of size ⌈d/m⌉). ``seed`` is the public seed of the round (the server broadcasts it); the
    blocks must not depend on the data. A report is a row of length d: the released bits (0/1) on the user's block,
    -1 elsewhere, so the server needs no seed to estimate.

    **Randomizer.** The user keeps one of its ones in its block, uniformly at random (none if none), and releases
    the block's one-hot vector by OUE: the kept bit is 1 with probability p1 = 1/2, every other bit of the block with
    p0 = 1/(e^ε + 1) (m = d: binary randomized response, p1 = e^ε/(e^ε + 1)). **Server:**
    θ̂_j = clip(c (T_j/N - p0)/(p1 - p0) - τ, 0, 1), T_j the released ones about j, N the reports about j."""

    problem = "sparse-bernoulli"
    record_ndim = 1

    def __init__(self, d: int, s: float, eps: float, m: int, c: float, tau: float, **kw):
        from . import block_oue as BO

        self.d, self.s, self.m, self.c, self.tau = int(d), float(s), int(m), float(c), float(tau)
        if not 1 <= self.m <= self.d:
            raise InputError("m", f"must be a number of blocks in 1..d = {self.d}", m)
        self.p0, self.p1 = BO.probabilities(float(eps), self.d, self.m)
        self.w = -(-self.d // self.m)
        self.block_of = BO.layout(self.d, self.m)
        self._BO = BO
        params = {"d": self.d, "s": self.s, "eps": float(eps), "m": self.m, "c": self.c, "tau": self.tau,
                  "p0": self.p0, "p1": self.p1, "block_size": self.w}
        super().__init__(eps=eps, parameters={**params, **kw.pop("parameters", {})}, **kw)

    def default_notes(self):
        return (f"records: 0/1 vectors of length {self.d} (an array of shape (n, {self.d})); other values are refused",
                f"user i is in group ⌊i/m⌋ (m = {self.m}) and takes block i mod m of the group's public permutation "
                "default_rng([seed, g]).permutation(d); the last n mod m users report nothing",
                "reports: a row of length d per user: the released bits on its block, -1 elsewhere")

    def _records(self, records):
        return SparseBinaryRandomizer._records(self, records)

    @staticmethod
    def _seed(seed, rng):
        if seed is None:
            return int(rng.integers(0, 2 ** 63 - 1))
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise InputError("seed", "must be a non-negative integer (the public seed of the share-out)", seed)
        return int(seed)

    def blocks(self, seed: int, groups) -> np.ndarray:
        """The public permutations (len(groups), d) of the given groups: position q of group g holds coordinate
        ``perm[g, q]``, in block ``block_of[q]`` (taken by the group's user ``block_of[q]``)."""
        groups = np.atleast_1d(np.asarray(groups, np.int64))
        perm = np.empty((groups.size, self.d), np.int64)
        for k, g in enumerate(groups.tolist()):
            perm[k] = np.random.default_rng([int(seed), int(g)]).permutation(self.d)
        return perm

    def _release(self, xp, perm, rng):
        """Released bits (G, d) int8 in permuted-position order: ``xp[g, q]`` the data bit at position q of group g
        (held by the group's user ``block_of[q]``), ``perm`` the groups' public permutations."""
        bits = self._BO.release(xp, perm, self.block_of, self.m, self.p0, self.p1, rng)
        return bits[np.arange(perm.shape[0])[:, None], perm].astype(np.int8)

    def privatize_all(self, records, rng=None, seed=None):
        """Reports (n, d) int8 of n users (rows in the users' order; -1 off each user's block, all -1 for the last
        n mod m users). ``seed``: the round's public seed (None: one is drawn from ``rng``)."""
        X, rng = self._records(records), as_rng(rng)
        seed = self._seed(seed, rng)
        n = X.shape[0]
        N = n // self.m
        R = np.full((n, self.d), -1, np.int8)
        if N == 0:
            return R
        perm = self.blocks(seed, np.arange(N))
        users = np.arange(N)[:, None] * self.m + self.block_of[None, :]
        R[users, perm] = self._release(X[users, perm] > 0.5, perm, rng)
        return R

    def privatize(self, record, rng=None, user=None, seed=None):
        """One user's report (length d, -1 off its block): ``user`` its index i (group ⌊i/m⌋, block i mod m) and
        ``seed`` the round's public seed (both required; a user i >= ⌊n/m⌋ m, n the tuned sample size, reports
        nothing)."""
        x = np.asarray(record)
        if x.ndim != 1:
            raise InputError("record", f"must be one vector of length {self.d} (give many records to privatize_all)",
                             x.shape)
        X = self._records(x[None, :])
        if user is None or isinstance(user, bool) or not isinstance(user, (int, np.integer)) or user < 0:
            raise InputError("user", "must be the user's index i >= 0 (its group is i // m, its block i mod m)", user)
        if seed is None:
            raise InputError("seed", "must be the round's public seed (the share-out of blocks is public)")
        seed, rng = self._seed(seed, None), as_rng(rng)
        out = np.full(self.d, -1, np.int8)
        if user >= (self.n // self.m) * self.m:
            return out
        g, l = divmod(int(user), self.m)
        perm = self.blocks(seed, [g])
        mine = self.block_of == l  # the user's positions
        rep = self._release((X[0][perm[0]] > 0.5)[None, :] & mine[None, :], perm, rng)[0]
        out[perm[0][mine]] = rep[mine]
        return out

    def estimate(self, reports):
        """θ̂ (d,): T_j the ones and N the reports about coordinate j (the same N for every j: each group reports
        once on every coordinate), ``clip(c (T_j/N - p0)/(p1 - p0) - τ, 0, 1)``."""
        z = _finite_records(reports, "reports")
        if z.ndim != 2 or z.shape[1] != self.d:
            raise InputError("reports", f"must be an array (n, {self.d}) of block-OUE reports", z.shape)
        if np.any((z != -1) & (z != 0) & (z != 1)):
            raise InputError("reports", "must hold 0/1 bits on each user's block and -1 elsewhere")
        Nj = np.sum(z >= 0, axis=0)
        if Nj.size == 0 or Nj.min() < 1 or Nj.min() != Nj.max():
            raise InputError("reports", "must cover every coordinate equally often (whole groups of m users, n >= m)")
        return self._BO.debias(np.sum(z == 1, axis=0), int(Nj[0]), self.p0, self.p1, self.c, self.tau)

    def simulate(self, distribution, n, rng, reps):
        """``reps`` estimates (reps, d) for independent X_ij ~ Bern(θ_j), ``distribution = θ``:
        :func:`boundcalc.mechanisms.block_oue.estimates` (the same :func:`~boundcalc.mechanisms.block_oue.release`
        and :func:`~boundcalc.mechanisms.block_oue.debias` as privatize_all and estimate; the public permutations
        drawn from ``rng``)."""
        theta = np.asarray(distribution, float)
        if theta.shape != (self.d,) or not np.all((theta >= 0) & (theta <= 1)):
            raise InputError("distribution", f"must be θ ∈ [0, 1]^{self.d}", theta.shape)
        return self._BO.estimates(theta, int(n), self.eps, self.m, self.c, self.tau, int(reps), as_rng(rng))

    def channel(self):
        """Q[y, x] for one user and a block of w = ⌈d/m⌉ coordinates: outputs y ∈ {0,1}^w (row index Σ_k y_k 2^k),
        inputs the kept one-hot vector: column 0 none kept, column 1 + a kept coordinate a of the block. A record
        with several ones in the block is the uniform mixture of their columns (the choice is a randomisation before
        OUE); a smaller block is a marginal. None when 2^w > CHANNEL_LIMIT."""
        w = self.w
        if 2 ** w > CHANNEL_LIMIT:
            return None
        y = (np.arange(2 ** w)[:, None] >> np.arange(w)[None, :]) & 1  # (2^w, w)
        onehot = np.vstack([np.zeros(w, int), np.eye(w, dtype=int)])  # (w + 1, w)
        pr = np.where(onehot[None, :, :] == 1, np.where(y[:, None, :] == 1, self.p1, 1 - self.p1),
                      np.where(y[:, None, :] == 1, self.p0, 1 - self.p0))
        return np.prod(pr, axis=2)

    def _privacy(self) -> dict:
        if self.channel() is not None:
            out = super()._privacy()
            out["method"] += " (one-hot OUE over a block; a record's law is a mixture of its columns)"
            return out
        # two kept inputs differ in at most two bits of the block (e_a vs e_b; one bit for e_a vs none): the worst
        # ratio is the product of the worst per-bit ratios in each direction (rational arithmetic on the floats)
        p0, p1 = Fraction(self.p0), Fraction(self.p1)
        up = max(p1 / p0, (1 - p1) / (1 - p0))
        down = max(p0 / p1, (1 - p0) / (1 - p1))
        ratio = up * down if self.w >= 2 else max(up, down)
        return _ratio_verdict(math.log(ratio.numerator) - math.log(ratio.denominator), self.eps,
                              "exact per-bit OUE ratios, rational arithmetic (two kept one-hot inputs differ in at most "
                              "two bits; a record's law is a mixture over the kept one)", p0=self.p0, p1=self.p1)


def _block_oue(c):
    from . import block_oue as BO

    s = float(c.v["s"])
    _, m, cc, tau = BO.tuned(c.n, c.eps, c.d, s)  # the tuned mechanism behind the certified value
    if not m:
        raise no_mechanism("sparse-bernoulli", "local", c.common["label"])
    return BlockOUERandomizer(c.d, s, c.eps, m, cc, tau, **c.common)


#: sparse Bernoulli upper bound -> its randomizer (bco-reduction, order only, has none)
SPARSE_BERNOULLI = {"zero": lambda c: ZeroEstimator(c.d, c.eps, **c.common),
                    "coordinate-subsampling": _sparse(None), "truncated-rr": _sparse("K"),
                    "projected-truncated-rr": _sparse("K_prr"), "truncated-privunit": _sparse("K_pu"),
                    "projected-privunit": _sparse("K_pu"), "block-oue": _block_oue,
                    "pattern-rr": lambda c: PatternRRRandomizer(c.d, float(c.v["s"]), c.eps, **c.common)}


def sparse_bernoulli_mechanism(values: dict, upper, bound=None) -> LocalRandomizer:
    """The randomizer of a sparse Bernoulli (local) upper bound (the hook ``SparseBernoulli.mechanism_local``)."""
    return _build("sparse-bernoulli", SPARSE_BERNOULLI, values, upper)


# ============================================================================== density, local (histogram.py, series.py)

def _unit_records(records, name="records") -> np.ndarray:
    x = _finite_records(records, name)
    if x.ndim == 2 and x.shape[1] == 1:
        x = x[:, 0]
    if x.ndim != 1:
        raise InputError(name, "must be a one-dimensional array of points of [0, 1]", x.shape)
    if x.size and (x.min() < 0 or x.max() > 1):
        raise InputError(name, "must lie in [0, 1] (the density's support); rescale the data first")
    return x


class DensityHistogramRandomizer(LocalRandomizer):
    """Histogram on m equal bins of [0, 1]: each user's bin index is privatized by a frequency randomizer on the m
    bins (:class:`DiscreteRandomizer`: Laplace(2/ε) on the one-hot vector, randomized response on each of its bits,
    or subset selection), the server's unbiased bin probabilities p̂ give the bin heights f̂_j = m p̂_j, shrunk toward
    f ≡ 1 for subset selection: f̂ = 1 + λ(m p̂ - 1). Records are points of [0, 1] (others refused); the estimate is
    the vector of the m bin heights (:meth:`evaluate` gives f̂ at points)."""

    problem = "density"

    def __init__(self, family: str, m: int, eps: float, s: int | None = None, lam: float | None = None, **kw):
        self.family, self.m, self.lam = family, int(m), lam
        kind = {"hist-laplace": "laplace", "hist-rr": "rr", "hist-subset": "subset"}[family]
        self.inner = DiscreteRandomizer(kind, self.m, eps, s=s, problem="density", label=kw.get("label", family),
                                        name=family, n=kw.get("n", 1), certified_risk=None, parameters={})
        e = self.inner.eps  # the bin randomizer's release level
        params = {"m": self.m, "eps": e, **{k: v for k, v in self.inner.parameters.items() if k not in ("d", "eps")}}
        if lam is not None:
            params["lambda"] = float(lam)
        super().__init__(eps=eps, level=e, parameters={**params, **kw.pop("parameters", {})}, **kw)

    def default_notes(self):
        return ("records: points of [0, 1] (an array of shape (n,)); points outside are refused",
                f"estimate: the heights of the {self.m} bins [j/m, (j+1)/m) (evaluate(estimate, x) gives f̂(x))")

    def bins(self, x) -> np.ndarray:
        return np.minimum((np.asarray(x) * self.m).astype(np.int64), self.m - 1)

    def privatize_all(self, records, rng=None):
        return self.inner.privatize_all(self.bins(_unit_records(records)), rng)

    def _heights(self, p_hat):
        g = self.m * np.asarray(p_hat, float)
        return g if self.lam is None else 1.0 + self.lam * (g - 1.0)

    def estimate(self, reports):
        return self._heights(self.inner._linear(reports))

    def evaluate(self, estimate, x):
        """f̂ at the points x of [0, 1] from an estimate (bin heights)."""
        return np.asarray(estimate, float)[..., self.bins(_unit_records(np.atleast_1d(x), "x"))]

    def simulate(self, distribution, n, rng, reps):
        """``reps`` estimates (reps, m) from n users with bin probabilities ``distribution``: the exact law of the
        released counts (Laplace, randomized response: :func:`boundcalc.mechanisms.histogram.local_counts`; subset
        selection: :func:`boundcalc.mechanisms.discrete.estimate`)."""
        from . import histogram as H

        p, rng, n = np.asarray(distribution, float), as_rng(rng), int(n)
        if self.family == "hist-subset":
            return self._heights(self.inner.simulate(p, n, rng, reps))
        c = H.local_counts(rng, n, p, int(reps), self.eps, self.inner.family)
        return self._heights(c / n)

    def channel(self):
        """The bin randomizer's channel Q[y, j] (the binning is deterministic)."""
        return self.inner.channel()

    def _privacy(self) -> dict:
        return self.inner._privacy()


class DensitySeriesRandomizer(LocalRandomizer):
    """Cosine series with K terms: each user releases an unbiased ε-LDP view of v(x) = (√2 cos(πjx))_{j<=K}
    ∈ [-√2, √2]^K (ℓ∞ sampling, or Laplace(2√2K/ε) on each coefficient); the estimate is the coefficient vector
    ĉ = mean of the reports, f̂ = 1 + Σ_j ĉ_j √2 cos(πjx) (:meth:`evaluate`). Records are points of [0, 1]."""

    problem = "density"

    def __init__(self, family: str, K: int, eps: float, **kw):
        from .series import R_BASIS

        self.family, self.K = family, int(K)
        e = release_level(eps, math.inf if family == "series-laplace" else 1)
        params = {"K": self.K, "eps": e}
        if family == "series-laplace":
            params["scale"] = 2 * R_BASIS * self.K / e
        super().__init__(eps=eps, level=e, parameters={**params, **kw.pop("parameters", {})}, **kw)
        self.inner = (VectorRandomizer("linf-sampling", R_BASIS, "linf", self.K, e, problem="density",
                                       label="ℓ∞ sampling", name=family, n=self.n, certified_risk=None, parameters={})
                      if family == "series-linf" else None)

    def default_notes(self):
        return ("records: points of [0, 1] (an array of shape (n,)); points outside are refused",
                f"estimate: the {self.K} cosine coefficients ĉ_j; f̂(x) = 1 + Σ_j ĉ_j √2 cos(πjx) (evaluate)")

    def privatize_all(self, records, rng=None):
        from .series import basis

        v, rng = basis(_unit_records(records), self.K), as_rng(rng)
        if self.inner is not None:
            return self.inner._release(v, rng)
        return v + rng.laplace(0.0, self.parameters["scale"], size=v.shape)

    def estimate(self, reports):
        z = _finite_records(reports, "reports")
        if z.ndim != 2 or z.shape[1] != self.K or z.shape[0] == 0:
            raise InputError("reports", f"must be an array (n, {self.K}) of reports, n >= 1", z.shape)
        return z.mean(axis=0)

    def evaluate(self, estimate, x):
        from .series import basis

        return 1.0 + basis(_unit_records(np.atleast_1d(x), "x"), self.K) @ np.asarray(estimate, float)

    def simulate(self, distribution, n, rng, reps):
        """``reps`` coefficient estimates (reps, K): ``distribution(size)`` draws points of [0, 1]; ℓ∞ sampling runs
        user by user, Laplace from the exact law of the sum of the users' noises
        (:func:`boundcalc.mechanisms.series.estimate_coefficients`)."""
        from . import series as SER

        rng = as_rng(rng)
        x = np.asarray(distribution((int(reps), int(n))), float)
        return SER.estimate_coefficients(x, self.K, self.eps, "linf" if self.inner is not None else "laplace", rng)

    def _privacy(self) -> dict:
        if self.inner is not None:
            return self.inner._privacy()
        # ℓ1 sensitivity of v: Σ_j |φ_j(x) - φ_j(x')| <= K · 2√2 (each |φ_j| <= √2), attained at x = 0, x' = 1 for odd j
        sens = 2 * math.sqrt(2.0) * self.K
        b = self.parameters["scale"]
        return _ratio_verdict(sens / b, self.eps, "calibration: ℓ1 sensitivity 2√2K of the basis vector / Laplace "
                              "scale", sensitivity=sens, scale=b)


class FlatDensity(LocalRandomizer):
    """f̂ ≡ 1: uses no data (every report is empty); the estimate is the one bin height 1."""

    problem = "density"
    no_data = True

    def __init__(self, eps: float, **kw):
        super().__init__(eps=eps, parameters={}, **kw)

    def privatize_all(self, records, rng=None):
        return np.zeros((_unit_records(records).size, 0))

    def estimate(self, reports):
        return np.ones(1)

    def evaluate(self, estimate, x):
        return np.ones(np.atleast_1d(x).shape)

    def simulate(self, distribution, n, rng, reps):
        return np.ones((int(reps), 1))

    def channel(self):
        return np.ones((1, 1))


def _hist_subset(c):
    from . import histogram as H

    m = int(c.free["m"])
    s_ = H.best_subset_size(m, c.eps)
    V = m * (H.subset_second_moment(m, c.eps, s_) - 1 / m) / c.n  # m E‖p̂ - p‖² <= V
    return DensityHistogramRandomizer(c.name, m, c.eps, s=s_, lam=c.shrink(m, V), **c.common)


#: local density upper bound -> its randomizer
DENSITY = {"uniform": lambda c: FlatDensity(c.eps, **c.common),
           "hist-laplace": lambda c: DensityHistogramRandomizer(c.name, int(c.free["m"]), c.eps, **c.common),
           "hist-rr": lambda c: DensityHistogramRandomizer(c.name, int(c.free["m"]), c.eps, **c.common),
           "hist-subset": _hist_subset,
           "series-linf": lambda c: DensitySeriesRandomizer(c.name, int(c.free["K"]), c.eps, **c.common),
           "series-laplace": lambda c: DensitySeriesRandomizer(c.name, int(c.free["K"]), c.eps, **c.common)}


def density_local_mechanism(values: dict, upper, bound=None, shrink=None) -> LocalRandomizer:
    """The randomizer of a local density upper bound (the hook ``Density.mechanism_local``). ``shrink(m, V)``: the
    shrinkage weight λ of the subset-selection histogram toward f ≡ 1 (the bound's own choice, given by the
    problem, with V the noise term m E‖p̂ - p‖²)."""
    return _build("density", DENSITY, values, upper, shrink=shrink)


# ============================================================================== linear losses (sgd.py)

class LinearLossRandomizer(LocalRandomizer):
    """Convex risk minimisation with linear losses ⟨θ, x⟩ (docs/problems/linear.md): each user releases an unbiased
    ε-LDP view Z_i of their gradient x_i (ℓ2 sampling or PrivUnit with radius M for the ℓ2 geometry, ℓ∞ sampling for
    the ℓ1 geometry); the server runs, in the order of the reports, projected SGD on the ℓ2 ball of radius r (step
    η = r/(G√n), average iterate), Hedge over the vertices ±r e_j of the ℓ1 ball (η = √(2 log(2d)/n)/(rG)), or
    returns the minimiser -r Z̄/‖Z̄‖ of the averaged loss. The gradients do not depend on θ, so every user can
    privatize at once (non-interactive). Records (gradients) must lie in the ball of radius M (ℓ2, or ℓ∞ for the ℓ1
    geometry): others are refused. The estimate is θ̂ (d,)."""

    problem = "linear"
    record_ndim = 1

    def __init__(self, family: str, d: int, r: float, M: float, geometry: str, eps: float, **kw):
        from .privunit import privunit_factor_value
        from .sampling import l2_gamma_ratio_np, linf_C_np

        self.family, self.d, self.r, self.M, self.geometry = family, int(d), float(r), float(M), geometry
        e = release_level(eps)  # one release (ℓ2, ℓ∞ sampling or PrivUnit)
        coth = 1 + (2 / math.expm1(e) if e < 700 else 0.0)
        if family == "sgd-privunit" or family == "minimiser-privunit":
            self.G, release = self.M * math.sqrt(privunit_factor_value(self.d, e)), "privunit"
        elif geometry == "l2":
            self.G, release = self.M * coth * float(l2_gamma_ratio_np(self.d)), "l2-sampling"
        else:
            self.G, release = self.M * coth * float(linf_C_np(self.d, e)), "linf-sampling"
        params = {"d": self.d, "r": self.r, "M": self.M, "geometry": geometry, "eps": e, "G": self.G}
        super().__init__(eps=eps, level=e, parameters={**params, **kw.pop("parameters", {})}, **kw)
        self.inner = VectorRandomizer(release, self.M, "l2" if geometry == "l2" else "linf", self.d, e,
                                      problem="linear", label=release, name=family, n=self.n, certified_risk=None,
                                      parameters={})

    def default_notes(self):
        ball = "ℓ2" if self.geometry == "l2" else "ℓ∞"
        return (f"records: gradients, vectors of length {self.d} in the {ball} ball of radius M = {self.M:.6g} (an "
                f"array of shape (n, {self.d})); records outside the ball are refused",
                "estimate: θ̂, a vector of length d in the " + ("ℓ2" if self.geometry == "l2" else "ℓ1")
                + f" ball of radius r = {self.r:.6g}; the reports are used in their order")

    def _records(self, records):
        x = _finite_records(records)
        if x.ndim != 2 or x.shape[1] != self.d:
            raise InputError("records", f"must be an array (n, {self.d}) of gradients, one row per user", x.shape)
        size = np.linalg.norm(x, axis=1) if self.geometry == "l2" else np.max(np.abs(x), axis=1, initial=0.0)
        if x.size and size.max() > self.M * (1 + 1e-12):
            raise InputError("records", f"must lie in the {'ℓ2' if self.geometry == 'l2' else 'ℓ∞'} ball of radius "
                             f"M = {self.M:.6g} (the class the certified risk is for)")
        return x

    def eta(self, n: int) -> float:
        if self.geometry == "l2":
            return self.r / (self.G * math.sqrt(n))
        return math.sqrt(2 * math.log(2 * self.d) / n) / (self.r * self.G)

    def privatize_all(self, records, rng=None):
        return self.inner._release(self._records(records), as_rng(rng))

    def estimate(self, reports):
        from . import sgd

        z = _finite_records(reports, "reports")
        if z.ndim != 2 or z.shape[1] != self.d or z.shape[0] == 0:
            raise InputError("reports", f"must be an array (n, {self.d}) of reports, n >= 1", z.shape)
        n = z.shape[0]
        if self.family == "minimiser-privunit":
            zs = z.sum(axis=0)
            nrm = float(np.linalg.norm(zs))
            return -self.r * zs / nrm if nrm > 0 else np.zeros(self.d)
        pos = [0]

        def draw(k):  # the reports in their order (the optimisers' own loops, without privatisation: eps None)
            out = z[pos[0]:pos[0] + k]
            pos[0] += k
            return out

        if self.geometry == "l2":
            return sgd.run_projected_sgd(draw, n, 1, self.d, self.r, self.M, None, self.eta(n), None)[0]
        return sgd.run_hedge(draw, n, 1, self.d, self.r, self.M, None, self.eta(n), None)[0]

    def simulate(self, distribution, n, rng, reps):
        """``reps`` runs (reps, d) on n users whose gradients ``distribution(k)`` draws (k rows at a time): the
        optimisers of :mod:`boundcalc.mechanisms.sgd` vectorised over the runs, privatising as they go."""
        from . import sgd

        rng, n, reps = as_rng(rng), int(n), int(reps)
        if self.family == "minimiser-privunit":
            return sgd.run_ball_minimiser(distribution, n, reps, self.d, self.r, self.M, self.eps, rng)
        if self.geometry == "l2":
            mech = "privunit" if self.family == "sgd-privunit" else "l2"
            return sgd.run_projected_sgd(distribution, n, reps, self.d, self.r, self.M, self.eps, self.eta(n), rng,
                                         mechanism=mech)
        return sgd.run_hedge(distribution, n, reps, self.d, self.r, self.M, self.eps, self.eta(n), rng)

    def channel(self):
        return self.inner.channel()

    def _privacy(self) -> dict:
        return self.inner._privacy()


def _linear(c):
    return LinearLossRandomizer(c.name, c.d, float(c.v["r"]), float(c.v["M"]), c.v["geometry"], c.eps, **c.common)


#: linear-loss upper bound -> its randomizer
LINEAR = {"zero": lambda c: ZeroEstimator(c.d, c.eps, **c.common),
          **{k: _linear for k in ("sgd-l2-sampling", "hedge-linf-sampling", "sgd-privunit", "minimiser-privunit")}}


def linear_mechanism(values: dict, upper, bound=None) -> LocalRandomizer:
    """The randomizer of a linear-loss (local) upper bound (the hook ``Linear.mechanism_local``)."""
    return _build("linear", LINEAR, values, upper)
