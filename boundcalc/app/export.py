"""Tables of rates and certified bounds: text, LaTeX (booktabs), Markdown, CSV and JSON.

:func:`table` computes the rows (rendering: :mod:`boundcalc.render.table_result`). It builds one row per privacy model of a problem (or per problem, for several problems)
at the given parameters, each row computed by :func:`boundcalc.app.api.rate` (the same path as
``boundcalc rate``): the minimax rate (order only; upper and lower-bound rates where they differ),
the best certified lower and upper values, their ratio, and the method and mechanism behind them.
``boundcalc table --problem mean`` is Barber & Duchi's Table 1 (mean estimation under every privacy
model), with certified numbers beside the rates.

The LaTeX output is a ``table`` float with a booktabs ``tabular``, math in ``$...$``, and a caption
naming the sources; it needs ``\\usepackage{booktabs}`` and ``\\usepackage{amsmath}`` and is pure
ASCII (Unicode in labels and sources is translated to LaTeX commands), so it compiles with pdflatex.
:mod:`boundcalc.core.latex` translates text and expressions to LaTeX; :func:`boundcalc.render.fileio.write_atomic`
writes a file through a temporary file and ``os.replace``.
"""
from __future__ import annotations

from . import catalog
from ..core.errors import InputError
from ..render.fileio import write_atomic  # noqa: F401 (re-exported: file output lives in fileio)
from ..core.latex import tex_math, tex_number, tex_text  # noqa: F401 (tex_number, tex_text re-exported)
from ..core.privacy import EPS, MODELS, get_model
# the table and its rendering (re-exported: the Python contract)
from ..render.table_result import FORMATS, SHORT, TEX_SHORT, Table, TableRow, compact  # noqa: F401

PRIVACY_ORDER = tuple(MODELS)  # none, pure, smooth, approx, tv, kl, local


def split_list(value, option: str) -> list[str]:
    """The names of a comma-separated string or a sequence, stripped; an empty list or an empty entry
    (``mean,,support``, ``pure,``) is refused (:class:`InputError` naming ``option``)."""
    if isinstance(value, str):
        names = [p.strip() for p in value.split(",")]
    elif isinstance(value, (bytes, bytearray)) or not hasattr(value, "__iter__"):
        raise InputError(option, "must be a name or a comma-separated list of names", value)
    else:
        names = list(value)
        for p in names:  # None is not "none", 3 is not a name
            if not isinstance(p, str):
                raise InputError(option, f"must be a list of names (strings), not {p!r}")
        names = [p.strip() for p in names]
    if not any(names):
        raise InputError(option, "must name at least one (a name or a comma-separated list)", value)
    if not all(names):
        raise InputError(option, "has an empty entry: give comma-separated names such as "
                                 + ("mean,support" if option == "problem" else "pure,approx"), value)
    return names


def _no_repeats(names, resolved, option):
    seen = {}
    for given, name in zip(names, resolved):
        if name in seen:
            same = f" ({seen[name]} and {given} are the same)" if seen[name] != given else ""
            raise InputError(option, f"names {name} twice{same}", ",".join(names))
        seen[name] = given


def _problem_list(problem) -> list[str]:
    if problem is None:
        raise InputError("problem", "is required (a problem name, a comma-separated list, or all)")
    names = split_list(problem, "problem")
    if len(names) == 1 and names[0].lower() == "all":
        return sorted(catalog.problems())
    out = [catalog.resolve_problem(n).name for n in names]
    _no_repeats(names, out, "problem")
    return out


def _privacy_list(privacies) -> list[str] | None:
    if privacies is None:
        return None
    names = split_list(privacies, "privacy")
    out = [get_model(p).name for p in names]
    _no_repeats(names, out, "privacy")
    return out


def _row_params(entry, params: dict, notes: list, multi: bool, unused: dict) -> dict:
    """The user's parameters adapted to one (problem, privacy) row (``params`` already checked by
    :func:`_check_table_params`: ``alpha`` is the level of the tv and kl rows only)."""
    model = get_model(entry.privacy)
    p = dict(params)
    alpha = p.pop("alpha", None)
    if model.level is None:
        p.pop("eps", None)
    else:
        if alpha is not None and model.level_name == "alpha":
            p["eps"] = alpha
        if "eps" in p:
            try:
                model.level.parse(p["eps"])
            except InputError:
                sym = "α" if model.level_name == "alpha" else "ε"
                notes.append(f"{entry.privacy}: the given level {p['eps']} is not a valid {sym} for {model.title} "
                             f"({model.level.allowed()}); this row uses its default {sym} = {model.level.default}")
                p.pop("eps")
    if not model.uses_delta:
        p.pop("delta", None)
    allowed = {s.name for s in entry.params}
    for k in list(p):
        if k not in allowed and k not in ("eps", "delta"):
            p.pop(k)
            unused.setdefault(k, []).append(entry.problem if multi else entry.privacy)
    return p


def _check_table_params(params: dict, entries: list) -> None:
    """Refuse a parameter that no row of the table uses (a typo, or a level the chosen models do not have).

    ``entries``: the table's (problem, privacy) entries. A problem parameter must belong to at least one of
    them (the rows that do not declare it run without it, with a note); ``eps`` needs a row with a privacy
    level, ``alpha`` a tv or kl row (it sets the level of those rows only), ``delta`` an approx row. A level
    that no row allows is refused as ``rate`` refuses it; a level some rows allow and others do not is used by
    the former, the latter keep their default level, with a note.
    """
    models = [get_model(e.privacy) for e in entries]
    privs = ", ".join(dict.fromkeys(m.name for m in models))
    if "eps" in params:
        levels = [m for m in models if m.level is not None]
        if "alpha" in params:  # --alpha sets the tv/kl rows: --eps the others
            levels = [m for m in levels if m.level_name != "alpha"]
        if not levels:
            raise InputError("eps", f"is not used by any row of this table (--privacy {privs}"
                             + (": --alpha sets the level of tv and kl" if "alpha" in params else
                                ": no privacy level") + ")", params["eps"])
        EPS.parse(params["eps"])  # a bad value for every model: report it as such
        error = _refused_by_every_row(levels, params["eps"])
        if error is not None:
            raise error
    if "alpha" in params:
        tvkl = [m for m in models if m.level_name == "alpha" and m.level is not None]
        if not tvkl:
            raise InputError("alpha", f"is the level of the tv and kl rows; this table has none (--privacy {privs}):"
                                      " give --eps", params["alpha"])
        error = _refused_by_every_row(tvkl, params["alpha"])
        if error is not None:
            raise InputError("alpha", error.allowed, params["alpha"])
    if "delta" in params and not any(m.uses_delta for m in models):
        raise InputError("delta", f"is only used by the approx row; this table has none (--privacy {privs})",
                         params["delta"])
    declared = {"eps", "delta", "alpha"}
    for e in entries:
        declared.update(s.name for s in e.params)
    for k in params:
        if k not in declared:
            raise InputError(k, "is not a parameter of any row of this table (allowed: "
                             + ", ".join("--" + x for x in sorted(declared)) + ")", params[k])


def table(problem, privacies=None, **params) -> Table:
    """Rates and certified bounds, one row per privacy model (or per problem) at ``params``.

    ``problem``: a name, a comma-separated string or a list of names, or ``"all"``.
    ``privacies``: the privacy models to include (default: every model registered for the problem,
    in the order none, pure, smooth, approx, tv, kl, local). With several problems, a model a problem
    does not have is skipped; with one problem it is an error.
    ``params``: as for :func:`boundcalc.rate`, each applied to the rows that use it: ``eps`` is the level of
    each row's model (``alpha``, if given, the level of the tv and kl rows only, and ``eps`` that of the
    others); ``delta`` is used by the approx row only; a problem parameter (``k``, ``d`` ...) by the rows whose
    problem takes it, the other rows running without it (a note names them). A parameter that no row of the
    table uses is refused (:class:`InputError`), as is a level that no row's model allows (e.g. ε = 1 for a
    table of the tv row alone); a level some rows allow and others not (ε = 2: pure yes, tv no) is used by
    the former, and the latter keep their model's default level, with a note.
    """
    from .api import rate

    params = {k: v for k, v in params.items() if v is not None}
    names = _problem_list(problem)
    privs = _privacy_list(privacies)
    multi = len(names) > 1
    notes: list = []
    rows = []
    selected = []  # the table's (problem, entry) pairs
    for name in names:
        info = catalog.resolve_problem(name)
        wanted = privs if privs is not None else [p for p in PRIVACY_ORDER if p in info.entries]
        for priv in wanted:
            if priv not in info.entries:
                if not multi:
                    raise InputError("privacy", f"for --problem {name} must be among "
                                     + ", ".join(info.entries), priv)
                continue
            selected.append((name, info, priv, info.entries[priv]))
    if not selected:
        raise InputError("privacy", "no (problem, privacy) pair of the table is registered", privacies)
    # a parameter must belong to at least one row of the table (else it is a typo: exit 2); rows whose
    # entry does not declare it run without it, with a note (e.g. --ball applies to the local row only,
    # --k to the mean rows of a table of mean and support)
    _check_table_params(params, [e for *_, e in selected])
    unused: dict = {}  # parameter -> rows that do not use it (one note each, after the loop)
    for name, info, priv, entry in selected:
        p = _row_params(entry, params, notes, multi, unused)
        res = rate(name, priv, **p)
        terms = res.rate_terms
        rate_latex = " + ".join(tex_math(t) for _, t in terms) if terms else tex_math(res.rate_expr)
        lo, up = res.lower, res.upper
        level = {}
        model = get_model(priv)
        if model.level is not None:
            level = {"name": model.level_name, "value": res.params.get("eps")}
            if model.uses_delta:
                level["delta"] = res.params.get("delta")
        rows.append(TableRow(
            problem=name, privacy=priv, params=dict(res.params), level=level,
            rate_expr=res.rate_expr, rate_latex=rate_latex, rate_lower_expr=res.rate_lower_expr,
            lower=None if lo is None else lo.value, upper=None if up is None else up.value, ratio=res.ratio,
            lower_method=None if lo is None else lo.label, upper_mechanism=None if up is None else up.label,
            lower_source=None if lo is None else lo.source, upper_source=None if up is None else up.source,
            nonprivate=res.nonprivate, source=entry.source or "", title=entry.title or info.title,
            upper_free=dict(up.free_parameters) if up is not None else {}, notes=list(res.notes)))
    for k, where in unused.items():
        notes.append(f"--{k} is not used in the rows of: {', '.join(dict.fromkeys(where))}")
    return Table(rows, names, params, notes)


def _refused_by_every_row(models, value):
    """The first row's ``InputError`` when the level of every privacy model in ``models`` refuses ``value``
    (a level one row accepts is valid for the table); None otherwise."""
    errors = []
    for m in models:
        try:
            m.level.parse(value)
        except InputError as exc:
            errors.append(exc)
    return errors[0] if len(errors) == len(models) else None
