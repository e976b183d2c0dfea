"""The Analysis document from `Features`: judge (genre, pillars, headline),
then words (template diagnosis, feedback)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from trackgrade.engine.features import (BAND_NAMES, PART_LABEL, PLAIN_LABEL, SECTION_LABELS, SILENCE_LUFS,
                                        Features, MonoFold)
from trackgrade.errors import TrackgradeError
from trackgrade.grading import scores as S
from trackgrade.grading.content import MIX, ContentReading, counted_pillars, detect_content, is_part
from trackgrade.grading.genre_model import genre_inputs
from trackgrade.grading.genres import (CLEAR_FAMILY_MIN, ELECTRONIC, GENRES, LABELS, TIMING_MIN_ONSETS,
                                       GenreGuess, band_similarity, broad_profile, detect_genre,
                                       tempo_fit)
from trackgrade.grading.grade import grade_for
from trackgrade.grading.low_end import low_cut_share, low_end_missing
from trackgrade.limits import MASTERING_STATUSES, TRUE_PEAK_MAX_DBTP
from trackgrade.grading.targets import REFERENCE, Reference, profile_for, reference_profile
from trackgrade.musical_keys import open_key as open_key_for
from trackgrade.delivery.checks import delivery_checks
from trackgrade.model import (Analysis, BandLevels, CodecCheck, Content, Danceability, DanceabilityBreakdown,
                              Delivery, Diagnosis, Energy, Extras, Frequency, FrequencyBands,
                              GenreAlternative, GenreResult, KeyAlternative,
                              KeyResult, Mix, Scores, StructureResult, StructureSection, Tempo,
                              TempoAlternative)


def check_mastering_status(value) -> str:
    if value not in MASTERING_STATUSES:
        raise TrackgradeError("parameter_invalid",
                              f"mastering_status must be 'pre-master' or 'master', given {value!r}",
                              param="mastering_status")
    return value


def _num(x: float, digits: int, lo: float | None = None, hi: float | None = None) -> float:
    """A finite float rounded to `digits`, clamped to [lo, hi]; NaN becomes lo
    (or 0), +-inf the nearest bound (or 0)."""
    x = float(x)
    if math.isnan(x):
        x = lo if lo is not None else 0.0
    elif math.isinf(x):
        bound = hi if x > 0 else lo
        x = bound if bound is not None else 0.0
    if lo is not None:
        x = max(x, lo)
    if hi is not None:
        x = min(x, hi)
    return round(x, digits) + 0.0


def round_bands(bands: dict) -> dict:
    """Band percentages rounded to 0.1 that sum to exactly 100.0 (largest
    remainder); all zeros stay zeros."""
    raw = np.array([max(float(bands[b]), 0.0) for b in BAND_NAMES])
    total = raw.sum()
    if total <= 0:
        return {b: 0.0 for b in BAND_NAMES}
    tenths = raw / total * 1000.0
    base = np.floor(tenths)
    short = int(round(1000 - base.sum()))
    order = np.argsort(-(tenths - base), kind="stable")
    base[order[:short]] += 1
    return {b: round(float(v) / 10.0, 1) for b, v in zip(BAND_NAMES, base)}


def _jsonable(value):
    """Plain Python types all the way down (numpy scalars become floats/ints/bools)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def _jsonable_top(values: dict) -> dict:
    """`_jsonable` for each value, keeping top-level tuples as tuples."""
    return {k: tuple(_jsonable(list(v))) if isinstance(v, tuple) else _jsonable(v)
            for k, v in values.items()}


def _sections(features: Features, duration: float, *, part: bool,
              electronic: bool) -> tuple[StructureSection, ...]:
    """Contiguous sections covering [0, duration], times rounded to 0.01 s.
    A part has one section labelled `part` (its energy the sections' mean);
    music that is not electronic labels every section `section`; the club
    labels are for electronic mixes only (CONTRACT.md section 6)."""
    secs = [s for s in features.structure.sections if s.end > s.start]
    if part:
        spans = [(s.end - s.start, s.energy) for s in secs if np.isfinite(s.energy)]
        weight = sum(w for w, _ in spans)
        energy = sum(w * e for w, e in spans) / weight if weight > 0 else 50.0
        return (StructureSection(0.0, duration, PART_LABEL, int(np.clip(round(energy), 0, 100))),)
    if not electronic:
        return tuple(StructureSection(s.start, s.end, PLAIN_LABEL, s.energy)
                     for s in _sections(features, duration, part=False, electronic=True))
    if not secs:
        return (StructureSection(0.0, duration, "drop", 50),)
    out, start = [], 0.0
    for i, s in enumerate(secs):
        end = duration if i == len(secs) - 1 else min(max(_num(s.end, 2), start), duration)
        if end <= start and (out or i != len(secs) - 1):
            continue                    # nothing left to cover: the previous one ends the track
        label = s.label if s.label in SECTION_LABELS else "drop"
        energy = int(np.clip(round(s.energy), 0, 100)) if np.isfinite(s.energy) else 0
        out.append(StructureSection(start, end, label, energy))
        start = end
    if out[-1].end != duration:         # the last section reaches the end of the track
        out[-1] = StructureSection(out[-1].start, duration, out[-1].label, out[-1].energy)
    return tuple(out)


def _curve(values, hop_in: float, hop_out: float, digits: int, lo: float, hi: float) -> list:
    """Block means of a curve resampled from hop_in to hop_out seconds."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return []
    v = np.clip(np.where(np.isfinite(v), v, lo), lo, hi)
    step = max(1, int(round(hop_out / max(hop_in, 1e-6))))
    n = v.size // step * step
    blocks = v[:n].reshape(-1, step).mean(axis=1) if n else v[:1]
    return [_num(x, digits, lo, hi) for x in blocks]


def _label_guess(family: str, bpm: float, bands: dict) -> str | None:
    """The closest label-layer entry of the family (tempo and bands), if any fits."""
    best, best_score = None, 0.5
    for label in LABELS:
        if label["family"] != family:
            continue
        score = 0.5 * tempo_fit(bpm, label["bpm_range"]) + 0.5 * band_similarity(bands, label["ideal_bands"])
        if score > best_score:
            best, best_score = label["key"], score
    return best


def genre_name(guess: GenreGuess) -> str:
    """`genre.name`: the family's name, or "Not electronic (nearest: <family>)"
    when no electronic profile fits (the badge and every surface show it)."""
    return guess.name if guess.is_electronic else f"Not electronic (nearest: {guess.name})"


@dataclass(frozen=True)
class Judgement:
    """Everything decided about one track before it becomes words."""
    guess: GenreGuess
    profile: dict
    pillars: dict            # name -> scores.Pillar
    penalties: dict          # headline defect penalties
    score: int
    content: ContentReading  # what the audio is
    part: bool               # content.part: judged as a part
    target: str              # genre.target: the detected family, the caller's genre, "reference",
                             # or "electronic" (no clear family: the broad targets)


def judge(f: Features, status: str, *, genre: str | None = None,
          references: tuple[Reference, ...] = ()) -> Judgement:
    """Genre, the five pillars, the defect penalties and the headline, against
    the detected family, the caller's `genre` (a family or label key) or the
    caller's reference tracks (which win over `genre` for what they measure)."""
    guess = detect_genre(**genre_inputs(f))
    if genre is not None:                     # the caller's genre is trusted
        profile, target = profile_for(genre), genre
    elif guess.confidence < CLEAR_FAMILY_MIN:   # no clear family: no advice against one
        profile, target = broad_profile(danceable=f.rhythm.tempo_salient), ELECTRONIC
    else:
        profile, target = GENRES[guess.key], guess.key
    if references:
        profile, target = reference_profile(profile, references), REFERENCE
    # The caller said what the music is (a genre or references): the
    # not-electronic reading then neither scales nor penalises the scores.
    chosen = genre is not None or bool(references)
    fit = 1.0 if chosen else guess.electronic
    content = detect_content(f)
    part = is_part(content.kind, f.duration_s)
    whole = content.kind == MIX             # a part other than a mix is not held to a mix's ideals
    pillars = {"danceability": S.danceability(f, profile, fit),
               "mix_quality": S.mix_quality(f, profile, status),
               "frequency_balance": S.frequency_balance(f.spectrum.bands_pct, profile["ideal_bands"],
                                                        low_cut_share(f), S.hiss_bands(f),
                                                        S.hiss_share(f), low_end_missing(f), whole),
               "energy": S.energy(f, profile),
               "structure": S.structure(f)}
    penalties = S.defect_penalties(f, profile, status, pillars["mix_quality"],
                                   electronic=chosen or guess.is_electronic, whole_mix=whole)
    score = S.headline({k: p.score for k, p in pillars.items()}, penalties,
                       danceable=profile["danceable"], electronic_fit=fit if whole else 1.0,
                       structure_judged=not part, counted=counted_pillars(content.kind))
    return Judgement(guess, profile, pillars, penalties, score, content, part, target)


def _extras(f: Features, j: Judgement, status: str, sections) -> Extras:
    """The JSON-safe facts the HTML report and the narrative use."""
    r, p = f.rhythm, j.pillars
    hop = 0.5 if f.duration_s <= 600 else 1.0
    floor = f.noise_floor
    extras = {
        "truncated": bool(f.truncated),
        "decoder_notes": int(f.decoder_notes),
        "declared_duration_s": (None if f.declared_duration_s is None
                                else _num(f.declared_duration_s, 2, 0.0)),
        "sample_rate": int(f.sample_rate), "channels": int(f.channels), "container": f.container,
        "integrated_lufs": _num(f.loudness.integrated_lufs, 1, SILENCE_LUFS, 10.0),
        "true_peak_dbtp": _num(f.loudness.true_peak_dbtp, 1, -120.0, 30.0),
        "sample_peak_dbfs": _num(f.loudness.sample_peak_dbfs, 1, -120.0, 30.0),
        "loudness_range_lu": _num(f.loudness.loudness_range_lu, 1, 0.0, 100.0),
        "loudness_curve": {"hop_s": hop, "short_term_lufs": _curve(
            f.loudness.short_term_lufs, f.loudness.curve_hop_s, hop, 1, SILENCE_LUFS, 10.0)},
        "energy_curve": {"hop_s": hop, "values": _curve(
            f.structure.energy_curve, f.structure.curve_hop_s, hop, 3, 0.0, 1.0)},
        "beat_strength": _num(r.beat_strength, 3, 0.0, 1.0),
        "tempo_confidence": _num(r.tempo_confidence, 3, 0.0, 1.0),
        "tempo_salient": bool(r.tempo_salient),
        "genre_candidates": tuple({"key": k, "name": GENRES[k]["name"], "score": s}
                                  for k, s in j.guess.candidates[:3]),
        "subgenre": _label_guess(j.guess.key, r.bpm, f.spectrum.bands_pct),
        "target_name": j.profile["name"],
        "references": tuple(j.profile.get("references", ())),
        "targets": {"loudness_lufs": j.profile["loudness_lufs"][status],
                    "true_peak_max_dbtp": TRUE_PEAK_MAX_DBTP[status],
                    "crest_db": j.profile["crest_db"], "lra_lu": j.profile["lra_lu"],
                    "bpm_range": j.profile["bpm_range"], "structure": j.profile["structure"],
                    "width": j.profile.get("width")},
        "pillars": {"danceability": {"parts": p["danceability"].parts},
                    "mix_quality": {"penalties": p["mix_quality"].penalties},
                    "frequency_balance": {"band_delta_db": p["frequency_balance"].parts},
                    "energy": {"parts": p["energy"].parts},
                    "structure": {"parts": p["structure"].parts}},
        "headline_penalties": j.penalties,
        "noise_floor_db": None if floor is None else _num(floor.floor_db, 1, -200.0, 50.0),
        "low_rolloff_hz": _num(f.spectrum.low_rolloff_hz, 0, 0.0, 1000.0),
        "electronic_fit": _num(j.guess.electronic, 2, 0.0, 1.0),
        "electronic": bool(j.guess.is_electronic),
        "timing_spread_ms": (None if r.timing_spread_ms is None or not r.tempo_salient
                             or r.timed_onsets < TIMING_MIN_ONSETS
                             else _num(r.timing_spread_ms, 1, 0.0, 1000.0)),
        "loudness_spread_lu": _num(S.loudness_spread(f), 1, 0.0, 100.0),
        "section_loudness_lufs": tuple(_num(v, 1, SILENCE_LUFS, 10.0) for v in
                                       S.section_loudness(f, [(x.start, x.end) for x in sections])),
    }
    return Extras(**_jsonable_top(extras))


def _mix(f: Features, score: int) -> Mix:
    return Mix(loudness_lufs=_num(f.loudness.integrated_lufs, 1, SILENCE_LUFS, 10.0),
               dynamic_range_db=_num(f.loudness.loudness_range_lu, 1, 0.0, 100.0),
               dynamic_complexity=_num(f.dynamics.dynamic_complexity_db, 2, 0.0, 100.0),
               crest_factor_db=_num(f.dynamics.crest_factor_db, 1, 0.0, 200.0),
               peak_dbfs=_num(f.loudness.true_peak_dbtp, 1, -120.0, 30.0),
               stereo_width=_num(f.stereo.width, 3, 0.0, 1.0),
               stereo_correlation=_num(np.nan_to_num(f.stereo.correlation, nan=0.0), 3, -1.0, 1.0),
               clipping_pct=_num(f.dynamics.clipping_pct, 3, 0.0, 100.0), score=score)


def _levels(f: Features) -> BandLevels | None:
    levels = f.spectrum.band_levels_db
    if levels is None:
        return None
    return BandLevels.from_mapping({b: _num(levels[b], 2, -120.0, 30.0) for b in BAND_NAMES})


def _delivery(f: Features, mix: Mix) -> Delivery:
    """Platforms from the document's loudness and true peak; the mono fold-down
    (a file measured without one reads as mono); codecs when previewed."""
    codecs = None if f.codecs is None else tuple(
        CodecCheck(codec=c.codec, bitrate_kbps=c.bitrate_kbps, true_peak_dbtp=peak,
                   true_peak_rise_db=_num(c.true_peak_dbtp - f.loudness.true_peak_dbtp, 1, -150.0, 150.0),
                   clips=peak > 0.0)         # as shown: a peak that reads 0.0 passes
        for c in f.codecs for peak in (_num(c.true_peak_dbtp, 1, -120.0, 30.0),))
    fold = f.mono if f.mono is not None else MonoFold.of_mono()
    return delivery_checks(loudness_lufs=mix.loudness_lufs, true_peak_dbtp=mix.peak_dbfs,
                           mono=fold, codecs=codecs)


def _key(f: Features) -> KeyResult | None:
    key = f.tonality.key
    if key is None:
        return None
    return KeyResult(key=key.tonic, scale=key.scale, camelot=key.camelot,
                     confidence=_num(key.confidence, 2, 0.0, 1.0),
                     open_key=open_key_for(key.tonic, key.scale),
                     alternatives=tuple(KeyAlternative(key=k.tonic, scale=k.scale, camelot=k.camelot,
                                                       open_key=open_key_for(k.tonic, k.scale),
                                                       confidence=_num(k.confidence, 2, 0.0, 1.0))
                                        for k in key.alternatives[:2]))


def build_analysis(features: Features, *, file_name: str, mastering_status: str,
                   genre: str | None = None, references: tuple[Reference, ...] = ()) -> Analysis:
    """Scores, grade, genre, template diagnosis ("pending") and feedback,
    against the detected family, `genre` or the `references` (see `judge`)."""
    from trackgrade.grading.diagnosis import template_diagnosis
    from trackgrade.grading.feedback import feedback_items

    status = check_mastering_status(mastering_status)
    f = features
    j = judge(f, status, genre=genre, references=tuple(references))
    p = j.pillars
    duration = _num(f.duration_s, 2, 0.0)
    sections = _sections(f, duration, part=j.part, electronic=j.guess.is_electronic)
    mix = _mix(f, p["mix_quality"].score)
    draft = Analysis(
        file_name=file_name, mastering_status=status, duration_seconds=duration,
        score=j.score, grade=grade_for(j.score, part=j.part),
        scores=Scores(hit_potential=j.score, **{k: v.score for k, v in p.items()}),
        tempo=Tempo(bpm=_num(f.rhythm.bpm, 1, 0.0, 300.0),
                    regularity=_num(f.rhythm.regularity, 2, 0.0, 1.0),
                    confidence=_num(f.rhythm.tempo_confidence, 2, 0.0, 1.0),
                    alternatives=tuple(TempoAlternative.from_reading(r)
                                       for r in f.rhythm.tempo_alternatives[:3])),
        key=_key(f),
        genre=GenreResult(detected=j.guess.key, name=genre_name(j.guess),
                          confidence=j.guess.confidence, target=j.target,
                          alternatives=tuple(GenreAlternative(key=k, name=GENRES[k]["name"],
                                                              confidence=_num(p, 2, 0.0, 1.0))
                                             for k, p in j.guess.candidates[1:3])),
        frequency=Frequency(bands=FrequencyBands.from_mapping(round_bands(f.spectrum.bands_pct)),
                            ideal=FrequencyBands.from_mapping(j.profile["ideal_bands"]),
                            centroid_hz=_num(f.spectrum.centroid_hz, 1, 0.0, 24000.0),
                            score=p["frequency_balance"].score, levels_db=_levels(f)),
        mix=mix,
        structure=StructureResult(sections=sections, score=p["structure"].score,
                                  judged=not j.part),
        danceability=Danceability(breakdown=DanceabilityBreakdown(**p["danceability"].parts),
                                  score=p["danceability"].score),
        energy=Energy(score=p["energy"].score, rms_mean=_num(f.dynamics.rms_mean, 4, 0.0, 2.0),
                      onset_rate=_num(f.rhythm.onset_rate, 2, 0.0, 100.0)),
        diagnosis=Diagnosis("pending", "", None, None, None), feedback=(),
        delivery=_delivery(f, mix),
        content=Content(kind=j.content.kind, confidence=_num(j.content.confidence, 2, 0.0, 1.0),
                        part=j.part),
        extras=_extras(f, j, status, sections),
    )
    draft = draft.with_diagnosis(template_diagnosis(draft))
    return replace(draft, feedback=feedback_items(draft))
