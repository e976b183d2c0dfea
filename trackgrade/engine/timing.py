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

STEPS_PER_BEAT = 4        # sixteenth notes
BEATS_PER_BAR = 4
SMOOTH_BEATS = 9          # the grid follows tempo drift over this many beats
LOCAL_BEATS = 4.0         # and the onsets' own drift from it within a bar either side


def onset_peak_times(env: np.ndarray, fps: float, t0: float, peaks: np.ndarray) -> np.ndarray:
    """Sub-frame times (s) of onset peaks: a parabola through each peak frame and
    its two neighbours. `peaks` are frame indices strictly inside the envelope."""
    a, b, c = env[peaks - 1], env[peaks], env[peaks + 1]
    curve = a - 2.0 * b + c
    shift = np.divide(0.5 * (a - c), curve, out=np.zeros_like(b), where=np.abs(curve) > 1e-12)
    return (peaks + np.clip(shift, -0.5, 0.5)) / fps + t0


def _local_quadratic(y: np.ndarray, width: int) -> np.ndarray:
    """Savitzky-Golay smoothing (order 2, odd `width`): each point from the
    least-squares quadratic through the `width` points around it; the first
    and last `width` // 2 points from the quadratic through the first and last
    `width` points."""
    half = width // 2
    x = np.arange(-half, half + 1, dtype=np.float64)
    fit = np.linalg.pinv(np.vander(x, 3, increasing=True))          # (3, width): y -> coefficients
    out = np.empty_like(y)
    out[half:len(y) - half] = np.convolve(y, fit[0][::-1], mode="valid")
    edge = np.vander(x[:half], 3, increasing=True)
    out[:half] = edge @ (fit @ y[:width])
    out[len(y) - half:] = np.vander(-x[:half][::-1], 3, increasing=True) @ (fit @ y[-width:])
    return out


def smooth_grid(beat_times: np.ndarray) -> np.ndarray:
    """The beats as a smooth grid: a local quadratic through each run of
    SMOOTH_BEATS beats, so a tempo ramp stays on the grid and beat-to-beat
    jitter of the tracked beats goes."""
    beats = np.asarray(beat_times, dtype=np.float64)
    width = min(SMOOTH_BEATS, len(beats) - (1 - len(beats) % 2))
    return beats if width <= 3 else _local_quadratic(beats, width)


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


def minus_local_mean(x: np.ndarray, values: np.ndarray, weights: np.ndarray,
                     half_width: float) -> np.ndarray:
    """`values` minus their weighted mean over the points whose `x` lies within
    `half_width` of each point's (sorted prefix sums: O(n log n))."""
    order = np.argsort(x, kind="stable")
    xs, v, w = x[order], values[order], weights[order]
    cw = np.concatenate(([0.0], np.cumsum(w)))
    cv = np.concatenate(([0.0], np.cumsum(w * v)))
    lo = np.searchsorted(xs, xs - half_width, side="left")
    hi = np.searchsorted(xs, xs + half_width, side="right")
    out = np.empty_like(values)
    out[order] = v - (cv[hi] - cv[lo]) / np.maximum(cw[hi] - cw[lo], 1e-300)
    return out


def timing_spread_ms(onset_times: np.ndarray, strengths: np.ndarray,
                     beat_times: np.ndarray) -> tuple[float | None, int]:
    """Weighted RMS (ms) of the onsets' offsets from the nearest sixteenth of
    the (smoothed) beat grid, each of the bar's 16 positions' mean offset
    removed and then the local mean offset within LOCAL_BEATS beats (what is
    left of tempo drift the beat tracker lagged behind), and how many onsets
    it rests on. Only the stronger half of the
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
    resid = minus_local_mean(pos[keep], offset[keep] - mean[where[keep]], w[keep], LOCAL_BEATS)
    return float(np.sqrt(np.average(resid ** 2, weights=w[keep]))), int(keep.sum())
