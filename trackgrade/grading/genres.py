"""Genre profiles (data in genres.json) and genre detection.

`GENRES` maps every key (11 families, then the label layer) to its profile.
Families carry the scoring targets (ideal bands, loudness per mastering
status, crest, LRA, typical structure); a label entry names the `family` it
is scored against. Where the numbers come from: benchmarks/GENRES.md and
benchmarks/grading_notes/derive_genres.py (which writes genres.json).

Detection (`detect_genre`) reads the family from its rhythm pattern, tempo
and sound (grading/genre_model.py, benchmarks/RESULTS.md, issue 17): `confidence`
is the calibrated probability of the best family, lowered for a track unlike
it; it never feeds any score. Under CLEAR_FAMILY_MIN no family is clear and
the track is judged against `broad_profile()` (genre.target `electronic`).
`electronic_fit` says how much the track looks like electronic music at all
(a band shape inside the tolerances of some family, a salient pulse, dense
dynamics, a low end that reaches down) and whether it was made on a grid
(`grid_timing`: played timing lowers it); under `ELECTRONIC_MIN` the music is
not electronic and the confidence is at most 0.35 (CONTRACT.md section 4).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

from trackgrade.engine.features import BAND_NAMES
from trackgrade.errors import TrackgradeError
from trackgrade.grading.genre_model import (GenreModel, default_model, feature_vector, probabilities,
                                            typicality)
from trackgrade import limits as L
from trackgrade.grading.low_end import band_shares, level_db


@lru_cache(maxsize=1)
def _data() -> dict:
    text = resources.files("trackgrade.grading").joinpath("genres.json").read_text("utf-8")
    return json.loads(text)


FAMILIES: tuple[dict, ...] = tuple(_data()["families"])
LABELS: tuple[dict, ...] = tuple(_data()["labels"])
GENRES: dict[str, dict] = {g["key"]: g for g in FAMILIES + LABELS}
FAMILY_KEYS: tuple[str, ...] = tuple(g["key"] for g in FAMILIES)

_PUBLIC_FIELDS = ("key", "name", "bpm_range", "ideal_bands")

# No clear family (genre.confidence under CLEAR_FAMILY_MIN): the track is
# judged against electronic records as a whole (CONTRACT.md section 5). The
# families' ideals are one measured basis (research/spectral-balance.md: recent
# electronic and pop masters) tilted a few dB each way; the broad ideal is
# their mean level per band (the tilts cancel), and the loudness, crest and
# loudness-range expectations span every danceable family's.
CLEAR_FAMILY_MIN = 0.5
ELECTRONIC = "electronic"


def _broad_profile() -> dict:
    dance = [g for g in FAMILIES if g["danceable"]]
    level = np.exp(np.mean([np.log([max(g["ideal_bands"][b], 0.01) for b in BAND_NAMES])
                            for g in FAMILIES], axis=0))
    pct = 100.0 * level / level.sum()
    bands = {b: round(float(v), 1) for b, v in zip(BAND_NAMES, pct)}
    bands["bass"] = round(bands["bass"] + 100.0 - sum(bands.values()), 1)

    def span(field, sub=None):
        pairs = [g[field][sub] if sub else g[field] for g in dance]
        return [min(p[0] for p in pairs), max(p[1] for p in pairs)]

    return {"key": ELECTRONIC, "name": "Broad electronic",
            "bpm_range": span("bpm_range"), "ideal_bands": bands,
            "loudness_lufs": {s: span("loudness_lufs", s) for s in dance[0]["loudness_lufs"]},
            "crest_db": span("crest_db"), "lra_lu": span("lra_lu"), "half_time": False,
            "danceable": True, "structure": list(dance[0]["structure"]),
            "bands_source": "the mean level per band of the families' ideals (the measured basis)"}


BROAD_PROFILE: dict = _broad_profile()


def broad_profile(*, danceable: bool = True) -> dict:
    """A copy of the `electronic` profile: the targets when no family is clear.
    Electronic music as a whole includes ambient: a track without a pulse is
    not judged as a dance track (`danceable` False)."""
    return {**json.loads(json.dumps(BROAD_PROFILE)), "danceable": bool(danceable)}


def genre_list() -> list[dict]:
    """The `data` of `GET /genres`: 11 families (no `family`), then labels (with `family`)."""
    out = [{f: g[f] for f in _PUBLIC_FIELDS} for g in FAMILIES]
    out += [{**{f: g[f] for f in _PUBLIC_FIELDS}, "family": g["family"]} for g in LABELS]
    return json.loads(json.dumps(out))          # a fresh deep copy per call


def get_profile(key: str) -> dict:
    """A copy of the profile for `key` (family or label); raises
    parameter_invalid for unknown keys."""
    try:
        return json.loads(json.dumps(GENRES[key]))
    except KeyError:
        raise TrackgradeError("parameter_invalid", f"unknown genre {key!r}; known: "
                              + ", ".join(GENRES), param="genre") from None


def family_of(key: str) -> dict:
    """The family profile a key is scored against."""
    profile = get_profile(key)
    return get_profile(profile.get("family", key))


def bands_vector(bands: dict) -> np.ndarray:
    return np.array([float(bands[b]) for b in BAND_NAMES])


def band_distance_db(measured: dict, ideal: dict) -> np.ndarray:
    """Per-band level of the measured share against the ideal's, dB (7,),
    capped to +-15 dB; an empty band counts as 0.05 % (a finite miss). The
    genre measures' band distance (`shape_fit`, `band_similarity`); what the
    user reads of a band is `low_end.frame_db`, the frequency pillar's frame."""
    return level_db(band_shares(measured), band_shares(ideal))


def shape_fit(measured: dict, ideal: dict) -> float:
    """0..1: exp(-(dB outside the tolerances, summed) / 8 dB); 1 inside them."""
    tol = np.array([L.BAND_TOLERANCE_DB[b] for b in BAND_NAMES])
    excess = np.maximum(np.abs(band_distance_db(measured, ideal)) - tol, 0.0).sum()
    return float(np.exp(-excess / 8.0))


def band_similarity(measured: dict, ideal: dict) -> float:
    """0..1 similarity of two band profiles: exp of minus the energy-weighted
    mean absolute dB difference. Sub and bass are also compared merged, because
    a tuned kick or bass note near 60 Hz moves energy across that edge."""
    m, i = bands_vector(measured), bands_vector(ideal)
    d = np.abs(band_distance_db(measured, ideal))
    merged = abs(10 * np.log10(max(m[0] + m[1], 0.05) / max(i[0] + i[1], 0.05)))
    weights = np.array([0.5, 0.5, 1, 1, 1, 1, 1])
    spread = (float(np.dot(weights, d)) + 2.0 * merged) / (weights.sum() + 2.0)
    return float(np.exp(-spread / 3.0))


# A reading at half or double a family's range: the engine reads the tempo
# level from the groove (drum & bass at its 160-180, hip-hop at its 65-95:
# engine/rhythm/backbeat.py), so an octave off the range is weak evidence.
OCTAVE_FIT = 0.3


def tempo_fit(bpm: float, bpm_range, *, half_time: bool = False) -> float:
    """1 in the middle of the range, 0.7 at its edges, falling with the distance
    outside it (in %) and OCTAVE_FIT x for a half/double-time reading (1.0x
    for half-time genres)."""
    lo, hi = bpm_range

    def inside(b: float) -> float:
        if lo <= b <= hi:       # the middle of the conventional range fits best
            return 1.0 - 0.3 * ((b - (lo + hi) / 2) / max((hi - lo) / 2, 1e-6)) ** 2
        gap = (lo - b) / lo if b < lo else (b - hi) / hi
        return 0.7 * float(np.exp(-(gap / 0.02) ** 2))

    octave = 1.0 if half_time else OCTAVE_FIT
    return max(inside(bpm), octave * inside(bpm * 2), octave * inside(bpm / 2))


ELECTRONIC_MIN = 0.45           # electronic_fit under this: not electronic music
NOT_ELECTRONIC_MAX_CONFIDENCE = 0.35
# A clip shorter than this (4 bars at 120 BPM, two at 60) is a part - a loop, a
# sample - not a mix: its band shape, density and low end say nothing about the
# music it is made for, so they count as fitting.
MIX_MIN_S = 8.0
# Made on a grid or played (engine timing.timing_spread_ms: the onsets' RMS
# offset from the sixteenths of the beat grid, each bar position's own offset
# and the drift within a bar taken out): sequenced real loops and tracks measure
# 0.8-4.9 ms (the synthetic grid up to 5 ms), played jazz, folk, country and
# ragtime 7.6-13.7 ms (benchmarks/GENRES.md). Full grid credit up to 5 ms, none
# from 8 ms: centred on the gap's middle (6.2 ms; 6.0-7.0 ms with any one clip
# left out, the same clips caught every time), counted only with a salient
# pulse and at least TIMING_MIN_ONSETS onsets. Played timing keeps PLAYED_KEEPS
# of the fit: under ELECTRONIC_MIN, so a played track is not electronic however
# it sounds.
TIMING_GRID_MS, TIMING_PLAYED_MS = 5.0, 8.0
TIMING_MIN_ONSETS = 8
PLAYED_KEEPS = 0.4


@dataclass(frozen=True)
class GenreGuess:
    key: str
    name: str
    confidence: float
    candidates: tuple[tuple[str, float], ...]     # (family key, probability 0..1), best first
    electronic: float = 1.0                       # electronic_fit, 0..1

    @property
    def is_electronic(self) -> bool:
        return self.electronic >= ELECTRONIC_MIN


def grid_timing(spread_ms: float | None, onsets: int = 0, *, tempo_salient: bool = True) -> float:
    """0..1: 1 = the onsets sit on a sequencer's grid, 0 = played by hand. 1 when
    unknown (no pulse to be on, too few onsets, not measured)."""
    if spread_ms is None or not tempo_salient or onsets < TIMING_MIN_ONSETS:
        return 1.0
    span = TIMING_PLAYED_MS - TIMING_GRID_MS
    return float(np.clip((TIMING_PLAYED_MS - spread_ms) / span, 0.0, 1.0))


def electronic_fit(*, bands: dict, tempo_salient: bool, beat_strength: float | None = None,
                   crest_db: float | None = None, low_cut: float = 0.0,
                   duration_s: float | None = None, timing_spread_ms: float | None = None,
                   timed_onsets: int = 0) -> float:
    """0..1: how much this looks like electronic music at all.

    How it sounds: 0.40 band shape (the best family's `shape_fit`: real
    electronic masters sit inside the tolerances of some family) + 0.25 pulse
    (a salient beat) + 0.20 density (crest factor 13 dB or less, as limited
    club masters; 18 dB and more as unlimited acoustic recordings) + 0.15
    foundation (a low end that reaches down, `low_cut` 0). Shape, density and
    foundation count as fitting for a clip under MIX_MIN_S (a part, not a
    mix). How it was made: the sum is scaled by PLAYED_KEEPS + (1 -
    PLAYED_KEEPS) x `grid_timing` (played timing keeps 0.4 of it). Unknown
    parts count as fitting."""
    strength = 0.5 if beat_strength is None else float(beat_strength)
    pulse = float(np.clip((strength - 0.15) / 0.35, 0.0, 1.0)) if tempo_salient else 0.0
    if duration_s is not None and duration_s < MIX_MIN_S:
        shape = density = foundation = 1.0
    else:
        shape = max(shape_fit(bands, g["ideal_bands"]) for g in FAMILIES)
        density = 1.0 if crest_db is None else float(np.clip((18.0 - crest_db) / 5.0, 0.0, 1.0))
        foundation = 1.0 - low_cut
    sound = 0.40 * shape + 0.25 * pulse + 0.20 * density + 0.15 * foundation
    grid = grid_timing(timing_spread_ms, timed_onsets, tempo_salient=tempo_salient)
    return round(sound * (PLAYED_KEEPS + (1.0 - PLAYED_KEEPS) * grid), 3)


def family_tempo_log_fit(bpm: float, tempo_salient: bool, keys) -> np.ndarray:
    """(len(keys),) log of each family's `tempo_fit` (0 for all without a pulse:
    the tempo then says nothing)."""
    if not tempo_salient or not np.isfinite(bpm) or bpm <= 0:
        return np.zeros(len(keys))
    fits = [tempo_fit(bpm, GENRES[k]["bpm_range"], half_time=GENRES[k]["half_time"]) for k in keys]
    return np.log(np.maximum(np.array(fits), 1e-3))


def detect_genre(*, bpm: float, bands: dict, tempo_salient: bool = True,
                 beat_strength: float | None = None, crest_db: float | None = None,
                 low_cut: float = 0.0, duration_s: float | None = None,
                 timing_spread_ms: float | None = None, timed_onsets: int = 0,
                 onset_rate: float | None = None, cues: dict | None = None,
                 content: dict | None = None, model: GenreModel | None = None) -> GenreGuess:
    """The most probable family (genre_model: rhythm-pattern `cues` of
    engine/groove.py, onsets per beat, pulse, band ratios, tempo against the
    families' ranges), its calibrated probability times how typical the track
    is of it (`genre_model.typicality`) as `confidence`, and how electronic the
    track looks (`electronic_fit`: under ELECTRONIC_MIN the confidence is at
    most NOT_ELECTRONIC_MAX_CONFIDENCE). The candidates' probabilities are
    scaled by the same factor as the winner's."""
    m = model or default_model()
    inputs = {"bpm": bpm, "bands": bands, "tempo_salient": tempo_salient,
              "beat_strength": beat_strength, "onset_rate": onset_rate, "cues": cues,
              "content": content, "duration_s": duration_s}
    features = feature_vector(inputs)
    probs = probabilities(m, features, family_tempo_log_fit(bpm, tempo_salient, m.families))
    order = np.argsort(-probs, kind="stable")
    fit = electronic_fit(bands=bands, tempo_salient=tempo_salient, beat_strength=beat_strength,
                         crest_db=crest_db, low_cut=low_cut, duration_s=duration_s,
                         timing_spread_ms=timing_spread_ms, timed_onsets=timed_onsets)
    scale = typicality(m, features, int(order[0]))
    if fit < ELECTRONIC_MIN:
        cap = NOT_ELECTRONIC_MAX_CONFIDENCE * fit / ELECTRONIC_MIN
        scale = min(scale, cap / max(float(probs[order[0]]), 1e-9))
    key = m.families[order[0]]
    return GenreGuess(key=key, name=GENRES[key]["name"],
                      confidence=round(float(np.clip(probs[order[0]] * scale, 0.0, 1.0)), 2),
                      candidates=tuple((m.families[i], round(float(probs[i] * scale), 3)) for i in order),
                      electronic=fit)
