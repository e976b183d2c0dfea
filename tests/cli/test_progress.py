"""Progress on a terminal's stderr: the codec preview says how far its passages
are, `album` draws the grading bar; stdout stays the JSON document alone, and
without a terminal nothing is drawn. Real processes, stderr on a real pseudo-terminal."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import threading

import pytest

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


def run_on_terminal(args: list[str], cwd) -> tuple[int, str, str]:
    """(exit code, stdout, what the terminal on stderr showed, escapes removed)."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "160", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "trackgrade", *args], stdout=subprocess.PIPE,
                            stderr=slave, stdin=subprocess.DEVNULL, cwd=cwd, env=env)
    os.close(slave)
    shown = bytearray()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:                    # the child closed the terminal
                return
            if not chunk:
                return
            shown.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    out, _ = proc.communicate(timeout=240)
    reader.join(timeout=10)
    os.close(master)
    return proc.returncode, out.decode(), ANSI.sub("", shown.decode("utf-8", "replace"))


@pytest.mark.slow(seconds=6)
def test_the_codec_preview_shows_its_progress_on_a_terminal(tracks, tmp_path):
    code, out, shown = run_on_terminal(["analyze", str(tracks[0]), "--json", "--codec-preview"],
                                       tmp_path)
    assert code == 0, shown
    document = json.loads(out)                       # stdout: the document, nothing else
    assert [c["codec"] for c in document["delivery"]["codecs"]] == ["mp3", "aac", "opus"]
    assert re.search(r"codec preview \(MP3, AAC, Opus\): \d+/\d+ passages", shown), shown


def test_without_a_terminal_nothing_is_drawn(tracks, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "trackgrade", "analyze", str(tracks[1]),
                           "--json", "--codec-preview"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["delivery"]["codecs"]
    assert proc.stderr == ""


@pytest.mark.slow(seconds=6)
def test_album_shows_the_grading_bar_on_a_terminal(tracks, tmp_path):
    code, out, shown = run_on_terminal(["album", *map(str, tracks), "--json", "--jobs", "2"],
                                       tmp_path)
    assert code == 0, shown
    assert len(json.loads(out)["tracks"]) == 2
    assert re.search(r"Grading.*2/2", shown), shown
