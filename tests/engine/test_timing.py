"""Micro-timing (engine/timing.py): sequenced onsets sit on the grid, played
ones do not. Known answers on synthetic onset times and on rendered clicks
through the real engine."""

from __future__ import annotations

import numpy as np
import pytest

from trackgrade.engine.extract import extract
from trackgrade.engine.features import DecodedAudio
from trackgrade.engine.timing import (grid_positions, minus_local_mean, onset_peak_times,
                                      smooth_grid, timing_spread_ms)

BPM = 120.0
BEAT = 60.0 / BPM


def pattern(bars: int, *, swing_ms: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Onset times and strengths of a 4/4 pattern: kick on the beats (1.0),
    hats on every eighth (0.6), an accent on the second sixteenth (0.8);
    `swing_ms` delays every off-beat eighth."""
    times, strengths = [], []
    for beat in range(bars * 4):
        t = beat * BEAT
        times += [t, t + BEAT / 2 + swing_ms / 1000.0, t + BEAT / 4]
        strengths += [1.0, 0.6, 0.8]
    order = np.argsort(times)
    return np.asarray(times)[order], np.asarray(strengths)[order]


def beats(bars: int) -> np.ndarray:
    return np.arange(bars * 4) * BEAT


def test_a_sequenced_pattern_has_no_spread():
    t, w = pattern(8)
    spread, n = timing_spread_ms(t, w, beats(8))
    assert spread == pytest.approx(0.0, abs=1e-6)
    assert n >= 32


def test_swing_and_a_late_detector_are_not_spread():
    """A position's own constant offset (swing, a sound detected late) is removed."""
    t, w = pattern(8, swing_ms=25.0)
    t = t + 0.011                                   # everything detected 11 ms late
    assert timing_spread_ms(t, w, beats(8))[0] == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("jitter_ms", [5.0, 15.0, 25.0])
def test_played_timing_spreads_by_its_jitter(jitter_ms):
    t, w = pattern(16)
    rng = np.random.default_rng(7)
    played = t + rng.normal(0.0, jitter_ms / 1000.0, t.shape)
    spread, _ = timing_spread_ms(played, w, beats(16))
    assert 0.7 * jitter_ms < spread < 1.2 * jitter_ms


def test_a_slow_tempo_drift_is_followed_not_counted():
    """The grid is the beats smoothed over 9 beats: a steady ramp from 120 to 126
    BPM over 16 bars, sequenced exactly, keeps a small spread."""
    k = np.arange(64)
    period = BEAT * (1.0 - 0.05 * k / 64)
    grid = np.concatenate(([0.0], np.cumsum(period)[:-1]))
    onsets = np.sort(np.concatenate((grid, grid + period / 2)))
    strengths = np.ones_like(onsets)
    spread, _ = timing_spread_ms(onsets, strengths, grid)
    assert spread < 1.0


def test_a_beat_tracker_lagging_a_drift_is_not_counted():
    """Onsets exactly on a grid whose tempo moves, against beats that lag it by a
    slowly changing amount (a tracker catching up): the lag is taken out."""
    t, w = pattern(16)
    lag = 0.02 * np.sin(np.arange(64) / 64 * np.pi)          # 0 -> 20 ms -> 0 over 16 bars
    spread, _ = timing_spread_ms(t, w, beats(16) + lag)
    assert spread < 2.0


def test_minus_local_mean():
    x = np.array([0.0, 1.0, 2.0, 10.0, 11.0])
    v = np.array([1.0, 2.0, 3.0, 5.0, 7.0])
    out = minus_local_mean(x, v, np.ones(5), 1.0)
    assert np.allclose(out, [-0.5, 0.0, 0.5, -1.0, 1.0])


def test_too_little_to_judge():
    t, w = pattern(1)
    assert timing_spread_ms(t[:3], w[:3], beats(1)) == (None, 0)
    assert timing_spread_ms(t, w, beats(1)[:2])[0] is None


def test_grid_helpers():
    grid = smooth_grid(beats(4))
    assert np.allclose(grid, beats(4))
    pos, beat_len = grid_positions(np.array([-BEAT, 0.25, 10 * BEAT]), grid)
    assert np.allclose(pos, [-1.0, 0.5, 10.0]) and np.allclose(beat_len, BEAT)
    env = np.array([0.0, 1.0, 3.0, 1.0, 0.0])
    assert onset_peak_times(env, 10.0, 0.0, np.array([2]))[0] == pytest.approx(0.2)


def clicks(times: np.ndarray, seconds: float, rate: int = 44100) -> DecodedAudio:
    """Short noise bursts (10 ms, decaying) at `times`, as decoded stereo audio."""
    x = np.zeros(int(seconds * rate), dtype=np.float32)
    decay = np.exp(-np.arange(441) / 80.0)
    burst = (np.random.default_rng(3).standard_normal(441) * decay).astype(np.float32)
    for t in times:
        i = int(round(t * rate))
        x[i:i + 441] += 0.5 * burst[:len(x) - i]
    return DecodedAudio(samples=np.repeat(x[:, None], 2, axis=1), sample_rate=rate,
                        container="wav", subtype="FLOAT")


def test_through_the_engine_sequenced_clicks_and_played_clicks():
    """Sixteenth clicks with accents at 120 BPM, 20 s: on the grid the engine
    measures a few ms at most; with 15 ms of played jitter, far more."""
    n = 160
    grid = np.arange(n) * BEAT / 4 + 0.5
    rng = np.random.default_rng(11)
    played = grid + rng.normal(0.0, 0.015, n)
    sequenced = extract(clicks(grid, 21.0), parallel=False).rhythm
    human = extract(clicks(played, 21.0), parallel=False).rhythm
    assert sequenced.timing_spread_ms is not None and human.timing_spread_ms is not None
    assert sequenced.timing_spread_ms < 5.0 < 10.0 < human.timing_spread_ms
    assert sequenced.timed_onsets >= 40
