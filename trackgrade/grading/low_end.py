"""The low end: where a track's low end starts (engine spectrum.low_rolloff_hz),
read the same by the scores and by the genre model's cues (a leaf of grading,
so neither imports the other for it), and how the frequency pillar counts it:
once, against the bands above it (limits.LOW_SHARE_EXCESS_CAP_DB). The band
advice, the band table and the report read every band in that frame (`frame_db`)."""

from __future__ import annotations

import numpy as np

from trackgrade import limits as L
from trackgrade.engine.features import BAND_NAMES, Features
from trackgrade.grading.ramp import ramp


def low_cut_share(f: Features) -> float:
    """0 when the low end reaches down as real mixes do, 1 when a high-pass
    filter has taken the kick and bass fundamentals (spectrum.low_rolloff_hz)."""
    return ramp(f.spectrum.low_rolloff_hz, L.LOW_ROLLOFF_OK_HZ, L.LOW_ROLLOFF_CUT_HZ)


def low_end_missing(f: Features) -> float:
    """0 when the spectrum starts at 80 Hz or lower, 1 when it starts at the
    90 Hz band or higher (limits.LOW_END_MISSING_HZ): no low end at all."""
    return ramp(f.spectrum.low_rolloff_hz, *L.LOW_END_MISSING_HZ)


LOW = slice(0, 2)        # sub_bass, bass
UPPER = slice(2, None)   # low_mid .. air
_TOLERANCES = np.array([L.BAND_TOLERANCE_DB[b] for b in BAND_NAMES])


def band_shares(bands: dict) -> np.ndarray:
    """(7,) the bands' shares (%), an empty band counted as limits.BAND_SHARE_FLOOR_PCT."""
    return np.maximum(np.array([float(bands[b]) for b in BAND_NAMES]), L.BAND_SHARE_FLOOR_PCT)


def level_db(measured: float | np.ndarray, ideal: float | np.ndarray) -> float | np.ndarray:
    """How far a share (or a ratio of shares) sits from the ideal's, dB, capped
    to +-limits.BAND_DB_CAP: the one band unit (`frame_db`, `genres.band_distance_db`)."""
    return np.clip(10.0 * np.log10(measured / ideal), -L.BAND_DB_CAP, L.BAND_DB_CAP)


def upper_shape_db(bands: dict, ideal: dict) -> np.ndarray:
    """Each band from 250 Hz up (5,): its share of the upper bands' total
    against the ideal's, dB. A high-pass under 250 Hz leaves it as it was."""
    m, i = band_shares(bands)[UPPER], band_shares(ideal)[UPPER]
    return level_db(m / m.sum(), i / i.sum())


def low_share_db(bands: dict, ideal: dict) -> float:
    """The low end (sub + bass) over the upper bands' total, against the ideal's, dB."""
    m, i = band_shares(bands), band_shares(ideal)
    return float(level_db(m[LOW].sum() / m[UPPER].sum(), i[LOW].sum() / i[UPPER].sum()))


def low_bands_db(bands: dict, ideal: dict) -> np.ndarray:
    """Sub and bass (2,), each over the upper bands' total against the ideal's,
    dB: a low shelf moves these and nothing above 250 Hz."""
    m, i = band_shares(bands), band_shares(ideal)
    return level_db(m[LOW] / m[UPPER].sum(), i[LOW] / i[UPPER].sum())


def frame_db(bands: dict, ideal: dict) -> np.ndarray:
    """The seven bands (7,) in the frequency pillar's frame, the one reading the
    advice and the band table show: sub and bass against the upper bands'
    total (`low_bands_db`), each band from 250 Hz up as its share of the upper
    bands (`upper_shape_db`), all against the ideal's, dB."""
    return np.concatenate([low_bands_db(bands, ideal), upper_shape_db(bands, ideal)])


def change_to_edge_db(ideal: dict, band: str, reading_db: float, edge_db: float) -> float:
    """The boost (+) or cut (-) on `band` alone, dB, that moves its `frame_db`
    reading from `reading_db` to `edge_db`. A low band's reading moves dB for
    dB; an upper band is part of the total its share is taken of, so it needs
    more: share s to s' takes a gain of s'(1 - s) / (s(1 - s'))."""
    k = BAND_NAMES.index(band)
    if k < UPPER.start:
        return float(edge_db - reading_db)
    i = band_shares(ideal)[UPPER]
    share = i[k - UPPER.start] / i.sum()
    s, s_to = (min(share * 10.0 ** (db / 10.0), 0.999) for db in (reading_db, edge_db))
    return float(10.0 * np.log10(s_to * (1.0 - s) / (s * (1.0 - s_to))))


def sub_split_db(bands: dict, ideal: dict) -> float:
    """The sub over the bass, against the ideal's, dB (negative: the sub is light)."""
    m, i = band_shares(bands), band_shares(ideal)
    return float(level_db(m[0] / m[1], i[0] / i[1]))


def balance_excess_db(bands: dict, ideal: dict, whole: bool = True) -> float:
    """dB outside the tolerances, the low end counted once: the upper bands'
    shape among themselves (limits.BAND_TOLERANCE_DB), the low share (the bass
    band's tolerance; too much costs at most limits.LOW_SHARE_EXCESS_CAP_DB),
    and the sub/bass split (the sub's tolerance over; under, a light sub costs
    limits.SUB_DEFICIT_WEIGHT x beyond limits.SUB_DEFICIT_TOLERANCE_DB).

    A part (`whole` False: a drum loop, a bass line, a pad) has the low end its
    instruments have, not a full mix's: a kick-heavy loop is not a boomy mix,
    so only too little low end is charged there (the low share under, the sub
    under), which a high-pass can only deepen."""
    upper = np.maximum(np.abs(upper_shape_db(bands, ideal)) - _TOLERANCES[UPPER], 0.0).sum()
    low, tol = low_share_db(bands, ideal), L.BAND_TOLERANCE_DB["bass"]
    split = sub_split_db(bands, ideal)
    over = (min(max(low - tol, 0.0), L.LOW_SHARE_EXCESS_CAP_DB)
            + max(split - L.BAND_TOLERANCE_DB["sub_bass"], 0.0)) if whole else 0.0
    under = max(-low - tol, 0.0) + L.SUB_DEFICIT_WEIGHT * max(-split - L.SUB_DEFICIT_TOLERANCE_DB, 0.0)
    return float(upper + over + under)
