"""Parts (CONTRACT.md section 5): audio under 60 s is a loop, an excerpt, a
stem or a one-bar break. Its sections are reported, but nothing gives
arrangement advice, `structure.judged` is false and the structure pillar is not
in `score`; a full track (60 s or more) is judged as before."""

import re

import pytest

from trackgrade.grading import build_analysis
from trackgrade.grading.diagnosis import enhanced_diagnosis
from trackgrade.grading.grade import grade_for
from trackgrade.grading.scores import PILLAR_WEIGHTS, electronic_factor
from tests.document_check import validate_document

from .factory import make_features

# the arrangement vocabulary: a part hears none of it
ARRANGEMENT = re.compile(r"\b(breakdowns?|buildups?|drops?|intros?|outros?|flat)\b", re.I)
PART_CLUB = (("intro", 0.0, 5.0, 45), ("buildup", 5.0, 9.0, 60), ("drop", 9.0, 20.0, 90),
             ("breakdown", 20.0, 24.0, 40), ("drop", 24.0, 28.0, 92), ("outro", 28.0, 30.0, 50))
PART_FLAT = (("drop", 0.0, 15.0, 95), ("drop", 15.0, 30.0, 96))


def grade(f):
    a = build_analysis(f, file_name="loop.wav", mastering_status="master")
    return a.with_diagnosis(enhanced_diagnosis(a)), a


def texts(*analyses) -> list[str]:
    out = []
    for a in analyses:
        d = a.diagnosis
        out += [d.summary, d.frequency or "", d.mix or "", d.danceability or ""]
        out += [i.text for i in a.feedback]
    return out


@pytest.mark.parametrize("sections", [PART_CLUB, PART_FLAT], ids=["club", "flat"])
def test_a_part_gets_no_arrangement_advice(sections):
    ready, pending = grade(make_features(sections=sections, duration=30.0))
    assert ready.structure.judged is False and pending.structure.judged is False
    assert len(ready.structure.sections) >= 1                       # sections are still reported
    said = [t for t in texts(ready, pending) if ARRANGEMENT.search(t)]
    assert said == []
    assert any(i.category == "structure" and "part" in i.text for i in ready.feedback)
    doc = ready.to_dict()
    assert doc["structure"]["judged"] is False and validate_document(doc) == []


def test_a_parts_structure_is_not_in_the_score():
    _, club = grade(make_features(sections=PART_CLUB, duration=30.0))
    _, flat = grade(make_features(sections=PART_FLAT, duration=30.0))
    assert flat.scores.structure <= club.scores.structure - 30    # the pillar still differs...
    assert flat.score == club.score                                # ...the headline does not
    weights = {k: w for k, w in PILLAR_WEIGHTS.items() if k != "structure"}
    blend = sum(w * getattr(club.scores, k) for k, w in weights.items()) / sum(weights.values())
    expected = round(blend * electronic_factor(club.extras.electronic_fit)
                     - sum(club.extras.headline_penalties.values()))
    assert club.score == max(0, min(100, expected))
    assert club.grade == grade_for(club.score)


def test_a_full_track_is_judged():
    ready, _ = grade(make_features())                              # 4 minutes
    assert ready.structure.judged is True and ready.to_dict()["structure"]["judged"] is True
    flat = (("drop", 0.0, 120.0, 95), ("drop", 120.0, 240.0, 96))
    flat_ready, _ = grade(make_features(sections=flat))
    assert flat_ready.score < ready.score
    assert any(i.category == "structure" and i.type == "warn" for i in flat_ready.feedback)


@pytest.mark.parametrize("seconds,judged", [(59.9, False), (60.0, True)])
def test_sixty_seconds_is_the_line(seconds, judged):
    sections = (("intro", 0.0, 10.0, 45), ("drop", 10.0, 50.0, 90), ("outro", 50.0, seconds, 50))
    ready, _ = grade(make_features(sections=sections, duration=seconds))
    assert ready.structure.judged is judged
