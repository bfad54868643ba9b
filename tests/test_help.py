"""Every subcommand's --help documents each of its options (with a description), names the models,
gives defaults, and shows an example."""
import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ["rate", "check", "plan", "table", "plot", "convert", "list"]


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
    from boundcalc.catalog import problems

    for cmd in ("rate", "check", "plan", "table", "plot"):
        text = " ".join(_help(cmd).split())
        for name in problems():
            assert name in text, (cmd, name)
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
