"""The extract stage as a whole: every stage runs once and shares its frames,
and a polarity-inverted channel does not blind the rhythm analysis (a mono mix
written as L = -R cancels completely in a plain channel sum)."""

from pathlib import Path

import pytest

from trackgrade.engine.decode import decode
from trackgrade.engine.extract import extract

from truth import render_specs

BASE = {"style": "house", "bpm": 126.0, "key": "E", "scale": "minor", "seconds": 24.0, "seed": 11,
        "target_lufs": -9.0}
SPECS = [dict(BASE, name="ex_clean"), dict(BASE, name="ex_phase", defects=["mono", "phase_invert_right"])]


@pytest.fixture(scope="module")
def features():
    out, tracks = render_specs(SPECS)
    return {t["name"]: (t, extract(decode(Path(out, t["file"]).read_bytes(), file_name=t["file"])))
            for t in tracks}


def test_every_stage_is_timed(features):
    _, f = features["ex_clean"]
    assert set(f.timings_s) == {"loudness", "dynamics_stereo", "short_stft", "rhythm", "structure",
                                "long_spectrum", "spectrum_tonal"}


def test_phase_inverted_channel_keeps_tempo_beats_and_sections(features):
    truth, clean = features["ex_clean"]
    _, inverted = features["ex_phase"]
    assert inverted.stereo.correlation < -0.5
    assert inverted.rhythm.bpm == pytest.approx(truth["bpm"], rel=0.01)
    assert inverted.rhythm.beat_strength == pytest.approx(clean.rhythm.beat_strength, abs=0.05)
    assert [s.label for s in inverted.structure.sections] == [s.label for s in clean.structure.sections]
    # loudness sums channel powers, so polarity does not change it
    assert inverted.loudness.integrated_lufs == pytest.approx(clean.loudness.integrated_lufs, abs=0.05)
