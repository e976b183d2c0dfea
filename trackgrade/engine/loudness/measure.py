"""Every loudness figure of a track from one K-weighting pass."""

from __future__ import annotations

import numpy as np

from trackgrade.engine.features import Loudness
from trackgrade.engine.loudness.arrays import as_2d
from trackgrade.engine.loudness.gating import (MOMENTARY_S, SHORT_TERM_S, curve_from_energies,
                                               integrated_from_energies, lra_from_energies)
from trackgrade.engine.loudness.kweighting import CURVE_HOP_S, hop_energies
from trackgrade.engine.loudness.truepeak import true_and_sample_peak_db


def measure_loudness(samples: np.ndarray, sample_rate: int) -> Loudness:
    """Integrated loudness, loudness range, the momentary and short-term
    curves (from one set of hop energies), true peak and sample peak."""
    samples = as_2d(samples)
    hop = int(round(CURVE_HOP_S * sample_rate))
    energies = hop_energies(samples, sample_rate, CURVE_HOP_S)
    true_peak, sample_peak = true_and_sample_peak_db(samples)
    return loudness_from_energies(energies, hop, true_peak_dbtp=true_peak,
                                  sample_peak_dbfs=sample_peak)


def loudness_from_energies(energies: np.ndarray, hop: int, *, true_peak_dbtp: float,
                           sample_peak_dbfs: float) -> Loudness:
    """The Loudness of a track from its 100 ms K-weighted hop energies (`hop`
    frames each) and its peaks, however they were measured (whole or in chunks)."""
    n_m = int(round(MOMENTARY_S / CURVE_HOP_S))
    n_s = int(round(SHORT_TERM_S / CURVE_HOP_S))
    return Loudness(
        integrated_lufs=integrated_from_energies(energies, hop),
        loudness_range_lu=lra_from_energies(energies, hop),
        true_peak_dbtp=true_peak_dbtp,
        sample_peak_dbfs=sample_peak_dbfs,
        momentary_lufs=curve_from_energies(energies, hop, n_m).astype(np.float32),
        short_term_lufs=curve_from_energies(energies, hop, n_s).astype(np.float32),
        curve_hop_s=CURVE_HOP_S,
    )
