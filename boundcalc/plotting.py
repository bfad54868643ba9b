"""Figures (matplotlib, an optional dependency: ``pip install boundcalc[plot]``).

- :func:`plot`: the risk against n or against the privacy level on log-log axes: the certified band
  between the best certified lower and upper bounds, the rate (order only, drawn with constant 1),
  and the certified non-private risk for comparison. Every point is computed by
  :func:`boundcalc.api.rate` (the same path as ``boundcalc rate``); :func:`band` returns the numbers.
- :func:`plot_check`: a simulation check (:func:`boundcalc.simulate.check`): the certified band at each
  simulated n, the empirical worst-case risk with its 99% confidence interval, the other instances,
  and the fitted and predicted slopes.

Figures are built with the object-oriented API on an Agg canvas (no pyplot state, no display needed);
both functions return the :class:`matplotlib.figure.Figure` and write it when given a path (PNG, or
the format the file's extension names: .svg, .pdf, ...).
"""
from __future__ import annotations

import math

import numpy as np

from .core.errors import InputError
from .core.params import ParamSpec

POINTS = ParamSpec("points", "int", 24, "number of grid points", low=3, high=400)
XMIN = ParamSpec("xmin", "float", None, "smallest x", low=0, low_open=True, high=1e18)
XMAX = ParamSpec("xmax", "float", None, "largest x", low=0, low_open=True, high=1e18)

COLORS = {"band": "#9ecae1", "upper": "#08519c", "lower": "#a50f15", "rate": "0.15", "nonprivate": "#e6550d",
          "sim": "#111111", "inst": "#6a51a3"}


def _mpl():
    try:
        import matplotlib
    except ImportError:  # optional dependency
        raise InputError("plot", "needs matplotlib: pip install 'boundcalc[plot]'") from None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    return matplotlib, Figure, FigureCanvasAgg


def _style(ax):
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.grid(True, which="major", color="0.85", linewidth=0.7)
    ax.grid(True, which="minor", color="0.93", linewidth=0.4)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.tick_params(labelsize=9)


def _new_figure(size=(6.4, 4.4)):
    _, Figure, FigureCanvasAgg = _mpl()
    fig = Figure(figsize=size, dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    return fig, ax


def figure_format(path, option="output") -> str:
    """The figure format matplotlib writes for ``path``, from its extension: ``risk.svg`` is SVG,
    ``risk.pdf`` PDF, a name without an extension (``/dev/null``, a FIFO) PNG. An extension matplotlib
    does not write is refused (:class:`InputError` naming ``option``), never silently given PNG bytes."""
    import os

    _mpl()
    from matplotlib.backend_bases import FigureCanvasBase

    from .render.fileio import _as_path

    ext = os.path.splitext(os.path.basename(_as_path(path, option)))[1].lower().lstrip(".")
    if not ext:
        return "png"
    formats = FigureCanvasBase.get_supported_filetypes()
    if ext not in formats:
        raise InputError(option, "must end in a figure format matplotlib writes: ."
                         + ", .".join(sorted(formats)) + " (or have no extension: PNG)", path)
    if ext == "pgf":  # matplotlib's pgf backend runs a TeX system to measure every text, even to write the .pgf
        import shutil

        import matplotlib

        tex = matplotlib.rcParams["pgf.texsystem"]
        if shutil.which(tex) is None:
            raise InputError(option, f"a .pgf figure needs {tex} (matplotlib's pgf backend measures its text "
                                     f"with it), which is not installed: install a TeX system, or write .pdf "
                                     "(for \\includegraphics) or .svg", path)
    return ext


def _check_output(path, option="output"):
    if path is None:
        return
    from .render.outpath import validate_output_path

    validate_output_path(path, option)
    figure_format(path, option)


def _save(fig, path, option="output"):
    if path is None:
        return
    import io

    from .render.fileio import write_atomic

    _check_output(path, option)
    buf = io.BytesIO()
    fig.savefig(buf, format=figure_format(path, option), dpi=200, bbox_inches="tight")
    write_atomic(path, buf.getvalue(), option=option)


# ---------------------------------------------------------------------- the certified band

def _grid(x, values, model, entry, xmin, xmax, points):
    if x == "n":
        spec = next((s for s in entry.params if s.name == "n"), None)
        if spec is None:
            raise InputError("x", f"problem {entry.problem} has no sample size n")
        n0 = values["n"]
        for opt, val in (("xmin", xmin), ("xmax", xmax)):
            if val is not None and (val < (spec.low or 1) or val > (spec.high or 1e18)):
                from .core.params import _fmt

                raise InputError(opt, f"must be a sample size from {_fmt(spec.low or 1)} to {_fmt(spec.high or 1e18)}",
                                 val)
        lo = xmin if xmin is not None else max(spec.low or 1, n0 / 100)
        hi = xmax if xmax is not None else min(spec.high or 1e18, n0 * 1000)
        lo, hi = max(lo, spec.low or 1), min(hi, spec.high or 1e18)
        if not lo < hi:
            raise InputError("xmax", "must be larger than --xmin", xmax)
        xs = np.unique(np.round(np.geomspace(lo, hi, points)).astype(np.int64))
        return [int(v) for v in xs]
    spec = model.level
    e0 = values["eps"]
    for opt, val in (("xmin", xmin), ("xmax", xmax)):
        if val is not None:
            try:
                spec.parse(val)
            except InputError:
                raise InputError(opt, f"must be a privacy level --privacy {model.name} allows: "
                                      f"{spec.allowed()[len('must be '):]}", val) from None
    lo_lim = max(spec.low or 0.0, 1e-8)
    hi_lim = spec.high * (1 - 1e-9) if spec.high_open else spec.high
    lo = xmin if xmin is not None else e0 / 100
    hi = xmax if xmax is not None else (min(e0 * 10, 0.999) if spec.high_open and spec.high == 1 else e0 * 20)
    lo, hi = max(lo, lo_lim), min(hi, hi_lim)
    if not lo < hi:
        raise InputError("xmax", f"must be larger than --xmin (and within the allowed levels: {spec.allowed()})",
                         xmax)
    return [float(v) for v in np.geomspace(lo, hi, points)]


#: at most this many grid points of a plot are computed by :func:`boundcalc.rate` (the default grid: every point);
#: the points between them come from the vectorised closed forms and the monotone carry (see :func:`band`)
ANCHORS = 24


def _anchor_indices(count: int, anchors: int = ANCHORS) -> list[int]:
    """The grid indices computed exactly: all of them up to ``anchors`` points, else ``anchors`` evenly spread
    ones (the first and the last always among them)."""
    if count <= anchors:
        return list(range(count))
    return sorted({int(round(i)) for i in np.linspace(0, count - 1, anchors)})


def band(problem, privacy="pure", x="n", xs=None, points=24, xmin=None, xmax=None, progress=False,
         **params) -> dict:
    """Certified lower/upper bounds, the rate and the non-private risk over a grid of n or ε.

    ``progress``: report the grid points on stderr (the CLI turns it on when stderr is a terminal).
    Returns a dict of lists: ``x``, ``lower``, ``upper``, ``rate``, ``nonprivate`` (None where a value
    does not exist), plus ``mechanism``/``method`` per point, ``source`` per point and the fixed ``params``.

    At most :data:`ANCHORS` points (every point of the default grid of 24) are computed by
    :func:`boundcalc.rate`, exactly as ``boundcalc rate`` prints them (``source`` ``"rate"``). A finer grid is
    filled in between them (``source`` ``"between"``) with two certified bounds, the better of which is drawn:

    - the closed forms of :func:`boundcalc.evaluate_curve` (each bound at its symbolic optimum, vectorised over the
      grid: valid bounds, sometimes looser than the tuned ones);
    - the anchors' certified values carried along the axis: the minimax risk is non-increasing in n and in the
      privacy level (an estimator may ignore records, and a mechanism private at one level is private at every
      larger one), so an upper bound at a smaller x holds at every larger x, and a lower bound at a larger x at
      every smaller x (the argument :func:`boundcalc.plan` rests on).

    The band of a fine grid is therefore never narrower than the certified one, and as narrow where the closed
    forms are tight.
    """
    from .app.api import rate, resolve
    from .core.privacy import get_model

    x = str(x).strip().lower()
    if x in ("alpha", "level"):
        x = "eps"
    if x not in ("n", "eps"):
        raise InputError("x", "must be n or eps (the variable on the horizontal axis)", x)
    entry, values = resolve(problem, privacy, params)  # every given value is checked, the axis' own included
    model = get_model(privacy)
    if x == "eps" and model.level is None:
        raise InputError("x", f"--privacy {model.name} has no privacy level: use --x n", x)
    points = POINTS.parse(points)
    xmin = None if xmin is None else XMIN.parse(xmin)
    xmax = None if xmax is None else XMAX.parse(xmax)
    if xs is None:
        xs = _grid(x, values, model, entry, xmin, xmax, points)
    fixed = {k: v for k, v in params.items() if v is not None and k not in ("alpha", x)}
    if "alpha" in params and x != "eps" and params["alpha"] is not None:
        fixed["eps"] = params["alpha"]
    keys = ("x", "lower", "upper", "rate", "nonprivate", "mechanism", "method", "source")
    out = {k: [None] * len(xs) for k in keys}
    out["x"] = list(xs)
    res = None
    from .app.simulate import progress_line

    anchors = _anchor_indices(len(xs))
    for count, i in enumerate(anchors):
        xv = xs[i]
        progress_line(progress, f"plot {entry.problem}/{model.name}: {x}={xv:.4g} ({count + 1}/{len(anchors)})")
        res = rate(entry.problem, model.name, **{**fixed, x: xv})
        lo, up = res.lower, res.upper
        terms = [v for v in res.terms.values() if v is not None and math.isfinite(v)]
        out["lower"][i] = None if lo is None else lo.value
        out["upper"][i] = None if up is None else up.value
        out["rate"][i] = sum(terms) if terms else None
        out["nonprivate"][i] = res.nonprivate
        out["mechanism"][i] = None if up is None else up.label
        out["method"][i] = None if lo is None else lo.label
        out["source"][i] = "rate"
    progress_line(progress, "")
    if len(anchors) < len(xs):
        _fill_between(out, anchors, entry, model, x, fixed)
    out["problem"], out["privacy"], out["axis"] = entry.problem, model.name, x
    out["params"] = {k: v for k, v in values.items() if k not in ("problem", "privacy", x)}
    out["at"] = values.get(x)
    out["rate_expr"] = None if res is None else res.rate_expr
    out["title"] = entry.title
    out["level_name"] = model.level_name if model.level is not None else None
    return out


def _curve_or_none(problem, privacy, side, **params):
    from .app.api import evaluate_curve

    shape = np.shape(next(v for v in params.values() if isinstance(v, np.ndarray)))
    try:
        with np.errstate(all="ignore"):
            val = np.broadcast_to(np.asarray(evaluate_curve(problem, privacy, side, **params), float), shape)
    except InputError:  # no closed form here (or not at every point): the carried anchors alone
        return None
    # float64 values, not re-evaluated in high precision as rate's are: moved outward by far more than their
    # rounding error (and far less than a pixel)
    return val * (1 + CURVE_MARGIN if side == "upper" else 1 - CURVE_MARGIN)


#: relative outward margin of the closed-form values drawn between the anchors (see :func:`_curve_or_none`)
CURVE_MARGIN = 1e-9


def _fill_between(out, anchors, entry, model, x, fixed):
    """The points of ``out`` between the anchors (see :func:`band`): the better of the vectorised closed form
    and the anchors' values carried along the axis (upper bounds forward, lower bounds backward)."""
    from .app import api

    xs = np.asarray(out["x"], float)
    curve = {side: _curve_or_none(entry.problem, model.name, side, **fixed, **{x: xs}) for side in ("lower", "upper")}
    nonpriv = None
    if x == "n" and model.name != "none":
        base = {k: v for k, v in fixed.items() if k not in ("eps", "delta")}
        nonpriv = _curve_or_none(entry.problem, "none", "upper", **base, n=xs)
    anchor_set = set(anchors)
    for key, side, curve_v in (("upper", "upper", curve["upper"]), ("nonprivate", "upper", nonpriv),
                               ("lower", "lower", curve["lower"])):
        order = range(len(xs)) if side == "upper" else range(len(xs) - 1, -1, -1)
        carried, label = None, None
        for i in order:
            if i in anchor_set:
                v = out[key][i]
                if v is not None and (carried is None or (v < carried if side == "upper" else v > carried)):
                    carried = v
                    label = out["mechanism" if side == "upper" else "method"][i]
                continue
            best, how = carried, label
            c = None if curve_v is None else float(curve_v[i])
            if c is not None and math.isfinite(c) and c > 0 and (best is None or (c < best if side == "upper"
                                                                                  else c > best)):
                best, how = c, "closed form at its symbolic optimum (evaluate_curve)"
            out[key][i] = best
            if key != "nonprivate":
                out["mechanism" if side == "upper" else "method"][i] = how
    for i in range(len(xs)):
        if i in anchor_set:
            continue
        out["source"][i] = "between"
        try:  # the rate (order only) at every point: its terms, no bound evaluated
            e, vals = api.resolve(entry.problem, model.name, {**fixed, x: out["x"][i]})
            v = e.with_derived(vals)
            terms = [t for t in api._term_values(e.rate(v), v).values() if t is not None and math.isfinite(t)]
            out["rate"][i] = sum(terms) if terms else None
        except InputError:
            out["rate"][i] = None


def _arr(vals):
    return np.array([np.nan if v is None else float(v) for v in vals], float)


def _param_caption(params: dict) -> str:
    parts = []
    for k, v in params.items():
        if v == math.inf:
            v = "∞"
        elif isinstance(v, float):
            v = f"{v:g}"
        name = {"eps": "ε", "delta": "δ"}.get(k, k)
        parts.append(f"{name}={v}")
    return ", ".join(parts)


def _math_label(expr) -> str:
    import sympy as sp

    try:
        s = sp.latex(expr, fold_frac_powers=True, fold_short_frac=True).replace(r"\epsilon", r"\varepsilon")
        s = s.replace(r"\operatorname", r"\mathrm")
        if len(s) > 90:
            return ""
        return f"${s}$"
    except Exception:  # a label is cosmetic: fall back to no formula
        return ""


def plot(problem, privacy="pure", x="n", output=None, **params):
    """Risk against n (``x="n"``) or the privacy level (``x="eps"``), log-log, with the certified band.

    Grid options: ``points`` (default 24), ``xmin``, ``xmax``; ``progress=True`` reports on stderr.
    Writes the figure to ``output`` if given (the format from its extension, see :func:`figure_format`;
    PNG without one) and returns the matplotlib Figure.
    """
    opts = {k: params.pop(k) for k in ("points", "xmin", "xmax", "xs", "progress") if k in params}
    _check_output(output)
    data = band(problem, privacy, x=x, **opts, **params)
    fig, ax = _new_figure()
    xs = np.asarray(data["x"], float)
    lo, up = _arr(data["lower"]), _arr(data["upper"])
    rt, npv = _arr(data["rate"]), _arr(data["nonprivate"])
    ok = np.isfinite(lo) & np.isfinite(up)
    if ok.any():
        ax.fill_between(xs, np.where(ok, lo, np.nan), np.where(ok, up, np.nan), color=COLORS["band"], alpha=0.45,
                        linewidth=0, label="certified band", zorder=1)
    missing = []
    if np.isfinite(up).any():
        ax.plot(xs, up, color=COLORS["upper"], lw=2.0, label="certified upper bound (tuned mechanism)", zorder=3)
    else:
        missing.append("upper")
    if np.isfinite(lo).any():
        ax.plot(xs, lo, color=COLORS["lower"], lw=2.0, label="certified lower bound (any private estimator)",
                zorder=3)
    else:
        missing.append("lower")
    if missing:
        ax.text(0.02, 0.03, "no certified " + " or ".join(missing) + " bound here (order only)",
                transform=ax.transAxes, fontsize=8, color="0.3", style="italic")
    rlabel = _math_label(data["rate_expr"])
    ax.plot(xs, rt, color=COLORS["rate"], lw=1.3, ls="--",
            label="rate (order, constant 1)" + (f": {rlabel}" if rlabel else ""), zorder=2)
    if data["privacy"] != "none" and np.isfinite(npv).any():
        # drawn last, over the bounds (it often runs along the lower bound, whose r²/n term it is): a dotted line
        # with open markers, so that both stay visible where they coincide
        ax.plot(xs, npv, color=COLORS["nonprivate"], lw=1.5, ls=(0, (1, 1.2)), marker="o", ms=4, mfc="white",
                mew=1.1, markevery=max(1, len(xs) // 12), label="non-private risk (certified upper)", zorder=4)
    _style(ax)
    lvl = "ε" if data["level_name"] in (None, "eps") else "α"
    ax.set_xlabel("sample size $n$" if data["axis"] == "n" else f"privacy level {lvl}")
    ax.set_ylabel("worst-case risk (minimax)")
    from .core.privacy import get_model

    title = f"{data['problem']}: {get_model(data['privacy']).title}"
    ax.set_title(title + "\n" + _param_caption(data["params"]), fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="best")
    _save(fig, output)
    return fig


# ---------------------------------------------------------------------- simulation checks

def plot_check(check_result, path=None):
    """Figure of a :class:`boundcalc.simulate.CheckResult`; writes it to ``path`` if given (the format
    from the extension, see :func:`figure_format`; PNG without one)."""
    rows = list(check_result.rows)
    if not rows:
        raise InputError("plot", "the check has no rows to plot")
    fig, ax = _new_figure()
    ns = np.array([r.n for r in rows], float)
    lo = _arr([r.lower for r in rows])
    up = _arr([r.upper for r in rows])
    ok = np.isfinite(lo) & np.isfinite(up)
    ax.fill_between(ns, np.where(ok, lo, np.nan), np.where(ok, up, np.nan), color=COLORS["band"], alpha=0.45,
                    linewidth=0, label="certified band", zorder=1)
    ax.plot(ns, up, color=COLORS["upper"], lw=2.0, marker="", label="certified upper bound", zorder=3)
    ax.plot(ns, lo, color=COLORS["lower"], lw=2.0, label="certified lower bound", zorder=3)
    # every instance, faint (the hard instances of the lower bounds change with n: one legend entry)
    pts = np.array([(r.n, i.risk) for r in rows for i in r.instances if i is not r.worst and i.risk > 0], float)
    if pts.size:
        ax.scatter(pts[:, 0], pts[:, 1], s=16, marker="o", facecolors="none", edgecolors=COLORS["inst"],
                   alpha=0.6, linewidths=0.8, label="simulated risk, other instances", zorder=4)
    risk = _arr([r.risk for r in rows])
    cil = _arr([r.ci_low for r in rows])
    cih = _arr([r.ci_high for r in rows])
    floor = np.where(risk > 0, risk, np.nan) * 1e-3
    yerr = np.vstack([np.clip(risk - np.maximum(cil, floor), 0, None), np.clip(cih - risk, 0, None)])
    ax.errorbar(ns, risk, yerr=yerr, fmt="o", color=COLORS["sim"], ms=5, capsize=3, lw=1.2,
                label="simulated worst-case risk (99% CI)", zorder=5)
    fs, ps = check_result.fitted_slope, check_result.predicted_slope
    good = np.isfinite(risk) & (risk > 0)
    if ps is not None and good.sum() >= 2:
        # the predicted slope drawn through the centre of the simulated points, to compare slopes by eye
        lx, ly = np.log(ns[good]), np.log(risk[good])
        ref = np.exp(ly.mean() + ps * (np.log(ns) - lx.mean()))
        ax.plot(ns, ref, color=COLORS["rate"], lw=1.1, ls="--",
                label=f"predicted slope {ps:.2f} (through the simulated points)", zorder=2)
    _style(ax)
    ax.set_xlabel("sample size $n$")
    ax.set_ylabel("risk (squared error)")
    verdict = "PASSED" if check_result.passed else "FAILED"
    params = {k: v for k, v in check_result.params.items() if k != "n"}
    slope = "" if fs is None else f"fitted slope {fs:.2f}" + ("" if ps is None else f" vs predicted {ps:.2f}")
    from .core.privacy import get_model

    ax.set_title(f"check {check_result.problem}: {get_model(check_result.privacy).title} — {verdict}\n"
                 f"{_param_caption(params)}; reps={check_result.reps}, seed={check_result.seed}"
                 + (f"; {slope}" if slope else ""), fontsize=9.5)
    ax.legend(fontsize=7.5, frameon=False, loc="lower left")
    _save(fig, path, option="plot")
    return fig
