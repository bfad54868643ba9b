"""Shared sympy symbols and the special functions that bounds use, with numeric implementations.

Bounds are sympy expressions in these named symbols. Functions that sympy cannot evaluate fast
(binomial tails, the analytic Gaussian calibration) are sympy ``Function`` classes whose numpy and
mpmath implementations are registered in :data:`NUMPY_IMPL` / :data:`MPMATH_IMPL` and handed to
``lambdify``; the expression stays printable (str and LaTeX) and evaluation stays vectorised.
"""
from __future__ import annotations

import json
import math

import numpy as np
import sympy as sp

from .memo import BoundedMemo
from sympy.codegen.cfunctions import expm1, log1p  # noqa: F401  (re-exported: stable small-x forms)

# problem / privacy parameters
n = sp.Symbol("n", positive=True)
eps = sp.Symbol("epsilon", positive=True)
delta = sp.Symbol("delta", positive=True)
alpha = sp.Symbol("alpha", positive=True)
d = sp.Symbol("d", positive=True)
r = sp.Symbol("r", positive=True)

# free parameters of bounds
T = sp.Symbol("T", positive=True)  # truncation radius
p = sp.Symbol("p", positive=True)  # mixture weight
M = sp.Symbol("M", nonnegative=True)  # group size in the uniformity-of-mass coupling (docs/methods/uniformity-of-mass.md)
s = sp.Symbol("s", positive=True)  # packing distance
h = sp.Symbol("h", positive=True)  # half-gap of a two-point construction

#: map from parameter name (as used in params dicts) to its symbol
PARAM_SYMBOLS = {"n": n, "eps": eps, "delta": delta, "d": d, "r": r}


# ------------------------------------------------- sympy operations kept across processes

#: results one memoised operation keeps in memory (beyond it: computed or read from disk each time)
_MEMO_LIMIT = 20_000


class _ExpressionMemo:
    """Expressions by text key, in memory and in one disk-cache file (:class:`boundcalc.cache.diskcache.JsonStore`),
    stored in the eval-free form of :mod:`boundcalc.cache.exprcodec` and only if they read back identical."""

    def __init__(self, file_name: str):
        self.file_name = file_name
        self.memo: dict = {}
        self.store = None

    def get_or_compute(self, key: str, compute):
        from ..cache import exprcodec

        hit = self.memo.get(key)
        if hit is not None:
            return hit
        if self.store is None:
            from ..cache.diskcache import JsonStore

            self.store = JsonStore(self.file_name)
        stored = self.store.get(key)
        if stored is not None:
            try:
                value = self.memo[key] = exprcodec.decode(stored)
                return value
            except Exception:  # noqa: BLE001 - an unreadable entry is recomputed
                pass
        value = compute()
        if len(self.memo) < _MEMO_LIMIT:
            self.memo[key] = value
        try:
            data = exprcodec.encode(value)
        except exprcodec.Unencodable:
            return value
        if exprcodec.roundtrips(value, data):
            self.store.put(key, data)
        return value

    def clear(self):
        self.memo.clear()
        if self.store is not None:
            self.store.clear()


def _disk_memo(op, name: str):
    """``op`` (a sympy operation: ``Min``, ``simplify``, ...) memoised in memory and in the disk cache.

    A bound's expression is built by the same Python code in every process; the expensive steps are a few
    sympy operations (pairwise comparisons in ``Min``/``Max``, ``simplify``, symbolic integrals), whose result
    depends only on their arguments. Their arguments and results are stored in the eval-free form of
    :mod:`boundcalc.cache.exprcodec`, in a file keyed by the package fingerprint (:mod:`boundcalc.cache.diskcache`), and
    a result is stored only if it reads back identical; so a cached result is the very expression sympy
    returned, and sympy stays the one source of every formula. Arguments that the format cannot represent are
    simply computed.
    """
    import functools

    memo = _ExpressionMemo(name if name.startswith("boundcalc.") else f"boundcalc.sympy.{name}")

    @functools.wraps(op)
    def wrapper(*args, **kwargs):
        from ..cache import exprcodec

        try:
            key = json.dumps([exprcodec.encode(a) for a in args] + [[k, exprcodec.encode(v)]
                                                                     for k, v in sorted(kwargs.items())],
                             separators=(",", ":"))
        except exprcodec.Unencodable:
            return op(*args, **kwargs)
        return memo.get_or_compute(key, lambda: op(*args, **kwargs))

    wrapper.cache_clear = memo.clear
    return wrapper


def cached_expression(fn):
    """Decorator: memoise a pure expression-building function (sympy or number arguments, a sympy result) in
    memory and in the disk cache, as :func:`_disk_memo` does for sympy's own operations. For functions of
    this package whose result depends only on their arguments (the package fingerprint covers their code)."""
    return _disk_memo(fn, f"{fn.__module__}.{fn.__qualname__}")


def _code_identity(code) -> str:
    """A digest of a code object's bytecode, names and constants (nested code objects by their own digest)."""
    import hashlib

    consts = [(_code_identity(c) if hasattr(c, "co_code") else repr(c)) for c in code.co_consts]
    h = hashlib.sha256(code.co_code)
    h.update(repr((code.co_names, code.co_varnames, code.co_freevars, consts)).encode())
    return h.hexdigest()[:24]


_THUNKS = None


def thunk_value(fn):
    """``fn()`` for a zero-argument expression builder (``lambda: <sympy expression>``), memoised in memory and
    on disk like :func:`cached_expression`.

    The key is where the function is defined (module, qualified name, first line), a digest of its code, and the
    exact form (:mod:`boundcalc.cache.exprcodec`) of every value it closes over and of its defaults; its globals are
    the module's constants, covered by the package fingerprint. So two calls share a key only if they run the
    same code on the same values. A closure over anything the format cannot represent is simply called.
    """
    from ..cache import exprcodec

    code = getattr(fn, "__code__", None)
    if code is None:
        return fn()
    try:
        cells = [exprcodec.encode(c.cell_contents) for c in (fn.__closure__ or ())]
        key = json.dumps([fn.__module__, fn.__qualname__, code.co_firstlineno, _code_identity(code), cells,
                          exprcodec.encode(tuple(fn.__defaults__ or ()))], separators=(",", ":"))
    except (exprcodec.Unencodable, ValueError):  # ValueError: an empty cell
        return fn()
    global _THUNKS
    if _THUNKS is None:
        _THUNKS = _ExpressionMemo("boundcalc.built-expressions")
    return _THUNKS.get_or_compute(key, fn)


#: memoised sympy operations: use these (``S.Min(...)``) when building bounds
Min = _disk_memo(sp.Min, "Min")
Max = _disk_memo(sp.Max, "Max")
#: a bound's LaTeX (``--json``, ``to_latex``), memoised the same way: sympy's printer tests every negative exponent
#: for constancy by evaluating it, which costs seconds on the staircase bound's e^{-min(ε, 700)} terms
latex = _disk_memo(sp.latex, "latex")
simplify = _disk_memo(sp.simplify, "simplify")
integrate = _disk_memo(sp.integrate, "integrate")
diff = _disk_memo(sp.diff, "diff")
limit = _disk_memo(sp.limit, "limit")


def _pow(tex: str, exp) -> str:
    return tex if exp is None else rf"{{{tex}}}^{{{exp}}}"


class BinomSF(sp.Function):
    """``BinomSF(M, n, p) = P(Binomial(n, p) > M)``: the exact binomial upper tail (regularised beta)."""

    nargs = 3

    def _latex(self, printer, exp=None):
        m, nn, pp = (printer._print(a) for a in self.args)
        return _pow(rf"\Pr\left[\mathrm{{Bin}}({nn}, {pp}) > {m}\right]", exp)


class BinomTVComplement(sp.Function):
    """``1 - TV(Bin(n, q1), Bin(n, q2))``, computed exactly from binomial CDFs (no cancellation).

    The likelihood ratio of the two binomials is monotone in the count, so the TV is attained on a
    set ``{j <= j0}`` and ``1 - TV = sf_{q_lo}(j0) + cdf_{q_hi}(j0)`` for the smaller ``q_lo``.
    """

    nargs = 3

    def _latex(self, printer, exp=None):
        nn, a, b = (printer._print(x) for x in self.args)
        return _pow(rf"\left(1 - \mathrm{{TV}}(\mathrm{{Bin}}({nn},{a}), \mathrm{{Bin}}({nn},{b}))\right)", exp)


class GaussSigmaAnalytic(sp.Function):
    """Noise multiplier of the exactly calibrated Gaussian mechanism (Balle & Wang 2018, Thm 8).

    ``GaussSigmaAnalytic(eps, delta)`` is the smallest σ such that N(0, σ²) noise on a query of
    ℓ2 sensitivity 1 is (ε,δ)-DP: ``Φ(1/(2σ) - εσ) - e^ε Φ(-1/(2σ) - εσ) <= δ``.
    """

    nargs = 2

    def _latex(self, printer, exp=None):
        a, b = (printer._print(x) for x in self.args)
        return _pow(rf"\sigma_{{\mathrm{{aG}}}}({a}, {b})", exp)


# ---------------------------------------------------------------- numeric implementations

def _binom_sf(m, nn, pp):
    """P(Bin(n,p) > m) = I_p(m+1, n-m) (regularised incomplete beta; works for n up to 1e18,
    where scipy's bdtrc casts n to a C int and fails)."""
    from scipy import special

    m, nn, pp = np.broadcast_arrays(np.asarray(m, float), np.asarray(nn, float), np.asarray(pp, float))
    m = np.floor(m)
    inside = (m >= 0) & (m < nn)
    with np.errstate(all="ignore"):
        out = special.betainc(np.where(inside, m + 1, 1.0), np.where(inside, nn - m, 1.0), pp)
    out = np.where(m >= nn, 0.0, out)
    return np.where(m < 0, 1.0, out)


def _binom_cdf(j, nn, pp):
    """P(Bin(n,p) <= j) = 1 - I_p(j+1, n-j), from the complementary incomplete beta at the exact p (the form
    I_{1-p}(n-j, j+1) rounds 1 - p first: a relative error of about n·1e-16 in the result)."""
    from scipy import special

    inside = (j >= 0) & (j < nn)
    with np.errstate(all="ignore"):
        out = special.betaincc(np.where(inside, j + 1, 1.0), np.where(inside, nn - j, 1.0), pp)
    out = np.where(j >= nn, 1.0, out)
    return np.where(j < 0, 0.0, out)


#: above this n the float64 "exact" binomial TV is not trusted: the crossing point j0 ~ n/2 moves by
#: ~ n·1e-16/|q1-q2| counts (rounding of q1, q2), which exceeds the binomial's sd √n/2 once n ≳ 1e12
EXACT_BINOMIAL_TV_MAX_N = 1e10


def _binom_tv_complement(nn, q1, q2):
    """1 - TV(Bin(n,q1), Bin(n,q2)), exact, for n <= EXACT_BINOMIAL_TV_MAX_N; nan beyond (an unusable
    value, never a wrong one). For any n use :func:`boundcalc.methods.ldp.binomial_tv_bound`, which
    switches to the Hellinger bound there."""
    nn = np.asarray(nn, float)
    return np.where(nn <= EXACT_BINOMIAL_TV_MAX_N, _binom_tv_complement_exact(nn, q1, q2), np.nan)


def _binom_tv_complement_exact(nn, q1, q2):
    nn, q1, q2 = np.broadcast_arrays(np.asarray(nn, float), np.asarray(q1, float), np.asarray(q2, float))
    lo = np.minimum(q1, q2)
    hi = np.maximum(q1, q2)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log1p(-lo) - np.log1p(-hi)  # log((1-lo)/(1-hi)) > 0
        b = np.log(hi) - np.log(lo)  # log(hi/lo) > 0
        j0 = nn * a / (a + b)  # pmf_lo(j) > pmf_hi(j) iff j < j0
    j = np.ceil(j0) - 1.0
    j = np.where(hi == 1, nn - 1.0, j)  # Bin(n, 1) is a point mass at n: Bin(n, lo) wins below n
    j = np.where(lo == 0, 0.0, j)  # Bin(n, 0) is a point mass at 0, which beats Bin(n, hi) there
    j = np.clip(j, -1.0, nn)
    out = _binom_sf(j, nn, lo) + _binom_cdf(j, nn, hi)
    out = np.where(lo == hi, 1.0, out)
    return np.clip(out, 0.0, 1.0)


def gauss_sigma_analytic_scalar(e: float, dl: float) -> float:
    """Smallest σ with δ(σ) <= dl for sensitivity 1, rounded up (memoised; see :mod:`boundcalc.core.gauss_calibration`)."""
    from .gauss_calibration import sigma_analytic_scalar

    return sigma_analytic_scalar(e, dl)


def _gauss_sigma(e, dl):
    """Vectorised analytic Gaussian calibration (each distinct (ε, δ) solved once, over arrays)."""
    from .gauss_calibration import sigma_analytic

    return sigma_analytic(e, dl)


def _lazy_special(name):
    """A scipy.special function imported on first call (keeps `import scipy` out of the CLI's start-up)."""

    def fn(*args):
        from scipy import special

        return getattr(special, name)(*args)

    fn.__name__ = name
    return fn


#: sympy function names printed by lambdify's numpy printer that numpy lacks
_SPECIAL_NAMES = ("erf", "erfc", "erfinv", "erfcinv", "gamma", "loggamma", "gammaln", "digamma", "polygamma",
                  "beta", "betainc", "zeta", "lambertw")

#: generated numeric functions, keyed by (argument symbols, expression, implementations of the
#: expression's implemented functions): each expression is lambdified once per process
_LAMBDIFIED: "OrderedDict" = None
LAMBDIFY_CACHE_SIZE = 1024


def _impl_key(expr):
    """Identity of the Python implementations an expression's functions carry (``_imp_``) or are
    given through :data:`NUMPY_IMPL`, so two expressions that print alike but evaluate differently
    never share a generated function."""
    out = []
    for f in expr.atoms(sp.Function):
        name = type(f).__name__
        imp = getattr(type(f), "_imp_", None)
        out.append((name, id(imp) if imp is not None else None, id(NUMPY_IMPL.get(name))))
    return tuple(sorted(out, key=repr))


def numpy_lambdify(args, expr):
    """``sympy.lambdify`` with the NumPy printer but a namespace of only ``numpy`` and our functions.

    (lambdify's default "numpy" namespace runs ``from numpy import *``, which under numpy 2 imports
    every numpy submodule: ~0.2 s of CLI start-up for nothing; the NumPy printer qualifies its names.)
    Memoised: the same (args, expression) gives the same generated function (an LRU of
    :data:`LAMBDIFY_CACHE_SIZE`); the expression is still the only source of the code.
    """
    global _LAMBDIFIED
    if _LAMBDIFIED is None:
        from collections import OrderedDict

        _LAMBDIFIED = OrderedDict()
    args = tuple(args)
    key = (args, expr, _impl_key(expr))
    fn = _LAMBDIFIED.get(key)
    if fn is not None:
        _LAMBDIFIED.move_to_end(key)
        return fn
    fn = _numpy_lambdify(args, expr)
    _LAMBDIFIED[key] = fn
    while len(_LAMBDIFIED) > LAMBDIFY_CACHE_SIZE:
        _LAMBDIFIED.popitem(last=False)
    return fn


def _numpy_lambdify(args, expr):
    """The generated function, from the disk cache of generated code when this very expression was compiled
    before (in any process of the same package version), else from ``sympy.lambdify``.

    The cache maps the expression (and argument symbols), in the form of :mod:`boundcalc.cache.exprcodec`, to the
    source text ``lambdify`` printed for it; the source is compiled again in a namespace of the same objects
    (numpy, math, our implementations), and kept only if every global name it uses is bound to the very same
    object there as in ``lambdify``'s own namespace. So the function is the one ``lambdify`` would build.
    """
    key = expression_key(args, expr)
    store = _code_store()
    if key is not None:
        source = store.get(key)
        if isinstance(source, str):
            fn = _compile_generated(source)
            if fn is not None:
                return fn
    fn = _fresh_numpy_lambdify(args, expr)
    if key is not None:
        source = _reusable_source(fn)
        if source is not None:
            store.put(key, source)
    return fn


def expression_key(args, expr) -> str | None:
    """The exact text identity of (argument symbols, expression) in the form of :mod:`boundcalc.cache.exprcodec`,
    or None when the expression has a part that form does not represent."""
    from ..cache import exprcodec

    try:
        return json.dumps([[exprcodec.encode(a) for a in args], exprcodec.encode(expr)], separators=(",", ":"))
    except exprcodec.Unencodable:
        return None


_CODE_STORE = None
_GENERATED_NAME = "_lambdifygenerated"


def _code_store():
    global _CODE_STORE
    if _CODE_STORE is None:
        from ..cache.diskcache import JsonStore

        _CODE_STORE = JsonStore("boundcalc.generated-code")
    return _CODE_STORE


def _base_namespace() -> dict:
    """The objects generated code may refer to (what :func:`_fresh_numpy_lambdify` hands to lambdify)."""
    import builtins
    import functools

    return {"numpy": np, "functools": functools, "math": math, **NUMPY_IMPL, "builtins": builtins, "range": range}


def _code_names(code) -> set:
    """The global (and builtin) names that ``code`` and its nested code objects load."""
    import dis

    names = {ins.argval for ins in dis.get_instructions(code) if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            names |= _code_names(const)
    return names


def _reusable_source(fn, base: dict | None = None) -> str | None:
    """The source of a lambdify-generated ``fn`` if compiling it in ``base`` (default :func:`_base_namespace`)
    gives the same function (every global it names is bound to the same object), else None."""
    import linecache

    if fn.__name__ != _GENERATED_NAME or fn.__closure__:
        return None
    lines = linecache.cache.get(fn.__code__.co_filename)
    if not lines:
        return None
    base = _base_namespace() if base is None else base
    glob = fn.__globals__
    for name in _code_names(fn.__code__):
        if name in glob and (name not in base or base[name] is not glob[name]):
            return None
    return "".join(lines[2])


_GENERATED_COUNT = [0]


def _compile_generated(source: str, namespace: dict | None = None):
    try:
        import linecache

        _GENERATED_COUNT[0] += 1
        filename = f"<boundcalc-generated-{_GENERATED_COUNT[0]}>"
        namespace = _base_namespace() if namespace is None else dict(namespace)
        local: dict = {}
        exec(compile(source, filename, "exec"), namespace, local)  # our own cached lambdify output
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        fn = local.get(_GENERATED_NAME)
        return fn if callable(fn) else None
    except Exception:  # noqa: BLE001 - an unusable entry is regenerated
        return None


# ------------------------------------------------------------ the mpmath (high-precision) path

#: names of the special functions whose mpmath implementation (in :data:`MPMATH_IMPL`) computes at mpmath's
#: working precision; every other function of this package is evaluated in float64 even on the mpmath path
#: (its accuracy rests on its own implementation, and :mod:`boundcalc.core.certify` says so)
HIGH_PRECISION = {"BinomSF", "LogSphereCap", "GaussSigmaAnalytic"}

_MP_LAMBDIFIED: dict = {}


def _mpmath_namespace(expr) -> dict:
    """The objects lambdify's mpmath code may refer to: mpmath's names (as ``from mpmath import *``, plus
    sympy's translations), our implementations, and the ``_imp_`` of the expression's own functions."""
    import builtins

    import mpmath
    from sympy.utilities.lambdify import MPMATH_TRANSLATIONS

    ns = {k: getattr(mpmath, k) for k in getattr(mpmath, "__all__", dir(mpmath)) if not k.startswith("_")}
    for sym_name, mp_name in MPMATH_TRANSLATIONS.items():
        if mp_name in ns:
            ns[sym_name] = ns[mp_name]
    ns.update(MPMATH_IMPL)
    for f in expr.atoms(sp.Function):
        imp = getattr(type(f), "_imp_", None)
        if imp is not None:
            ns[type(f).__name__] = imp
    ns.update({"mpmath": mpmath, "builtins": builtins, "range": range})
    return ns


def mpmath_lambdify(args, expr):
    """``sympy.lambdify`` of ``expr`` for mpmath numbers (every operation at mpmath's working precision, apart
    from the float64 functions outside :data:`HIGH_PRECISION`); memoised in memory and, like the numpy code, on
    disk (the source lambdify printed, compiled again only when every name it uses is bound to the very same
    object as in lambdify's own namespace)."""
    args = tuple(args)
    key = (args, expr, _impl_key(expr))
    fn = _MP_LAMBDIFIED.get(key)
    if fn is not None:
        return fn
    text = expression_key(args, expr)
    store = _mp_code_store()
    fn = None
    if text is not None:
        source = store.get(text)
        if isinstance(source, str):
            fn = _compile_generated(source, _mpmath_namespace(expr))
    if fn is None:
        # repeated subexpressions computed once: the same mpmath operations at the same precision, the same value
        fn = _with_shared_subexpressions(sp.lambdify(args, expr, modules=[MPMATH_IMPL, "mpmath"]))
        if text is not None:
            source = _reusable_source(fn, _mpmath_namespace(expr))
            if source is not None:
                store.put(text, source)
    if len(_MP_LAMBDIFIED) >= LAMBDIFY_CACHE_SIZE:
        _MP_LAMBDIFIED.clear()
    _MP_LAMBDIFIED[key] = fn
    return fn


_MP_CODE_STORE = None


def _mp_code_store():
    global _MP_CODE_STORE
    if _MP_CODE_STORE is None:
        from ..cache.diskcache import JsonStore

        _MP_CODE_STORE = JsonStore("boundcalc.generated-code-mpmath")
    return _MP_CODE_STORE


def _fresh_numpy_lambdify(args, expr):
    from sympy.printing.numpy import NumPyPrinter

    printer = NumPyPrinter({"fully_qualified_modules": True, "inline": True, "allow_unknown_functions": True,
                            "user_functions": {k: k for k in NUMPY_IMPL}})
    import functools

    fn = sp.lambdify(args, expr, modules=[NUMPY_IMPL, {"numpy": np, "functools": functools, "math": math}],
                     printer=printer)
    return _with_shared_subexpressions(fn)


#: generated code shorter than this is left as printed (nothing worth sharing)
_SHARE_MIN_SOURCE = 400
_HOISTED_NODES = None


def _with_shared_subexpressions(fn):
    """``fn`` with every repeated subexpression of its code computed once: the same function, faster.

    lambdify prints a closed form as one expression, and the closed forms of tuned bounds repeat their
    tuned parameter many times (the bin count of the density histogram appears 47 times). This rewrites the
    *generated Python code*, not the sympy expression: each syntax subtree (a call, a binary or unary
    operation) that occurs more than once is assigned to a local variable before the ``return`` and its
    occurrences read that variable. Every function the generated code calls is a pure numpy, math or
    boundcalc function, so the variable holds exactly the value the subtree computed in place, with the same
    operations in the same order: the results are bit-for-bit those of the printed code. (sympy's ``cse``
    regroups sums and products, which changes rounding; that is why it is not used.) Code with conditional
    evaluation (``x if c else y``, ``and``/``or``, lambdas, comprehensions) is left as printed.
    """
    import ast
    import linecache

    global _HOISTED_NODES
    if _HOISTED_NODES is None:
        _HOISTED_NODES = (ast.Call, ast.BinOp, ast.UnaryOp)
    lines = linecache.cache.get(fn.__code__.co_filename)
    if not lines or fn.__name__ != _GENERATED_NAME or fn.__closure__:
        return fn
    source = "".join(lines[2])
    if len(source) < _SHARE_MIN_SOURCE:
        return fn
    try:
        tree = ast.parse(source)
        func = tree.body[0]
        if len(tree.body) != 1 or not isinstance(func, ast.FunctionDef) or not isinstance(func.body[-1], ast.Return):
            return fn
        body_nodes = [n for stmt in func.body for n in ast.walk(stmt)]
        if any(isinstance(n, (ast.IfExp, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                              ast.GeneratorExp, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)) for n in body_nodes):
            return fn
        if len(func.body) != 1:
            return fn
        ret = func.body[0]
        keys: dict = {}
        counts: dict = {}
        interned: dict = {}

        def key(node):  # structural key, bottom-up: equal exactly when ast.dump(node) is (each node costs its fields)
            k = keys.get(id(node))
            if k is None:
                parts = [type(node).__name__]
                for name, value in ast.iter_fields(node):
                    parts.append(name)
                    parts.append(field_key(value))
                k = keys[id(node)] = interned.setdefault(tuple(parts), len(interned))
            return k

        def field_key(value):
            if isinstance(value, ast.AST):
                return ("node", key(value))
            if isinstance(value, list):
                return ("list",) + tuple(field_key(v) for v in value)
            return ("value", type(value).__name__, repr(value))  # 1 and 1.0 (and True) stay apart, as in ast.dump

        for node in ast.walk(ret.value):
            if isinstance(node, _HOISTED_NODES):
                counts[key(node)] = counts.get(key(node), 0) + 1
        if not any(c > 1 for c in counts.values()):
            return fn
        names: dict = {}
        assigns: list = []

        class Share(ast.NodeTransformer):
            def generic_visit(self, node):
                k = key(node) if isinstance(node, _HOISTED_NODES) else None  # key of the original subtree
                node = super().generic_visit(node)  # children first: inner shared values are assigned first
                if k is not None and counts.get(k, 0) > 1:
                    name = names.get(k)
                    if name is None:
                        name = names[k] = f"_shared{len(names)}"
                        assigns.append(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=node))
                    return ast.Name(id=name, ctx=ast.Load())
                return node

        ret.value = Share().visit(ret.value)
        func.body = assigns + [ret]
        ast.fix_missing_locations(tree)
        new_source = ast.unparse(tree) + "\n"
        _GENERATED_COUNT[0] += 1
        filename = f"<boundcalc-shared-{_GENERATED_COUNT[0]}>"
        local: dict = {}
        exec(compile(new_source, filename, "exec"), fn.__globals__, local)  # our rewrite of lambdify's code
        linecache.cache[filename] = (len(new_source), None, new_source.splitlines(True), filename)
        new = local.get(_GENERATED_NAME)
        return new if callable(new) else fn
    except (SyntaxError, ValueError, RecursionError):
        return fn


NUMPY_IMPL = {
    **{name: _lazy_special(name) for name in _SPECIAL_NAMES},
    "BinomSF": _binom_sf,
    "BinomTVComplement": _binom_tv_complement,
    "GaussSigmaAnalytic": _gauss_sigma,
}


def _mp_binom_sf(m, nn, pp):
    """P(Bin(nn, pp) > m) at mpmath's working precision. The values are kept (:data:`_MP_BINOM_SF_MEMO`, by the
    precision and the exact arguments): the threshold coupling asks for the same tails at every free parameter
    and bound that shares its (n, p), and a tail at n = 1e18 costs a tenth of a second."""
    import mpmath

    key = (mpmath.mp.prec, m, nn, pp)  # the value depends only on these numbers (equal numbers hash equal)
    hit = _MP_BINOM_SF_MEMO.recall(key)
    if hit is None:
        hit = _MP_BINOM_SF_MEMO.keep(key, _mp_binom_sf_uncached(m, nn, pp))
    return hit


def _mp_binom_sf_uncached(m, nn, pp):
    import mpmath

    m = mpmath.floor(m)
    if m < 0:
        return mpmath.mpf(1)
    if m >= nn:
        return mpmath.mpf(0)
    # P(X > m) = I_p(m+1, n-m)
    a, b = m + 1, nn - m
    try:
        if nn > _BETAINC_MAX_N:  # mpmath's betainc takes seconds there (36 s at n = 1e18) and then gives up
            raise mpmath.libmp.NoConvergence("n beyond betainc's reach")
        return mpmath.betainc(a, b, 0, pp, regularized=True)
    except (ValueError, ZeroDivisionError, mpmath.libmp.NoConvergence):
        # mpmath's series for I_x(a, b) cancels for large a, b; the series with positive terms does not:
        # I_x(a, b) = x^a (1-x)^b / (a B(a, b)) 2F1(a+b, 1; a+1; x), whose term ratio (a+b+k)x/(a+1+k) is < 1
        # when (a+b)x < a+1; otherwise the same series for the complement I_{1-x}(b, a).
        if (a + b) * pp < a + 1:
            return _positive_beta_series(a, b, pp)
        try:
            return 1 - _positive_beta_series(b, a, 1 - pp)
        except mpmath.libmp.NoConvergence:
            # the complement's terms fall off too slowly (a short lower tail at huge n: m = 0, n = 1e18, p = 1e-10
            # has ratios 1 - 1e-10); the mean is above m, so P(X <= m) is a short sum of positive terms
            if m > _DIRECT_LOWER_MAX:
                raise
            return _direct_upper_tail(int(m), nn, pp)


#: the longest lower tail :func:`_direct_upper_tail` sums term by term
_DIRECT_LOWER_MAX = 100_000


def _direct_upper_tail(m: int, nn, pp):
    """P(Bin(nn, pp) > m) = 1 - Σ_{i<=m} P(X = i) with the pmf by its recurrence from (1-p)^n, 64 bits above the
    working precision (each step adds a relative error of a few units, so m + 2 steps lose at most about
    log2(3(m + 2)) < 20 bits); used where the mean is above m, so the upper tail is at least about 1/2 and the
    subtraction from 1 does not cancel."""
    import mpmath

    with mpmath.extraprec(64):
        n, p = mpmath.mpf(nn), mpmath.mpf(pp)
        term = mpmath.exp(n * mpmath.log1p(-p))
        total, ratio = term, p / (1 - p)
        for i in range(m):
            term *= (n - i) / (i + 1) * ratio
            total += term
        out = 1 - total
    return +out


def _positive_beta_series(a, b, x):
    """I_x(a, b) by its series with positive terms (no cancellation), to mpmath's working precision.

    I_x(a, b) = x^a (1-x)^b / (a B(a, b)) 2F1(a+b, 1; a+1; x), and the 2F1 series sum_k t_k has t_0 = 1 and
    t_{k+1} = t_k r_k, r_k = (a+b+k) x / (a+1+k). a, b and x are mpmath numbers, so exact binary fractions:
    with a = A/2^s, b = B/2^s, x = X/2^t (integers), r_k = (A+B+k 2^s) X / ((A+2^s+k 2^s) 2^t) exactly. The sum
    is taken in fixed point with integers: T_0 = 2^P and T_{k+1} = floor(T_k r_k), so 0 <= t_k 2^P - T_k <= k
    (each step loses less than 1 and r_k < 1 does not enlarge the error before it). Summation stops at the first
    checked K with T_K r/(1-r) <= 2^-(prec+8) sum_{k<K} T_k, r the largest ratio still to come (r_K if b >= 1,
    where r_k decreases; x if b < 1, where r_k < x), which bounds the neglected terms. With P = prec + 48 the
    floors lose at most K^2/2 <= 2^37 units of 2^-P (K <= 400000), 2^-(prec+11) of the sum (at least 1), so the
    sum is within 2^-(prec+7) of exact; the prefactor is evaluated with 64 bits more than the working precision
    (its logarithms cancel to about log2|a log x| bits). The value is rounded once to the working precision.
    30-40 times faster than summing in mpmath numbers (0.1 s instead of 4 s for a tail near the mode of
    Bin(10^18, 6.7e-10) at 60 digits), and right to the working precision where that sum lost ~10 digits to the
    prefactor's cancellation (tests/test_beta_series_fixed_point.py)."""
    import mpmath

    prec = mpmath.mp.prec
    a, b, x = (v if isinstance(v, mpmath.mpf) else mpmath.mpf(v) for v in (a, b, x))
    if x == 0:
        return mpmath.mpf(0)
    if not (a > 0 and b > 0 and 0 < x < 1):
        return _positive_beta_series_mp(a, b, x)
    am, ae = a.man_exp
    bm, be = b.man_exp
    xm, xe = x.man_exp  # x < 1: xe < 0
    s = max(0, -ae, -be)
    A, B, U = am << (ae + s), bm << (be + s), 1 << s
    X, t = xm, -xe
    P = prec + 48
    big = prec + 8
    num = (A + B) * X  # (a+b+k) x 2^(s+t)
    dnum = U * X
    den = A + U  # (a+1+k) 2^s
    tail_x = b < 1  # then every later ratio is below x
    if not (tail_x or num < den << t):  # r_0 >= 1: the error bound above needs r_k < 1
        return _positive_beta_series_mp(a, b, x)
    T, S, k = 1 << P, 0, 0
    while True:
        for _ in range(32):
            S += T
            T = ((T * num) >> t) // den
            num += dnum
            den += U
        k += 32
        if (T << big) <= S:
            # the ratio bound r = nr/dr of the terms still to come, and the test T r/(1-r) <= 2^-big S
            nr, dr = (X, 1 << t) if tail_x else (num, den << t)
            if nr < dr and ((T + k) * nr) << big <= S * (dr - nr):  # t_k 2^P <= T + k
                break
        if k > _BETA_SERIES_MAX_TERMS:
            raise mpmath.libmp.NoConvergence("positive beta series: too many terms")
    with mpmath.workprec(prec + 64):
        log_pre = a * mpmath.log(x) + b * mpmath.log1p(-x) - mpmath.log(a) - mpmath.log(mpmath.beta(a, b))
        out = mpmath.exp(log_pre) * mpmath.mpf((S, -P))
    return +out


def _positive_beta_series_mp(a, b, x):
    """I_x(a, b) by the same series summed in mpmath numbers at the working precision (30-40 times slower than
    :func:`_positive_beta_series`); used where the first term ratio is not below 1."""
    import mpmath

    log_pre = a * mpmath.log(x) + b * mpmath.log1p(-x) - mpmath.log(a) - mpmath.log(mpmath.beta(a, b))
    # sum the series directly: every term is positive and the ratio (a+b+k)x/(a+1+k) decreases in k
    term, total, k = mpmath.mpf(1), mpmath.mpf(0), 0
    tol = mpmath.eps * 2 ** -8
    while True:
        total += term
        ratio = (a + b + k) * x / (a + 1 + k)
        if term <= tol * total and ratio < 1:  # the rest is below term·ratio/(1-ratio)
            if term * ratio / (1 - ratio) <= tol * total:
                break
        if k > _BETA_SERIES_MAX_TERMS:
            raise mpmath.libmp.NoConvergence("positive beta series: too many terms")
        term *= ratio
        k += 1
    return mpmath.exp(log_pre) * total


_MP_BINOM_SF_MEMO = BoundedMemo(256)

#: above this n, :func:`_mp_binom_sf` goes straight to the positive series: mpmath's betainc (a hypergeometric series
#: with the integer parameter 1 - b) fails to converge for every tail tried from n = 1e5 on, after 0.3 s to 36 s
_BETAINC_MAX_N = 20_000

#: the direct positive series of :func:`_positive_beta_series` gives up beyond this many terms (it needs about
#: a few times sqrt(n p (1-p)) terms near the binomial's mode); giving up leaves the value unverified
_BETA_SERIES_MAX_TERMS = 400_000


#: up to this n, :func:`_mp_binom_tv_complement` sums at mpmath's working precision (mpmath's betainc: 0.01 s at
#: n = 2000, 0.4 s at n = 20000 per tail); above, it is the float64 value (so BinomTVComplement stays a float64 part)
MP_BINOMIAL_TV_MAX_N = 2000


def _mp_binom_tv_complement(nn, q1, q2):
    """1 - TV(Bin(n, q1), Bin(n, q2)) on the mpmath path: for n <= MP_BINOMIAL_TV_MAX_N the same formula as
    :func:`_binom_tv_complement_exact` at the working precision (the crossing count from the exact q's, the lower
    binomial's upper tail plus the upper one's lower tail, P(Bin(n, q) <= j) = P(Bin(n, 1 - q) > n - j - 1)
    with 1 - q exact for a float q); beyond it the float64 value."""
    import mpmath

    if not nn <= MP_BINOMIAL_TV_MAX_N:
        return mpmath_float(_binom_tv_complement(float(nn), float(q1), float(q2)))
    nn, lo, hi = mpmath.mpf(nn), min(q1, q2), max(q1, q2)
    if lo == hi:
        return mpmath.mpf(1)
    if hi == 1:
        j = nn - 1
    elif lo == 0:
        j = mpmath.mpf(0)
    else:
        a = mpmath.log1p(-lo) - mpmath.log1p(-hi)
        b = mpmath.log(hi) - mpmath.log(lo)
        j = mpmath.ceil(nn * a / (a + b)) - 1
    j = min(max(j, mpmath.mpf(-1)), nn)
    out = _mp_binom_sf(j, nn, lo) + _mp_binom_sf(nn - j - 1, nn, 1 - hi)
    return min(max(out, mpmath.mpf(0)), mpmath.mpf(1))


def mpmath_float(x):
    import mpmath

    return mpmath.mpf(float(np.asarray(x)))


MPMATH_IMPL = {
    "BinomSF": _mp_binom_sf,
    "BinomTVComplement": _mp_binom_tv_complement,
    "GaussSigmaAnalytic": lambda e, dl: _gauss_sigma_mp(e, dl),
}


def _gauss_sigma_mp(e, dl):
    from .gauss_calibration import sigma_analytic_mp

    return sigma_analytic_mp(e, dl)


def register_scalar_function(name: str, value, nan_unless_finite: bool = False):
    """Register the numeric implementations of the sympy function ``name`` from a scalar float function
    ``value(*args)``: an elementwise numpy version (broadcast arguments; a float for scalar input) and an mpmath
    version (NaN where ``value`` is NaN, or, with ``nan_unless_finite``, wherever it is not finite)."""

    def numpy_impl(*args):
        arrs = np.broadcast_arrays(*(np.asarray(a, float) for a in args))
        out = np.empty(arrs[0].shape)
        for ix in np.ndindex(out.shape):
            out[ix] = value(*(float(a[ix]) for a in arrs))
        return out if out.ndim else float(out)

    def mpmath_impl(*args):
        import mpmath

        v = value(*(float(a) for a in args))
        bad = (not math.isfinite(v)) if nan_unless_finite else math.isnan(v)
        return mpmath.mpf("nan") if bad else mpmath.mpf(v)

    NUMPY_IMPL[name] = numpy_impl
    MPMATH_IMPL[name] = mpmath_impl


class ScalarFunction(sp.Function):
    r"""Base class of a special function given by a scalar float function (the way scipy's ``rv_continuous``
    derives the vectorised methods from ``_cdf_single`` and the like).

    A subclass declares

    - ``nargs``: the number of arguments;
    - ``scalar_value``: ``staticmethod(f)``, ``f(*floats) -> float`` (NaN where the function is undefined);
    - ``latex``: the LaTeX of one call, a template with ``{0}``, ``{1}``, ... for the printed arguments (None:
      sympy's default ``\operatorname{Name}(...)``);
    - ``nan_unless_finite`` (default False): the mpmath path gives NaN wherever ``scalar_value`` is not
      finite, not only where it is NaN.

    The base then supplies the numeric code under the class name (:func:`register_scalar_function`: numpy
    with broadcasting over array arguments, and the mpmath path) and the exponent wrapping of the LaTeX,
    ``\left(...\right)^{e}``.
    """

    scalar_value = None
    latex = None
    nan_unless_finite = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("scalar_value") is not None:
            register_scalar_function(cls.__name__, cls.scalar_value, nan_unless_finite=cls.nan_unless_finite)
        if cls.__dict__.get("latex") is not None:
            cls._latex = ScalarFunction._latex_from_template

    def _latex_from_template(self, printer, exp=None):
        base = self.latex.format(*(printer._print(a) for a in self.args))
        # ``exp`` comes printed already (LatexPrinter._print_Pow): printing it again gave \mathtt{\text{2}}
        return base if exp is None else rf"\left({base}\right)^{{{exp}}}"
