"""docs/cli.md documents every command and option this CLI has, and every output it
shows is what a fresh run prints (docs/gen_cli.py, cog-style: it regenerates the
examples; --check fails when the written ones differ from a fresh run)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer.main

from trackgrade.cli import app

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
DOCUMENTED_HERE = ("analyze", "batch", "report", "genres")
REMOTE_COMMANDS = ("analyze", "get", "status", "list", "account", "cancel")


def test_every_command_and_option_is_documented():
    text = DOC.read_text(encoding="utf-8")
    root = typer.main.get_command(app)
    for name in DOCUMENTED_HERE:
        assert f"## `trackgrade {name}`" in text, name
        command = root.commands[name]
        for param in command.params:
            for option in param.opts:
                if option.startswith("--") and option != "--help":
                    assert option in text, f"{name} {option} is not in docs/cli.md"


def test_every_remote_command_and_option_is_documented():
    text = DOC.read_text(encoding="utf-8")
    assert "## `trackgrade remote`" in text
    remote = typer.main.get_command(app).commands["remote"]
    assert set(remote.commands) == set(REMOTE_COMMANDS)
    for name in REMOTE_COMMANDS:
        assert f"remote {name}" in text, name
        for param in remote.commands[name].params:
            for option in param.opts:
                if option.startswith("--") and option != "--help":
                    assert option in text, f"remote {name} {option} is not in docs/cli.md"


@pytest.mark.slow(seconds=30)
def test_every_shown_output_is_what_a_fresh_run_prints():
    import subprocess
    import sys

    root = DOC.parents[1]
    done = subprocess.run([sys.executable, str(root / "docs" / "gen_cli.py"), "--check"],
                          cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    blocks = DOC.read_text(encoding="utf-8").count("<!-- gen_cli: ")
    assert blocks >= 8, blocks
