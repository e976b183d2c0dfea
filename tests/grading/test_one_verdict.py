"""One verdict per topic: a feedback category with a warn or a tip has no
pass beside it, and the stereo items agree with the delivery mono check
("Stereo image is healthy and mono-compatible" never beside "low end not
mono"). Real renders through the whole pipeline."""

from __future__ import annotations

import numpy as np
import pytest

from tests.delivery.signals import RATE, club_loop, wav_bytes
from trackgrade.pipeline import analyze


def variant(kind: str, seconds: float = 8.0) -> np.ndarray:
    x = club_loop(seconds).astype(np.float64)
    t = np.arange(len(x)) / RATE
    if kind == "low_end_wide":        # a 100 Hz bass 90 degrees apart in L and R
        x[:, 0] += 0.15 * np.sin(2 * np.pi * 100 * t)
        x[:, 1] += 0.15 * np.sin(2 * np.pi * 100 * t + np.pi / 2)
    elif kind == "mid_antiphase":     # a 1 kHz pad in opposite polarity
        pad = 0.08 * np.sin(2 * np.pi * 1000 * t)
        x[:, 0] += pad
        x[:, 1] -= pad
    return (x / np.abs(x).max() * 0.7).astype(np.float32)


@pytest.fixture(scope="module")
def analyses():
    return {kind: analyze(wav_bytes(variant(kind)), file_name=f"{kind}.wav")
            for kind in ("plain", "low_end_wide", "mid_antiphase")}


def stereo(a) -> list:
    return [f for f in a.feedback if f.category == "stereo"]


def test_no_topic_has_a_pass_beside_a_warn_or_a_tip(analyses):
    for kind, a in analyses.items():
        by_topic: dict[str, set] = {}
        for item in a.feedback:
            by_topic.setdefault(item.category, set()).add(item.type)
        mixed = {topic: types for topic, types in by_topic.items()
                 if "pass" in types and len(types) > 1}
        assert mixed == {}, (kind, mixed)


def test_a_low_end_that_is_not_mono_is_never_called_mono_compatible(analyses):
    a = analyses["low_end_wide"]
    assert a.delivery.mono.low_end_mono is False
    assert 1.0 <= a.delivery.mono.bands.bass.mono_loss_db < 3.0
    (item,) = stereo(a)
    assert item.type == "tip" and "the low end is not mono" in item.text
    assert "mono-compatible" not in item.text and "Bass (60-250 Hz)".lower() in item.text.lower()


def test_a_mono_warning_stands_alone(analyses):
    a = analyses["mid_antiphase"]
    assert a.delivery.mono.bands.mid.mono_loss_db >= 3.0
    assert [f.type for f in stereo(a)] == ["warn"]


def test_other_topics_keep_their_passes(analyses):
    a = analyses["mid_antiphase"]
    passes = {f.category for f in a.feedback if f.type == "pass"}
    flagged = {f.category for f in a.feedback if f.type != "pass"}
    assert passes and not passes & flagged, (passes, flagged)
