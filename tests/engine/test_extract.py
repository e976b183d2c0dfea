"""The extract stage as a whole: every stage runs once and shares its frames,
and a polarity-inverted channel does not blind the rhythm analysis (a mono mix
written as L = -R cancels completely in a plain channel sum)."""

from pathlib import Path

import pytest

from trackgrade.engine.decode import decode
from trackgrade.engine.extract import extract

from tests.truth import render_specs

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
    assert set(f.timings_s) == {"loudness", "dynamics_stereo", "short_stft", "rhythm", "groove",
                                "structure", "long_spectrum", "spectrum_tonal"}


def test_phase_inverted_channel_keeps_tempo_beats_and_sections(features):
    truth, clean = features["ex_clean"]
    _, inverted = features["ex_phase"]
    assert inverted.stereo.correlation < -0.5
    assert inverted.rhythm.bpm == pytest.approx(truth["bpm"], rel=0.01)
    assert inverted.rhythm.beat_strength == pytest.approx(clean.rhythm.beat_strength, abs=0.05)
    assert [s.label for s in inverted.structure.sections] == [s.label for s in clean.structure.sections]
    # loudness sums channel powers, so polarity does not change it
    assert inverted.loudness.integrated_lufs == pytest.approx(clean.loudness.integrated_lufs, abs=0.05)


def test_one_core_mode_gives_the_same_measurements(features):
    """extract(parallel=False), as batch workers run it, measures exactly what the
    two-thread default measures."""
    from dataclasses import fields

    import numpy as np

    truth, threaded = features["ex_clean"]
    out, _ = render_specs(SPECS)
    single = extract(decode(Path(out, truth["file"]).read_bytes(), file_name=truth["file"]),
                     parallel=False)
    for part in ("loudness", "dynamics", "stereo", "spectrum", "rhythm", "tonality", "structure",
                 "content", "noise_floor"):
        a, b = getattr(threaded, part), getattr(single, part)
        for field in fields(a):
            x, y = getattr(a, field.name), getattr(b, field.name)
            if isinstance(x, np.ndarray):
                np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-9, err_msg=f"{part}.{field.name}")
            elif isinstance(x, float):
                assert x == pytest.approx(y, rel=1e-6, abs=1e-9), f"{part}.{field.name}"
            else:
                assert x == y, f"{part}.{field.name}"
