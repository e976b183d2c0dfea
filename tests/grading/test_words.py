"""The words a producer reads are true and grammatical (issue 20's rough edges):
units keep their case, counts agree with their nouns, a pre-master as loud as
a master hears that it can be graded as one, and a correlation barely below
zero is not called out of phase."""

from __future__ import annotations

import pytest

from trackgrade.grading import build_analysis
from trackgrade.grading.diagnosis import enhanced_diagnosis

from .factory import HOUSE_BANDS, make_features


def graded(status="master", **changes):
    a = build_analysis(make_features(**changes), file_name="t.wav", mastering_status=status)
    return a.with_diagnosis(enhanced_diagnosis(a))


def texts(a) -> str:
    d = a.diagnosis
    return "\n".join([d.summary, d.mix or "", d.frequency or ""] + [i.text for i in a.feedback])


def test_band_spans_keep_their_units_at_the_start_of_a_sentence():
    loud_top = dict(HOUSE_BANDS, upper_mid=12.0, high=9.0, sub_bass=10.0)
    a = graded(bands={b: v * 100 / sum(loud_top.values()) for b, v in loud_top.items()})
    band_items = [i.text for i in a.feedback if i.category == "frequency" and i.type != "pass"]
    assert any("kHz)" in t for t in band_items), band_items
    assert "khz" not in texts(a) and " hz" not in texts(a)


def test_one_kind_of_section_and_one_section_are_singular():
    a = graded(sections=(("drop", 0.0, 15.0, 90), ("drop", 15.0, 30.0, 40)))
    assert "Only 1 kind of section (drop)" in texts(a)
    flat = graded(sections=(("drop", 0.0, 30.0, 90),))
    assert "moves only 0.0 LU across 1 section (" in texts(flat)
    assert "(s)" not in texts(a) + texts(flat)


@pytest.mark.parametrize("lufs", [-7.5, -9.0])
def test_a_pre_master_as_loud_as_a_master_hears_how_to_grade_it_as_one(lufs):
    a = graded("pre-master", **{"loudness.integrated_lufs": lufs})
    item = next(i for i in a.feedback if i.category == "loudness")
    assert "remove the limiter" in item.text and "--mastering master" in item.text
    quiet = graded("pre-master", **{"loudness.integrated_lufs": -18.0})
    assert "--mastering master" not in texts(quiet)


def test_a_correlation_barely_below_zero_is_not_out_of_phase():
    a = graded(**{"stereo.correlation": -0.04, "stereo.width": 0.52})
    words = texts(a)
    assert "out of phase" not in words and "vanish" not in words
    stereo = next(i for i in a.feedback if i.category == "stereo")
    assert stereo.type == "warn" and "polarity" in stereo.text and "-0.04" in stereo.text


def test_a_correlation_near_minus_one_is_out_of_phase():
    a = graded(**{"stereo.correlation": -0.9, "stereo.width": 0.95})
    stereo = next(i for i in a.feedback if i.category == "stereo")
    assert "out of phase" in stereo.text and "vanish in mono" in stereo.text
    assert "out of phase" in a.diagnosis.mix
