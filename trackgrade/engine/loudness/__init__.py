"""Loudness per ITU-R BS.1770-4 / EBU R128, EBU Tech 3342 loudness range and
4x-oversampled true peak, one module per concern:

- `kweighting`: the BS.1770 K-weighting filter (Annex 1) and the K-weighted
  energy of each 100 ms hop, the one pass every loudness figure comes from;
- `gating`: integrated loudness (BS.1770-4's 400 ms blocks and two gates),
  the momentary and short-term curves (EBU Tech 3341) and the loudness
  range (EBU Tech 3342), all from the hop energies;
- `truepeak`: the true peak (BS.1770-4 Annex 2, 4x oversampled, refined on
  a 64x grid) and the sample peak;
- `measure`: all of them for a track at once (`measure_loudness`), or from
  energies and peaks measured chunk by chunk (`HopEnergies`, `TruePeakStream`:
  a long high-rate file streamed past, `engine.high_rate`);
- `arrays`: the conventions they share.

All functions are pure: ``samples`` is float32 of shape (frames, channels)
in [-1, 1], ``sample_rate`` in Hz. Nothing here returns NaN or inf: a
loudness below the -70 LUFS absolute gate (silence) reads ``SILENCE_LUFS``.
"""

from trackgrade.engine.loudness.arrays import single_thread_blas
from trackgrade.engine.loudness.gating import (ABSOLUTE_GATE_LUFS, LRA_RELATIVE_GATE_LU,
                                               MOMENTARY_S, RELATIVE_GATE_LU, SHORT_TERM_S,
                                               SILENCE_LUFS, integrated_from_energies,
                                               integrated_loudness, loudness_range,
                                               lra_from_energies, momentary_loudness,
                                               short_term_loudness, window_power)
from trackgrade.engine.loudness.kweighting import (CURVE_HOP_S, HopEnergies, channel_weights,
                                                   first_order_recursion, hop_energies,
                                                   k_weighting_sos)
from trackgrade.engine.loudness.measure import loudness_from_energies, measure_loudness
from trackgrade.engine.loudness.truepeak import (SILENCE_DBTP, TruePeakStream, amplitude_db,
                                                 sample_peak_dbfs, true_peak_amplitude,
                                                 true_peak_dbtp)

__all__ = ["ABSOLUTE_GATE_LUFS", "CURVE_HOP_S", "HopEnergies", "TruePeakStream", "amplitude_db",
           "true_peak_amplitude", "LRA_RELATIVE_GATE_LU", "MOMENTARY_S",
           "RELATIVE_GATE_LU", "SHORT_TERM_S", "SILENCE_DBTP", "SILENCE_LUFS",
           "channel_weights", "first_order_recursion", "hop_energies", "integrated_from_energies",
           "integrated_loudness", "k_weighting_sos", "loudness_from_energies",
           "loudness_range", "lra_from_energies", "measure_loudness", "momentary_loudness",
           "sample_peak_dbfs", "short_term_loudness", "single_thread_blas", "true_peak_dbtp",
           "window_power"]
