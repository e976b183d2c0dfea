"""Chroma that hears the bass: the long spectrum on a semitone grid.

A long-window log-frequency transform: each bin of `frames.long_spectrum`
(~1.5 s Hann frames, 0.67 Hz apart at 44.1 kHz, so neighbouring semitones
are 2.7 bins apart even at B0, 31 Hz) is shared between the two nearest
tuned semitone centres by linear interpolation, from B0 to B7 (MIDI 23-107,
the range of a constant-Q chroma from C1 with the octave below's top note).
A semitone's energy is the power summed over its bins and its magnitude the
square root (a constant-Q bin's magnitude); the chroma folds the octaves
together. Computed from the spectrum the other features share: one matrix
product per track, no second transform of the audio.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from trackgrade.engine.frames import Spectrogram

MIDI_RANGE = (23, 108)        # B0 (30.9 Hz) .. B7 (3951 Hz), upper bound exclusive


@lru_cache(maxsize=4)
def semitone_weights(n_fft: int, sample_rate: int, tuning_cents: int
                     ) -> tuple[np.ndarray, int, int]:
    """(bins, semitones) float32 interpolation weights (at most two per bin;
    dense, ~2 MB at 44.1 kHz: one BLAS product beats the sparse one) and the
    bin range [first, last) they cover, for a reference tuning in whole cents."""
    lo, hi = MIDI_RANGE
    shift = tuning_cents / 100.0                        # semitones
    edge = np.array([lo - 0.5, hi - 0.5]) - 69 + shift
    bounds = 440.0 * 2.0 ** (edge / 12) * n_fft / sample_rate
    first, last = int(np.ceil(bounds[0])), min(int(np.floor(bounds[1])) + 1, n_fft // 2 + 1)
    freqs = np.arange(first, last) * (sample_rate / n_fft)
    pos = 69 + 12 * np.log2(freqs / 440.0) - shift - lo
    i0 = np.floor(pos).astype(np.intp)
    frac = pos - i0
    matrix = np.zeros((freqs.size, hi - lo + 2), np.float32)     # a column either side
    rows = np.arange(freqs.size)
    matrix[rows, i0 + 1] = 1 - frac
    matrix[rows, i0 + 2] = frac
    return np.ascontiguousarray(matrix[:, 1:-1]), first, last


def semitone_magnitude(spec: Spectrogram, tuning_cents: float) -> np.ndarray:
    """(frames, semitones) magnitude of each tuned semitone B0..B7."""
    matrix, first, last = semitone_weights(spec.n_fft, spec.sample_rate,
                                           int(round(tuning_cents)))
    power = spec.power[:, first:last] @ matrix
    return np.sqrt(np.maximum(power.astype(np.float64), 0.0))


def fold_octaves(semitones: np.ndarray) -> np.ndarray:
    """(frames, semitones from MIDI_RANGE[0]) -> (frames, 12), C first."""
    lo, hi = MIDI_RANGE
    out = np.zeros((semitones.shape[0], 12))
    for pc in range(12):
        out[:, pc] = semitones[:, (pc - lo) % 12::12].sum(axis=1)
    return out
