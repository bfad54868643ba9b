"""Parameter specifications: names, defaults, allowed ranges and validation of user input.

Every value a user gives (command line or Python) passes through :func:`ParamSpec.parse`; nothing
is ever handed to ``eval``/``sympify``. Strings are parsed with ``float``/``int`` only.
"""
from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass, field

from .errors import InputError


@dataclass(frozen=True)
class ParamSpec:
    """One named parameter of a problem or privacy model.

    kind: ``"int"`` (integer, may be given as 1e6), ``"float"``, or ``"choice"``.
    ``allow_inf``: the string ``inf`` (or float infinity) is allowed (e.g. k = ∞).
    Range: ``low``/``high`` with ``low_open``/``high_open`` for strict inequalities.
    """

    name: str
    kind: str
    default: object
    doc: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    allow_inf: bool = False
    choices: tuple = ()
    structural: bool = False  # fixes the shape of the formulas (e.g. k, model): not vectorised
    #: ``(other parameter, its values)``: this parameter means something only when the other one takes one of
    #: those values (σ of point's normal-mean model); given otherwise, it is refused rather than ignored
    used_with: tuple = ()
    #: at most this many significant digits (a float parameter that becomes an exact rational in the formulas,
    #: such as k: 2.0000000000000004 is 5000000000000001/2500000000000000, whose roots sympy cannot take in time)
    max_digits: int | None = None

    def allowed(self) -> str:
        if self.kind == "choice":
            return "one of " + ", ".join(map(str, self.choices))
        what = {"int": "an integer", "float": "a number"}[self.kind]
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.low_open else '>='} {_fmt(self.low)}")
        if self.high is not None:
            parts.append(f"{'<' if self.high_open else '<='} {_fmt(self.high)}")
        text = what + (" " + " and ".join(parts) if parts else "")
        if self.allow_inf:
            text += " (or inf)"
        if self.max_digits is not None:
            text += f", with at most {self.max_digits} significant digits"
        return f"must be {text}"

    def parse(self, value):
        """Return the validated value (int, float or str) or raise :class:`InputError`."""
        if self.kind == "choice":
            v = str(value).strip().lower()
            if v not in self.choices:
                raise InputError(self.name, self.allowed(), value)
            return v
        if isinstance(value, (bool, bytes, bytearray, memoryview)) or _is_numpy_bool(value):
            raise InputError(self.name, self.allowed(), value)  # True is not 1, b"10" is not text
        if self.kind == "int" and isinstance(value, numbers.Integral):  # exact: no detour through float
            return self._in_range(int(value), value)
        if self.kind == "int" and isinstance(value, str) and _INTEGER.match(value.strip()):
            try:
                x = int(value.strip())
            except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
                raise InputError(self.name, self.allowed(), value) from None
            return self._in_range(x, value)
        if isinstance(value, str):
            text = value.strip().lower()
            if text in ("inf", "+inf", "infinity", "+infinity", "∞"):
                if self.allow_inf:
                    return math.inf
                raise InputError(self.name, self.allowed(), value)
            if not _DECIMAL.match(text):  # ASCII decimal only: no '1_000', no full-width digits, no hex
                raise InputError(self.name, self.allowed() + " (an ASCII decimal number such as 1000 or 1e-6)",
                                 value)
            x = float(text)
            if math.isinf(x):  # a number too large for a float (e.g. 1e400) is not "inf"
                raise InputError(self.name, self.allowed(), value)
        else:
            try:
                x = float(value)
            except OverflowError:  # a Python int beyond float range, e.g. 10**400
                raise InputError(self.name, self.allowed(), f"{str(value)[:12]}… ({len(str(value))} digits)") from None
            except (TypeError, ValueError):
                raise InputError(self.name, self.allowed(), value) from None
        if math.isnan(x):
            raise InputError(self.name, self.allowed(), value)
        if math.isinf(x):
            if x > 0 and self.allow_inf:
                return math.inf
            raise InputError(self.name, self.allowed(), value)
        if self.kind == "int":
            if x != math.floor(x):
                raise InputError(self.name, self.allowed(), value)
            x = int(x)
        if self.max_digits is not None and float(f"{x:.{self.max_digits}g}") != x:
            raise InputError(self.name, self.allowed(), value)
        return self._in_range(x, value)

    def _in_range(self, x, value):
        if self.low is not None and (x < self.low or (self.low_open and x == self.low)):
            raise InputError(self.name, self.allowed(), value)
        if self.high is not None and (x > self.high or (self.high_open and x == self.high)):
            raise InputError(self.name, self.allowed(), value)
        return x


#: an integer written with digits only (parsed exactly, without rounding through a float)
_INTEGER = re.compile(r"[+-]?[0-9]+\Z", re.ASCII)


def _is_numpy_bool(value) -> bool:
    """``numpy.True_`` and friends (not a subclass of ``bool``, yet not a number either)."""
    t = type(value)
    return t.__module__ == "numpy" and t.__name__ in ("bool_", "bool")


#: a plain ASCII decimal number (what a user types): sign, digits, optional point, optional exponent
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\Z", re.ASCII)


def _fmt(x: float) -> str:
    short = f"{x:g}"  # 1e+18 rather than 19 digits, when that is the same number
    if abs(x) >= 1e7 and float(short) == x:
        return short
    return str(int(x)) if float(x).is_integer() else repr(x)


# Parameters shared by many problems (the contract's defaults).
N = ParamSpec("n", "int", 1000, "sample size", low=1, high=1e18)
D = ParamSpec("d", "int", 1, "dimension", low=1, high=1e6)
R = ParamSpec("r", "float", 1.0, "moment radius r (E||X||^k <= r^k)", low=0, low_open=True, high=1e150)

@dataclass
class ParamSet:
    """Validated parameter values plus which were left at their default."""

    values: dict
    defaults_used: set = field(default_factory=set)

    def __getitem__(self, key):
        return self.values[key]

    def get(self, key, default=None):
        return self.values.get(key, default)


@dataclass(frozen=True)
class AutoFloat(ParamSpec):
    """A float parameter whose default ``auto`` is filled in by the problem (model dependent)."""

    def parse(self, value):
        if value is None or (isinstance(value, str) and value.strip().lower() == "auto"):
            return "auto"
        return super().parse(value)

    def allowed(self) -> str:
        return super().allowed() + " (or auto)"
