"""One home for each table: grade letters, the key wheels, the mastering
statuses and the band edges are defined once in the package and imported
everywhere else (a second literal copy is a future contradiction)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trackgrade.musical_keys import SCALES, TONICS, camelot, camelot_neighbours, open_key

PACKAGE = Path(__file__).resolve().parents[1] / "trackgrade"
SOURCES = {p: p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py")}
# a literal list of the letters: none (every list derives from grade.GRADE_TABLE)
LETTER_LIST = r'"A\+",\s*"A",\s*"A-"'
TABLES = {
    "tonic spelling": r'"C#",\s*"D",\s*"Eb"',
    "mastering statuses": r'\(\s*"pre-master",\s*"master"\s*\)|\[\s*"pre-master",\s*"master"\s*\]',
    "band edges": r'\(\s*\(\s*20,\s*60\s*\),\s*\(\s*60,\s*250\s*\)',
    "grade bounds": r'\(\s*95,\s*"A\+"',
    # how the bands are named (a table row, a chart, a narrow column, a sentence)
    "band names": r'"(Low mids?|lo-m|low mids)"',
    # the answers that follow from the route alone (server/routing.py): the app and the
    # connection layer's admission from the request head both use them
    "maintenance answer": r"down for maintenance;",
    "route answers": r"no route \{",
    "maintenance exemptions": r"EXEMPT_FROM_MAINTENANCE\s*=",
    # the pillar list and its titles: trackgrade/pillars.py
    "pillar list": r'"Mix quality"|"mix quality"|"danceability",\s*"mix_quality",\s*"frequency_balance"',
    # the order feedback is shown in: model.FEEDBACK_TYPES (warn, tip, pass)
    "feedback order": r'"warn":\s*0|\(\s*"warn",\s*"tip",\s*"pass"\s*\)',
    # the 503 the engine's queue, the submission and upload routes and the body budget answer
    "engine_at_capacity answer": r'TrackgradeError\(\s*"engine_at_capacity"',
}
# definitions that must exist once: a second one is how two rules drift apart
DEFINED_ONCE = {
    "parse_retry_after": r"^def parse_retry_after\(",
    "GRADE_ORDER": r"^GRADE_ORDER\b",
    "the uploads marker collection": r"^UPLOADS\s*=",
    # the server's fields around the library's document (the envelope schema's required list)
    "the server's envelope fields": r'"external_id",\s*"file_name",\s*"mastering_status"',
}


@pytest.mark.parametrize("table", TABLES)
def test_each_table_is_written_once(table):
    homes = [p.relative_to(PACKAGE).as_posix() for p, text in SOURCES.items()
             if re.search(TABLES[table], text)]
    assert len(homes) == 1, (table, homes)


def test_no_copy_of_the_grade_letters():
    assert not [p.name for p, text in SOURCES.items() if re.search(LETTER_LIST, text)]


def test_the_key_wheels_follow_the_contract():
    assert camelot("A", "minor") == "8A" and camelot("C", "major") == "8B"
    assert open_key("C", "major") == "1d" and open_key("A", "minor") == "1m"
    codes = {camelot(t, s) for t in TONICS for s in SCALES}
    assert len(codes) == 24 and len({open_key(t, s) for t in TONICS for s in SCALES}) == 24
    assert camelot_neighbours("8A") == ["7A", "9A", "8B"]
    assert camelot_neighbours("12B") == ["11B", "1B", "12A"]


@pytest.mark.parametrize("name", DEFINED_ONCE)
def test_each_helper_is_defined_once(name):
    homes = [p.relative_to(PACKAGE).as_posix() for p, text in SOURCES.items()
             if re.search(DEFINED_ONCE[name], text, re.M)]
    assert len(homes) == 1, (name, homes)


def test_the_pillar_list_matches_the_document_and_the_weights():
    from dataclasses import fields

    from trackgrade.grading.scores import PILLAR_WEIGHTS
    from trackgrade.model import Scores
    from trackgrade.pillars import PILLARS

    assert [f.name for f in fields(Scores) if f.name != "hit_potential"] == list(PILLARS)
    assert set(PILLAR_WEIGHTS) == set(PILLARS)


def test_stereo_thresholds_and_the_silence_floor_are_named():
    """The stereo verdicts read limits.MONO_WIDTH / PHASE_CORRELATION_LOW /
    WIDE_WIDTH, and loudness floors engine.features.SILENCE_LUFS (the engine,
    which measures at BS.1770's -70 LUFS gate, is its home): no literal copies."""
    stereo = re.compile(r"stereo_(width|correlation)\s*[<>]=?\s*-?(0\.\d|[1-9])")
    floor = re.compile(r"-70\.0\b")
    found = [p.relative_to(PACKAGE).as_posix() for p, text in SOURCES.items()
             if stereo.search(text) or (floor.search(text) and "engine" not in p.parts)]
    assert found == []


def test_the_status_values_are_written_once():
    """An analysis's status values are trackgrade/status.py's names everywhere
    (a batch row's own "ok"/"failed", cli/rows.py, is another vocabulary)."""
    literal = re.compile(r'(status"?\]?\s*[!=]=\s*|"status":\s*|status\s*=\s*|"enum":\s*\[|'
                         r'status\s+in\s+\(|\.phase\s*=\s*)"(processing|complete|failed|pending|ready)"')
    found = [p.relative_to(PACKAGE).as_posix() for p, text in SOURCES.items()
             if literal.search(text) and p.relative_to(PACKAGE).as_posix() != "cli/rows.py"]
    assert found == []
