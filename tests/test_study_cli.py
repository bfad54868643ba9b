"""`boundcalc plan --study FILE`: the real console script on TOML and JSON study files, and bad files refused
with exit 2 and one line naming the key (and its line where the parser gives it)."""
import json
import shutil
import subprocess
import sys

import pytest

EXE = shutil.which("boundcalc")
CMD = [EXE] if EXE else [sys.executable, "-m", "boundcalc.cli"]

GOOD = """\
privacy = "local"
eps = 1.0

[[statistic]]
name = "yes/no"
problem = "multinomial"
d = 2
target = 0.004

[[statistic]]
name = "three answers"
problem = "multinomial"
d = 3
target = 0.01
"""


def run(*args, timeout=300):
    return subprocess.run(CMD + list(args), capture_output=True, text=True, timeout=timeout)


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def test_study_toml_text_and_json(tmp_path):
    path = _write(tmp_path, "survey.toml", GOOD)
    p = run("plan", "--study", path, "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["privacy"] == "local" and out["eps"] == 1.0
    assert [r["name"] for r in out["rows"]] == ["yes/no", "three answers"]
    assert out["n_sufficient"] >= out["n_necessary"] > 0
    assert out["strategy"] in ("split-people", "split-eps", "mixed")
    assert "splitting people: n = " in out["comparison"]
    for r in out["rows"]:
        assert r["upper"]["value"] <= r["target"]
    p = run("plan", "--study", path, "--format", "markdown")
    assert p.returncode == 0, p.stderr
    assert "| statistic |" in p.stdout and "study lower bound" in p.stdout


def test_study_json_file_and_option_override(tmp_path):
    data = {"privacy": "local", "eps": 1.0,
            "statistic": [{"name": "a", "problem": "multinomial", "d": 2, "target": 0.004}]}
    path = _write(tmp_path, "study.json", json.dumps(data, indent=1))
    p = run("plan", "--study", path, "--format", "csv", "--eps", "2")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("name,problem,target") and len(lines) == 2 and ",2.0," in lines[1]


@pytest.mark.parametrize("text,needle", [
    (GOOD.replace('d = 3\n', 'd = 3\ncolour = "red"\n'), ["'colour'", "line 14", "three answers"]),
    (GOOD.replace('target = 0.01\n', ''), ["'target'", "is missing", "three answers"]),
    (GOOD.replace('"three answers"', '"yes/no"'), ["'name'", "distinct"]),
    (GOOD.replace('problem = "multinomial"\nd = 3', 'problem = "nosuch"\nd = 3'), ["'problem'", "line 12"]),
    (GOOD.replace('eps = 1.0', 'eps = 1.0\nbudget = 3'), ["'budget'", "line 3"]),
    ('privacy = "local"\neps = 1.0\n', ["no statistic"]),
    ('privacy = "local"\neps = = 1.0\n', ["TOML", "line 2"]),
    (GOOD.replace('privacy = "local"', 'privacy = "renyi"'), ["privacy"]),
    (GOOD.replace('target = 0.004', 'target = 1e-30'), ["yes/no", "not reached"]),
])
def test_bad_study_files_exit_2_with_one_line(tmp_path, text, needle):
    path = _write(tmp_path, "bad.toml", text)
    p = run("plan", "--study", path)
    assert p.returncode == 2, (p.returncode, p.stderr)
    err = p.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for n in needle:
        assert n in err, (n, err)


def test_bad_json_names_the_line(tmp_path):
    path = _write(tmp_path, "bad.json", '{\n "privacy": "local",\n "eps": 1.0,\n}\n')
    p = run("plan", "--study", path)
    assert p.returncode == 2 and "line 4" in p.stderr and "JSON" in p.stderr, p.stderr


def test_missing_file_exit_2(tmp_path):
    p = run("plan", "--study", str(tmp_path / "nope.toml"))
    assert p.returncode == 2 and "--study" in p.stderr and len(p.stderr.strip().splitlines()) == 1
