"""Beats: a global period/phase fit to the onsets (period sharpened on
autocorrelation peaks, kick side chosen on the kick band), and a beat-by-beat
tracker that replaces the straight grid only when the tempo really drifts."""

from __future__ import annotations

import numpy as np

from trackgrade.engine.rhythm.periodicity import autocorrelation


def _env_at(env: np.ndarray, idx: np.ndarray) -> np.ndarray:
    return np.interp(idx, np.arange(len(env)), env, left=0.0, right=0.0)


def _best_phase(env: np.ndarray, period: float) -> float:
    """Phase (frames) of the period grid collecting the most onset strength."""
    phases = np.arange(0.0, period, 0.5)
    k = np.arange(0.0, len(env) / period + 1)
    grid = phases[:, None] + k[None, :] * period
    return float(phases[int(np.argmax(_env_at(env, grid).sum(axis=1)))])


def _kick_side(low: np.ndarray, period: float, phase: float) -> float:
    """On-beat or off-beat: when the off-beats of the grid carry clearly more
    kick-band onset strength than its beats, the grid sits on the off-beat
    (bass and hats) and moves half a period."""
    k = np.arange(0.0, len(low) / period)
    _, on = onset_offsets(low, phase + k * period, period)
    _, off = onset_offsets(low, phase + (k + 0.5) * period, period)
    if off.sum() > 1.3 * on.sum() and off.sum() > 0:
        return (phase + 0.5 * period) % period
    return phase


def _refine_period(ac: np.ndarray, period: float) -> float:
    """Sharpen the period on the autocorrelation peaks at 4, 16, 64... beats: a
    peak m beats away pins the period to 1/m of its (parabolic) position."""
    n = len(ac)
    m = 4
    while m * period < 0.5 * n:
        centre = m * period
        r = max(1, int(round(0.1 * period)))
        lo, hi = int(np.floor(centre)) - r, int(np.ceil(centre)) + r
        if lo < 1 or hi >= n - 1:
            break
        j = lo + int(np.argmax(ac[lo:hi + 1]))
        a, b, c = ac[j - 1], ac[j], ac[j + 1]
        den = a - 2 * b + c
        peak = j + (0.5 * (a - c) / den if den < 0 else 0.0)
        if b <= 0 or abs(peak / m - period) > 0.02 * period:
            break
        period = peak / m
        m *= 4
    return period


def _refine_grid(env: np.ndarray, period: float, phase: float) -> tuple[float, float]:
    """Global least-squares fit of (period, phase) to the local onset peaks near
    each grid beat, weighted by their strength."""
    n = len(env)
    for _ in range(3):
        k = np.arange(0.0, (n - phase) / period)
        if len(k) < 3:
            break
        grid = phase + k * period
        r = max(1, int(round(period * 0.12)))
        offs = np.arange(-r, r + 1)
        idx = np.clip(np.round(grid)[:, None].astype(int) + offs[None, :], 0, n - 1)
        vals = env[idx]
        j = vals.argmax(axis=1)
        peak = idx[np.arange(len(k)), j].astype(float)
        # parabolic interpolation of each peak
        jm = np.clip(j, 1, 2 * r - 1)
        a = vals[np.arange(len(k)), jm - 1]
        b = vals[np.arange(len(k)), jm]
        c = vals[np.arange(len(k)), jm + 1]
        den = a - 2 * b + c
        delta = np.where(den < 0, 0.5 * (a - c) / np.where(den < 0, den, -1), 0.0)
        peak = peak + np.where(j == jm, np.clip(delta, -0.5, 0.5), 0.0)
        w = vals.max(axis=1)
        good = w > 0.3 * (np.median(w[w > 0]) if np.any(w > 0) else 0)
        if good.sum() < 3:
            break
        kw, pw, ww = k[good], peak[good], w[good]
        A = np.stack([np.ones_like(kw), kw], axis=1) * np.sqrt(ww)[:, None]
        sol, *_ = np.linalg.lstsq(A, pw * np.sqrt(ww), rcond=None)
        new_phase, new_period = float(sol[0]), float(sol[1])
        if not (0.9 * period < new_period < 1.1 * period):
            break
        phase, period = new_phase % new_period, new_period
    return period, phase


def track_beats(env: np.ndarray, fps: float, bpm: float,
                low: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Beat frame positions (float) over the whole envelope, and the fitted period
    (frames). A global grid fit first; then a tracker over the beats follows
    slow tempo drift, keeping the grid where there are no onsets."""
    n = len(env)
    period = 60.0 * fps / bpm
    if n < 2 or period <= 0:
        return np.zeros(0), period
    period = _refine_period(autocorrelation(env), period)
    phase = _best_phase(env, period)
    period, phase = _refine_grid(env, period, phase)
    if low is not None:
        phase = _kick_side(low, period, phase)
    grid = np.arange(phase, n, period)
    if len(grid) < 4:
        return grid, period
    tracked = _follow(env, grid[0], period)
    # a steady grid (the usual case) is kept exactly; the tracker only wins when
    # the tempo really moves (its beats leave any straight line)
    if len(tracked) >= 8:
        k = np.arange(len(tracked))
        fit = np.polyval(np.polyfit(k, tracked, 1), k)
        if np.sqrt(np.mean((tracked - fit) ** 2)) > 0.06 * period:
            return tracked, period
    return grid, period


def _follow(env: np.ndarray, start: float, period: float) -> np.ndarray:
    """Beat-by-beat tracker: predict one period on, move a little toward the
    strongest onset within +-10 % of a period, adapt the period slowly."""
    n = len(env)
    r = max(1, int(round(period * 0.1)))
    offs = np.arange(-r, r + 1, dtype=float)
    weight = np.exp(-0.5 * (offs / r) ** 2)
    strong = float(np.percentile(env[env > 0], 50)) if np.any(env > 0) else 0.0
    beats = []
    pos, p = start, period
    while pos < n:
        idx = np.round(pos + offs).astype(int)
        vals = np.where((idx >= 0) & (idx < n), env[np.clip(idx, 0, n - 1)], 0.0) * weight
        j = int(np.argmax(vals))
        if vals[j] > strong:
            err = offs[j]
            pos += 0.3 * err
            p = float(np.clip(p + 0.05 * err, 0.9 * period, 1.1 * period))
        beats.append(pos)
        pos += p
    return np.asarray(beats)


def onset_offsets(env: np.ndarray, beats_f: np.ndarray, period: float) -> tuple[np.ndarray, np.ndarray]:
    """For each beat (frames): offset of the strongest onset within +-12 % of a
    period (in periods) and that onset's strength."""
    n = len(env)
    if len(beats_f) == 0 or n == 0:
        return np.zeros(0), np.zeros(0)
    r = max(1, int(round(period * 0.12)))
    offs = np.arange(-r, r + 1)
    idx = np.round(beats_f)[:, None].astype(int) + offs[None, :]
    vals = np.where((idx >= 0) & (idx < n), env[np.clip(idx, 0, n - 1)], 0.0)
    j = vals.argmax(axis=1)
    return (offs[j] + np.round(beats_f) - beats_f) / period, vals.max(axis=1)


def extend_to_start(beats_s: np.ndarray, period_s: float) -> np.ndarray:
    """The envelope cannot show an onset in its first frame: add the grid beats
    that fall before the first tracked beat (a beat within 70 ms of 0 is put at 0)."""
    if len(beats_s) == 0 or period_s <= 0:
        return beats_s
    first = beats_s[0]
    n_before = int(np.floor((first + 0.07) / period_s))
    if n_before <= 0:
        return beats_s
    before = first - period_s * np.arange(n_before, 0, -1)
    return np.concatenate((np.maximum(before, 0.0), beats_s))
