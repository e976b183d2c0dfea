"""The README documents what users type and match on: a test fails when a
setting, an error code or a command is missing from it."""

from pathlib import Path

import typer.main

from trackgrade.cli import app
from trackgrade.config import SETTINGS
from trackgrade.errors import ERROR_CODES
from trackgrade.musical_keys import TONICS, camelot

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def test_every_setting_is_documented_with_its_environment_variable():
    for setting in SETTINGS:
        assert f"`{setting.env}`" in README, setting.env
        assert f"`{setting.name}`" in README, setting.name


def test_every_error_code_is_documented_with_its_status():
    for code, (status, kind) in ERROR_CODES.items():
        assert f"| `{code}` | {status} | `{kind}` |" in README, code


def test_every_top_level_command_is_named():
    for name in typer.main.get_command(app).commands:
        assert f"trackgrade {name}" in README, name


def test_the_two_commands_are_the_ones_ci_runs():
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text(encoding="utf-8")
    test_command = ("python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && "
                    ".venv/bin/python -m pytest -q -n auto")
    assert test_command in README and test_command in ci
    assert "trackgrade analyze fixtures/demo.mp3" in README
    assert (Path(__file__).resolve().parents[1] / "fixtures" / "demo.mp3").is_file()


def test_the_main_command_grades_the_demo_with_its_known_tempo_and_key():
    """The README's first command, as a user runs it: the demo track is our own
    124 BPM A-minor sketch (fixtures/make_demo.py), so its answers are known."""
    import json
    import subprocess
    import sys

    from tests.document_check import validate_document

    root = Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, "-m", "trackgrade", "analyze", "fixtures/demo.mp3", "--json"],
                         cwd=root, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert validate_document(doc) == []
    assert abs(doc["tempo"]["bpm"] - 124.0) <= 0.5
    # the demo is Am-F-C-G after four bars of kick and hats: the loop starts
    # where the harmony enters, on A minor (benchmarks/results/key.md, round 4)
    key = doc["key"]
    assert (key["key"], key["scale"]) == ("A", "minor")
    assert key["key"] in TONICS and key["camelot"] == camelot(key["key"], key["scale"])
    assert abs(doc["duration_seconds"] - 16 * 4 * 60 / 124) < 0.1
    # a 31 s demo is a part (CONTRACT.md section 6): one section, `part`
    assert doc["content"]["part"] is True
    assert [s["label"] for s in doc["structure"]["sections"]] == ["part"]
