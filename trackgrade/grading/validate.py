"""Check an Analysis document (a dict, as served or printed) against spec
section 2 and CONTRACT.md. `validate_document(doc)` returns a list of
problems (empty = valid); tests of the grading, the server and the CLI share it.

It accepts the library's `Analysis.to_dict()` and the server's full document
(with `object`, `id`, `status`, ...). With `status` "processing" or "failed"
the score fields must be absent; otherwise every field is checked.
"""

from __future__ import annotations

from trackgrade.grading.grade import GRADE_TABLE

import math

from trackgrade.engine.features import BAND_NAMES, SECTION_LABELS, TEMPO_RELATIONS
from trackgrade.grading.genres import GENRES
from trackgrade.grading.limits import MASTERING_STATUSES
from trackgrade.keys import TONICS
from trackgrade.keys import camelot as camelot_for
from trackgrade.keys import open_key as open_key_for

FEEDBACK_TYPES = ("warn", "tip", "pass")
FEEDBACK_CATEGORIES = ("frequency", "mix", "loudness", "dynamics", "stereo", "rhythm",
                       "structure", "key", "genre", "file")
GRADE_BOUNDS = tuple((bound, letter) for bound, letter, _ in GRADE_TABLE)
SCORE_FIELDS = ("score", "grade", "scores", "tempo", "key", "genre", "frequency", "mix",
                "structure", "danceability", "energy", "diagnosis", "feedback", "delivery")
LIBRARY_FIELDS = ("file_name", "mastering_status", "diagnosis_status", "duration_seconds") + SCORE_FIELDS
ENVELOPE_FIELDS = ("object", "id", "status", "livemode", "external_id", "created_at",
                   "completed_at", "error")
PILLARS = ("hit_potential", "danceability", "mix_quality", "frequency_balance", "energy", "structure")
DANCE_PARTS = ("tempo_fitness", "beat_strength", "rhythmic_energy", "bass_presence",
               "groove_clarity", "engine_dance")
KEY_FIELDS = ("key", "scale", "camelot", "open_key", "confidence")
MIX_FIELDS = ("loudness_lufs", "dynamic_range_db", "dynamic_complexity", "crest_factor_db",
              "peak_dbfs", "stereo_width", "stereo_correlation", "clipping_pct", "score")


def letter_for(score: int) -> str:
    return next(letter for bound, letter in GRADE_BOUNDS if score >= bound)


class _Checker:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def fail(self, path: str, what: str) -> None:
        self.problems.append(f"{path}: {what}")

    def obj(self, value, path: str, fields) -> bool:
        if not isinstance(value, dict):
            self.fail(path, f"expected an object, got {type(value).__name__}")
            return False
        missing = [f for f in fields if f not in value]
        extra = [f for f in value if f not in fields]
        if missing:
            self.fail(path, f"missing {missing}")
        if extra:
            self.fail(path, f"unexpected {extra}")
        return not missing

    def number(self, value, path: str, lo=None, hi=None) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(path, f"expected a number, got {value!r}")
            return False
        if not math.isfinite(value):
            self.fail(path, f"not finite: {value!r}")
            return False
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            self.fail(path, f"{value!r} outside [{lo}, {hi}]")
            return False
        return True

    def integer(self, value, path: str, lo=0, hi=100) -> bool:
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(path, f"expected an integer, got {value!r}")
            return False
        return self.number(value, path, lo, hi)

    def string(self, value, path: str, choices=None, nullable=False) -> bool:
        if value is None and nullable:
            return True
        if not isinstance(value, str) or not value:
            self.fail(path, f"expected a non-empty string, got {value!r}")
            return False
        if choices is not None and value not in choices:
            self.fail(path, f"{value!r} not one of {list(choices)}")
            return False
        return True

    def decimals(self, value, path: str, digits: int) -> None:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            if abs(round(value, digits) - value) > 1e-9:
                self.fail(path, f"{value!r} not rounded to {digits} decimals")


def _tempo(c: _Checker, tempo: dict) -> None:
    c.number(tempo["bpm"], "tempo.bpm", 0, 300)
    c.decimals(tempo["bpm"], "tempo.bpm", 1)
    c.number(tempo["regularity"], "tempo.regularity", 0, 1)
    c.number(tempo["confidence"], "tempo.confidence", 0, 1)
    alts = tempo["alternatives"]
    if not isinstance(alts, list) or len(alts) > 3:
        c.fail("tempo.alternatives", f"expected a list of at most 3, got {alts!r}")
        return
    for i, alt in enumerate(alts):
        path = f"tempo.alternatives[{i}]"
        if c.obj(alt, path, ("bpm", "relation", "confidence")):
            c.number(alt["bpm"], f"{path}.bpm", 0, 400)
            c.string(alt["relation"], f"{path}.relation", TEMPO_RELATIONS)
            c.number(alt["confidence"], f"{path}.confidence", 0, 1)
            if alt["relation"] in TEMPO_RELATIONS and isinstance(alt["bpm"], (int, float)) \
                    and isinstance(tempo["bpm"], (int, float)):
                want = tempo["bpm"] * TEMPO_RELATIONS[alt["relation"]]
                if abs(alt["bpm"] - want) > 0.02 * want + 0.1:
                    c.fail(f"{path}.bpm", f"{alt['bpm']!r} is not {alt['relation']} of {tempo['bpm']!r}")


def _key_reading(c: _Checker, key: dict, path: str) -> None:
    ok = c.string(key["key"], f"{path}.key", TONICS) & c.string(key["scale"], f"{path}.scale",
                                                                ("major", "minor"))
    if ok and key["camelot"] != camelot_for(key["key"], key["scale"]):
        c.fail(f"{path}.camelot", f"{key['camelot']!r} is not the Camelot code of {key['key']} {key['scale']}")
    if ok and key["open_key"] != open_key_for(key["key"], key["scale"]):
        c.fail(f"{path}.open_key", f"{key['open_key']!r} is not the Open Key code of {key['key']} {key['scale']}")
    c.number(key["confidence"], f"{path}.confidence", 0, 1)


def _bands(c: _Checker, value, path: str) -> None:
    if not c.obj(value, path, BAND_NAMES):
        return
    ok = all(c.number(value[b], f"{path}.{b}", 0, 100) for b in BAND_NAMES)
    if ok:
        total = sum(value[b] for b in BAND_NAMES)
        if abs(total - 100.0) > 0.1 + 1e-9 and total != 0:
            c.fail(path, f"bands sum to {total:.3f}, not 100 (+-0.1)")
        for b in BAND_NAMES:
            c.decimals(value[b], f"{path}.{b}", 2)


def _scored(c: _Checker, doc: dict) -> None:
    genre_keys = GENRES
    score = doc["score"]
    c.integer(score, "score")
    if c.obj(doc["grade"], "grade", ("letter", "label")) and isinstance(score, int):
        if doc["grade"]["letter"] != letter_for(score):
            c.fail("grade.letter", f"{doc['grade']['letter']!r} does not match score {score}")
        c.string(doc["grade"]["label"], "grade.label")
    if c.obj(doc["scores"], "scores", PILLARS):
        for p in PILLARS:
            c.integer(doc["scores"][p], f"scores.{p}")
        if doc["scores"].get("hit_potential") != score:
            c.fail("scores.hit_potential", "differs from the headline score")
    if c.obj(doc["tempo"], "tempo", ("bpm", "regularity", "confidence", "alternatives")):
        _tempo(c, doc["tempo"])
    key = doc["key"]
    if key is not None and c.obj(key, "key", KEY_FIELDS + ("alternatives",)):
        _key_reading(c, key, "key")
        alts = key["alternatives"]
        if not isinstance(alts, list) or len(alts) > 2:
            c.fail("key.alternatives", f"expected a list of at most 2, got {alts!r}")
        else:
            for i, alt in enumerate(alts):
                if c.obj(alt, f"key.alternatives[{i}]", KEY_FIELDS):
                    _key_reading(c, alt, f"key.alternatives[{i}]")
    if c.obj(doc["genre"], "genre", ("detected", "name", "confidence", "target")):
        g = doc["genre"]
        c.string(g["detected"], "genre.detected", genre_keys)
        c.string(g["target"], "genre.target", (*genre_keys, "reference"))
        if g["detected"] in genre_keys and g["name"] != genre_keys[g["detected"]]["name"]:
            c.fail("genre.name", f"{g['name']!r} is not the name of {g['detected']!r}")
        c.number(g["confidence"], "genre.confidence", 0, 1)
    if c.obj(doc["frequency"], "frequency", ("bands", "ideal", "centroid_hz", "score", "levels_db")):
        fr = doc["frequency"]
        if fr["levels_db"] is not None and c.obj(fr["levels_db"], "frequency.levels_db", BAND_NAMES):
            for b in BAND_NAMES:
                c.number(fr["levels_db"][b], f"frequency.levels_db.{b}", -120, 30)
        _bands(c, fr["bands"], "frequency.bands")
        _bands(c, fr["ideal"], "frequency.ideal")
        c.number(fr["centroid_hz"], "frequency.centroid_hz", 0, 24000)
        c.integer(fr["score"], "frequency.score")
        if isinstance(doc["scores"], dict) and fr["score"] != doc["scores"].get("frequency_balance"):
            c.fail("frequency.score", "differs from scores.frequency_balance")
    if c.obj(doc["mix"], "mix", MIX_FIELDS):
        m = doc["mix"]
        c.number(m["loudness_lufs"], "mix.loudness_lufs", -120, 10)
        c.decimals(m["loudness_lufs"], "mix.loudness_lufs", 1)
        c.number(m["dynamic_range_db"], "mix.dynamic_range_db", 0, 100)
        c.number(m["dynamic_complexity"], "mix.dynamic_complexity", 0, 100)
        c.number(m["crest_factor_db"], "mix.crest_factor_db", 0, 200)
        c.number(m["peak_dbfs"], "mix.peak_dbfs", -200, 30)
        c.number(m["stereo_width"], "mix.stereo_width", 0, 1)
        c.number(m["stereo_correlation"], "mix.stereo_correlation", -1, 1)
        c.number(m["clipping_pct"], "mix.clipping_pct", 0, 100)
        c.integer(m["score"], "mix.score")
        if isinstance(doc["scores"], dict) and m["score"] != doc["scores"].get("mix_quality"):
            c.fail("mix.score", "differs from scores.mix_quality")
    _structure(c, doc)
    if c.obj(doc["danceability"], "danceability", ("breakdown", "score")):
        d = doc["danceability"]
        if c.obj(d["breakdown"], "danceability.breakdown", DANCE_PARTS):
            for p in DANCE_PARTS:
                c.integer(d["breakdown"][p], f"danceability.breakdown.{p}")
        c.integer(d["score"], "danceability.score")
    if c.obj(doc["energy"], "energy", ("score", "rms_mean", "onset_rate")):
        c.integer(doc["energy"]["score"], "energy.score")
        c.number(doc["energy"]["rms_mean"], "energy.rms_mean", 0, 2)
        c.number(doc["energy"]["onset_rate"], "energy.onset_rate", 0, 100)
    _words(c, doc)
    _delivery(c, doc["delivery"])


PLATFORM_KEYS = ("spotify", "apple_music", "youtube", "tidal", "amazon_music", "deezer", "soundcloud")
PLATFORM_OUTCOMES = ("turned_down", "unchanged", "turned_up", "turned_up_limited")


def _delivery(c: _Checker, delivery) -> None:
    """CONTRACT.md section 5, "Delivery checks" (null only for documents of older versions)."""
    if delivery is None or not c.obj(delivery, "delivery", ("platforms", "mono", "codecs")):
        return
    platforms = delivery["platforms"]
    if not isinstance(platforms, list) or [p.get("platform") for p in platforms
                                           if isinstance(p, dict)] != list(PLATFORM_KEYS):
        c.fail("delivery.platforms", f"expected one entry per platform {list(PLATFORM_KEYS)}")
    for i, p in enumerate(platforms if isinstance(platforms, list) else ()):
        path = f"delivery.platforms[{i}]"
        if c.obj(p, path, ("platform", "reference_lufs", "gain_db", "peak_after_gain_dbtp", "outcome")):
            if p["reference_lufs"] is not None:
                c.number(p["reference_lufs"], f"{path}.reference_lufs", -40, 0)
            c.number(p["gain_db"], f"{path}.gain_db", -200, 200)
            c.number(p["peak_after_gain_dbtp"], f"{path}.peak_after_gain_dbtp", -400, 200)
            c.string(p["outcome"], f"{path}.outcome", PLATFORM_OUTCOMES)
    mono = delivery["mono"]
    if c.obj(mono, "delivery.mono", ("correlation", "bands", "low_end_mono")):
        c.number(mono["correlation"], "delivery.mono.correlation", -1, 1)
        if not isinstance(mono["low_end_mono"], bool):
            c.fail("delivery.mono.low_end_mono", "expected a boolean")
        if c.obj(mono["bands"], "delivery.mono.bands", BAND_NAMES):
            for b in BAND_NAMES:
                path = f"delivery.mono.bands.{b}"
                if c.obj(mono["bands"][b], path, ("correlation", "mono_loss_db")):
                    c.number(mono["bands"][b]["correlation"], f"{path}.correlation", -1, 1)
                    c.number(mono["bands"][b]["mono_loss_db"], f"{path}.mono_loss_db", 0, 60)
    codecs = delivery["codecs"]
    if codecs is None:
        return
    if not isinstance(codecs, list):
        c.fail("delivery.codecs", "expected null or an array")
        return
    for i, k in enumerate(codecs):
        path = f"delivery.codecs[{i}]"
        if c.obj(k, path, ("codec", "bitrate_kbps", "true_peak_dbtp", "true_peak_rise_db", "clips")):
            c.string(k["codec"], f"{path}.codec", ("mp3", "aac", "opus"))
            c.integer(k["bitrate_kbps"], f"{path}.bitrate_kbps", 1, 1000)
            c.number(k["true_peak_dbtp"], f"{path}.true_peak_dbtp", -200, 50)
            c.number(k["true_peak_rise_db"], f"{path}.true_peak_rise_db", -200, 200)
            if not isinstance(k["clips"], bool):
                c.fail(f"{path}.clips", "expected a boolean")


def _structure(c: _Checker, doc: dict) -> None:
    if not c.obj(doc["structure"], "structure", ("sections", "score")):
        return
    c.integer(doc["structure"]["score"], "structure.score")
    secs = doc["structure"]["sections"]
    if not isinstance(secs, list) or not secs:
        c.fail("structure.sections", "expected a non-empty array")
        return
    prev_end = 0.0
    for i, s in enumerate(secs):
        p = f"structure.sections[{i}]"
        if not c.obj(s, p, ("start", "end", "label", "energy")):
            return
        if c.number(s["start"], f"{p}.start", 0) and c.number(s["end"], f"{p}.end", 0):
            if abs(s["start"] - prev_end) > 1e-6:
                c.fail(f"{p}.start", f"{s['start']} does not continue the previous end {prev_end}")
            if s["end"] <= s["start"]:
                c.fail(p, f"empty or reversed section {s['start']}..{s['end']}")
            prev_end = s["end"]
        c.string(s["label"], f"{p}.label", SECTION_LABELS)
        c.integer(s["energy"], f"{p}.energy")
    duration = doc.get("duration_seconds")
    if isinstance(duration, (int, float)) and abs(prev_end - duration) > 0.011:
        c.fail("structure.sections", f"end at {prev_end}, not at duration_seconds {duration}")


def _words(c: _Checker, doc: dict) -> None:
    fields = ("status", "summary", "frequency", "mix", "danceability")
    if c.obj(doc["diagnosis"], "diagnosis", fields):
        d = doc["diagnosis"]
        c.string(d["status"], "diagnosis.status", ("pending", "ready"))
        if "diagnosis_status" in doc and d["status"] != doc["diagnosis_status"]:
            c.fail("diagnosis.status", "differs from diagnosis_status")
        c.string(d["summary"], "diagnosis.summary")
        for f in fields[2:]:
            c.string(d[f], f"diagnosis.{f}", nullable=True)
    items = doc["feedback"]
    if not isinstance(items, list):
        c.fail("feedback", "expected an array")
        return
    for i, item in enumerate(items):
        p = f"feedback[{i}]"
        if c.obj(item, p, ("type", "category", "text")):
            c.string(item["type"], f"{p}.type", FEEDBACK_TYPES)
            c.string(item["category"], f"{p}.category", FEEDBACK_CATEGORIES)
            c.string(item["text"], f"{p}.text")


def validate_document(doc: dict) -> list[str]:
    """Every problem found in an Analysis document (empty list = valid)."""
    c = _Checker()
    if not isinstance(doc, dict):
        return [f"document: expected an object, got {type(doc).__name__}"]
    status = doc.get("status", "complete")
    allowed = set(LIBRARY_FIELDS) | set(ENVELOPE_FIELDS)
    for name in doc:
        if name not in allowed:
            c.fail(name, "unexpected field")
    if "object" in doc and doc["object"] != "analysis":
        c.fail("object", f"expected 'analysis', got {doc['object']!r}")
    c.string(doc.get("file_name"), "file_name")
    c.string(doc.get("mastering_status"), "mastering_status", MASTERING_STATUSES)
    c.string(doc.get("diagnosis_status"), "diagnosis_status", ("pending", "ready"))
    if status in ("processing", "failed"):
        present = [f for f in SCORE_FIELDS if f in doc and f != "key"]
        if present:
            c.fail("document", f"status {status!r} but score fields present: {present}")
        return c.problems
    if status != "complete":
        c.fail("status", f"unknown status {status!r}")
    missing = [f for f in LIBRARY_FIELDS if f not in doc]
    if missing:
        c.fail("document", f"missing {missing}")
        return c.problems
    c.number(doc["duration_seconds"], "duration_seconds", 0, 20 * 60 + 1)
    _scored(c, doc)
    return c.problems
