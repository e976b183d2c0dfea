"""Shared fixtures for the command-line tests: a Typer runner and short
synthetic tracks rendered by the shared generator (cached outside the repo,
copied into each test's tmp_path)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.truth import render_specs

TRACK_SPECS = [
    {"name": "cli_techno", "style": "techno", "bpm": 130, "key": "A", "scale": "minor",
     "seconds": 16, "seed": 1},
    {"name": "cli_house", "style": "house", "bpm": 124, "key": "C", "scale": "major",
     "seconds": 14, "seed": 2, "format": "FLAC"},
]


@pytest.fixture()
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(scope="session")
def rendered_tracks() -> tuple[Path, list[dict]]:
    """(cache directory, truth entries) of the two short test tracks."""
    return render_specs(TRACK_SPECS)


@pytest.fixture()
def tracks(rendered_tracks, tmp_path) -> list[Path]:
    """The two tracks copied into this test's tmp_path: [techno.wav, house.flac]."""
    directory, truth = rendered_tracks
    out = []
    for entry in truth:
        source = directory / entry["file"]
        target = tmp_path / source.name
        shutil.copyfile(source, target)
        out.append(target)
    return out


@pytest.fixture()
def garbage_wav(tmp_path) -> Path:
    """A file with an audio name and a broken RIFF header."""
    path = tmp_path / "broken.wav"
    path.write_bytes(b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 7 + b"not really audio" * 40)
    return path
