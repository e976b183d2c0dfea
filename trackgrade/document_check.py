"""Check an Analysis document (a dict, as served or printed) against spec
section 2 and CONTRACT.md. `validate_document(doc)` returns a list of
problems (empty = valid); tests of the grading, the server and the CLI share it.

The shape (types, fields, ranges, rounding, vocabularies) comes from model.py
through trackgrade/document.py; this module adds the rules that tie fields
together (the grade letter of the score, the Camelot code of the key, bands
that sum to 100, sections that tile the track, ...).

It accepts the library's `Analysis.to_dict()` and the server's full document
(with `object`, `id`, `status`, ...). With `status` "processing" or "failed"
the score fields must be absent; otherwise every field is checked.
"""

from __future__ import annotations

from trackgrade.document import Problems, check_object, library_fields, result_fields
from trackgrade.engine.features import BAND_NAMES, PART_LABEL, TEMPO_RELATIONS
from trackgrade.grading.content import MIX
from trackgrade.limits import PART_MAX_S
from trackgrade.grading.genres import GENRES
from trackgrade.grading.grade import GRADE_TABLE
from trackgrade.musical_keys import camelot as camelot_for
from trackgrade.musical_keys import open_key as open_key_for
from trackgrade.model import Analysis
from trackgrade.server.resource import ENVELOPE
from trackgrade.status import COMPLETE, FAILED, PROCESSING

ENVELOPE_FIELDS = tuple(ENVELOPE)          # the server's own fields around the document
HEADER_FIELDS = ("file_name", "mastering_status", "diagnosis_status")


def letter_for(score: int) -> str:
    return next(letter for bound, letter, _ in GRADE_TABLE if score >= bound)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _get(doc, *path):
    """doc[path...] or None when any step is missing or not an object/list."""
    for step in path:
        try:
            doc = doc[step]
        except (KeyError, IndexError, TypeError):
            return None
    return doc


def _headline(p: Problems, doc: dict) -> None:
    score, letter = doc["score"], _get(doc, "grade", "letter")
    if isinstance(score, int) and not isinstance(score, bool) and 0 <= score <= 100 \
            and letter is not None and letter != letter_for(score):
        p.add("grade.letter", f"{letter!r} does not match score {score}")
    if isinstance(doc["scores"], dict):
        if doc["scores"].get("hit_potential") != score:
            p.add("scores.hit_potential", "differs from the headline score")
        for pillar, path in (("frequency_balance", "frequency"), ("mix_quality", "mix")):
            mine = _get(doc, path, "score")
            if mine is not None and mine != doc["scores"].get(pillar):
                p.add(f"{path}.score", f"differs from scores.{pillar}")


def _tempo(p: Problems, tempo) -> None:
    bpm = _get(tempo, "bpm")
    for i, alt in enumerate(_get(tempo, "alternatives") or []):
        relation = _get(alt, "relation")
        if relation in TEMPO_RELATIONS and _number(_get(alt, "bpm")) and _number(bpm):
            want = bpm * TEMPO_RELATIONS[relation]
            if abs(alt["bpm"] - want) > 0.02 * want + 0.1:
                p.add(f"tempo.alternatives[{i}].bpm",
                      f"{alt['bpm']!r} is not {relation} of {bpm!r}")


def _key_codes(p: Problems, key, path: str) -> None:
    tonic, scale = _get(key, "key"), _get(key, "scale")
    try:
        camelot, open_key = camelot_for(tonic, scale), open_key_for(tonic, scale)
    except (KeyError, ValueError, TypeError):
        return                      # the shape check names the bad tonic or scale
    if key.get("camelot") != camelot:
        p.add(f"{path}.camelot", f"{key.get('camelot')!r} is not the Camelot code of {tonic} {scale}")
    if key.get("open_key") != open_key:
        p.add(f"{path}.open_key", f"{key.get('open_key')!r} is not the Open Key code of {tonic} {scale}")


def _genre_name(p: Problems, genre) -> None:
    detected = _get(genre, "detected")
    if detected in GENRES:
        family = GENRES[detected]["name"]
        if _get(genre, "name") not in (family, f"Not electronic (nearest: {family})"):
            p.add("genre.name", f"{genre.get('name')!r} is not the name of {detected!r}")


def _bands_sum(p: Problems, bands, path: str) -> None:
    if not isinstance(bands, dict) or not all(_number(bands.get(b)) for b in BAND_NAMES):
        return
    total = sum(bands[b] for b in BAND_NAMES)
    if abs(total - 100.0) > 0.1 + 1e-9 and total != 0:
        p.add(path, f"bands sum to {total:.3f}, not 100 (+-0.1)")


def _sections(p: Problems, doc: dict) -> None:
    sections = _get(doc, "structure", "sections")
    if not isinstance(sections, list):
        return
    prev_end = 0.0
    for i, s in enumerate(sections):
        start, end = _get(s, "start"), _get(s, "end")
        if not (_number(start) and _number(end)):
            return
        if abs(start - prev_end) > 1e-6:
            p.add(f"structure.sections[{i}].start",
                  f"{start} does not continue the previous end {prev_end}")
        if end <= start:
            p.add(f"structure.sections[{i}]", f"empty or reversed section {start}..{end}")
        prev_end = end
    duration = doc.get("duration_seconds")
    if sections and _number(duration) and abs(prev_end - duration) > 0.011:
        p.add("structure.sections", f"end at {prev_end}, not at duration_seconds {duration}")


def _content(p: Problems, doc: dict) -> None:
    """CONTRACT.md section 6: `content.part` is the one test of a part, and a
    part has `structure.judged` false and one section labelled `part`."""
    content = doc.get("content")
    if not isinstance(content, dict) or not isinstance(content.get("part"), bool):
        return
    duration, kind = doc.get("duration_seconds"), content.get("kind")
    if _number(duration) and isinstance(kind, str):
        expected = kind != MIX or duration < PART_MAX_S
        if content["part"] != expected:
            p.add("content.part", f"{content['part']} for a {kind} of {duration} s")
    if _get(doc, "structure", "judged") is not (not content["part"]):
        p.add("structure.judged", "must be `not content.part`")
    sections = _get(doc, "structure", "sections")
    if content["part"] and isinstance(sections, list) and [
            s.get("label") for s in sections if isinstance(s, dict)] != [PART_LABEL]:
        p.add("structure.sections", "a part has one section labelled `part`")


def _related(p: Problems, doc: dict) -> None:
    """The rules between fields of a complete document."""
    _headline(p, doc)
    _tempo(p, doc["tempo"])
    key = doc["key"]
    if isinstance(key, dict):
        _key_codes(p, key, "key")
        for i, alt in enumerate(key.get("alternatives") or []):
            if isinstance(alt, dict):
                _key_codes(p, alt, f"key.alternatives[{i}]")
    _genre_name(p, doc["genre"])
    for name in ("bands", "ideal"):
        _bands_sum(p, _get(doc, "frequency", name), f"frequency.{name}")
    _sections(p, doc)
    _content(p, doc)
    status = _get(doc, "diagnosis", "status")
    if "diagnosis_status" in doc and status is not None and status != doc["diagnosis_status"]:
        p.add("diagnosis.status", "differs from diagnosis_status")


def validate_document(doc: dict) -> list[str]:
    """Every problem found in an Analysis document (empty list = valid)."""
    if not isinstance(doc, dict):
        return [f"document: expected an object, got {type(doc).__name__}"]
    p = Problems()
    allowed = set(library_fields()) | set(ENVELOPE_FIELDS)
    for name in doc:
        if name not in allowed:
            p.add(name, "unexpected field")
    if "object" in doc and doc["object"] != "analysis":
        p.add("object", f"expected 'analysis', got {doc['object']!r}")
    status = doc.get("status", COMPLETE)
    if status in (PROCESSING, FAILED):
        check_object(doc, Analysis, "document", p, only=HEADER_FIELDS)
        present = [f for f in result_fields() if f in doc and f != "key"]
        if present:
            p.add("document", f"status {status!r} but score fields present: {present}")
        return list(p)
    if status != COMPLETE:
        p.add("status", f"unknown status {status!r}")
    library_part = {k: v for k, v in doc.items() if k not in ENVELOPE_FIELDS}
    missing = [f for f in library_fields() if f not in doc]
    if missing:
        p.add("document", f"missing {missing}")
        return list(p)
    check_object(library_part, Analysis, "document", p)
    _related(p, doc)
    return list(p)
