"""Where a track's low end starts (engine spectrum.low_rolloff_hz), read
the same by the scores and by the genre model's cues: a leaf of grading, so
neither imports the other for it."""

from __future__ import annotations

from trackgrade import limits as L
from trackgrade.engine.features import Features
from trackgrade.grading.ramp import ramp


def low_cut_share(f: Features) -> float:
    """0 when the low end reaches down as real mixes do, 1 when a high-pass
    filter has taken the kick and bass fundamentals (spectrum.low_rolloff_hz)."""
    return ramp(f.spectrum.low_rolloff_hz, L.LOW_ROLLOFF_OK_HZ, L.LOW_ROLLOFF_CUT_HZ)


def low_end_missing(f: Features) -> float:
    """0 when the spectrum starts at 80 Hz or lower, 1 when it starts at the
    90 Hz band or higher (limits.LOW_END_MISSING_HZ): no low end at all."""
    return ramp(f.spectrum.low_rolloff_hz, *L.LOW_END_MISSING_HZ)
