"""Tempo, beats and pulse from the shared short STFT.

Everything starts from a band-wise, log-compressed spectral-flux onset
envelope (`onset_envelope`, 24 log bands; the 30-160 Hz kick band kept apart).
The tempo comes from a comb over the envelope's autocorrelation at 1, 2, 4 and
8 beats, the bar (4 beats) weighing double, which makes the half/double choice
the way electronic music is counted (174 d&b, 84 downtempo), with a broad
prior and parabolic interpolation (`estimate_tempo`). The beats come from a
global period/phase fit (`track_beats`: period sharpened on autocorrelation
peaks 4/16/64 beats away, then a weighted least-squares line through the
onsets, kick side chosen on the kick band); a beat-by-beat tracker replaces
the straight grid only when the tempo really drifts. The final BPM is the
slope of the beats. Vectorised throughout; the only Python loops run over
beats or a handful of scales.

One module per concern: `onsets` (the envelope and its peaks), `periodicity`
(autocorrelation, comb, prior), `tempo` (the global reading), `metrical`
(which relative is the beat, the alternatives), `beats` (grid fit and
tracker), `pulse` (regularity, danceability) and `measure` (`measure_rhythm`,
all of it from one short STFT)."""

from trackgrade.engine.rhythm.beats import track_beats
from trackgrade.engine.rhythm.measure import measure_rhythm
from trackgrade.engine.rhythm.metrical import (grid_strength, metrical_evidence, metrical_level,
                                               tempo_alternatives)
from trackgrade.engine.rhythm.onsets import (Onsets, band_energies, onset_envelope, pick_onsets,
                                             short_reductions)
from trackgrade.engine.rhythm.periodicity import BPM_MAX, BPM_MIN
from trackgrade.engine.rhythm.pulse import danceability_dfa
from trackgrade.engine.rhythm.tempo import TempoEstimate, estimate_tempo

__all__ = ["BPM_MAX", "BPM_MIN", "Onsets", "TempoEstimate", "band_energies", "danceability_dfa",
           "estimate_tempo", "grid_strength", "measure_rhythm", "metrical_evidence", "metrical_level",
           "onset_envelope", "pick_onsets", "short_reductions", "tempo_alternatives", "track_beats"]
