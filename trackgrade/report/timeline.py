"""The report's time series, computed from the decoded samples.

Pure functions, arrays in and JSON-ready lists out; the Analysis document
does not carry these (they are only drawn), so the report computes them from
the audio the `report` command already holds in memory:

    waveform_envelope   peak and RMS per column, 0..1 (full scale = 1)
    correlation_curve   L/R correlation per window, -1..+1 (None where silent)
    clipped_regions     runs of samples at full scale, merged, in seconds
    true_peak_overs     windows whose 4x-oversampled peak passes a ceiling
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from trackgrade.engine.fir import kaiser_lowpass
from trackgrade.limits import TRUE_PEAK_MAX_DBTP

ENVELOPE_COLUMNS = 720
CORRELATION_WINDOW_S = 0.5
OVER_WINDOW_S = 0.05
CLIP_LEVEL = 0.999          # |x| at or above this counts as full scale
CLIP_MIN_RUN = 3            # consecutive full-scale samples that make a clip (as the engine)
MERGE_GAP_S = 0.25          # clips or overs closer than this are one region
MAX_MARKS = 300
SILENT_RMS = 1e-4           # ~ -80 dBFS: correlation is meaningless below
INTERPOLATION_TAPS = 48     # 12 per phase, as the interpolator of ITU-R BS.1770-4 Annex 2


@dataclass(frozen=True)
class Timeline:
    """What the report's timeline draws besides the document's own curves."""
    duration_s: float
    envelope_hop_s: float
    envelope_peak: list[float]
    envelope_rms: list[float]
    correlation_hop_s: float
    correlation: list[float | None]
    clipped: list[tuple[float, float]] = field(default_factory=list)
    overs: list[tuple[float, float, float]] = field(default_factory=list)   # start, end, dBTP
    over_ceiling_dbtp: float = -1.0
    mono: bool = False


def _frames(signal: np.ndarray, size: int) -> np.ndarray:
    """(n, size) view of the whole frames of a 1-D signal (the tail is dropped)."""
    count = len(signal) // size
    return signal[:count * size].reshape(count, size)


def waveform_envelope(samples: np.ndarray, rate: int, *, columns: int = ENVELOPE_COLUMNS
                      ) -> tuple[float, list[float], list[float]]:
    """(hop_s, peak, rms) per column of a (frames, channels) signal: the
    loudest channel's absolute peak and the channels' mean RMS, rounded (the
    last partial column is left out)."""
    frames, channels = samples.shape
    size = max(1, int(np.ceil(frames / columns)))
    count = max(1, frames // size)
    body = samples[:count * size].reshape(count, -1)
    peak = np.maximum(body.max(axis=1), -body.min(axis=1))
    power = np.einsum("ij,ij->i", body, body, dtype=np.float64) / body.shape[1]
    rms = np.sqrt(power)
    return size / rate, [round(float(v), 4) for v in peak], [round(float(v), 4) for v in rms]


def correlation_curve(samples: np.ndarray, rate: int, *, window_s: float = CORRELATION_WINDOW_S
                      ) -> list[float | None]:
    """Pearson correlation of left and right per window (+1 for mono, None
    where the window is silent, 0 where one side is)."""
    size = max(1, int(round(window_s * rate)))
    if samples.shape[1] < 2:
        return [1.0] * max(1, samples.shape[0] // size)
    left = _frames(samples[:, 0], size)
    right = _frames(samples[:, 1], size)
    n = size

    def centred(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        products = np.einsum("ij,ij->i", a, b, dtype=np.float64)
        return products - a.sum(axis=1, dtype=np.float64) * b.sum(axis=1, dtype=np.float64) / n

    ll, rr, lr = centred(left, left), centred(right, right), centred(left, right)
    ll, rr = np.maximum(ll, 0.0), np.maximum(rr, 0.0)
    loud = np.sqrt((ll + rr) / (2 * n)) > SILENT_RMS
    both = (ll > 1e-12) & (rr > 1e-12)
    r = np.clip(lr / np.sqrt(np.where(both, ll * rr, 1.0)), -1.0, 1.0)
    return [None if not loud[i] else (round(float(r[i]), 3) if both[i] else 0.0)
            for i in range(len(r))]


def merge_regions(regions: list[tuple[float, float]], gap_s: float = MERGE_GAP_S
                  ) -> list[tuple[float, float]]:
    """Sorted regions with those closer than `gap_s` joined."""
    merged: list[list[float]] = []
    for start, end in sorted(regions):
        if merged and start - merged[-1][1] <= gap_s:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(round(a, 3), round(b, 3)) for a, b in merged]


def clipped_regions(samples: np.ndarray, rate: int, *, level: float = CLIP_LEVEL,
                    min_run: int = CLIP_MIN_RUN) -> list[tuple[float, float]]:
    """(start_s, end_s) of runs of at least `min_run` consecutive samples at
    full scale on any channel, merged when closer than MERGE_GAP_S."""
    hot = (np.abs(samples) >= level).any(axis=1).astype(np.int8)
    if not hot.any():
        return []
    edges = np.diff(np.concatenate(([0], hot, [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    runs = [(s / rate, e / rate) for s, e in zip(starts, ends) if e - s >= min_run]
    return merge_regions(runs)[:MAX_MARKS]


def interpolation_phases(taps: int = INTERPOLATION_TAPS) -> np.ndarray:
    """(3, taps // 4) the fractional phases (1/4, 2/4, 3/4) of a 4x
    interpolator (a Kaiser-windowed low-pass at the original Nyquist)."""
    h = kaiser_lowpass(taps, 0.25, 9.0) * 4.0
    return np.stack([h[p::4] for p in (1, 2, 3)]).astype(np.float32)


def window_max(stream: np.ndarray, size: int, count: int) -> np.ndarray:
    """Max of each window of `size` samples (the last one may be shorter)."""
    whole = stream.size // size
    out = np.empty(count, np.float32)
    out[:whole] = stream[:whole * size].reshape(whole, size).max(axis=1)
    if count > whole:
        out[whole:] = stream[whole * size:].max()
    return out


def true_peak_overs(samples: np.ndarray, rate: int, *, ceiling_dbtp: float,
                    window_s: float = OVER_WINDOW_S) -> list[tuple[float, float, float]]:
    """(start_s, end_s, peak dBTP) of the stretches whose 4x-oversampled peak
    passes `ceiling_dbtp`, window by window (the headline true peak is the
    engine's; this only says where). A window whose sample peak passes the
    ceiling is over; one within 3 dB below it is interpolated (three short
    convolutions per channel, one per fractional phase)."""
    size = max(8, int(round(window_s * rate)))
    count = -(-samples.shape[0] // size)
    ceiling = 10 ** (ceiling_dbtp / 20)
    peaks = np.zeros(count, np.float32)
    for ch in range(samples.shape[1]):
        np.maximum(peaks, window_max(np.abs(samples[:, ch]), size, count), out=peaks)
    # windows not over already but within 3 dB below the ceiling can be lifted
    # over it by an inter-sample peak: interpolate those
    candidates = np.flatnonzero((peaks <= ceiling) & (peaks >= ceiling * 10 ** (-3 / 20)))
    if candidates.size:
        peaks[candidates] = interpolated_window_peaks(samples, candidates, size)
    hot = np.flatnonzero(peaks > ceiling)
    overs = [(i * size / rate, min((i + 1) * size, samples.shape[0]) / rate) for i in hot]
    regions = merge_regions(overs)[:MAX_MARKS]
    # each region's figure: its three loudest windows, interpolated
    spans = [(int(round(a * rate / size)), max(int(round(b * rate / size)),
                                               int(round(a * rate / size)) + 1))
             for a, b in regions]
    loudest = np.unique(np.concatenate(
        [first + np.argsort(peaks[first:last])[-3:] for first, last in spans])) if spans else []
    if len(loudest):
        peaks[loudest] = np.maximum(peaks[loudest],
                                    interpolated_window_peaks(samples, loudest, size))
    return [(a, b, round(20 * np.log10(float(peaks[first:last].max())), 2))
            for (a, b), (first, last) in zip(regions, spans)]


def interpolated_window_peaks(samples: np.ndarray, windows: np.ndarray, size: int
                              ) -> np.ndarray:
    """The 4x-interpolated peak (all channels, sample values included) of the
    given windows of `size` frames: the windows and their margins side by
    side, one convolution per channel and fractional phase."""
    phases = interpolation_phases()
    margin = phases.shape[1]
    frames = samples.shape[0]
    index = (windows[:, None] * size - margin) + np.arange(size + 2 * margin)[None, :]
    outside = (index < 0) | (index >= frames)
    index = np.clip(index, 0, frames - 1)
    peaks = np.zeros(len(windows), np.float32)
    for ch in range(samples.shape[1]):
        rows = samples[:, ch][index].astype(np.float32)
        rows[outside] = 0.0
        peaks = np.maximum(peaks, np.abs(rows[:, margin:margin + size]).max(axis=1))
        flat = rows.reshape(-1)
        for phase in phases:
            between = np.abs(np.convolve(flat, phase, mode="same")).reshape(rows.shape)
            peaks = np.maximum(peaks, between[:, margin:margin + size].max(axis=1))
    return peaks


def timeline_of(audio, analysis) -> Timeline:
    """The report's series for decoded audio (`engine.features.DecodedAudio`)
    and its Analysis (for the true-peak ceiling of its mastering status)."""
    samples, rate = audio.samples, audio.sample_rate
    targets = analysis.extras.get("targets")
    ceiling = TRUE_PEAK_MAX_DBTP.get(analysis.mastering_status, TRUE_PEAK_MAX_DBTP["master"])
    if isinstance(targets, dict) and isinstance(targets.get("true_peak_max_dbtp"), (int, float)):
        ceiling = float(targets["true_peak_max_dbtp"])
    hop, peak, rms = waveform_envelope(samples, rate)
    return Timeline(duration_s=samples.shape[0] / rate, envelope_hop_s=hop, envelope_peak=peak,
                    envelope_rms=rms, correlation_hop_s=CORRELATION_WINDOW_S,
                    correlation=correlation_curve(samples, rate),
                    clipped=clipped_regions(samples, rate),
                    overs=true_peak_overs(samples, rate, ceiling_dbtp=ceiling),
                    over_ceiling_dbtp=ceiling, mono=samples.shape[1] < 2)
