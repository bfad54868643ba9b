"""Command-line front end (argparse). No mathematics here: it parses, calls the API, prints.

Problem-specific parameters (``--k``, ``--model``, ``--s`` ...) are not hard-coded: any
``--name value`` pair after the known options is handed to the problem, whose ParamSpecs validate
it. Exit codes (:data:`EXIT_CODES`): 0 success, 1 internal error, 2 bad input (one line on stderr),
3 a ``check`` that ran and failed.
"""
from __future__ import annotations

import argparse
import json
import math
import sys

COMMON = ("n", "eps", "delta", "d", "r", "alpha")

#: exit statuses of the ``boundcalc`` command
EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT, EXIT_CHECK_FAILED = 0, 1, 2, 3
EXIT_CODES = ("exit status: 0 success; 1 internal error (a bug: please report it); 2 bad input (one line on "
              "stderr naming the option); 3 `check` ran and a simulated risk fell outside the certified band.")


_VERSION = None


def package_version() -> str:
    """The installed distribution's version, else ``boundcalc.__version__`` (computed once per process).

    An installed wheel has its ``boundcalc-<version>.dist-info/METADATA`` next to the package: its
    ``Version:`` line is read directly (what importlib.metadata returns, without the 40 ms its import and
    scan of every distribution cost a ``--json`` call). Otherwise (an editable install) importlib.metadata
    is asked, and a plain checkout falls back to ``boundcalc.__version__``.
    """
    global _VERSION
    if _VERSION is None:
        _VERSION = _metadata_version() or _importlib_version()
        if not _VERSION:
            from . import __version__

            _VERSION = __version__
    return _VERSION


def _metadata_version():
    import glob
    import os

    site = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for meta in sorted(glob.glob(os.path.join(site, "boundcalc-*.dist-info", "METADATA"))):
        head = {}
        try:
            with open(meta, encoding="utf-8") as fh:
                for line in fh:  # the header ends at the first blank line (the README follows)
                    if not line.strip():
                        break
                    key, sep, value = line.rstrip("\n").partition(": ")
                    if sep and not line[0].isspace():
                        head.setdefault(key, value)
        except (OSError, UnicodeDecodeError):
            continue
        if head.get("Name", "").lower() == "boundcalc" and head.get("Version"):
            return head["Version"]
    return None


def _importlib_version():
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover - Python without importlib.metadata
        return None
    try:
        return version("boundcalc")
    except PackageNotFoundError:
        return None


class _Version(argparse.Action):
    """``--version``: the version is looked up only when asked for."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"boundcalc {package_version()}")
        parser.exit()


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        #: a function adding to the epilog, called only when the help is printed (it imports every problem)
        self.lazy_epilog = kwargs.pop("lazy_epilog", None)
        super().__init__(*args, **kwargs)

    def format_help(self):
        if self.lazy_epilog is not None:
            extra, self.lazy_epilog = self.lazy_epilog(), None
            self.epilog = extra + ("\n\n" + self.epilog if self.epilog else "")
        return super().format_help()

    def add_argument(self, *args, **kwargs):
        # every option may be given once: a repeated option is an error, never "the last one wins"
        if args and str(args[0]).startswith("--") and args[0] not in ("--help",):
            if kwargs.get("action") == "store_true":
                kwargs["action"] = _OnceFlag
            elif "action" not in kwargs:
                kwargs["action"] = _Once
        return super().add_argument(*args, **kwargs)

    def error(self, message):  # one line, exit 2 (argparse's own default prints usage too)
        raise UsageError(message)


EPILOG = ("Problem-specific parameters (e.g. --k for mean, --model for point, --s for sparse-bernoulli) are "
          "given as --name value: the list above gives each problem's, with allowed values and defaults "
          "(also `boundcalc list`).")

PROBLEMS_HELP = ("problems: mean, support, density, multinomial, gaussian, sparse-bernoulli, linear, point "
                 "(aliases and parameters: `boundcalc list`; derivations: `boundcalc docs problems/<problem>`).")
PRIVACY_HELP = ("privacy models: none, pure (ε-DP), smooth (ε-smooth DP), approx ((ε,δ)-DP), tv (α-TV privacy), "
                "kl (α-KL privacy), local (ε-local DP); not every problem has every model (`boundcalc list`).")
EXAMPLES = {
    "rate": "boundcalc rate --problem mean --privacy approx --k 4",
    "check": "boundcalc check --problem mean --privacy pure --k 4 --ns 100,1000 --reps 200",
    "plan": "boundcalc plan --problem mean --privacy pure --k 4 --target 0.01",
    "table": "boundcalc table --problem mean --k 4 --format markdown --output table.md",
    "plot": "boundcalc plot --problem mean --privacy pure --k 4 --x n --points 24 --output risk.png",
    "convert": "boundcalc convert --from pure --to tv --eps 1",
    "list": "boundcalc list --json",
    "docs": "boundcalc docs problems/mean",
}


def _epilog(cmd, problem=True, extra=""):
    parts = [PROBLEMS_HELP, PRIVACY_HELP, EPILOG] if problem else []
    if extra:
        parts.append(extra)
    parts.append(EXIT_CODES)
    parts.append(f"example: {EXAMPLES[cmd]}")
    return "\n\n".join(parts)


def _problem_options():
    from .clihelp import problem_options

    return problem_options()


class _Once(argparse.Action):
    """Store a value, refusing a second occurrence (the last would otherwise silently win)."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = namespace.__dict__.setdefault("_given", set())
        if self.dest in seen:
            raise UsageError(f"{option_string}: given twice")
        seen.add(self.dest)
        setattr(namespace, self.dest, values)


class _OnceFlag(argparse.Action):
    """A store_true flag that may not be repeated."""

    def __init__(self, option_strings, dest, default=False, required=False, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, required=required, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        seen = namespace.__dict__.setdefault("_given", set())
        if self.dest in seen:
            raise UsageError(f"{option_string}: given twice")
        seen.add(self.dest)
        setattr(namespace, self.dest, True)


def _add_problem_args(p, need_privacy=True, privacy_default=None, with_n=True, problem_help=None):
    p.add_argument("--problem", required=True, help=problem_help or
                   "problem name: mean, support, density, multinomial, gaussian, sparse-bernoulli, linear, point")
    if need_privacy:
        p.add_argument("--privacy", default=privacy_default, required=privacy_default is None,
                       help="privacy model (required): none, pure, smooth, approx, tv, kl, local")
    if with_n:
        p.add_argument("--n", action=_Once, help="sample size (default 1000)")
    p.add_argument("--eps", action=_Once,
                   help="privacy level of the model: ε for pure/smooth/approx/local (default 1), α for kl "
                        "(default 1) and tv (default 0.5); refused with --privacy none")
    p.add_argument("--alpha", action=_Once, help="alias of --eps for tv/kl")
    p.add_argument("--delta", action=_Once, help="δ of (ε,δ)-DP (approx only; default 1e-6)")
    p.add_argument("--d", action=_Once, help="dimension (default 1; multinomial 10, sparse-bernoulli 20)")
    p.add_argument("--r", action=_Once, help="radius / moment bound (default 1; mean and linear)")


def build_parser() -> argparse.ArgumentParser:
    # allow_abbrev=False: problem parameters pass through as extras, so `--s` must not be read as `--seed`
    parser = _Parser(prog="boundcalc", description="Minimax bounds for private statistical estimation.",
                     allow_abbrev=False, epilog=EXIT_CODES)
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    sub.required = True

    fmt = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser("rate", help="minimax rate, certified lower and upper bounds", formatter_class=fmt,
                       epilog=_epilog("rate"), lazy_epilog=_problem_options)
    _add_problem_args(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--json", action=_OnceFlag,
                   help="print one JSON object (rate, best lower/upper, every bound with source and derivation)")
    g.add_argument("--latex", action=_OnceFlag, help="LaTeX table")
    g.add_argument("--explain", action=_OnceFlag,
                   help="print the derivation, source and docs page of the reported lower and upper bounds")

    p = sub.add_parser("check", help="simulate the upper-bound mechanism against the certified bounds",
                       formatter_class=fmt, lazy_epilog=_problem_options, epilog=_epilog("check", extra=(
                           "The sample sizes come from --ns (default: the problem's grid); there is no --n. "
                           "Exit status 3 if a simulated risk falls outside the certified band.")))
    _add_problem_args(p, with_n=False)
    p.add_argument("--reps", default="200", help="repetitions per n (default 200)")
    p.add_argument("--seed", default="0", help="random seed (default 0)")
    p.add_argument("--ns", help="comma-separated sample sizes, at least two, each >= 2 (default: the "
                                "problem's grid)")
    p.add_argument("--plot", help="write a figure of the check to this file (PNG; .svg, .pdf ... by extension)")
    p.add_argument("--json", action="store_true", help="print the check as one JSON object")

    p = sub.add_parser("plan", help="sample size (or privacy level) needed for a target error",
                       formatter_class=fmt, epilog=_epilog("plan", extra=(
                           "--solve n: give --target, get the necessary and sufficient n; --solve eps: give "
                           "--target and --n, get the privacy level; --solve target: give --n (and level), get "
                           "the reachable risk.")), lazy_epilog=_problem_options)
    _add_problem_args(p)
    p.add_argument("--target", help="target risk (comma-separated for several); not with --solve target")
    p.add_argument("--solve", default=None,
                   help="what to solve for: n (default), eps, or target (the risk reachable at the given n)")
    p.add_argument("--json", action="store_true", help="print the plan as one JSON object")
    p.add_argument("--study", help="plan several statistics under one budget from a study file (TOML or JSON; "
                                   "docs/methods/planning-a-study.md); then --problem is not used")

    p = sub.add_parser("table", help="table of bounds across privacy models", formatter_class=fmt,
                       lazy_epilog=_problem_options, epilog=_epilog("table", extra=(
                           "--problem all (or a comma-separated list such as mean,support) gives one row per "
                           "problem and privacy model; --privacy pure,approx keeps those models. A list may not "
                           "have empty or repeated entries. Each parameter applies to the rows that take it (--k "
                           "to the mean rows of mean,support; --delta to the approx row): the other rows run "
                           "without it, with a note, and a parameter no row takes is refused. --eps is the level "
                           "of every row; --alpha, if given, that of the tv and kl rows only. A level no row "
                           "allows is refused; a row that does not allow it (tv at --eps 2) keeps its default "
                           "level, with a note.")))
    _add_problem_args(p, need_privacy=False, problem_help=(
        "problem name, a comma-separated list of names (mean,support), or all: mean, support, density, "
        "multinomial, gaussian, sparse-bernoulli, linear, point"))
    p.add_argument("--privacy", help="comma-separated privacy models, e.g. pure,approx (default: all of the "
                                     "problem's): none, pure, smooth, approx, tv, kl, local")
    p.add_argument("--format", default="text", help="text (default), latex, markdown, csv, json")
    p.add_argument("--output", help="write to this file (atomically) instead of stdout")

    p = sub.add_parser("plot", help="plot the certified band against n or eps (needs matplotlib)",
                       formatter_class=fmt, lazy_epilog=_problem_options, epilog=_epilog("plot", extra=(
                           "Needs matplotlib: pip install 'boundcalc[plot]' (the plot extra).")))
    _add_problem_args(p)
    p.add_argument("--x", default="n", help="the x axis: n (default) or eps")
    p.add_argument("--points", help="number of grid points (default 24, 3 to 400); beyond 24, 24 of them are "
                                    "computed as `rate` does and the others are the better of the closed-form "
                                    "bounds and the computed ones carried along the axis (the risk falls with n "
                                    "and the level): certified, and stepped where the closed forms are loose")
    p.add_argument("--xmin", help="smallest x (default n/100, or eps/100); a sample size >= 1, or a level the "
                                  "model allows")
    p.add_argument("--xmax", help="largest x (default 1000 n, or 20 eps; tv/kl below 1); a sample size, or a "
                                  "level the model allows (tv and kl: below 1)")
    p.add_argument("--output", required=True, help="figure file to write (required): PNG, or the format its "
                                                    "extension names (.svg, .pdf, ...)")

    p = sub.add_parser("convert", help="translate a privacy guarantee into another model", formatter_class=fmt,
                       epilog=_epilog("convert", problem=False, extra=(
                           "models: none, pure, smooth, approx, tv, kl, local (--from and --to), and testing "
                           "(--to only: the smallest type I + type II error of a test between neighbouring "
                           "samples). Derivations: docs/methods/relations.md.")))
    p.add_argument("--from", dest="from_model", required=True,
                   help="the guarantee you have: none, pure, smooth, approx, tv, kl, local")
    p.add_argument("--to", dest="to_model", required=True,
                   help="the guarantee wanted: none, pure, smooth, approx, tv, kl, local, testing")
    p.add_argument("--eps", help="level of --from: ε (pure/smooth/approx/local, default 1) or α (kl default 1, "
                                 "tv default 0.5)")
    p.add_argument("--alpha", help="alias of --eps for tv/kl")
    p.add_argument("--delta", help="δ of --from approx (default 1e-6)")
    p.add_argument("--group", default="1", help="group size m: the guarantee for samples differing in m entries "
                                                "(default 1)")
    p.add_argument("--json", action="store_true", help="print the conversion as one JSON object")

    p = sub.add_parser("list", help="problems, privacy models and parameters", formatter_class=fmt,
                       epilog=_epilog("list", problem=False, extra=PRIVACY_HELP))
    p.add_argument("--json", action="store_true", help="print the list as JSON (one object per problem and model)")

    p = sub.add_parser("docs", help="print a derivation page (problems/<problem>, methods/<method>)",
                       formatter_class=fmt, epilog=_epilog("docs", problem=False, extra=(
                           "The pages ship with the package. A page is named as problems/mean, methods/le-cam, "
                           "docs/problems/mean.md (as printed by --explain), or just mean; without a name, the "
                           "list of pages.")))
    p.add_argument("page", nargs="?", help="the page: problems/<problem>, methods/<method>, or a bare name")
    return parser


def _extras(rest: list[str]) -> dict:
    """Turn leftover ``--name value`` tokens into a dict (values stay strings; problems validate)."""
    out = {}
    i = 0
    while i < len(rest):
        tok = rest[i]
        if not tok.startswith("--") or len(tok) < 3:
            raise UsageError(f"unexpected argument {tok!r}")
        name = tok[2:]
        if "=" in name:
            name, value = name.split("=", 1)
            i += 1
        else:
            if i + 1 >= len(rest) or (rest[i + 1].startswith("--") and not _is_number(rest[i + 1])):
                raise UsageError(f"--{name}: expected a value")
            value = rest[i + 1]
            i += 2
        key = name.replace("-", "_")
        if key in out:
            raise UsageError(f"--{name}: given twice")
        out[key] = value
    return out


def _is_number(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


def _params(args, extras) -> dict:
    params = {k: getattr(args, k) for k in COMMON if getattr(args, k, None) is not None}
    privacy = getattr(args, "privacy", None)
    if privacy is not None and "," not in str(privacy):
        from .core.privacy import get_model

        model = get_model(privacy)
        for level in ("eps", "alpha"):
            if level in params and model.level is None:
                raise UsageError(f"--{level}: not used by --privacy {model.name} (it has no privacy level)")
    for k, v in extras.items():
        if k in params:
            raise UsageError(f"--{k}: given twice")
        params[k] = v
    return params


def _dumps(obj) -> str:
    """JSON text of a result; every object printed carries the package's ``version`` (for ``list``, each row)."""
    if isinstance(obj, dict):
        obj = {**obj, "version": package_version()}
    elif isinstance(obj, list):
        obj = [{**o, "version": package_version()} if isinstance(o, dict) else o for o in obj]
    return json.dumps(obj, indent=2, allow_nan=False, default=_json_default)


def _json_default(o):
    import numpy as np

    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        f = float(o)
        return f if math.isfinite(f) else None
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


# ---------------------------------------------------------------------- commands

def cmd_rate(args, extras):
    from .app.api import rate

    res = rate(args.problem, args.privacy, **_params(args, extras))
    if args.json:
        print(_dumps(res.to_dict()))
    elif args.latex:
        print(res.to_latex(), end="")
    elif args.explain:
        print(res.explain())
        print(_explain_pages(res.problem))
    else:
        print(res.to_text())


def _explain_pages(problem) -> str:
    """How to read the pages cited above wherever boundcalc is installed, then the problem's page."""
    from .app.docpages import location, read_page

    head = (f"\npages: `boundcalc docs <page>` prints any page named above (e.g. boundcalc docs problems/{problem}); "
            f"they are in {location()}")
    try:
        text = read_page(f"problems/{problem}")
    except Exception:  # noqa: BLE001 - a missing page must not hide the derivation printed above
        return head
    rule = "-" * 100
    return f"{head}\n\n{rule}\ndocs/problems/{problem}.md\n{rule}\n{text.rstrip()}"


def cmd_check(args, extras):
    from .core.params import ParamSpec
    from .app.simulate import check

    from .app.simulate import SEED_SPEC, parse_ns

    reps = ParamSpec("reps", "int", 200, "", low=2, high=1e7).parse(args.reps)
    seed = SEED_SPEC.parse(args.seed)
    ns = None if args.ns is None else parse_ns(args.ns)
    if args.plot is not None:
        from .plotting import figure_format

        _output_path(args.plot, "plot")
        figure_format(args.plot, "plot")
    res = check(args.problem, args.privacy, reps=reps, seed=seed, ns=ns, progress=sys.stderr.isatty(),
                **_params(args, extras))
    if args.plot:
        from .plotting import plot_check

        plot_check(res, args.plot)
    print(_dumps(res.to_dict()) if args.json else res.to_text())
    return EXIT_OK if res.passed else EXIT_CHECK_FAILED


def cmd_plan(args, extras):
    from .app.planning import plan

    res = plan(args.problem, args.privacy, target=args.target, solve=args.solve, **_params(args, extras))
    print(_dumps(res.to_dict()) if args.json else res.to_text())


def cmd_plan_study(argv):
    """``boundcalc plan --study FILE [--json | --format ...]``: a study file, optionally overridden by options."""
    p = _Parser(prog="boundcalc plan", allow_abbrev=False)
    p.add_argument("--study", required=True)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--json", action=_OnceFlag)
    g.add_argument("--format")
    for name in ("privacy", "eps", "alpha", "delta", "n", "solve", "strategy", "output"):
        p.add_argument("--" + name)
    args = p.parse_args(argv)
    from .app.study import load_study, plan_study

    if args.output is not None:
        _output_path(args.output, "output")
    kw = load_study(args.study)
    if args.solve is not None and args.solve.strip().lower() in ("eps", "alpha") and args.eps is None:
        kw.pop("eps", None)  # --solve eps leaves the file's budget open
        kw.pop("alpha", None)
    for name in ("privacy", "eps", "alpha", "delta", "n", "solve", "strategy"):
        if getattr(args, name) is not None:
            kw[name] = getattr(args, name)
    if "alpha" in kw and "eps" in kw:
        raise UsageError("--alpha: an alias of --eps; give one of them (the study file or the options)")
    res = plan_study(**kw)
    text = _dumps(res.to_dict()) + "\n" if args.json else res.render(args.format or "text")
    if args.format and args.format.strip().lower() == "json":
        text = _dumps(res.to_dict()) + "\n"
    if args.output:
        from .render.fileio import write_atomic

        write_atomic(args.output, text, option="output")
    else:
        print(text, end="" if text.endswith("\n") else "\n")


def _output_path(path, option):
    from .render.outpath import validate_output_path

    return validate_output_path(path, option)


def cmd_table(args, extras):
    from .app.export import table

    if args.output is not None:
        _output_path(args.output, "output")

    from .app.export import split_list

    privs = None if args.privacy is None else split_list(args.privacy, "privacy")
    res = table(args.problem, privacies=privs, **_params(args, extras))
    text = res.render(args.format)
    if args.output:
        from .render.fileio import write_atomic

        write_atomic(args.output, text, option="output")
    else:
        print(text, end="" if text.endswith("\n") else "\n")


def cmd_plot(args, extras):
    from .plotting import plot

    _output_path(args.output, "output")

    grid = {k: getattr(args, k) for k in ("points", "xmin", "xmax") if getattr(args, k) is not None}
    plot(args.problem, args.privacy, x=args.x, output=args.output, progress=sys.stderr.isatty(),
         **grid, **_params(args, extras))
    print(args.output)


def cmd_convert(args, extras):
    from .core.errors import InputError
    from .core.params import ParamSpec
    from .privacy_relations.relations import convert

    if extras:
        raise UsageError(f"unexpected argument --{next(iter(extras))}")
    if args.alpha is not None and args.eps is not None:
        raise InputError("alpha", "is an alias of --eps: give one of them", args.alpha)
    if args.alpha is not None:
        from .core.privacy import get_model

        try:
            source = get_model(args.from_model)
        except InputError:
            source = None  # an unknown --from is reported by convert
        if source is not None and source.level_name != "alpha":
            raise InputError("alpha", f"is the level of --from tv and kl; --from {source.name} takes --eps",
                             args.alpha)
    eps = args.eps if args.eps is not None else args.alpha
    group = ParamSpec("group", "int", 1, "", low=1, high=1e9).parse(args.group)
    res = convert(args.from_model, args.to_model, eps=eps, delta=args.delta, group=group)
    print(_dumps(res.to_dict()) if args.json else res.to_text())


def _no_extras(command, extras):
    if extras:
        name = next(iter(extras))
        raise UsageError(f"--{name.replace('_', '-')}: not an option of {command} (see boundcalc {command} --help)")


def cmd_list(args, extras):
    from .app.api import list_problems

    _no_extras("list", extras)
    rows = list_problems()
    if args.json:
        print(_dumps(rows))
        return
    width = max(len(r["problem"]) for r in rows)
    for r in rows:
        params = " ".join(f"--{k} {v}" for k, v in r["params"].items())
        alias = f" (alias {', '.join(r['aliases'])})" if r["aliases"] else ""
        print(f"{r['problem']:<{width}}  {r['privacy']:<7} {params}{alias}")


def cmd_docs(args, extras):
    from .app.docpages import list_pages, read_page

    _no_extras("docs", extras)
    if args.page is None:
        print("\n".join(list_pages()))
        return
    text = read_page(args.page)
    print(text, end="" if text.endswith("\n") else "\n")


COMMANDS = {"rate": cmd_rate, "check": cmd_check, "plan": cmd_plan, "table": cmd_table, "plot": cmd_plot,
            "convert": cmd_convert, "list": cmd_list, "docs": cmd_docs}


def main(argv=None) -> int:
    from .core.errors import InputError

    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    try:
        if argv[:1] == ["plan"] and any(a == "--study" or a.startswith("--study=") for a in argv[1:]):
            return cmd_plan_study(argv[1:]) or 0
        args, rest = parser.parse_known_args(argv)
        extras = _extras(rest)
        rc = COMMANDS[args.command](args, extras)
        return 0 if rc is None else rc
    except (UsageError, InputError) as exc:
        print(f"boundcalc {argv[0] if argv else ''}: error: {exc}".replace("  ", " "), file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # an internal error: one line, exit 1 (BOUNDCALC_DEBUG=1 for the traceback)
        import os

        if os.environ.get("BOUNDCALC_DEBUG"):
            raise
        print(f"boundcalc: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INTERNAL


#: numpy submodules that scipy.special's array-API layer imports (it copies every public name of numpy) and that no
#: command uses: in the console script's process they are made lazy (:class:`_LazyParts`)
LAZY_PARTS = ("numpy.f2py", "numpy.testing")


class _LazyParts:
    """A finder that makes the modules of :data:`LAZY_PARTS` lazy (:class:`importlib.util.LazyLoader`): importing one
    binds the module object and runs nothing; its code runs, as usual, on the first look-up of one of its names.

    ``import scipy.special`` binds ``numpy.f2py`` and ``numpy.testing`` (its array-API layer copies numpy's public
    names, numpy's lazily imported submodules with them), and running them cost about 0.1 s of a command's CPU
    time (f2py's Fortran parser and the charset detection it imports). No boundcalc command calls either, and a
    caller that does gets the same module, run when first used. Installed by :func:`run` only (the console script's
    own process), never by ``import boundcalc``."""

    def find_spec(self, name, path=None, target=None):
        if name not in LAZY_PARTS:
            return None
        import importlib.util

        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = importlib.util.LazyLoader(spec.loader)
        return spec


def _lazy_parts() -> None:
    if not any(isinstance(f, _LazyParts) for f in sys.meta_path) and not any(m in sys.modules for m in LAZY_PARTS):
        sys.meta_path.insert(0, _LazyParts())


def run() -> None:
    """The ``boundcalc`` console script (and ``python -m boundcalc``): :func:`main`, then a quick exit.

    Once the answer is printed, the exit handlers have run (one of them writes the disk cache) and the output
    streams are flushed, the process ends with ``os._exit``. The interpreter's own teardown would free every
    sympy object and module one by one: 50-80 ms of a ``rate`` call, with nothing left to do (no file is
    open, no thread runs). ``--help`` and argparse's own errors exit the usual way.
    """
    _lazy_parts()
    code = main()
    import atexit
    import os

    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is None:  # pragma: no cover - an interpreter without it: exit the usual way
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (``| head``): nothing more can be written
            pass
    run_exit_handlers()
    os._exit(code)


if __name__ == "__main__":
    run()
