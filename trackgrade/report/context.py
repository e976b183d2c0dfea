"""From an Analysis (and its timeline, and reference tracks) to what the
templates show. Every value the page prints is computed here; the templates
only lay it out (and Jinja2 escapes every string)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from trackgrade.display import clock, score_tier
from trackgrade.engine.features import BAND_NAMES
from trackgrade.grading.figures import mix_rows
from trackgrade.grading.wording import (BAND_FRAME_TEXT, band_db, judged_as_part, score_caption,
                                        target_name)
from trackgrade.model import FEEDBACK_TYPES, Analysis, Extras
from trackgrade.pillars import PILLAR_TITLES
from trackgrade.report import charts
from trackgrade.report.timeline import Timeline
from trackgrade.testmode import CANNED_BANNER, CANNED_NOTE, is_canned

TIER_COLOUR = {"great": "#1f8a4c", "good": "#5f9e2f", "fair": "#b7860b", "weak": "#d0651c",
               "poor": "#c53030"}
FEEDBACK_ICON = {"warn": "▲", "tip": "●", "pass": "✓"}


@dataclass(frozen=True)
class ReportTrack:
    """One track on the report: its Analysis and, when the audio was at hand,
    its timeline series."""
    analysis: Analysis
    timeline: Timeline | None = None


@dataclass
class Page:
    track: ReportTrack
    references: list[ReportTrack] = field(default_factory=list)


def score_colour(score: float) -> str:
    return TIER_COLOUR[score_tier(score)]


def extras_of(analysis: Analysis) -> Extras:
    return analysis.extras


def _finite(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


# ---------------------------------------------------------------- tonal balance

def band_rows(analysis: Analysis, references: list[ReportTrack]) -> list[dict]:
    """Per band: its reading in the frequency pillar's frame (`low_end.frame_db`,
    the advice's and the terminal's dB; wording.BAND_FRAME_TEXT) and the
    tolerance the grading allows, the shares of the energy in %, and the first
    reference's reading against the same target."""
    from trackgrade.grading.low_end import frame_db
    from trackgrade.limits import BAND_TOLERANCE_DB

    mine = {b: float(getattr(analysis.frequency.bands, b)) for b in BAND_NAMES}
    target = {b: float(getattr(analysis.frequency.ideal, b)) for b in BAND_NAMES}
    deltas = band_db(analysis)
    ref_deltas = None
    if references:
        theirs = {b: float(getattr(references[0].analysis.frequency.bands, b)) for b in BAND_NAMES}
        ref_deltas = frame_db(theirs, target)
    return [{"band": b, "delta_db": deltas[b],
             "tolerance_db": float(BAND_TOLERANCE_DB[b]), "share_pct": mine[b],
             "target_pct": target[b],
             "ref_delta_db": None if ref_deltas is None else round(float(ref_deltas[i]), 1)}
            for i, b in enumerate(BAND_NAMES)]


# ---------------------------------------------------------------- timeline

def loudness_target(analysis: Analysis) -> tuple[float, float] | None:
    targets = extras_of(analysis).get("targets")
    band = targets.get("loudness_lufs") if isinstance(targets, dict) else None
    try:
        low, high = (float(v) for v in band)
    except (TypeError, ValueError):
        return None
    return (low, high) if math.isfinite(low) and math.isfinite(high) and low < high else None


def loudness_series(analysis: Analysis) -> dict | None:
    curve = extras_of(analysis).get("loudness_curve")
    if not isinstance(curve, dict):
        return None
    hop = _finite(curve.get("hop_s"))
    values = [_finite(v) for v in curve.get("short_term_lufs") or ()]
    if not hop or hop <= 0 or not any(v is not None for v in values):
        return None
    return {"hop": hop, "values": values}


def track_series(item: ReportTrack) -> dict:
    """What charts.timeline draws for one track."""
    a = item.analysis
    loud = extras_of(a).get("section_loudness_lufs") or []
    sections = []
    for i, s in enumerate(a.structure.sections):
        lufs = _finite(loud[i]) if i < len(loud) else None
        sections.append({"start": s.start, "end": s.end, "label": s.label, "energy": s.energy,
                         "lufs": lufs if lufs is not None and lufs > -69.9 else None})
    t = item.timeline
    return {
        "duration": t.duration_s if t else a.duration_seconds, "sections": sections,
        "envelope": ({"hop": t.envelope_hop_s, "peak": t.envelope_peak, "rms": t.envelope_rms}
                     if t else None),
        "loudness": loudness_series(a), "integrated": float(a.mix.loudness_lufs),
        "target": loudness_target(a),
        "correlation": {"hop": t.correlation_hop_s, "values": t.correlation} if t else None,
        "overs": t.overs if t else [], "clipped": t.clipped if t else [],
        "ceiling": t.over_ceiling_dbtp if t else None, "mono": bool(t and t.mono),
    }


def loudness_range(series: list[dict]) -> tuple[float, float]:
    """One LUFS scale for every timeline on the page: 30 LU below a round top."""
    values = [v for s in series for v in ((s["loudness"] or {}).get("values") or ())
              if v is not None]
    tops = values + [s["integrated"] for s in series] + \
        [s["target"][1] for s in series if s["target"]]
    high = math.ceil((max(tops + [-60.0]) + 2) / 3) * 3
    return high - 30.0, float(high)


# ---------------------------------------------------------------- key

def camelot_keys() -> list[dict]:
    from trackgrade.musical_keys import SCALES, TONICS, camelot

    return [{"code": camelot(t, s), "name": t + ("m" if s == "minor" else "")}
            for s in SCALES for t in TONICS]


def compatible_codes(code: str) -> list[str]:
    """The harmonic-mixing neighbours: ±1 on the same ring and the relative key."""
    from trackgrade.musical_keys import camelot_neighbours

    return camelot_neighbours(code)


def key_block(analysis: Analysis, references: list[ReportTrack]) -> dict:
    keys = camelot_keys()
    names = {k["code"]: k["name"] for k in keys}
    key = analysis.key
    code = key.camelot if key is not None else None
    compatible = compatible_codes(code) if code else []
    ref_codes = [r.analysis.key.camelot for r in references if r.analysis.key is not None]
    return {"wheel": charts.camelot_wheel(keys, code, ref_codes, compatible),
            "key": key, "compatible": [{"code": c, "name": names.get(c, "")} for c in compatible],
            "references": [{"name": r.analysis.file_name,
                            "code": r.analysis.key.camelot if r.analysis.key else None,
                            "key": (f"{r.analysis.key.key} {r.analysis.key.scale}"
                                    if r.analysis.key else None)} for r in references]}


# ---------------------------------------------------------------- the page

def facts(analysis: Analysis) -> list[dict]:
    key = analysis.key
    mix = analysis.mix
    subgenre = extras_of(analysis).get("subgenre")
    from trackgrade.grading.wording import genre_reading, percent_sure, reading

    genre_note = percent_sure(analysis.genre.confidence).strip(" ()")
    if isinstance(subgenre, str) and subgenre != analysis.genre.detected:
        from trackgrade.grading.genres import GENRES

        if subgenre in GENRES:
            genre_note = f"closest to {GENRES[subgenre]['name']} · {genre_note}"
    tempo_conf = getattr(analysis.tempo, "confidence", None)
    if tempo_conf is None:
        tempo_conf = _finite(extras_of(analysis).get("tempo_confidence"))
    return [
        {"id": "tempo", "title": "Tempo", "value": reading(f"{analysis.tempo.bpm:.1f}", tempo_conf),
         "unit": "BPM",
         "note": (f"confidence {tempo_conf:.2f}" if tempo_conf is not None and tempo_conf >= 0.1
                  else f"regularity {analysis.tempo.regularity:.2f}")},
        {"id": "key", "title": "Key",
         "value": reading(f"{key.key} {key.scale}", key.confidence) if key else "no tonal centre",
         "badge": key.camelot if key else None,
         "note": percent_sure(key.confidence).strip(" ()") if key else ""},
        {"id": "genre", "title": "Genre", "value": genre_reading(analysis), "note": genre_note},
        {"id": "loudness", "title": "Loudness", "value": f"{mix.loudness_lufs:.1f}",
         "unit": "LUFS", "note": f"range {mix.dynamic_range_db:.1f} LU"},
        {"id": "peak", "title": "True peak", "value": f"{mix.peak_dbfs:+.1f}", "unit": "dBTP",
         "note": f"clipping {mix.clipping_pct:.3f} %"},
        {"id": "length", "title": "Length", "value": clock(analysis.duration_seconds),
         "note": analysis.mastering_status},
    ]


def pillars(analysis: Analysis, references: list[ReportTrack]) -> list[dict]:
    ref = references[0].analysis if references else None
    out = []
    for field_name, title in PILLAR_TITLES.items():
        value = int(getattr(analysis.scores, field_name))
        ref_value = int(getattr(ref.scores, field_name)) if ref is not None else None
        out.append({"title": title, "value": value, "colour": score_colour(value),
                    "ref": ref_value})
    return out


def mix_table(analysis: Analysis, references: list[ReportTrack]) -> list[dict]:
    ref_rows = (mix_rows(references[0].analysis.mix, analysis.mastering_status)
                if references else None)
    return [{"label": label, "value": value, "note": note,
             "ref": ref_rows[i][1] if ref_rows else None}
            for i, (label, value, note) in enumerate(mix_rows(analysis.mix,
                                                              analysis.mastering_status))]


def structure_rows(series: dict) -> list[dict]:
    return [{"label": s["label"], "start": clock(s["start"]), "end": clock(s["end"]),
             "energy": s["energy"], "lufs": s["lufs"],
             "colour": charts.SECTION_COLOURS.get(s["label"], "#cfd4de")}
            for s in series["sections"]]


def feedback(analysis: Analysis) -> list[dict]:
    items = sorted(analysis.feedback, key=lambda item: FEEDBACK_TYPES.index(item.type))
    return [{"type": i.type, "icon": FEEDBACK_ICON.get(i.type, "•"), "category": i.category,
             "text": i.text} for i in items]


def build(page: Page) -> dict:
    """The whole template context."""
    from trackgrade.grading.wording import caption, percent_sure, reading

    a = page.track.analysis
    refs = page.references
    series = [track_series(page.track)] + [track_series(r) for r in refs]
    lufs_range = loudness_range(series)
    timelines = [{"name": a.file_name, "reference": False, "series": series[0],
                  "chart": charts.timeline(series[0], loudness_range=lufs_range)}]
    for ref, s in zip(refs, series[1:]):
        timelines.append({"name": ref.analysis.file_name, "reference": True, "series": s,
                          "chart": charts.timeline(s, loudness_range=lufs_range)})
    return {
        "a": a, "colour": score_colour(a.score), "tier": score_tier(a.score),
        "clock": clock, "facts": facts(a), "pillars": pillars(a, refs),
        "references": [{"name": r.analysis.file_name, "score": r.analysis.score,
                        "grade": r.analysis.grade.letter} for r in refs],
        "tonal": charts.tonal_balance(band_rows(a, refs), target_name=target_name(a),
                                      reference_name=refs[0].analysis.file_name if refs else None),
        "band_frame": BAND_FRAME_TEXT,
        "timelines": timelines, "key": key_block(a, refs), "mix": mix_table(a, refs),
        "structure": structure_rows(series[0]), "feedback": feedback(a),
        "truncated": bool(extras_of(a).get("truncated")),
        "gauge": gauge(a.score), "caption": caption(a),
        "score_caption": score_caption(judged_as_part(a)),
        "key_reading": (reading(f"{a.key.key} {a.key.scale}", a.key.confidence) if a.key else ""),
        "key_sure": percent_sure(a.key.confidence).strip(" ()") if a.key else "",
        "canned": ({"banner": CANNED_BANNER, "note": CANNED_NOTE} if is_canned(a) else None),
    }


def gauge(score: int) -> dict:
    radius = 52
    circumference = 2 * math.pi * radius
    filled = circumference * max(0, min(100, score)) / 100
    return {"r": radius, "dash": f"{filled:.1f} {circumference:.1f}"}
