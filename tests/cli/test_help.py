"""Every command's --help reads like a good CLI's: names a person reads as
placeholders (never a Python type), every help text whole, an example each."""

from __future__ import annotations

import re

import pytest
import typer.main

from trackgrade.cli import app
from trackgrade.cli.help import EXAMPLES

PYTHON_TYPES = re.compile(r"<(bool|int|str|float|path|list\[[^\]]*\]|int range)[^>]*>|"
                          r"\{[a-z_]+\}|\blist\[|\bPath\b|\[default: ")


def command_paths(command=None, prefix=()):
    """Every command path of the tree, the root included."""
    command = command or typer.main.get_command(app)
    yield prefix
    for name, sub in getattr(command, "commands", {}).items():
        yield from command_paths(sub, prefix + (name,))


def command_at(path):
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return command


ALL = list(command_paths())


@pytest.mark.parametrize("path", ALL, ids=[" ".join(p) or "trackgrade" for p in ALL])
def test_help_screen(runner, path):
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    screen = result.stdout
    assert screen.startswith(f"Usage: {' '.join(('trackgrade',) + path)}")
    assert not PYTHON_TYPES.search(screen), PYTHON_TYPES.search(screen).group(0)
    assert "Examples" in screen and "$ trackgrade" in screen
    assert max(len(line) for line in screen.splitlines()) <= 100
    assert all(line == line.rstrip() for line in screen.splitlines())
    command = command_at(path)
    flat = " ".join(screen.split())
    for param in command.params:
        if param.param_type_name == "option":
            for option in param.opts:
                assert option in screen, option
        help_text = " ".join((getattr(param, "help", None) or "").split())
        assert help_text in flat, f"help text lost: {help_text!r}"
    first = " ".join((command.help or "").split("\n\n")[0].split())
    assert first[:60] in flat


def test_every_command_has_its_own_examples():
    for path in ALL:
        key = " ".join(path)
        assert key in EXAMPLES or (command_at(path).epilog or "").strip(), key


def test_the_placeholders_people_read(runner):
    screens = {name: runner.invoke(app, [name, "--help"], env={"COLUMNS": "100"}).stdout
               for name in ("analyze", "batch", "report", "serve")}
    assert screens["analyze"].startswith("Usage: trackgrade analyze FILE... [options]")
    assert "--mastering pre-master|master" in screens["analyze"]
    assert re.search(r"--json\s+Print the Analysis JSON", screens["analyze"])   # a flag: no value
    assert screens["batch"].startswith("Usage: trackgrade batch PATH... [options]")
    assert "-j, --jobs N" in screens["batch"] and "--sort score|name" in screens["batch"]
    assert "-o, --out FILE" in screens["batch"]
    # the report's default survives (it used to print as ".report.html")
    assert "<stem>.report.html" in screens["report"]
    assert "--port N" in screens["serve"] and "(default: 8080)" in screens["serve"]


def test_a_missing_argument_names_the_placeholder(runner):
    result = runner.invoke(app, ["analyze"])
    assert result.exit_code == 2
    assert "Missing argument 'FILE...'" in result.stderr or "'FILE'" in result.stderr


def test_no_arguments_prints_the_help(runner):
    result = runner.invoke(app, [])
    assert "Usage: trackgrade COMMAND [options]" in result.output
    assert "Commands" in result.output and "analyze" in result.output


def test_json_help_names_what_each_command_prints(runner):
    """Only commands that print an Analysis say so; the others name their object."""
    said = {}
    for path in (("batch",), ("remote", "status"), ("remote", "list"), ("remote", "account"),
                 ("analyze",), ("remote", "get")):
        screen = " ".join(runner.invoke(app, [*path, "--help"], env={"COLUMNS": "100"}).stdout.split())
        said[path] = re.search(r"--json Print (.*?) on stdout", screen).group(1)
    assert all("Analysis JSON" in said[p] for p in (("analyze",), ("remote", "get")))
    assert not [p for p in (("batch",), ("remote", "status"), ("remote", "list"), ("remote", "account"))
                if "Analysis JSON" in said[p]], said


def test_example_event_ids_look_like_real_ones():
    """Event ids are UUIDs (store.new_event), so the examples show one."""
    import uuid as uuid_module

    for path, examples in EXAMPLES.items():
        for _, line in examples:
            if "events resend" in line:
                uuid_module.UUID(line.rsplit(" ", 1)[1])
