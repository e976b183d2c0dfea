"""What the pulse feels like: danceability (detrended fluctuation analysis of
the frame energy) and regularity (onsets on the beats, beats on a line)."""

from __future__ import annotations

import numpy as np

from trackgrade.engine.rhythm.beats import onset_offsets


def danceability_dfa(energy_db: np.ndarray, fps: float) -> float:
    """Detrended fluctuation analysis of the frame amplitude (Essentia's
    Danceability in spirit): DFA exponents alpha over scales of 0.3-8 s (each
    scale with at least 8 half-overlapping windows), danceability = the mean
    of 1/alpha, 0..3. A steady, strongly periodic signal saturates the
    fluctuation at long scales (small alpha: danceable); drifting or
    unstructured energy keeps alpha near or above 1."""
    x = np.power(10.0, energy_db / 20.0)
    n = len(x)
    if n < int(4 * fps):
        return 0.0
    y = np.cumsum(x - x.mean())
    top = min(8.0 * fps, n / 4.5)
    taus = np.unique(np.round(np.geomspace(0.31 * fps, top, 10)).astype(int))
    taus = taus[taus >= 4]
    if len(taus) < 4:
        return 0.0
    F = np.empty(len(taus))
    for i, tau in enumerate(taus):
        starts = np.arange(0, n - tau + 1, max(1, tau // 2))
        seg = y[starts[:, None] + np.arange(tau)[None, :]]
        t = np.arange(tau) - (tau - 1) / 2.0
        slope = (seg * t).sum(axis=1) / (t * t).sum()
        resid = seg - seg.mean(axis=1, keepdims=True) - slope[:, None] * t[None, :]
        F[i] = np.sqrt(np.mean(resid ** 2)) + 1e-12
    lf, lt = np.log10(F), np.log10(taus)
    # local slopes over three neighbouring scales (least squares), less noisy than pairs
    alpha = np.array([np.polyfit(lt[i:i + 3], lf[i:i + 3], 1)[0] for i in range(len(taus) - 2)])
    inv = 1.0 / np.clip(alpha, 1.0 / 3.0, None)
    return float(np.clip(np.mean(inv), 0.0, 3.0))


def beat_regularity(env: np.ndarray, beats_f: np.ndarray, period: float) -> float:
    """1 = metronomic: the onsets sit on the beats (small weighted jitter) and the
    beats lie on a straight line (no drift)."""
    if len(beats_f) < 4 or period <= 0:
        return 0.0
    off, w = onset_offsets(env, beats_f, period)
    if np.count_nonzero(w > 0) < 4:     # a lone click in silence is no grid
        return 0.0
    mu = np.average(off, weights=w)
    jitter = float(np.sqrt(np.average((off - mu) ** 2, weights=w)))
    k = np.arange(len(beats_f), dtype=float)
    fit = np.polyval(np.polyfit(k, beats_f, 1), k)
    resid = float(np.sqrt(np.mean((beats_f - fit) ** 2))) / period
    return float(np.clip(np.exp(-jitter / 0.05) * np.exp(-resid / 0.1), 0.0, 1.0))


def onset_scale(x: np.ndarray) -> float:
    pos = x[x > 0]
    return float(np.percentile(pos, 95)) if pos.size else 1.0
