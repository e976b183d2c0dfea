"""The noise floor: how much high-frequency energy is left in the quietest moments.

Music's top end comes and goes (hats, cymbals, consonants, bow noise), so in
its quietest 46 ms frames the 5 kHz+ power falls far below the track's
average power. Broadband hiss (a noisy source, an amp simulator, dither
gone wrong) never leaves: the floor stays high and steady. Read from the
short STFT the structure stage already reduces to log bands (no extra FFT).
"""

from __future__ import annotations

import numpy as np

from trackgrade.engine.features import NOISE_FLOOR_FROM_HZ as FLOOR_FROM_HZ
from trackgrade.engine.features import NoiseFloor
from trackgrade.engine.frames import ShortFrames, segment_sums
from trackgrade.engine.structure import short_reductions


def measure_noise_floor(short: ShortFrames) -> NoiseFloor | None:
    """P5 of the 5 kHz+ frame power against the mean total power (dB), and how
    steady that band is (median - P5, dB). None when there is no such band or
    too few audible frames."""
    reduction = short_reductions(short.freqs, short.hop_s)[0]
    bands = segment_sums(short, reduction.starts, reduction.step).astype(np.float64)
    high = np.asarray(short.freqs)[np.asarray(reduction.starts)] >= FLOOR_FROM_HZ
    total = bands.sum(axis=1)
    audible = total > total.max(initial=0.0) * 1e-7
    if not high.any() or audible.sum() < 20:
        return None
    hf, total = bands[audible][:, high].sum(axis=1), total[audible]
    p5 = float(np.percentile(hf, 5))
    floor = 10.0 * np.log10(max(p5, 1e-30) / float(total.mean()))
    db = 10.0 * np.log10(np.maximum(hf, 1e-30))
    return NoiseFloor(floor_db=round(max(floor, -200.0), 2),
                      steadiness_db=round(float(np.median(db) - np.percentile(db, 5)), 2))
