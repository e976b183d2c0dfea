"""The report's own time series on signals with known answers."""

from __future__ import annotations

import numpy as np

from trackgrade.report.timeline import (clipped_regions, correlation_curve, merge_regions,
                                        true_peak_overs, waveform_envelope)

RATE = 48_000


def sine(freq: float, seconds: float, amplitude: float, phase: float = 0.0) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (amplitude * np.sin(2 * np.pi * freq * t + phase)).astype(np.float32)


def test_envelope_peak_and_rms_of_a_sine():
    x = sine(1000, 4.0, 0.5)
    hop, peak, rms = waveform_envelope(np.stack([x, 0.5 * x], axis=1), RATE, columns=100)
    assert abs(hop - 0.04) < 1e-9 and len(peak) == 100
    assert all(abs(p - 0.5) < 0.002 for p in peak)
    # mean power of the two channels: (0.5^2 + 0.25^2) / 2 / 2
    assert all(abs(r - np.sqrt((0.125 + 0.03125) / 2)) < 0.003 for r in rms)


def test_correlation_of_same_inverted_silent_and_mono():
    x = sine(220, 2.0, 0.3)
    assert set(correlation_curve(np.stack([x, x], 1), RATE)) == {1.0}
    assert set(correlation_curve(np.stack([x, -x], 1), RATE)) == {-1.0}
    silent = np.zeros((RATE * 2, 2), np.float32)
    assert correlation_curve(silent, RATE) == [None] * 4
    assert correlation_curve(x[:, None], RATE) == [1.0] * 4
    noise = np.random.default_rng(1).standard_normal((RATE * 4, 2)).astype(np.float32) * 0.1
    assert all(abs(v) < 0.1 for v in correlation_curve(noise, RATE))


def test_clipped_regions_find_runs_at_full_scale_only():
    x = sine(100, 3.0, 0.5)
    x[RATE:RATE + 50] = 1.0                        # a clipped run at 1.0 s
    x[2 * RATE:2 * RATE + 2] = 1.0                 # two samples: not a clip
    regions = clipped_regions(np.stack([x, x * 0.5], 1), RATE)
    assert len(regions) == 1
    start, end = regions[0]
    assert abs(start - 1.0) < 1e-3 and abs(end - (RATE + 50) / RATE) < 1e-3
    assert clipped_regions(np.stack([x * 0.5, x * 0.5], 1), RATE) == []


def test_true_peak_overs_see_inter_sample_peaks():
    """A full-scale sine at fs/4 with a 45 degree phase has sample peaks at
    -3 dBFS but a true peak at 0 dBTP: an over of a -1 dBTP ceiling."""
    x = sine(RATE / 4, 1.0, 1.0, phase=np.pi / 4)
    assert np.abs(x).max() < 0.71
    quiet = np.zeros(RATE, np.float32)
    signal = np.concatenate([quiet, x, quiet])[:, None]
    overs = true_peak_overs(signal, RATE, ceiling_dbtp=-1.0)
    assert len(overs) == 1
    start, end, db = overs[0]
    assert abs(start - 1.0) < 0.06 and abs(end - 2.0) < 0.06
    assert -0.2 < db < 0.2
    assert true_peak_overs(signal, RATE, ceiling_dbtp=0.5) == []


def test_merge_regions_joins_close_ones():
    assert merge_regions([(3.0, 3.1), (1.0, 1.1), (1.2, 1.3)], 0.25) == [(1.0, 1.3), (3.0, 3.1)]


def test_the_loudest_over_agrees_with_the_engines_true_peak():
    """On the demo (real MP3 decode), the report's windowed interpolation finds
    the engine's true peak within 0.3 dB, and nothing over a ceiling above it."""
    from pathlib import Path

    from trackgrade.engine.decode import decode
    from trackgrade.engine.loudness import true_peak_dbtp

    demo = Path(__file__).resolve().parents[2] / "fixtures" / "demo.mp3"
    audio = decode(demo.read_bytes(), file_name="demo.mp3")
    engine = true_peak_dbtp(audio.samples)
    overs = true_peak_overs(audio.samples, audio.sample_rate, ceiling_dbtp=engine - 2.0)
    assert overs and abs(max(db for _, _, db in overs) - engine) <= 0.3
    assert true_peak_overs(audio.samples, audio.sample_rate, ceiling_dbtp=engine + 0.3) == []
