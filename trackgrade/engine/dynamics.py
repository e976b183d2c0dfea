"""Dynamics: crest factor, dynamic complexity, clipping and RMS.

Pure functions over float32 samples of shape (frames, channels). The RMS
figures come from the channel Gram matrix (`stereo.channel_gram`), so a
caller measuring stereo too can share that one pass.
"""

from __future__ import annotations

import math

import numpy as np

from trackgrade.engine.features import Dynamics, Loudness
from trackgrade.engine.loudness import (CURVE_HOP_S, SHORT_TERM_S, SILENCE_DBTP,
                                        SILENCE_LUFS)
from trackgrade.engine.stereo import channel_gram

CLIP_LEVEL = 0.999               # |x| at or above this counts as clipped (as the synth truth)


def clipping_pct(samples: np.ndarray) -> float:
    """Percentage of samples (all channels) with |x| >= CLIP_LEVEL."""
    if samples.size == 0:
        return 0.0
    return 100.0 * clipped_samples(samples) / samples.size


def clipping_ruled_out(sample_peak_dbfs: float) -> bool:
    """Whether a sample peak (dBFS, as `Loudness` holds it) lies under
    CLIP_LEVEL, so that no sample is clipped and `clipping_pct` is 0.0
    without reading the samples (a margin covers the dB conversion's rounding)."""
    return sample_peak_dbfs < 20.0 * math.log10(CLIP_LEVEL) - 1e-6


def clipped_samples(samples: np.ndarray, *, chunk_frames: int = 1 << 20) -> int:
    """How many samples (all channels) have |x| >= CLIP_LEVEL."""
    if samples.size == 0 or max(float(samples.max()), -float(samples.min())) < CLIP_LEVEL:
        return 0
    count = 0
    for f0 in range(0, samples.shape[0], chunk_frames):
        part = samples[f0:f0 + chunk_frames]
        count += int(np.count_nonzero(part >= CLIP_LEVEL)) + int(np.count_nonzero(part <= -CLIP_LEVEL))
    return count


def dynamic_complexity_db(short_term_lufs: np.ndarray, *, hop_s: float = CURVE_HOP_S) -> float:
    """Mean absolute deviation (dB) of the short-term loudness from its
    power-weighted mean, over the windows above the silence floor (in the
    spirit of Essentia's DynamicComplexity). Full 3 s windows only, unless the
    track is shorter than that. 0.0 when nothing is above the floor."""
    values = np.asarray(short_term_lufs, dtype=np.float64)
    full = int(round(SHORT_TERM_S / hop_s)) - 1
    if values.size > full:
        values = values[full:]
    values = values[values > SILENCE_LUFS]
    if values.size == 0:
        return 0.0
    level = 10.0 * np.log10(np.mean(10.0 ** (values / 10.0)))
    return float(np.mean(np.abs(values - level)))


def _db(amplitude: float) -> float:
    return max(20.0 * math.log10(amplitude), SILENCE_DBTP) if amplitude > 0 else SILENCE_DBTP


def measure_dynamics(samples: np.ndarray, sample_rate: int, loudness: Loudness, *,
                     gram: tuple | None = None, clipping: float | None = None) -> Dynamics:
    """Crest factor (sample peak over RMS of all samples), dynamic complexity
    from the short-term loudness curve, clipping, RMS in dBFS and the linear
    RMS of the mono mix. `gram` = `stereo.channel_gram(samples)` and
    `clipping` = `clipping_pct(samples)` if at hand (e.g. measured at the
    native rate while the samples are those of the analysis rate)."""
    samples = samples if samples.ndim == 2 else samples[:, None]
    products, _, frames = gram if gram is not None else channel_gram(samples)
    n_ch = products.shape[0]
    if frames == 0:
        rms = mono_rms = 0.0
    else:
        rms = math.sqrt(max(float(np.trace(products)), 0.0) / (frames * n_ch))
        mono_rms = math.sqrt(max(float(products.sum()), 0.0) / (frames * n_ch * n_ch))
    rms_dbfs = _db(rms)
    crest = loudness.sample_peak_dbfs - rms_dbfs if rms > 0 else 0.0
    return Dynamics(
        crest_factor_db=float(crest),
        dynamic_complexity_db=dynamic_complexity_db(loudness.short_term_lufs,
                                                    hop_s=loudness.curve_hop_s),
        clipping_pct=clipping_pct(samples) if clipping is None else clipping,
        rms_dbfs=float(rms_dbfs),
        rms_mean=float(min(mono_rms, 1.0)),
    )
