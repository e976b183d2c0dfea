"""libmpg123's notes on a damaged or low-bitrate MP3 never reach the terminal:
they become `decoder_notes` and one `file` warning; a clean MP3 gets none.
Real files, real decoder, separate processes (fd 2 is what is checked)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.truth import need_real, real_manifest

ROOT = Path(__file__).resolve().parents[2]
DAMAGED_STEM = "mirdata__gtzan_country.00000__lameenc_64k.mp3"   # 64 kbit/s: libmpg123 complains
DEMO = ROOT / "fixtures" / "demo.mp3"


def _damaged() -> str:
    need_real()
    rows = [r for r in real_manifest() if r["file"].endswith(DAMAGED_STEM)]
    assert rows, f"{DAMAGED_STEM} missing from ../shared/truth/real/manifest.csv"
    return rows[0]["path"]


def _python(code: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_the_raw_decoder_does_complain_about_this_file():
    """The premise: libsndfile alone prints libmpg123's errors on fd 2."""
    code = ("import io, sys, soundfile\n"
            "with soundfile.SoundFile(io.BytesIO(open(sys.argv[1], 'rb').read())) as f:\n"
            "    while len(f.read(16384, dtype='float32')):\n"
            "        pass\n")
    done = _python(code, _damaged())
    assert "mpg123" in done.stderr


def test_damaged_mp3_is_quiet_and_counted():
    code = ("import sys; from trackgrade.engine.decode import decode, probe; "
            "data = open(sys.argv[1], 'rb').read(); probe(data, file_name='x.mp3'); "
            "print(decode(data, file_name='x.mp3').decoder_notes)")
    done = _python(code, _damaged())
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert int(done.stdout) > 0


def test_other_stderr_lines_written_meanwhile_still_arrive():
    """fd 2 is the process's: a thread's own line during the capture is passed on."""
    code = ("import os, sys, threading, time\n"
            "from trackgrade.engine.decode import decode\n"
            "data = open(sys.argv[1], 'rb').read()\n"
            "stop = threading.Event()\n"
            "def talk():\n"
            "    while not stop.is_set():\n"
            "        os.write(2, b'worker says hello\\n'); time.sleep(0.001)\n"
            "t = threading.Thread(target=talk); t.start()\n"
            "notes = [decode(data, file_name='x.mp3').decoder_notes for _ in range(3)]\n"
            "stop.set(); t.join(); print(min(notes))\n")
    done = _python(code, _damaged())
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines and set(lines) == {"worker says hello"}
    assert int(done.stdout) > 0


def test_cli_analysis_of_a_damaged_mp3_warns_once_and_prints_nothing_raw():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "trackgrade", "analyze", _damaged(), "--json"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    warnings = [f for f in json.loads(done.stdout)["feedback"]
                if f["category"] == "file" and "MP3 stream is damaged" in f["text"]]
    assert len(warnings) == 1


def test_clean_mp3_has_no_notes_and_no_warning():
    code = ("import sys; from trackgrade.pipeline import analyze; "
            "a = analyze(open(sys.argv[1], 'rb').read(), file_name='demo.mp3'); "
            "print(a.extras['decoder_notes'], sum(f.category == 'file' for f in a.feedback))")
    done = _python(code, str(DEMO))
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.split() == ["0", "0"]
