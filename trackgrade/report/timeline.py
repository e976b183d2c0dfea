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

from trackgrade.grading.limits import TRUE_PEAK_MAX_DBTP

ENVELOPE_COLUMNS = 720
CORRELATION_WINDOW_S = 0.5
OVER_WINDOW_S = 0.05
CLIP_LEVEL = 0.999          # |x| at or above this counts as full scale
CLIP_MIN_RUN = 3            # consecutive full-scale samples that make a clip (as the engine)
MERGE_GAP_S = 0.25          # clips or overs closer than this are one region
MAX_MARKS = 300
SILENT_RMS = 1e-4           # ~ -80 dBFS: correlation is meaningless below


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
    loudest channel's absolute peak and the channels' mean RMS, rounded."""
    frames = samples.shape[0]
    size = max(1, int(np.ceil(frames / columns)))
    magnitude = np.abs(samples).max(axis=1)
    power = np.mean(np.square(samples, dtype=np.float64), axis=1)
    pad = (-frames) % size
    magnitude = np.pad(magnitude, (0, pad))
    power = np.pad(power, (0, pad))
    peak = _frames(magnitude, size).max(axis=1)
    rms = np.sqrt(_frames(power, size).mean(axis=1))
    return size / rate, [round(float(v), 4) for v in peak], [round(float(v), 4) for v in rms]


def correlation_curve(samples: np.ndarray, rate: int, *, window_s: float = CORRELATION_WINDOW_S
                      ) -> list[float | None]:
    """Pearson correlation of left and right per window (+1 for mono, None
    where the window is silent)."""
    size = max(1, int(round(window_s * rate)))
    if samples.shape[1] < 2:
        return [1.0] * max(1, samples.shape[0] // size)
    left = _frames(samples[:, 0].astype(np.float64), size)
    right = _frames(samples[:, 1].astype(np.float64), size)
    left = left - left.mean(axis=1, keepdims=True)
    right = right - right.mean(axis=1, keepdims=True)
    ll, rr = np.sum(left * left, axis=1), np.sum(right * right, axis=1)
    lr = np.sum(left * right, axis=1)
    loud = np.sqrt((ll + rr) / (2 * size)) > SILENT_RMS
    both = (ll > 0) & (rr > 0)
    out: list[float | None] = []
    for i in range(len(lr)):
        if not loud[i]:
            out.append(None)
        elif not both[i]:
            out.append(0.0)             # one side silent: no shared signal
        else:
            out.append(round(float(np.clip(lr[i] / np.sqrt(ll[i] * rr[i]), -1.0, 1.0)), 3))
    return out


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


def true_peak_overs(samples: np.ndarray, rate: int, *, ceiling_dbtp: float,
                    window_s: float = OVER_WINDOW_S) -> list[tuple[float, float, float]]:
    """(start_s, end_s, peak dBTP) of the stretches whose 4x-oversampled peak
    passes `ceiling_dbtp`. Only windows whose sample peak comes within 3 dB of
    the ceiling are oversampled (an inter-sample peak adds less than that in
    practice)."""
    from scipy.signal import resample_poly

    size = max(8, int(round(window_s * rate)))
    magnitude = np.abs(samples).max(axis=1)
    pad = (-len(magnitude)) % size
    window_peak = _frames(np.pad(magnitude, (0, pad)), size).max(axis=1)
    ceiling = 10 ** (ceiling_dbtp / 20)
    candidates = np.flatnonzero(window_peak >= ceiling * 10 ** (-3 / 20))
    overs: list[tuple[float, float]] = []
    peaks: list[float] = []
    for index in candidates:
        lo, hi = max(0, index * size - 16), min(samples.shape[0], (index + 1) * size + 16)
        upsampled = resample_poly(samples[lo:hi].astype(np.float64), 4, 1, axis=0)
        peak = float(np.abs(upsampled).max())
        if peak > ceiling:
            overs.append((index * size / rate, min((index + 1) * size, samples.shape[0]) / rate))
            peaks.append(peak)
    regions = merge_regions(overs)
    out = []
    for start, end in regions[:MAX_MARKS]:
        inside = [p for (a, b), p in zip(overs, peaks) if a >= start - 1e-9 and b <= end + 1e-9]
        out.append((start, end, round(20 * np.log10(max(inside)), 2)))
    return out


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
