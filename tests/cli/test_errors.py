"""The one error boundary: one line on stderr, the right exit code, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from trackgrade.cli import app
from trackgrade.cli.errors import (EXIT_BAD, EXIT_INTERRUPTED, EXIT_USAGE, exit_code_for,
                                   run_guarded)
from trackgrade.errors import ERROR_CODES, TrackgradeError

COMMANDS = ("analyze", "batch", "report", "genres", "serve", "admin")


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got {lines!r}"
    assert "Traceback" not in text
    return lines[0]


def test_missing_file_is_a_usage_error(runner, tmp_path):
    missing = tmp_path / "x.wav"
    result = runner.invoke(app, ["analyze", str(missing)])
    assert result.exit_code == EXIT_USAGE
    assert result.stdout == ""
    assert one_line(result.stderr) == (f"trackgrade: cannot read '{missing}': "
                                       "No such file or directory")


def test_a_missing_file_among_others_does_not_stop_the_rest(runner, tmp_path, garbage_wav):
    """CONTRACT.md section 4: every file is tried (see test_analyze for the full run)."""
    result = runner.invoke(app, ["analyze", str(garbage_wav), str(tmp_path / "gone.flac"),
                                 "--json"])
    assert result.exit_code == EXIT_USAGE
    assert [e["file"] for e in json.loads(result.stdout)] == [str(garbage_wav),
                                                             str(tmp_path / "gone.flac")]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2 and "gone.flac" in lines[1] and "Traceback" not in result.stderr


@pytest.mark.parametrize("command", ["analyze", "report", "batch"])
def test_bad_mastering_value_is_usage(runner, garbage_wav, command):
    result = runner.invoke(app, [command, str(garbage_wav), "--mastering", "loud"])
    assert result.exit_code == EXIT_USAGE
    line = one_line(result.stderr)
    assert line.startswith("trackgrade: ") and "--mastering" in line and "'loud'" in line
    assert f"trackgrade {command} --help" in line


def test_directory_given_to_analyze(runner, tmp_path):
    result = runner.invoke(app, ["analyze", str(tmp_path)])
    assert result.exit_code == EXIT_USAGE
    assert "Is a directory" in one_line(result.stderr)


def test_undecodable_file_reports_the_decoder_message(runner, garbage_wav):
    result = runner.invoke(app, ["analyze", str(garbage_wav)])
    assert result.exit_code == EXIT_USAGE
    line = one_line(result.stderr)
    assert line.startswith(f"trackgrade: cannot analyze '{garbage_wav}': ")
    assert len(line) > len(f"trackgrade: cannot analyze '{garbage_wav}': ") + 5
    assert result.stdout == ""


def test_unknown_command_and_option(runner):
    result = runner.invoke(app, ["grade-it"])
    assert result.exit_code == EXIT_USAGE
    assert "No such command" in one_line(result.stderr)
    result = runner.invoke(app, ["genres", "--colour"])
    assert result.exit_code == EXIT_USAGE
    assert "--colour" in one_line(result.stderr)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(runner, command):
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert f"trackgrade {command}" in " ".join(result.stdout.split())


def test_root_help_lists_every_command(runner):
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in COMMANDS:
        assert command in result.stdout


def test_exit_codes_follow_the_error_code():
    assert exit_code_for(TrackgradeError("unprocessable_audio", "x")) == EXIT_USAGE
    assert exit_code_for(TrackgradeError("file_rejected", "x")) == EXIT_USAGE
    assert exit_code_for(TrackgradeError("parameter_invalid", "x")) == EXIT_USAGE
    assert exit_code_for(TrackgradeError("engine_error", "x")) == EXIT_BAD
    assert exit_code_for(TrackgradeError("invalid_api_key", "x")) == EXIT_BAD
    assert {exit_code_for(TrackgradeError(code, "x")) for code in ERROR_CODES} == {1, 2}


def test_boundary_turns_surprises_into_one_line(capsys):
    assert run_guarded(lambda: 1 / 0) == EXIT_BAD
    assert one_line(capsys.readouterr().err) == ("trackgrade: internal error "
                                                 "(ZeroDivisionError): division by zero")

    def interrupted():
        raise KeyboardInterrupt

    assert run_guarded(interrupted) == EXIT_INTERRUPTED
    assert one_line(capsys.readouterr().err) == "trackgrade: interrupted"

    def multi_line_error():
        raise TrackgradeError("engine_error", "first\nsecond")

    assert run_guarded(multi_line_error) == EXIT_BAD
    assert one_line(capsys.readouterr().err) == "trackgrade: first second"


def run_module(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trackgrade", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


def test_real_process_missing_file(tmp_path):
    done = run_module("analyze", "x.wav", cwd=tmp_path)
    assert done.returncode == EXIT_USAGE
    assert done.stdout == ""
    assert one_line(done.stderr) == "trackgrade: cannot read 'x.wav': No such file or directory"


def test_real_process_undecodable_and_bad_option(garbage_wav):
    done = run_module("report", str(garbage_wav), "--out", str(garbage_wav.with_suffix(".html")))
    assert done.returncode == EXIT_USAGE
    assert "cannot analyze" in one_line(done.stderr)
    assert not garbage_wav.with_suffix(".html").exists()
    done = run_module("analyze", str(garbage_wav), "--mastering", "final")
    assert done.returncode == EXIT_USAGE
    assert "--mastering" in one_line(done.stderr)
