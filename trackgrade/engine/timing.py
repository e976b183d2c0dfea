"""Micro-timing: how far the onsets stray from the beat grid.

Music sequenced in a DAW sits on its grid to the sample: every hi-hat of a
pattern lands at the same place in the bar, so once each grid position's own
offset (swing, or a sound whose attack the onset detector places a little
late) is taken out, what is left is a few milliseconds of measuring noise
(the envelope's frames are 23 ms apart). Played music breathes: a drummer's
or a guitarist's notes wander 10-30 ms around the beat. Read from the onset
envelope and the beats the rhythm stage already has (no extra FFT).
"""

from __future__ import annotations

import numpy as np
from scipy.signal import savgol_filter

STEPS_PER_BEAT = 4        # sixteenth notes
BEATS_PER_BAR = 4
SMOOTH_BEATS = 9          # the grid follows tempo drift over this many beats


def onset_peak_times(env: np.ndarray, fps: float, t0: float, peaks: np.ndarray) -> np.ndarray:
    """Sub-frame times (s) of onset peaks: a parabola through each peak frame and
    its two neighbours. `peaks` are frame indices strictly inside the envelope."""
    a, b, c = env[peaks - 1], env[peaks], env[peaks + 1]
    curve = a - 2.0 * b + c
    shift = np.divide(0.5 * (a - c), curve, out=np.zeros_like(b), where=np.abs(curve) > 1e-12)
    return (peaks + np.clip(shift, -0.5, 0.5)) / fps + t0


def smooth_grid(beat_times: np.ndarray) -> np.ndarray:
    """The beats as a smooth grid: a local quadratic through each run of
    SMOOTH_BEATS beats (Savitzky-Golay), so a tempo ramp stays on the grid
    and beat-to-beat jitter of the tracked beats goes."""
    width = min(SMOOTH_BEATS, len(beat_times) - (1 - len(beat_times) % 2))
    if width <= 3:
        return np.asarray(beat_times, dtype=np.float64)
    return savgol_filter(np.asarray(beat_times, dtype=np.float64), width, 2, mode="interp")


def grid_positions(times: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each time's position on the grid in beats (linear beyond its ends) and the
    local beat length (s) there."""
    k = np.arange(len(grid), dtype=np.float64)
    first, last = (grid[1] - grid[0]), (grid[-1] - grid[-2])
    pos = np.interp(times, grid, k)
    pos = np.where(times < grid[0], (times - grid[0]) / first, pos)
    pos = np.where(times > grid[-1], k[-1] + (times - grid[-1]) / last, pos)
    beat_len = np.gradient(grid)[np.clip(np.round(pos).astype(np.int64), 0, len(grid) - 1)]
    return pos, beat_len


def timing_spread_ms(onset_times: np.ndarray, strengths: np.ndarray,
                     beat_times: np.ndarray) -> tuple[float | None, int]:
    """Weighted RMS (ms) of the onsets' offsets from the nearest sixteenth of
    the (smoothed) beat grid, each of the bar's 16 positions' mean offset
    removed, and how many onsets it rests on. Only the stronger half of the
    onsets counts, and only at positions hit twice or more. (None, n) when
    fewer than 4 onsets qualify or there are under 4 beats."""
    onset_times = np.asarray(onset_times, dtype=np.float64)
    strengths = np.asarray(strengths, dtype=np.float64)
    beats = np.asarray(beat_times, dtype=np.float64)
    if len(beats) < 4 or len(onset_times) < 4 or np.any(np.diff(beats) <= 0):
        return None, 0
    strong = strengths >= np.median(strengths)
    pos, beat_len = grid_positions(onset_times[strong], smooth_grid(beats))
    w = strengths[strong]
    steps = pos * STEPS_PER_BEAT
    nearest = np.round(steps).astype(np.int64)
    offset = (steps - nearest) * beat_len / STEPS_PER_BEAT * 1000.0
    cells = STEPS_PER_BEAT * BEATS_PER_BAR
    where = np.mod(nearest, cells)
    hits = np.bincount(where, minlength=cells)
    weight = np.bincount(where, weights=w, minlength=cells)
    mean = np.bincount(where, weights=w * offset, minlength=cells) / np.maximum(weight, 1e-12)
    keep = hits[where] >= 2
    if keep.sum() < 4 or w[keep].sum() <= 0:
        return None, int(keep.sum())
    resid = offset[keep] - mean[where[keep]]
    return float(np.sqrt(np.average(resid ** 2, weights=w[keep]))), int(keep.sum())
