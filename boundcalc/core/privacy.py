"""Privacy models, their level parameters, and validation (docs/README.md).

One CLI flag ``--eps`` carries the level of the chosen model (ε for pure/smooth/approx/local, α for
tv/kl; ``--alpha`` is an alias). ``--delta`` belongs to ``approx`` only.
Relations between models (e.g. the TV level implied by (ε,δ)-DP) live in :mod:`boundcalc.privacy_relations.relations`.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import InputError
from .params import ParamSpec


@dataclass(frozen=True)
class PrivacyModel:
    name: str
    title: str
    level_name: str  # "eps" or "alpha": what the paper calls the level
    level: ParamSpec | None
    uses_delta: bool = False
    central: bool = True
    short: str = ""  # table column text (e.g. "pure DP")
    tex: str = ""  # LaTeX table text
    abbrev: str = ""  # the guarantee's short name in sentences (e.g. "ε-DP")

    def params(self) -> list[ParamSpec]:
        out = [] if self.level is None else [self.level]
        if self.uses_delta:
            out.append(DELTA)
        return out


EPS = ParamSpec("eps", "float", 1.0, "privacy level ε", low=0, low_open=True, high=1e4)
DELTA = ParamSpec("delta", "float", 1e-6, "δ of (ε,δ)-DP", low=0, high=1, low_open=True, high_open=True)
TV_LEVEL = ParamSpec("eps", "float", 0.5, "TV-privacy level α (--eps or --alpha)", low=0, high=1,
                     low_open=True, high_open=True)
KL_LEVEL = ParamSpec("eps", "float", 1.0, "KL-privacy level α (--eps or --alpha)", low=0, low_open=True,
                     high=1e4)

#: the one table of privacy models: every title and short name lives here
MODELS: dict[str, PrivacyModel] = {
    "none": PrivacyModel("none", "no privacy", "eps", None, short="none", tex="none", abbrev="no privacy"),
    "pure": PrivacyModel("pure", "ε-differential privacy", "eps", EPS, short="pure DP",
                         tex=r"$\varepsilon$-DP", abbrev="ε-DP"),
    "smooth": PrivacyModel("smooth", "ε-smooth differential privacy", "eps", EPS, short="smooth DP",
                           tex=r"$\varepsilon$-smooth DP", abbrev="ε-smooth DP"),
    "approx": PrivacyModel("approx", "(ε,δ)-differential privacy", "eps", EPS, uses_delta=True,
                           short="approximate DP", tex=r"$(\varepsilon,\delta)$-DP", abbrev="(ε,δ)-DP"),
    "tv": PrivacyModel("tv", "α-total-variation privacy", "alpha", TV_LEVEL, short="TV privacy",
                       tex=r"$\alpha$-TV", abbrev="α-TV privacy"),
    "kl": PrivacyModel("kl", "α-KL privacy", "alpha", KL_LEVEL, short="KL privacy", tex=r"$\alpha$-KL",
                       abbrev="α-KL privacy"),
    "local": PrivacyModel("local", "ε-local differential privacy", "eps", EPS, central=False, short="local DP",
                          tex=r"$\varepsilon$-local DP", abbrev="ε-LDP"),
}


def get_model(name) -> PrivacyModel:
    if not isinstance(name, str):  # None is not "none": no privacy must be asked for by name
        raise InputError("privacy", "must be one of " + ", ".join(MODELS) + " (a string)", name)
    key = name.strip().lower()
    if key not in MODELS:
        raise InputError("privacy", "must be one of " + ", ".join(MODELS), name)
    return MODELS[key]


def validate_privacy_values(model: PrivacyModel, given: dict) -> dict:
    """Validate eps/delta for ``model``. ``given`` holds user values (None = not given).

    Returns {"eps": ..., "delta": ...} with defaults filled in for the parameters the model uses.
    A δ given to a model without δ is an error (it would silently not be used).
    """
    out = {}
    eps, delta = given.get("eps"), given.get("delta")
    if model.level is None:
        if eps is not None:  # it would silently not be used (a table drops it from such rows itself)
            raise InputError("eps", f"is not used by --privacy {model.name} (it has no privacy level)", eps)
    else:
        out["eps"] = model.level.parse(model.level.default if eps is None else eps)
    if model.uses_delta:
        out["delta"] = DELTA.parse(DELTA.default if delta is None else delta)
    elif delta is not None:
        raise InputError("delta", f"is only used with --privacy approx, not with --privacy {model.name}",
                         delta)
    return out
