"""A lossless, eval-free JSON form of sympy expressions, for the caches of :mod:`boundcalc.cache.diskcache`.

Building a bound's expression runs sympy's simplification (``Min``/``Max`` compare their arguments pairwise,
``simplify``, symbolic integrals of the point models): that is most of a fresh process's time. The results of
those operations are pure functions of their (symbolic) arguments, so they can be kept on disk and read back;
this module is the format.

An expression is written as nested JSON lists, one node per sympy object:

- ``["i", "12"]`` Python int, ``["f", "0x1.8p+1"]`` Python float (``float.hex``: exact), ``["t", [...]]`` a
  Python tuple of such objects (e.g. integration limits), ``["s", text]`` a string option
  (e.g. ``conds="none"``), ``["b", true]`` a bool, ``["n"]`` None,
  ``["d", [[key, value], ...]]`` a dict with string keys (in order), ``["l", [...]]`` a Python list;
- ``["R", "module:qualname", [[field, value], ...]]`` a dataclass instance of a boundcalc class (a result
  record such as :class:`boundcalc.render.result.BoundValue`), rebuilt by calling the class with its fields;
- ``["I", "12"]`` Integer, ``["Q", "1", "3"]`` Rational, ``["F", sign, mantissa, exponent, bits, precision]``
  Float (its exact mpmath tuple), ``["C", "Pi"]`` a named singleton (π, e, ∞, nan, true, ...);
- ``["S", name, {assumption: value}]`` Symbol with the assumptions it was created with;
- ``["A", "module:qualname", [arguments...]]`` any other node: the class (looked up only among already
  imported classes of sympy or boundcalc, never evaluated from text) applied to its arguments with
  ``evaluate=False``.

Reading it back never calls ``eval``, ``sympify`` or a parser, and never simplifies: the tree is rebuilt as it
was stored. Anything else (Dummy or Wild symbols, dynamically created functions, non-sympy arguments) raises
:class:`Unencodable`, and the caller then simply does not cache. :func:`roundtrips` is the check every cache
applies before storing: a value is kept only if reading it back gives an identical expression (same classes,
same arguments in the same order, same symbol assumptions, same Float bits).
"""
from __future__ import annotations

import importlib
import sys
from collections import OrderedDict

#: sympy, imported on first need (:func:`_sympy`): a value without sympy objects (a plan, which holds only numbers
#: and text) is written and read back without importing sympy
sp = None


class Unencodable(TypeError):
    """The object has a part this format does not represent (it is then computed, not cached)."""


_SINGLETON_NAMES = ("Pi", "Exp1", "EulerGamma", "Catalan", "GoldenRatio", "TribonacciConstant", "Infinity",
                    "NegativeInfinity", "NaN", "ComplexInfinity", "ImaginaryUnit", "true", "false", "EmptySet",
                    "Reals", "Integers", "Naturals", "UniversalSet")
_SINGLETONS = {}
_SINGLETON_TYPES = {}


def _sympy():
    """sympy (imported, and the table of its named singletons filled, on first call)."""
    global sp
    if sp is None:
        import sympy

        for name in _SINGLETON_NAMES:
            try:
                _SINGLETONS[type(getattr(sympy.S, name)).__name__] = getattr(sympy.S, name)
            except AttributeError:  # pragma: no cover - an older sympy without the constant
                pass
        _SINGLETON_TYPES.update({type(v): k for k, v in _SINGLETONS.items()})
        sp = sympy
    return sp


def _is_basic(obj) -> bool:
    """Whether ``obj`` is a sympy object; never true while sympy is not imported (then nothing can be one), so the
    test imports nothing."""
    return "sympy" in sys.modules and isinstance(obj, _sympy().Basic)

#: modules whose classes may appear in a stored expression
_ALLOWED_MODULE_PREFIXES = ("sympy.", "boundcalc.")


def encode(obj, keep: bool = False):
    """The JSON form of a sympy object (or a Python int / float argument). Raises :class:`Unencodable`.

    ``keep=True`` (for values written again and again, such as whole results that share their bound
    expressions): each sympy expression with arguments is written once per process, checked to read back
    identical, and its form reused for the same object afterwards (:data:`KEPT_SIZE`); :func:`roundtrips` then
    reads that form back as the very object it was checked against."""
    if obj is None:
        return ["n"]
    if isinstance(obj, bool):  # before int: True is an int
        return ["b", obj]
    if isinstance(obj, int):
        return ["i", str(obj)]
    if isinstance(obj, float):
        return ["f", obj.hex()]
    if isinstance(obj, tuple):
        return ["t", [encode(a, keep) for a in obj]]
    if isinstance(obj, str):
        return ["s", obj]
    if type(obj) is dict and all(isinstance(k, str) for k in obj):
        return ["d", [[k, encode(v, keep)] for k, v in obj.items()]]
    if type(obj) is list:
        return ["l", [encode(a, keep) for a in obj]]
    if _is_record(obj):
        return ["R", f"{type(obj).__module__}:{type(obj).__qualname__}",
                [[f.name, encode(getattr(obj, f.name), keep)] for f in _record_fields(type(obj))]]
    if not _is_basic(obj):
        raise Unencodable(type(obj).__name__)
    if not keep or not obj.args:
        return _encode_tree(obj)
    kept = _KEPT.get(id(obj))
    if kept is not None and kept[0] is obj:
        _KEPT.move_to_end(id(obj))
        return kept[1]
    data = _encode_tree(obj)
    try:
        ok = identical(decode(data), obj)
    except Exception:  # noqa: BLE001 - a form that does not read back is returned unkept (roundtrips says no)
        ok = False
    if ok:
        _KEPT[id(obj)] = (obj, data)
        _READ[id(data)] = (data, obj)
        while len(_KEPT) > KEPT_SIZE:
            _, (_, old_data) = _KEPT.popitem(last=False)
            _READ.pop(id(old_data), None)
    return data


#: how many expressions :func:`encode` keeps with their form (least recently used dropped first)
KEPT_SIZE = 1024
#: id(expression) -> (expression, its form), for expressions whose form reads back identical: a result holds the
#: same bound expressions at every point, so each is written and checked once per process, not once per result
_KEPT: OrderedDict = OrderedDict()
#: id(form) -> (form, expression): the same forms, read back as the expression they were checked against
_READ: dict = {}


def _encode_tree(obj):
    """The form of a sympy object, node by node (see the module docstring)."""
    t = type(obj)
    if t in _SINGLETON_TYPES:
        return ["C", _SINGLETON_TYPES[t]]
    if obj.is_Integer:
        return ["I", str(int(obj))]
    if obj.is_Rational:
        return ["Q", str(obj.p), str(obj.q)]
    if obj.is_Float:
        sign, man, exp, bits = obj._mpf_
        return ["F", sign, str(man), exp, bits, obj._prec]
    if t is sp.Symbol:
        orig = getattr(obj, "_assumptions_orig", None)
        if orig is None:  # pragma: no cover - sympy < 1.12
            raise Unencodable("Symbol without recorded assumptions")
        return ["S", obj.name, dict(orig)]  # creation order kept (srepr prints it)
    if isinstance(obj, (sp.Symbol, sp.Wild)) or not obj.args and not isinstance(obj, sp.Tuple):
        raise Unencodable(t.__name__)  # Dummy, Wild, other atoms
    module = t.__module__ or ""
    if not module.startswith(_ALLOWED_MODULE_PREFIXES) or _resolve(module, t.__qualname__) is not t:
        raise Unencodable(f"{module}.{t.__qualname__}")
    return ["A", f"{module}:{t.__qualname__}", [_encode_arg(a) for a in obj.args]]


def _encode_arg(a):
    """An argument of a sympy node: sympy objects node by node (not kept one by one), other values by :func:`encode`."""
    return _encode_tree(a) if _is_basic(a) else encode(a)


def _record_fields(cls):
    import dataclasses

    return dataclasses.fields(cls)


def _is_record(obj) -> bool:
    """A dataclass instance of a boundcalc class whose every field is set by its constructor and that carries
    no other attribute (so that calling the class with the fields rebuilds it)."""
    import dataclasses

    cls = type(obj)
    if not dataclasses.is_dataclass(cls) or not (cls.__module__ or "").startswith("boundcalc."):
        return False
    fields = _record_fields(cls)
    if not all(f.init for f in fields) or getattr(obj, "__dict__", None) is None:
        return False
    return set(vars(obj)) == {f.name for f in fields} and _resolve_record(cls.__module__, cls.__qualname__) is cls


def _lookup(module: str, qualname: str, prefixes: tuple, is_allowed):
    """The class ``module:qualname``, looked up only in modules starting with one of ``prefixes`` (importing the
    module if needed: a sympy or boundcalc module named by our own cache) and accepted by ``is_allowed``."""
    if not module.startswith(prefixes):
        raise Unencodable(module)
    obj = sys.modules.get(module) or importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if not (isinstance(obj, type) and is_allowed(obj)):
        raise Unencodable(f"{module}:{qualname}")
    return obj


def _resolve_record(module: str, qualname: str):
    import dataclasses

    return _lookup(module, qualname, ("boundcalc.",), dataclasses.is_dataclass)


def _resolve(module: str, qualname: str):
    return _lookup(module, qualname, _ALLOWED_MODULE_PREFIXES, lambda cls: issubclass(cls, _sympy().Basic))


#: the tags of sympy nodes (reading one imports sympy)
_SYMPY_TAGS = frozenset("ASIQFC")


def decode(data):
    """The sympy object (or Python number) written by :func:`encode`, rebuilt without evaluation."""
    kept = _READ.get(id(data))
    if kept is not None and kept[0] is data:
        return kept[1]
    tag = data[0]
    if tag in _SYMPY_TAGS:
        _sympy()
    if tag == "A":
        module, qualname = data[1].split(":")
        cls = _resolve(module, qualname)
        args = [decode(a) for a in data[2]]
        try:
            return cls(*args, evaluate=False)
        except TypeError:  # classes without an evaluate flag (Tuple, ExprCondPair, ...)
            return cls(*args)
    if tag == "S":
        return sp.Symbol(data[1], **data[2])
    if tag == "I":
        return sp.Integer(int(data[1]))
    if tag == "Q":
        return sp.Rational(int(data[1]), int(data[2]))
    if tag == "F":
        return sp.Float._new((data[1], int(data[2]), data[3], data[4]), data[5])
    if tag == "C":
        return _SINGLETONS[data[1]]
    if tag == "i":
        return int(data[1])
    if tag == "f":
        return float.fromhex(data[1])
    if tag == "t":
        return tuple(decode(a) for a in data[1])
    if tag == "s":
        return data[1]
    if tag == "b":
        return bool(data[1])
    if tag == "d":
        return {k: decode(v) for k, v in data[1]}
    if tag == "l":
        return [decode(a) for a in data[1]]
    if tag == "R":
        module, qualname = data[1].split(":")
        cls = _resolve_record(module, qualname)
        return cls(**{name: decode(v) for name, v in data[2]})
    if tag == "n":
        return None
    raise Unencodable(f"unknown tag {tag!r}")


def identical(a, b) -> bool:
    """Same tree: same classes and arguments in the same order, same symbols, same Float bits (stricter than
    ``==``, which for example equates a Float and the Integer of the same value in some versions)."""
    if type(a) is not type(b):
        return False
    if a is b and _is_basic(a):  # one immutable object: the same tree
        return True
    if isinstance(a, float):
        return a.hex() == b.hex()
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(identical(a[k], b[k]) for k in a)
    if a is None or isinstance(a, (bool, int, str)):
        return a == b
    if _is_record(a):
        return all(identical(getattr(a, f.name), getattr(b, f.name)) for f in _record_fields(type(a)))
    if not _is_basic(a):
        return a == b
    if a.is_Float:
        return a._mpf_ == b._mpf_ and a._prec == b._prec
    if a.is_Symbol:
        return a == b
    if not a.args:
        return a == b
    return len(a.args) == len(b.args) and all(identical(x, y) for x, y in zip(a.args, b.args))


def roundtrips(obj, data) -> bool:
    """Whether ``data`` (the :func:`encode` form of ``obj``) reads back as an identical object."""
    try:
        return identical(decode(data), obj)
    except Exception:  # noqa: BLE001 - any failure to rebuild means: do not cache
        return False
