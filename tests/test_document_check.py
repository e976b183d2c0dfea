"""The validator catches what it should (mutations of a valid document)."""

import copy

import pytest

from trackgrade.grading import build_analysis
from tests.document_check import camelot_for, open_key_for, validate_document
from trackgrade.testmode import canned_analysis

from tests.grading.factory import make_features

DOC = build_analysis(make_features(), file_name="v.wav", mastering_status="master").to_dict()


def mutate(path, value, source=DOC):
    """A deep copy of `source` with the value at a dotted path set (KeyError: removed)."""
    doc = copy.deepcopy(source)
    parts = path.split(".")
    target = doc
    for p in parts[:-1]:
        target = target[int(p)] if p.isdigit() else target[p]
    last = parts[-1]
    if value is KeyError:
        del target[last]
    else:
        target[int(last) if last.isdigit() else last] = value
    return doc


def test_valid_document_has_no_problems():
    assert validate_document(DOC) == []


@pytest.mark.parametrize("path,value", [
    ("score", 101), ("score", 80.0), ("score", True),
    ("grade.letter", "Z"), ("scores.energy", "50"), ("scores.hit_potential", KeyError),
    ("tempo.bpm", float("nan")), ("tempo.regularity", 1.5),
    ("key.camelot", "9A"), ("key.key", "Db"), ("key.scale", "dorian"), ("key.confidence", 2),
    ("genre.detected", "polka"), ("genre.confidence", -0.1),
    ("frequency.bands.bass", 90.0), ("frequency.ideal.air", KeyError),
    ("mix.stereo_correlation", -2.0), ("mix.score", 55.5),
    ("structure.sections.0.start", 1.0), ("structure.sections.0.label", "chorus"),
    ("structure.sections.0.energy", 101),
    ("danceability.breakdown.groove_clarity", 0.5), ("energy.onset_rate", -1),
    ("diagnosis.status", "ready"), ("diagnosis.summary", ""),
    ("feedback.0.type", "info"), ("feedback.0.category", "vibes"),
    ("mastering_status", "final"), ("surprise", 1),
])
def test_each_broken_field_is_reported(path, value):
    problems = validate_document(mutate(path, value))
    assert problems, f"{path}={value!r} passed"


def test_processing_document_must_not_carry_scores():
    doc = {"object": "analysis", "id": "x", "status": "processing", "diagnosis_status": "pending",
           "file_name": "a.wav", "mastering_status": "master"}
    assert validate_document(doc) == []
    assert validate_document({**doc, "score": 50})


def test_server_envelope_fields_are_accepted():
    doc = {**DOC, "object": "analysis", "id": "0b6f", "status": "complete", "livemode": False,
           "external_id": None, "created_at": "2026-01-01T00:00:00Z", "completed_at": None,
           "error": None}
    assert validate_document(doc) == []


def test_camelot_wheel():
    assert camelot_for("A", "minor") == "8A" and camelot_for("C", "major") == "8B"
    assert camelot_for("E", "minor") == "9A" and camelot_for("G", "major") == "9B"
    assert camelot_for("Ab", "minor") == "1A" and camelot_for("B", "major") == "1B"


def test_open_key_wheel():
    assert open_key_for("C", "major") == "1d" and open_key_for("A", "minor") == "1m"
    assert open_key_for("G", "major") == "2d" and open_key_for("E", "minor") == "2m"
    assert open_key_for("F", "major") == "12d" and open_key_for("F#", "major") == "7d"


CANNED = canned_analysis("kick.wav", "pre-master").to_dict()


def test_canned_document_carries_alternatives():
    assert validate_document(CANNED) == []
    assert CANNED["tempo"]["alternatives"] and len(CANNED["key"]["alternatives"]) == 2


@pytest.mark.parametrize("path,value", [
    ("tempo.confidence", 1.5), ("tempo.confidence", KeyError), ("tempo.alternatives", None),
    ("tempo.alternatives.0.relation", "triple"), ("tempo.alternatives.0.bpm", 333.0),
    ("tempo.alternatives.0.confidence", -0.5), ("key.open_key", "1A"), ("key.open_key", KeyError),
    ("key.alternatives.0.open_key", "13d"), ("key.alternatives.0.camelot", "13B"),
    ("key.alternatives.1.confidence", 7), ("key.alternatives.0.scale", "lydian"),
])
def test_each_broken_reading_is_reported(path, value):
    assert validate_document(mutate(path, value, CANNED)), f"{path}={value!r} passed"
