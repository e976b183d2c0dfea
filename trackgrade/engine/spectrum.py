"""Spectral balance: the seven band percentages and the spectral centroid.

Both come from the long-term power spectrum: the average over the frames of
`frames.long_spectrum` (~1.5 s Hann frames, 50 % overlap, power summed over
channels). With 65536-sample frames (44.1/48 kHz) that is exactly the truth's
Welch estimate; with shorter frames (32768 at 22.05 kHz) the frames are
weighted to reproduce Welch's 65536-sample segments (`_welch_weights`). Band energy is the sum of the bins with lo <= f < hi, capped at
min(20 kHz, Nyquist); bands wholly above Nyquist are 0.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from trackgrade.engine.features import BAND_EDGES_HZ, BAND_NAMES, Spectrum
from trackgrade.engine.frames import Spectrogram

_LOW_HZ = 20.0
_HIGH_HZ = 20000.0
WELCH_SEGMENT = 65536      # the truth's Welch segment length, at every sample rate


@lru_cache(maxsize=64)
def _welch_weights(n_frames: int, n_fft: int, segment: int = WELCH_SEGMENT) -> np.ndarray:
    """Frame weights that turn the mean of `n_fft`-sample frames (50 % overlap)
    into Welch's average over `segment`-sample Hann segments (50 % overlap).

    When the frames are shorter than the segment (e.g. 32768 at 22.05 kHz),
    each segment is approximated by the frames inside it, weighted by the
    segment's squared Hann window at their centres; segments that run past the
    last frame are dropped, as Welch drops them. Otherwise: uniform weights."""
    ratio = segment // n_fft
    if ratio < 2 or segment % n_fft or n_frames < 2 * ratio - 1:
        weights = np.full(n_frames, 1.0 / n_frames)
        weights.setflags(write=False)
        return weights
    per_seg = 2 * ratio - 1
    centres = (np.arange(per_seg) + 1) * (n_fft / 2)
    shape = np.sin(np.pi * centres / segment) ** 4
    weights = np.zeros(n_frames)
    for start in range(0, n_frames - per_seg + 1, ratio):
        weights[start:start + per_seg] += shape
    weights /= weights.sum()
    weights.setflags(write=False)
    return weights


def long_term_power(spec: Spectrogram) -> np.ndarray:
    """(bins,) average power spectrum with the truth's Welch segment weighting."""
    weights = _welch_weights(int(spec.power.shape[0]), int(spec.n_fft))
    return (weights.astype(np.float32) @ spec.power).astype(np.float64)


@lru_cache(maxsize=16)
def _band_index(n_bins: int, bin_hz: float, nyquist: float) -> tuple[np.ndarray, int, int]:
    """Band number (0..6, or 7 = outside) of every bin, plus the slice
    [lo, hi) of bins inside 20 Hz..min(20 kHz, Nyquist)."""
    freqs = np.arange(n_bins) * bin_hz
    top = min(_HIGH_HZ, nyquist)
    idx = np.full(n_bins, len(BAND_NAMES), dtype=np.intp)
    for k, (lo, hi) in enumerate(BAND_EDGES_HZ):
        idx[(freqs >= lo) & (freqs < min(hi, top))] = k
    inside = np.nonzero((freqs >= _LOW_HZ) & (freqs < top))[0]
    lo, hi = (int(inside[0]), int(inside[-1]) + 1) if inside.size else (0, 0)
    idx.setflags(write=False)
    return idx, lo, hi


def _grid(freqs: np.ndarray) -> tuple[np.ndarray, int, int]:
    bin_hz = float(freqs[1] - freqs[0]) if freqs.size > 1 else 1.0
    return _band_index(int(freqs.size), bin_hz, float(freqs[-1]))


def band_balance(power: np.ndarray, freqs: np.ndarray) -> dict:
    """Percent of the 20 Hz-20 kHz power in each band of `BAND_NAMES`.

    power: (bins,) power spectrum; freqs: (bins,) Hz, uniform from 0 to Nyquist.
    The percentages sum to 100 (all 0 for a silent spectrum)."""
    idx, lo, hi = _grid(freqs)
    sums = np.bincount(idx[lo:hi], weights=np.asarray(power[lo:hi], dtype=np.float64),
                       minlength=len(BAND_NAMES) + 1)[:len(BAND_NAMES)]
    total = float(sums.sum())
    if not total > 0:
        return {name: 0.0 for name in BAND_NAMES}
    pct = 100.0 * sums / total
    return {name: float(v) for name, v in zip(BAND_NAMES, pct)}


def spectral_centroid(power: np.ndarray, freqs: np.ndarray) -> float:
    """Power-weighted mean frequency over 20 Hz..min(20 kHz, Nyquist), Hz (0 for silence)."""
    _, lo, hi = _grid(freqs)
    p = np.asarray(power[lo:hi], dtype=np.float64)
    total = float(p.sum())
    return float(np.dot(freqs[lo:hi], p) / total) if total > 0 else 0.0


def low_rolloff_hz(power: np.ndarray, freqs: np.ndarray, drop_db: float = 20.0) -> float:
    """Where the low end starts: the lowest 1/6-octave band between 20 and
    500 Hz whose power comes within `drop_db` of the strongest one there
    (its lower edge, Hz). Real mixes reach 20-80 Hz; a 150 Hz high-pass
    filter reads about 143 Hz. 20.0 for a silent spectrum."""
    edges = 20.0 * 2.0 ** (np.arange(int(np.log2(500.0 / 20.0) * 6) + 1) / 6.0)
    idx = np.searchsorted(freqs, edges)
    p = np.asarray(power, dtype=np.float64)
    levels = np.array([p[a:b].sum() for a, b in zip(idx[:-1], idx[1:])])
    if not levels.max() > 0:
        return 20.0
    db = 10.0 * np.log10(np.maximum(levels, levels.max() * 1e-12))
    return float(edges[int(np.argmax(db >= db.max() - drop_db))])


@lru_cache(maxsize=16)
def _band_segments(n_bins: int, bin_hz: float, nyquist: float) -> tuple[np.ndarray, np.ndarray, int]:
    idx, lo, hi = _band_index(n_bins, bin_hz, nyquist)
    bands = np.unique(idx[lo:hi])
    bands = bands[bands < len(BAND_NAMES)]
    starts = lo + np.searchsorted(idx[lo:hi], bands)
    bands.setflags(write=False)
    starts.setflags(write=False)
    return bands, starts, hi


def band_bins(freqs: np.ndarray) -> tuple[tuple[int, int, int], ...]:
    """(band number, first bin, end bin) of every band with bins below Nyquist."""
    bins = float(freqs[1] - freqs[0]) if freqs.size > 1 else 1.0
    bands, starts, hi = _band_segments(int(freqs.size), bins, float(freqs[-1]))
    ends = list(starts[1:]) + [hi]
    return tuple((int(b), int(lo), int(end)) for b, lo, end in zip(bands, starts, ends))


def band_sums(values: np.ndarray, freqs: np.ndarray) -> np.ndarray:
    """(rows, 7) sums of a (rows, bins) array over each band's bins (bands
    with no bins below Nyquist are 0), float64 for float64 input."""
    bins = float(freqs[1] - freqs[0]) if freqs.size > 1 else 1.0
    bands, starts, hi = _band_segments(int(freqs.size), bins, float(freqs[-1]))
    out = np.zeros((values.shape[0], len(BAND_NAMES)), dtype=values.dtype)
    if bands.size:
        out[:, bands] = np.add.reduceat(values[:, starts[0]:hi], starts - starts[0], axis=1)
    return out


def full_scale_sine_power(n_fft: int) -> float:
    """|X|^2 peak of a full-scale sine in one frame of a Hann window of `n_fft`."""
    return (n_fft / 4.0) ** 2


def band_levels_db(power: np.ndarray, spec: Spectrogram) -> dict:
    """Each band's long-term level in dB re a full-scale sine in one channel
    (which reads 0 dB; floor -120 dB): `power` is the (bins,) mean power of `spec`'s frames.
    Absolute: a +3 dB gain raises every band by 3 dB."""
    sums = band_sums(np.asarray(power, dtype=np.float64)[None, :], spec.freqs)[0]
    # a sine's power spreads over the Hann window's equivalent noise bandwidth (1.5 bins)
    ref = full_scale_sine_power(spec.n_fft) * 1.5
    db = 10.0 * np.log10(np.maximum(sums / ref, 1e-12))
    return {name: float(v) for name, v in zip(BAND_NAMES, db)}


def band_energy_over_time(spec: Spectrogram) -> np.ndarray:
    """(frames, 7) band energies in dB relative to a full-scale sine in one
    channel (floor -120 dB)."""
    energy = band_sums(spec.power, spec.freqs)
    ref = full_scale_sine_power(spec.n_fft)
    return (10.0 * np.log10(np.maximum(energy / ref, 1e-12))).astype(np.float32)


def measure_spectrum(spec: Spectrogram) -> Spectrum:
    """Band balance and centroid of the long-term spectrum, plus bands over time."""
    spec = spec.whole_frames()
    mean_power = long_term_power(spec)
    return Spectrum(bands_pct=band_balance(mean_power, spec.freqs),
                    centroid_hz=spectral_centroid(mean_power, spec.freqs),
                    band_energy_over_time=band_energy_over_time(spec),
                    low_rolloff_hz=low_rolloff_hz(mean_power, spec.freqs),
                    band_levels_db=band_levels_db(mean_power, spec))
