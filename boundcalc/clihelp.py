"""Text of the command-line help that comes from the registry: every problem's options.

The options of a problem (``--k`` for mean, ``--model`` for point, ...) are its
:class:`~boundcalc.core.params.ParamSpec` records; this module prints each one's meaning (``doc``), allowed
values (:meth:`~boundcalc.core.params.ParamSpec.allowed`) and default, grouped per problem, so that ``--help``
can never disagree with what the problems accept. It imports every problem module, so the CLI builds this
text only when ``--help`` is asked for.
"""
from __future__ import annotations

import math
import textwrap

#: the privacy models in the order the help lists them
MODEL_ORDER = ("none", "pure", "smooth", "approx", "tv", "kl", "local")

#: options carried by the privacy model or the command itself, not listed per problem
MODEL_OPTIONS = ("n", "eps", "delta", "alpha")

WIDTH = 100


def _default(spec) -> str:
    d = spec.default
    if isinstance(d, float):
        if math.isinf(d):
            return "inf"
        if d.is_integer() and abs(d) < 1e15:
            return str(int(d))
        return f"{d:g}"
    return str(d)


def _allowed(spec) -> str:
    text = spec.allowed()
    return text[len("must be "):] if text.startswith("must be ") else text


def _ordered(privacies) -> list[str]:
    return sorted(privacies, key=lambda p: MODEL_ORDER.index(p) if p in MODEL_ORDER else len(MODEL_ORDER))


def problem_options(indent: str = "  ") -> str:
    """Every problem's options with meaning, allowed values and default, one block per problem."""
    from .app import catalog

    lines = ["problem options (--name value, after the options above; a left-out option takes its default):"]
    for name, info in sorted(catalog.problems().items()):
        privs = _ordered(info.entries)
        alias = f" (alias {', '.join(info.aliases)})" if info.aliases else ""
        lines.append("")
        lines.extend(textwrap.wrap(f"{name}{alias}: --privacy {', '.join(privs)}; derivation: "
                                   f"`boundcalc docs problems/{name}`", WIDTH, initial_indent=indent,
                                   subsequent_indent=indent * 3, break_on_hyphens=False))
        specs: dict = {}
        for priv in privs:
            for spec in info.entries[priv].params:
                if spec.name in MODEL_OPTIONS:
                    continue
                specs.setdefault(spec.name, []).append((priv, spec))
        for opt, uses in specs.items():
            # the same option may differ between privacy models (another default or range): one line each
            variants: dict = {}
            for priv, spec in uses:
                variants.setdefault((spec.doc, _allowed(spec), _default(spec)), []).append(priv)
            for (doc, allowed, default), models in variants.items():
                only = "" if len(models) == len(privs) else f" [--privacy {', '.join(models)} only]"
                text = f"--{opt}: {doc}; {allowed}; default {default}{only}"
                lines.extend(textwrap.wrap(text, WIDTH, initial_indent=indent * 2,
                                           subsequent_indent=indent * 2 + "    ", break_on_hyphens=False))
    return "\n".join(lines)
