"""Readings under 0.1 (CONTRACT.md section 6): a tempo, key, genre or kind read
with a confidence under 0.1 shows as "unclear (best guess: …)" in the
terminal, the HTML report and the badge, never as "0 %"; one function
(`grading.wording.reading`) words it everywhere."""

from __future__ import annotations

import re
from dataclasses import replace

from rich.console import Console

from trackgrade.cli.render import render_analysis
from trackgrade.grading import build_analysis
from trackgrade.grading.diagnosis import enhanced_diagnosis
from trackgrade.grading.wording import caption, document_caption, reading
from trackgrade.model import Content
from trackgrade.report import render_report

from tests.grading.factory import make_features

ZERO_PERCENT = re.compile(r"(?<![\d.])0 ?%")


def unclear_analysis():
    f = make_features(duration=30.0, **{"rhythm.tempo_confidence": 0.04})
    f = replace(f, tonality=replace(f.tonality, key=replace(f.tonality.key, confidence=0.03)))
    a = build_analysis(f, file_name="loop.wav", mastering_status="pre-master")
    a = replace(a, genre=replace(a.genre, confidence=0.02),
                content=Content(kind="drums", confidence=0.05, part=True))
    return a.with_diagnosis(enhanced_diagnosis(a))


def test_one_function_words_an_unclear_reading():
    assert reading("G minor", 0.05) == "unclear (best guess: G minor)"
    assert reading("G minor", 0.1) == "G minor"
    assert reading("G minor", None) == "G minor"


def test_the_terminal_shows_unclear_readings_never_zero_percent():
    a = unclear_analysis()
    console = Console(record=True, width=140)
    console.print(render_analysis(a, verbose=True))
    text = console.export_text()
    assert "unclear (best guess: A minor)" in text
    assert "unclear (best guess: 124.0 BPM)" in text
    assert f"unclear (best guess: {a.genre.name})" in text
    assert "unclear (best guess: drum loop) · 30.0 s" in text
    assert not ZERO_PERCENT.search(text), ZERO_PERCENT.search(text)


def test_the_report_and_the_badge_show_unclear_readings():
    a = unclear_analysis()
    html = render_report(a)
    assert "unclear (best guess: A minor)" in html
    assert f"unclear (best guess: {a.genre.name})" in html
    assert "unclear (best guess: drum loop) · 30.0 s" in html
    assert "0 % confidence" not in html and "0% confidence" not in html
    line = document_caption(a.to_dict())
    assert line == caption(a) == f"unclear (best guess: drum loop) · 30.0 s · unclear (best guess: {a.genre.name})"


def test_a_clear_part_says_what_it_is_first_and_never_not_ready():
    f = make_features(duration=1.75, sections=(("drop", 0.0, 1.75, 90),))
    a = build_analysis(f, file_name="amen.wav", mastering_status="master")
    a = replace(a, content=Content(kind="drums", confidence=0.9, part=True))
    console = Console(record=True, width=140)
    console.print(render_analysis(a))
    text = console.export_text()
    assert "drum loop · 1.8 s" in text
    assert "Not ready" not in text
    assert caption(a).startswith("drum loop · 1.8 s · ")
    from trackgrade.grading.grade import GRADE_TABLE, grade_for

    assert grade_for(20).label == "Not ready"
    assert all("ready" not in grade_for(bound, part=True).label.lower() for bound, _, _ in GRADE_TABLE)
