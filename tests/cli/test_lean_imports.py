"""`trackgrade analyze` loads only what it uses: no scipy (its FFT module is
loaded on its own, the loudness filters are numpy), no server, no rich when
printing JSON, no process pools, no HTTP client, no pydantic (Typer 0.29
builds a pydantic adapter per option: pinned below it). Checked on a real
run with `-X importtime`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "demo.mp3"
NEVER = ("scipy", "av", "trackgrade.engine.codecs", "trackgrade.server", "rich", "multiprocessing", "concurrent.futures.process",
         "trackgrade.cli.render", "trackgrade.report", "waitress", "flask", "click",
         "pydantic", "http.client", "ssl", "trackgrade.client.api", "trackgrade.client.transport")


def imported_by(*args: str) -> tuple[set[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "trackgrade", *args],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    names = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
             if line.startswith("import time:") and "|" in line}
    return names, done.stdout


def _offenders(names: set[str]) -> list[str]:
    return sorted(n for n in names if any(n == p or n.startswith(p + ".") for p in NEVER))


def test_analyze_json_imports_only_the_engine():
    names, out = imported_by("analyze", str(DEMO), "--json")
    assert json.loads(out)["file_name"] == "demo.mp3"
    assert "trackgrade.engine.extract" in names            # the check sees real imports
    assert _offenders(names) == []


def test_analyzing_a_wav_loads_no_libsndfile_and_no_mail_parser(tmp_path):
    # WAV and AIFF are read by our own parser: soundfile (cffi, libsndfile)
    # loads for FLAC and MP3 only; the HTTP-date parser (email.utils) only
    # when a Retry-After header carries a date
    from tests.delivery.signals import club_loop, wav_bytes

    loop = tmp_path / "loop.wav"
    loop.write_bytes(wav_bytes(club_loop(4.0)))
    names, out = imported_by("analyze", str(loop), "--json")
    assert json.loads(out)["file_name"] == "loop.wav"
    assert "trackgrade.engine.decode.stream" in names         # the check sees real imports
    assert sorted(n for n in names if n.split(".")[0] in ("soundfile", "_soundfile", "_cffi_backend",
                                                          "email")) == []


def test_the_codec_preview_loads_pyav_only_when_asked(tmp_path):
    from tests.delivery.signals import club_loop, wav_bytes

    loop = tmp_path / "loop.wav"          # short: the whole-track AAC encode is not the point
    loop.write_bytes(wav_bytes(club_loop(8.0)))
    names, out = imported_by("analyze", str(loop), "--json", "--codec-preview")
    assert [c["codec"] for c in json.loads(out)["delivery"]["codecs"]] == ["mp3", "aac", "opus"]
    assert "av" in names and "trackgrade.engine.codecs" in names


def test_admin_overlap_default_is_the_webhooks_one():
    from trackgrade.cli.admin.webhooks import DEFAULT_OVERLAP_S
    from trackgrade.server.webhooks.endpoints import DEFAULT_OVERLAP
    assert DEFAULT_OVERLAP_S == DEFAULT_OVERLAP


def test_high_rate_audio_and_the_report_load_no_scipy_signal(tmp_path):
    # scipy 1.17's scipy.signal takes ~2 s of CPU to import: the resampler
    # (96 kHz -> 48 kHz) and the report's timeline design their filters in numpy
    import numpy as np
    import soundfile as sf

    from tests.delivery.signals import club_loop

    loop = club_loop(6.0)
    hi = tmp_path / "hi.wav"
    sf.write(hi, np.repeat(loop, 2, axis=0), 96000, subtype="FLOAT")   # 96 kHz: analysed at 48 kHz
    names, out = imported_by("analyze", str(hi), "--json")
    assert json.loads(out)["duration_seconds"] == pytest.approx(2 * loop.shape[0] / 96000, abs=0.01)
    assert "trackgrade.engine.resample" in names
    assert "scipy.signal" not in names
    names, _ = imported_by("report", str(hi), "--out", str(tmp_path / "hi.html"))
    assert "trackgrade.report.timeline" in names and (tmp_path / "hi.html").stat().st_size > 0
    assert "scipy.signal" not in names
