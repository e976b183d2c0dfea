"""Test mode against the golden files (regenerate: `python -m tests.golden.regen`)."""

import json

import pytest

from tests.document_check import validate_document

from .regen import CASES, golden_case, golden_path


def same_shape_and_values(expected, actual, path="$"):
    """Exact key sets and values, reporting the first difference."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), path
        assert set(expected) == set(actual), f"{path}: keys differ {set(expected) ^ set(actual)}"
        for k in expected:
            same_shape_and_values(expected[k], actual[k], f"{path}.{k}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(expected) == len(actual), path
        for i, (e, a) in enumerate(zip(expected, actual)):
            same_shape_and_values(e, a, f"{path}[{i}]")
    else:
        assert type(expected) is type(actual) and expected == actual, f"{path}: {expected!r} != {actual!r}"


@pytest.mark.parametrize("index", range(len(CASES)))
def test_canned_analysis_matches_golden(index):
    name, status = CASES[index]
    expected = json.loads(golden_path(index).read_text(encoding="utf-8"))
    assert (expected["file_name"], expected["mastering_status"]) == (name, status)
    same_shape_and_values(expected, golden_case(name, status))


@pytest.mark.parametrize("index", range(len(CASES)))
def test_golden_documents_are_valid(index):
    expected = json.loads(golden_path(index).read_text(encoding="utf-8"))
    assert validate_document(expected["analysis"]) == []
    ready = {**expected["analysis"], "diagnosis": expected["enhanced"], "diagnosis_status": "ready"}
    assert validate_document(ready) == []


def test_golden_set_covers_both_statuses_and_several_genres():
    docs = [json.loads(golden_path(i).read_text(encoding="utf-8")) for i in range(len(CASES))]
    assert {d["mastering_status"] for d in docs} == {"pre-master", "master"}
    assert len({d["analysis"]["genre"]["detected"] for d in docs}) >= 3


def test_every_canned_track_reads_its_templates_family():
    """Test mode's canned tracks carry their family's typical measurements, so
    the real genre detector reads the family they were made as (before the
    genre model's prototypes carried onsets, beat and layers, every canned
    track of the style-mixture model read 'unclear' against the broad target)."""
    from trackgrade.testmode import _canned, _Dice, canned_analysis

    missed = []
    for i in range(120):
        name = f"demo_{i}.wav"
        family = _Dice(name).pick(_canned()["templates"])["family"]
        genre = canned_analysis(name).genre
        if genre.target != family or round(genre.confidence, 2) < 0.6:
            missed.append((name, family, genre.target, genre.confidence))
    assert missed == []
