"""One home for the Analysis document's shape: model.py's dataclasses.

The served OpenAPI schema and the document checker are derived from them
(trackgrade/document.py), so they agree with each other and with what the
library writes, and a field added to the model reaches both unwritten."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, fields

import jsonschema_rs
import pytest

from trackgrade import document
from trackgrade.grading import build_analysis
from trackgrade.grading.scores import DANCE_WEIGHTS
from tests import document_check
from tests.document_check import validate_document
from trackgrade.model import Analysis, DanceabilityBreakdown
from trackgrade.model_fields import pct, spec, unit
from trackgrade.server import openapi
from trackgrade.testmode import canned_analysis

from tests.grading.factory import make_features


def served_validator():
    """A JSON Schema validator for the served Analysis resource, built from the
    OpenAPI document exactly as it is served (refs resolved against it)."""
    doc = json.loads(json.dumps(openapi.document()))
    schema = {**doc["components"]["schemas"]["Analysis"], "components": doc["components"]}
    return jsonschema_rs.Draft202012Validator(schema)


def served(result: dict) -> dict:
    return {"object": "analysis", "id": "0b6f1a3e-8c1e-4a55-9d3e-0d7f5b1c2a10",
            "status": "complete", "livemode": False, "external_id": None,
            "created_at": "2026-01-01T00:00:00Z", "completed_at": "2026-01-01T00:00:09Z",
            **result}


DOCS = {
    "canned": canned_analysis("kick.wav", "pre-master").to_dict(),
    "built": build_analysis(make_features(), file_name="v.wav", mastering_status="master").to_dict(),
}


@pytest.mark.parametrize("name", DOCS)
def test_library_documents_fit_the_served_schema_and_the_checker(name):
    doc = served(DOCS[name])
    assert validate_document(doc) == []
    errors = [e.message for e in served_validator().iter_errors(doc)]
    assert errors == []


@pytest.mark.parametrize("path,value", [
    ("score", 101), ("tempo.bpm", "fast"), ("key.scale", "dorian"), ("genre.detected", "polka"),
    ("frequency.bands.air", -1.0), ("structure.sections", []), ("feedback.0.type", "info"),
    ("mix.surprise", 1), ("diagnosis.summary", ""), ("tempo.alternatives", [{}] * 4),
])
def test_schema_and_checker_refuse_the_same_breakage(path, value):
    doc = served(copy.deepcopy(DOCS["canned"]))
    target = doc
    parts = path.split(".")
    for p in parts[:-1]:
        target = target[int(p)] if p.isdigit() else target[p]
    target[int(parts[-1]) if parts[-1].isdigit() else parts[-1]] = value
    assert validate_document(doc), path
    assert not served_validator().is_valid(doc), path


def test_every_model_field_is_in_the_served_schema():
    schema = openapi.document()["components"]["schemas"]["Analysis"]["properties"]
    names = [f.name for f in fields(Analysis) if f.metadata.get("document", True)]
    assert set(names) | {"diagnosis_status"} <= set(schema)
    assert "extras" not in schema
    assert tuple(DOCS["canned"]) == document.library_fields()


def test_a_new_field_reaches_schema_and_checker_unwritten():
    @dataclass(frozen=True)
    class Probe:
        level_db: float = spec(lo=-60, hi=0, decimals=1)
        clips: bool = spec()
        codec: str = spec(choices=("mp3", "aac"))
        rating: int = pct()
        share: float | None = unit()
        notes: tuple[str, ...] = spec(max_items=2)

    schema = document.json_schema(Probe)
    assert schema["required"] == ["level_db", "clips", "codec", "rating", "share", "notes"]
    assert schema["properties"]["level_db"] == {"type": "number", "minimum": -60, "maximum": 0,
                                                "x-decimals": 1}
    assert schema["properties"]["share"]["type"] == ["number", "null"]
    assert schema["properties"]["codec"]["enum"] == ["mp3", "aac"]
    good = {"level_db": -3.5, "clips": False, "codec": "aac", "rating": 40, "share": None,
            "notes": ["a"]}
    assert list(document_check.check(good, Probe)) == []
    bad = {"level_db": -3.55, "clips": "no", "codec": "ogg", "rating": 40.0, "share": 2,
           "notes": ["a", "b", "c"], "extra": 1}
    problems = "\n".join(document_check.check(bad, Probe))
    for what in ("level_db: -3.55 not rounded", "clips: expected true or false",
                 "codec: 'ogg' not one of", "rating: expected an integer", "share: 2 outside",
                 "notes: 3 items", "unexpected ['extra']"):
        assert what in problems, what


def test_danceability_weights_live_beside_their_parts():
    parts = [f.name for f in fields(DanceabilityBreakdown)]
    assert list(DANCE_WEIGHTS) == parts
    assert sum(DANCE_WEIGHTS.values()) == pytest.approx(1.0)
    described = openapi.document()["components"]["schemas"]["Analysis"]["properties"][
        "danceability"]["properties"]["breakdown"]["properties"]
    assert described["beat_strength"]["description"].endswith("0.2")
