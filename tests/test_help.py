"""Every subcommand's --help documents each of its options (with a description), names the models,
gives defaults, and shows an example."""
import argparse
import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ["rate", "check", "plan", "table", "plot", "convert", "list", "docs"]


@functools.lru_cache(maxsize=None)  # one subprocess per subcommand (per test process): the text does not change
def _help(cmd):
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="100")
    out = subprocess.run([sys.executable, "-m", "boundcalc.cli", cmd, "--help"], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _subparser(cmd):
    from boundcalc.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[cmd]


@pytest.mark.parametrize("cmd", COMMANDS)
def test_help_mentions_every_option_with_a_description_and_an_example(cmd):
    text = _help(cmd)
    for action in _subparser(cmd)._actions:
        for opt in action.option_strings:
            assert opt in text, (cmd, opt)
        if action.option_strings and action.dest != "help":
            assert action.help, f"{cmd} {action.option_strings[0]} has no description"
    assert f"example: boundcalc {cmd}" in text
    # the example itself parses
    from boundcalc.cli import EXAMPLES, build_parser

    argv = EXAMPLES[cmd].split()[1:]
    build_parser().parse_known_args(argv)


@pytest.mark.parametrize("cmd", ["rate", "check", "plan", "table", "plot", "convert", "list"])
def test_help_names_every_privacy_model(cmd):
    text = _help(cmd)
    for model in ("none", "pure", "smooth", "approx", "tv", "kl", "local"):
        assert model in text, (cmd, model)


def test_problem_commands_name_every_problem_and_defaults():
    from boundcalc.app.catalog import problems

    for cmd in ("rate", "check", "plan", "table", "plot"):
        text = " ".join(_help(cmd).split())
        for name in problems():
            assert name in text, (cmd, name)
        if cmd != "check":  # check takes --ns, not --n
            assert "default 1000" in text  # --n
        assert "tv (default 0.5)" in text  # --eps differs per model
        assert "--json" in text or cmd in ("table", "plot")


def test_convert_help_names_testing_target_and_options():
    text = " ".join(_help("convert").split())
    for word in ("--from", "--to", "--eps", "--alpha", "--delta", "--group", "--json", "testing"):
        assert word in text


def test_plan_help_documents_solve_and_plot_help_the_grid():
    plan = " ".join(_help("plan").split())
    assert "--solve" in plan and "eps" in plan and "target" in plan
    plot = " ".join(_help("plot").split())
    for opt in ("--points", "--xmin", "--xmax"):
        assert opt in plot


def test_plot_grid_options_are_real_options(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "boundcalc.cli", "plot", "--problem", "mean", "--privacy", "pure",
                          "--points", "4", "--points", "5", "--output", str(tmp_path / "a.png")],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert out.returncode == 2 and "given twice" in out.stderr
    out = subprocess.run([sys.executable, "-m", "boundcalc.cli", "plot", "--problem", "mean", "--privacy", "pure",
                          "--points", "2", "--output", str(tmp_path / "a.png")],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert out.returncode == 2 and "points" in out.stderr and not (tmp_path / "a.png").exists()


def test_failed_condition_says_what_is_required():
    import boundcalc as bc

    text = bc.rate("mean", privacy="approx", eps=2).to_text()
    assert "requires ε < 1" in text and "not valid" not in text


def _entries():
    from boundcalc.app.catalog import param_specs, problems

    for name, info in sorted(problems().items()):
        for priv, entry in info.entries.items():
            for spec in param_specs(entry):
                yield name, priv, spec


@pytest.mark.parametrize("cmd", ["rate", "check", "plan", "table", "plot"])
def test_help_lists_every_problem_option_with_allowed_values_and_default(cmd):
    """Derived from the ParamSpecs: every problem's option, its meaning, allowed values and default."""
    from boundcalc.clihelp import MODEL_OPTIONS, _allowed, _default

    text = " ".join(_help(cmd).split())
    block = text[text.index("problem options"):]
    for name, priv, spec in _entries():
        if spec.name in MODEL_OPTIONS:
            continue
        section = block[block.index(f" {name} "):]
        line = section[section.index(f"--{spec.name}: "):]
        doc = " ".join(spec.doc.split())
        assert line.startswith(f"--{spec.name}: {doc}; {' '.join(_allowed(spec).split())}; "
                               f"default {_default(spec)}"), (cmd, name, spec.name)
    for opt in ("--k", "--model", "--ball", "--family", "--mechanism", "--loss", "--geometry", "--s", "--beta",
                "--L", "--B", "--M", "--sigma", "--theta", "--lam", "--mu0", "--radius", "--theta0"):
        assert f"{opt}: " in block, (cmd, opt)


def test_table_help_mentions_all_and_lists():
    text = " ".join(_help("table").split())
    assert "--problem all" in text and "mean,support" in text and "pure,approx" in text


def test_check_help_lists_no_ignored_option():
    text = _help("check")
    assert "--n " not in text and "--n N" not in text
    assert "--ns" in text


def test_plot_help_says_it_needs_matplotlib():
    text = " ".join(_help("plot").split())
    assert "matplotlib" in text and "boundcalc[plot]" in text


@pytest.mark.parametrize("cmd", ["rate", "check", "plan", "table", "plot", "convert", "list", "docs"])
def test_help_documents_the_exit_codes(cmd):
    text = " ".join(_help(cmd).split())
    assert "0 success" in text and "1 internal error" in text and "2 bad input" in text and "3 `check`" in text


def test_version_option_and_json_version():
    import json

    from boundcalc.cli import package_version

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "boundcalc.cli", "--version"], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == f"boundcalc {package_version()}"
    assert package_version()[0].isdigit()
    for argv in (["rate", "--problem", "mean", "--privacy", "pure", "--json"],
                 ["convert", "--from", "pure", "--to", "tv", "--json"],
                 ["plan", "--problem", "mean", "--privacy", "pure", "--target", "0.01", "--json"],
                 ["list", "--json"]):
        out = subprocess.run([sys.executable, "-m", "boundcalc.cli", *argv], capture_output=True, text=True,
                             env=env, cwd=ROOT, timeout=120)
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        rows = data if isinstance(data, list) else [data]
        assert rows and all(r["version"] == package_version() for r in rows), argv


def test_failed_check_has_its_own_exit_code(monkeypatch, capsys):
    """A check that ran and failed exits 3, distinct from an internal error (1) and bad input (2)."""
    from boundcalc import cli
    from boundcalc.app import simulate

    real = simulate.check

    def failing(*a, **k):
        res = real(*a, **k)
        res.extra_failures.append("forced failure")
        return res

    monkeypatch.setattr(simulate, "check", failing)
    rc = cli.main(["check", "--problem", "mean", "--privacy", "pure", "--ns", "100,200", "--reps", "10"])
    out = capsys.readouterr().out
    assert "FAIL" in out and rc == cli.EXIT_CHECK_FAILED == 3

    def boom(*a, **k):
        raise RuntimeError("bug")

    monkeypatch.setattr(simulate, "check", boom)
    assert cli.main(["check", "--problem", "mean", "--privacy", "pure"]) == cli.EXIT_INTERNAL == 1
