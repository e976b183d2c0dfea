"""Metrical level, tempo confidence and tempo alternatives (CONTRACT.md section 4).

Synthetic signals test the mechanics only; the figures on real music are
benchmarks/bench_accuracy.py's (RESULTS.md)."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from trackgrade.engine.features import TEMPO_RELATIONS
from trackgrade.engine.frames import mono_mix, short_stft
from trackgrade.engine.rhythm import measure_rhythm
from tests.truth import real_row

SR = 22050


def _rhythm(x: np.ndarray):
    x = np.asarray(x, dtype=np.float32)
    return measure_rhythm(short_stft(x, SR), len(x) / SR)


def _hit(n: int, freq: float, decay: float, rng) -> np.ndarray:
    t = np.arange(n) / SR
    tone = np.sin(2 * np.pi * freq * t) + 0.3 * rng.standard_normal(n)
    return tone * np.exp(-t / decay)


def waltz(bpm: float, seconds: float = 30.0) -> np.ndarray:
    """3/4 at `bpm`: a low accented hit on each bar's first beat, two lighter
    high hits after it; nothing binary about it."""
    rng = np.random.default_rng(int(bpm))
    y = np.zeros(int(seconds * SR))
    beat = 60.0 / bpm
    n = int(0.15 * SR)
    for i, start in enumerate(np.arange(0.05, seconds - 0.2, beat)):
        s = int(start * SR)
        if i % 3 == 0:
            y[s:s + n] += 0.8 * _hit(n, 70.0, 0.06, rng)
        else:
            y[s:s + n] += 0.35 * _hit(n, 900.0, 0.03, rng)
    return y


@pytest.mark.parametrize("bpm", [84.0, 96.0])
def test_a_plain_three_beat_bar_keeps_its_beat(bpm):
    rh = _rhythm(waltz(bpm))
    assert abs(rh.bpm - bpm) <= 0.04 * bpm, rh.bpm
    assert rh.tempo_salient


@pytest.mark.parametrize("stem, bpm", [
    ("mirdata__ballroom_Waltz_Media-105901.wav", 84.0),   # the comb alone read 111.3 (4/3)
    ("sonicpi__loop_mehackit2.flac", 97.0),               # the comb alone read 128.9 (4/3)
])
def test_real_material_the_comb_read_at_four_thirds(stem, bpm):
    x, sr = sf.read(real_row(stem)["path"], dtype="float32", always_2d=True)
    rh = measure_rhythm(short_stft(mono_mix(x), sr), x.shape[0] / sr)
    # the beat or its octave (the octave is the comb's call): not 4/3 or 3/2 of it
    assert any(abs(rh.bpm - b) <= 0.04 * b for b in (bpm, 2 * bpm)), rh.bpm


def test_an_even_pulse_is_not_regrouped_in_threes():
    y = np.zeros(20 * SR)
    for s in np.arange(0.1, 20.0, 60.0 / 125.0):
        y[int(s * SR):int(s * SR) + 20] = 0.9
    assert abs(_rhythm(y).bpm - 125.0) <= 2.5


def _drone(seconds: float = 20.0) -> np.ndarray:
    t = np.arange(int(seconds * SR)) / SR
    return 0.3 * (np.sin(2 * np.pi * 55 * t) + 0.5 * np.sin(2 * np.pi * 110.3 * t)
                  + 0.25 * np.sin(2 * np.pi * 165.2 * t)) * (1 + 0.1 * np.sin(2 * np.pi * 0.13 * t))


@pytest.mark.parametrize("name, signal", [
    ("sine 1 kHz", lambda: 0.5 * np.sin(2 * np.pi * 1000 * np.arange(20 * SR) / SR)),
    ("white noise", lambda: 0.2 * np.random.default_rng(5).standard_normal(20 * SR)),
    ("drone", _drone),
    ("steady detuned drone", lambda: sum(0.2 * np.sin(2 * np.pi * f * np.arange(20 * SR) / SR)
                                         for f in (55.0, 110.3, 165.2))),
    ("held A minor triad", lambda: sum(0.2 * np.sin(2 * np.pi * f * np.arange(20 * SR) / SR)
                                       for f in (220.0, 261.63, 329.63))),
])
def test_no_pulse_means_confidence_at_most_0_2(name, signal):
    rh = _rhythm(signal())
    assert rh.tempo_confidence <= 0.2, (name, rh.tempo_confidence)
    assert all(alt.confidence <= 0.2 for alt in rh.tempo_alternatives)


def test_alternatives_are_related_readings_below_the_reading():
    rh = _rhythm(waltz(90.0))
    assert 1 <= len(rh.tempo_alternatives) <= 3
    confidences = [alt.confidence for alt in rh.tempo_alternatives]
    assert confidences == sorted(confidences, reverse=True)
    for alt in rh.tempo_alternatives:
        assert alt.relation in TEMPO_RELATIONS
        assert alt.bpm == pytest.approx(rh.bpm * TEMPO_RELATIONS[alt.relation], rel=0.01)
        assert 0.0 <= alt.confidence < rh.tempo_confidence
