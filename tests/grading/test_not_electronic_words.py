"""Music that is not electronic (CONTRACT.md section 5, tightening section 4):
`genre.name` reads "Not electronic (nearest: <family>)", the summary says so
first and what the score then measures, and no feedback item or diagnosis
sentence speaks of clubs, DJs, drops, breakdowns, buildups, intros or outros.
The real non-electronic clips of ../shared/truth/real (orchestra, jazz,
country, folk, ragtime, waltzes; read in place) and a synthesised acoustic-like
recording, through the real engine."""

import re

import pytest

from trackgrade.grading import build_analysis
from trackgrade.grading.content import KIND_NAMES
from trackgrade.grading.diagnosis import enhanced_diagnosis
from trackgrade.grading.genres import GENRES
from trackgrade.pipeline import analyze

from tests.acoustic_like import acoustic

from tests.truth import need_real, real_params

from .real_audio import features, non_electronic_clips

CLUB = re.compile(r"\b(clubs?|DJs?|drops?|breakdowns?|buildups?|intros?|outros?)\b", re.I)
CLIPS = non_electronic_clips()


def words(a) -> list[str]:
    ready = a.with_diagnosis(enhanced_diagnosis(a))
    out = [i.text for i in a.feedback]
    for d in (a.diagnosis, ready.diagnosis):
        out += [d.summary, d.frequency or "", d.mix or "", d.danceability or ""]
    return out


def check(a):
    family = GENRES[a.genre.detected]["name"]
    assert a.genre.name == f"Not electronic (nearest: {family})"
    assert a.to_dict()["genre"]["name"] == a.genre.name
    if a.content.kind == "mix":
        assert a.diagnosis.summary.startswith("Not electronic music")
        assert "the score measures" in a.diagnosis.summary.split(".")[0] + a.diagnosis.summary
    else:       # a part says what it is first, then what the score measures (section 6)
        assert a.diagnosis.summary.split(":")[0].lower().startswith(KIND_NAMES[a.content.kind])
        assert " for the " in a.diagnosis.summary
    said = [t for t in words(a) if CLUB.search(t)]
    assert said == [], said


@pytest.mark.parametrize("clip", real_params(CLIPS, ids=lambda c: c.rsplit("/", 1)[-1]))
def test_a_real_non_electronic_clip_hears_no_club_words(clip):
    a = build_analysis(features(clip), file_name=clip.rsplit("/", 1)[-1], mastering_status="master")
    if a.extras.electronic:
        assert not a.genre.name.startswith("Not electronic")
        return
    check(a)


def test_most_of_them_are_called_not_electronic():
    need_real()
    flagged = [c for c in CLIPS if not build_analysis(features(c), file_name="x",
                                                       mastering_status="master").extras.electronic]
    assert len(flagged) >= 8, flagged


def test_full_length_non_electronic_pieces_are_judged_without_club_words():
    need_real()
    full = [c for c in CLIPS if features(c).duration_s >= 60]
    assert len(full) >= 3, full
    for clip in full:
        a = build_analysis(features(clip), file_name="x", mastering_status="master")
        assert a.structure.judged is True
        if not a.extras.electronic:
            check(a)


def test_a_synthesised_acoustic_recording():
    a = analyze(acoustic(), file_name="played.wav", mastering_status="master", enhanced=False)
    assert a.structure.judged is True
    check(a)
