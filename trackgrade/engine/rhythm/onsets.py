"""The onset envelope: log-compressed, band-wise spectral flux from the shared
short STFT (24 log bands; the 30-160 Hz kick band kept apart), and onset peaks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trackgrade.engine.frames import Reduction, ShortFrames, log_band_edges, segment_sums

_N_BANDS = 24
_LOW_BAND_HZ = (30.0, 160.0)
_MID_BAND_HZ = (160.0, 2500.0)    # snare and clap bodies (engine/groove.py's snare band)


@dataclass(frozen=True, eq=False)
class Onsets:
    """The onset envelope and its parts, one value per STFT frame."""
    envelope: np.ndarray      # full-band flux, detrended, >= 0
    low: np.ndarray           # flux of the kick band (30-160 Hz), detrended, >= 0
    mid: np.ndarray           # flux of the snare band (160-2500 Hz) beyond the kick band's, >= 0
    energy_db: np.ndarray     # frame energy in dB (for DFA and structure)
    hf_activity: float        # mean flux above 4 kHz, dB/frame: hats, snares, noise
    fps: float                # frames per second
    t0: float                 # time of frame 0's centre
    high: np.ndarray          # flux above 4 kHz (hats, shakers), detrended, >= 0


def band_energies(spec: ShortFrames, n_bands: int = _N_BANDS) -> tuple[np.ndarray, np.ndarray]:
    """(frames, bands) summed power in log-spaced bands, and the band edges (bins)."""
    edges = log_band_edges(spec.freqs, n_bands)
    bands = segment_sums(spec, edges[:-1])
    return bands.astype(np.float64, copy=False), edges


def short_reductions(freqs: np.ndarray) -> list[Reduction]:
    """What `measure_rhythm` reads of a short STFT with these bins (for
    `frames.short_reduced`)."""
    return [Reduction(starts=tuple(int(b) for b in log_band_edges(freqs, _N_BANDS)[:-1]))]


def _moving_mean(x: np.ndarray, width: int) -> np.ndarray:
    width = max(1, int(width))
    if width == 1 or len(x) == 0:
        return x.copy()
    c = np.concatenate(([0.0], np.cumsum(x)))
    half = width // 2
    lo = np.clip(np.arange(len(x)) - half, 0, len(x))
    hi = np.clip(np.arange(len(x)) + half + 1, 0, len(x))
    return (c[hi] - c[lo]) / (hi - lo)


def onset_envelope(spec: ShortFrames) -> Onsets:
    """Log-compressed, band-wise spectral flux (half-wave rectified), detrended."""
    bands, edges = band_energies(spec)
    fps = 1.0 / spec.hop_s
    total = bands.sum(axis=1)
    ref = max(float(total.max()) if total.size else 0.0, 1e-12)
    # log compression relative to the loudest frame: 80 dB of range
    floor = ref * 1e-8
    # and each band at most 50 dB under its own frame: a steady tone's window
    # leakage into far bands wobbles by several dB from frame to frame, which
    # is no onset (a drone or a chord would otherwise show a "pulse")
    band_floor = np.maximum(floor / len(edges), total[:, None] * 1e-5)
    logb = np.log10(np.maximum(bands, band_floor) / ref) * 10.0
    energy_db = 10.0 * np.log10(np.maximum(total, floor) / ref)
    flux = np.diff(logb, axis=0, prepend=logb[:1])
    # rises under 0.5 dB are not onsets (a steady tone's leakage wobbles by less)
    flux -= 0.5
    np.maximum(flux, 0.0, out=flux)
    freqs = spec.freqs[edges[:-1]]
    low_mask = (freqs >= _LOW_BAND_HZ[0]) & (freqs < _LOW_BAND_HZ[1])
    full = flux.mean(axis=1)
    hi_mask = freqs >= 4000.0
    loud = energy_db > -60.0
    hf = float(flux[loud][:, hi_mask].mean()) if hi_mask.any() and loud.any() else 0.0
    low = flux[:, low_mask].mean(axis=1) if low_mask.any() else np.zeros_like(full)
    mid_mask = (freqs >= _MID_BAND_HZ[0]) & (freqs < _MID_BAND_HZ[1])
    # a kick's click rises in the snare band too: a snare is a rise beyond the kick band's
    mid = np.maximum(flux[:, mid_mask].mean(axis=1) - low, 0.0) if mid_mask.any() else np.zeros_like(full)
    # silent frames carry no onsets: weight by frame loudness (0 below -60 dB)
    gate = np.clip((energy_db + 60.0) / 20.0, 0.0, 1.0)
    full *= gate
    high = flux[:, hi_mask].mean(axis=1) * gate if hi_mask.any() else np.zeros_like(full)
    low *= gate
    mid *= gate
    w = int(round(0.4 * fps))
    env = np.maximum(full - _moving_mean(full, w), 0.0)
    lowe = np.maximum(low - _moving_mean(low, w), 0.0)
    mide = np.maximum(mid - _moving_mean(mid, w), 0.0)
    highe = np.maximum(high - _moving_mean(high, w), 0.0)
    # frame centre, plus the flux's latency: an onset shows most in the frame
    # whose window has just taken it in, about 0.7 hop before it (measured)
    t0 = 0.5 * spec.n_fft / spec.sample_rate + 0.7 * spec.hop_s
    return Onsets(env, lowe, mide, energy_db, hf, fps, t0, highe)


def pick_onsets(env: np.ndarray, fps: float) -> np.ndarray:
    """Frame indices of onset peaks: local maxima over +-50 ms above an adaptive threshold."""
    n = len(env)
    if n < 3:
        return np.zeros(0, dtype=int)
    r = max(1, int(round(0.05 * fps)))
    pad = np.pad(env, r, mode="constant")
    win = np.lib.stride_tricks.sliding_window_view(pad, 2 * r + 1)
    local_max = win.max(axis=1)
    thresh = _moving_mean(env, int(round(1.0 * fps))) * 1.5 + 0.1 * float(np.percentile(env, 99) if n else 0)
    peaks = np.flatnonzero((env >= local_max) & (env > thresh) & (env > 0))
    if peaks.size > 1:  # plateaus: keep the first frame of each
        peaks = peaks[np.concatenate(([True], np.diff(peaks) > r))]
    return peaks
