"""Check an Analysis document (a dict, as served or printed) against spec
section 2 and CONTRACT.md. `validate_document(doc)` returns a list of
problems (empty = valid); tests of the grading, the server and the CLI share it.
Only tests use it, so it lives with them, not in the library.

The shape (types, fields, ranges, rounding, vocabularies) is read from the
same field rules of model.py that trackgrade/document.py derives the served
JSON Schema from (`check`, below, walks them and says where a value departs,
path by path); the rest adds the rules that tie fields together (the grade
letter of the score, the Camelot code of the key, bands that sum to 100,
sections that tile the track, ...).

It accepts the library's `Analysis.to_dict()` and the server's full document
(with `object`, `id`, `status`, ...). With `status` "processing" or "failed"
the score fields must be absent; otherwise every field is checked.
"""

from __future__ import annotations

import math
import typing
from dataclasses import is_dataclass

from trackgrade.document import NUMBER_TYPES, _unwrap, choices, library_fields, members, result_fields
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

# ---- the shape, from the field rules of model.py

class Problems(list):
    """`path: what` lines; empty means the value has the shape."""

    def add(self, path: str, what: str) -> None:
        self.append(f"{path}: {what}")


def _is_number(value) -> bool:
    return isinstance(value, NUMBER_TYPES) and not isinstance(value, bool)


def check(value, kind, rules: dict | None = None, path: str = "document",
          problems: Problems | None = None) -> Problems:
    """Every place where `value` (JSON-ready) departs from annotation `kind`
    with `rules`: types, missing and unexpected fields, ranges, rounding,
    vocabularies and array sizes."""
    problems = Problems() if problems is None else problems
    rules = rules or {}
    kind, nullable = _unwrap(kind)
    if value is None:
        if not nullable:
            problems.add(path, "must not be null")
        return problems
    if typing.get_origin(kind) is tuple:
        if not isinstance(value, list):
            problems.add(path, f"expected an array, got {type(value).__name__}")
            return problems
        lo, hi = rules.get("min_items", 0), rules.get("max_items")
        if len(value) < lo or (hi is not None and len(value) > hi):
            problems.add(path, f"{len(value)} items, expected {lo} to {hi if hi is not None else 'any'}")
        item = typing.get_args(kind)[0]
        for i, v in enumerate(value):
            check(v, item, None, f"{path}[{i}]", problems)
    elif is_dataclass(kind):
        check_object(value, kind, path, problems)
    elif kind is bool:
        if not isinstance(value, bool):
            problems.add(path, f"expected true or false, got {value!r}")
    elif kind in NUMBER_TYPES:
        _check_number(value, kind, rules, path, problems)
    elif kind is str:
        allowed = choices(rules)
        if not isinstance(value, str) or not value:
            problems.add(path, f"expected a non-empty string, got {value!r}")
        elif allowed is not None and value not in allowed:
            problems.add(path, f"{value!r} not one of {list(allowed)}")
    elif kind is dict:
        if not isinstance(value, dict):
            problems.add(path, f"expected an object, got {type(value).__name__}")
    return problems


def _check_number(value, kind, rules: dict, path: str, problems: Problems) -> None:
    if kind is int and (not isinstance(value, int) or isinstance(value, bool)):
        problems.add(path, f"expected an integer, got {value!r}")
        return
    if not _is_number(value):
        problems.add(path, f"expected a number, got {value!r}")
        return
    if not math.isfinite(value):
        problems.add(path, f"not finite: {value!r}")
        return
    lo, hi = rules.get("lo"), rules.get("hi")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        problems.add(path, f"{value!r} outside [{lo}, {hi}]")
    digits = rules.get("decimals")
    if digits is not None and abs(round(value, digits) - value) > 1e-9:
        problems.add(path, f"{value!r} not rounded to {digits} decimals")


def check_object(value, kind, path: str, problems: Problems,
                 only: tuple[str, ...] | None = None) -> Problems:
    """An object against a dataclass: exact field set (or `only` those fields
    required), each field checked."""
    if not isinstance(value, dict):
        problems.add(path, f"expected an object, got {type(value).__name__}")
        return problems
    spec = members(kind)
    names = [name for name, _, _ in spec]
    required = names if only is None else list(only)
    missing = [n for n in required if n not in value]
    if missing:
        problems.add(path, f"missing {missing}")
    if only is None:
        extra = [n for n in value if n not in names]
        if extra:
            problems.add(path, f"unexpected {extra}")
    for name, hint, rules in spec:
        if name in value:
            check(value[name], hint, rules, name if path == "document" else f"{path}.{name}",
                  problems)
    return problems


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
