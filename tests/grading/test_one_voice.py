"""One voice: on every real clip, every statement the product makes about a
band, a ceiling or a loudness range agrees with every other one - the
terminal screen (`--verbose`), the enhanced diagnosis and the feedback.

Bands are in dB against the target everywhere (never percentage points),
the same number for the same band, and a cut is never suggested for a band
under the target nor a boost for one over it."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from trackgrade.cli.render import render_analysis
from trackgrade.engine.features import BAND_NAMES
from trackgrade.grading import build_analysis
from trackgrade.grading.diagnosis import enhanced_diagnosis
from trackgrade.limits import BAND_LABELS, BAND_WORDS

from tests.truth import real_manifest, real_only, real_params

from .real_audio import features

CLIPS = [r["file"] for r in real_manifest() if r["variant"] == "original"
         and r["category"] != "edge-case" and float(r["duration_s"] or 0) >= 2.0]
pytestmark = real_only()
NUMBER = r"([+-]\d+(?:\.\d+)?)"


def screen(analysis) -> str:
    console = Console(record=True, width=240, color_system=None, file=io.StringIO())
    console.print(render_analysis(analysis, verbose=True))
    return console.export_text()


def statements(analysis) -> list[str]:
    d = analysis.diagnosis
    texts = [d.summary, d.frequency or "", d.mix or "", d.danceability or ""]
    texts += [item.text for item in analysis.feedback]
    # sentences (a sentence names one band)
    return [s for t in texts for s in re.split(r"(?<=[.;])\s+", t)]


def band_numbers(analysis, text_screen: str) -> dict[str, set]:
    """band -> {(value, unit)} from every statement and the table's dB column."""
    found = {b: set() for b in BAND_NAMES}
    for sentence in statements(analysis):
        for b in BAND_NAMES:
            label = re.escape(BAND_LABELS[b])
            for m in re.finditer(label + r"\s*:?\s*" + NUMBER + r"\s*(dB|%|pp|points)", sentence,
                                 re.I):
                found[b].add((float(m.group(1)), m.group(2)))
    for line in text_screen.splitlines():
        for b in BAND_NAMES:
            m = re.match(r"\s*" + re.escape(BAND_WORDS[b].title) + r"\s+\d+-\S+\s.*?" + NUMBER
                         + r"\s+±", line)
            if m:
                found[b].add((float(m.group(1)), "dB"))
    return found


@pytest.fixture(scope="module")
def rendered():
    out = {}
    for clip in CLIPS:
        a = build_analysis(features(clip), file_name=clip.rsplit("/", 1)[-1],
                           mastering_status="master")
        a = a.with_diagnosis(enhanced_diagnosis(a))
        out[clip] = (a, screen(a))
    return out


def test_every_real_clip_is_rendered(rendered):
    assert len(rendered) >= 40


@pytest.mark.parametrize("clip", real_params(CLIPS, ids=lambda c: c.rsplit("/", 1)[-1]))
def test_no_two_statements_contradict(rendered, clip):
    a, text = rendered[clip]
    numbers = band_numbers(a, text)
    for band, values in numbers.items():
        assert values, f"the table must show {band}"
        assert {unit for _, unit in values} == {"dB"}, (band, values)
        assert len({v for v, _ in values}) == 1, (band, values)      # one number, one sign
    sign = {b: next(iter(v))[0] for b, v in numbers.items()}
    for sentence in statements(a):
        for b in BAND_NAMES:
            label = BAND_LABELS[b].lower()
            s = sentence.lower()
            if label not in s:
                continue
            if re.search(r"\bcut\b", s):
                assert sign[b] > 0, (b, sign[b], sentence)
            if re.search(r"\bboost\b|bring up", s):
                assert sign[b] < 0, (b, sign[b], sentence)
    joined = " ".join(statements(a)) + "\n" + text
    ceilings = {float(x) for x in re.findall(r"ceiling (?:at |of )?" + NUMBER + r" dBTP", joined)}
    ceilings |= {float(x) for x in re.findall(NUMBER + r" dBTP ceiling", joined)}
    assert len(ceilings) <= 1, ceilings
    ranges = set(re.findall(NUMBER + r" to " + NUMBER + r" LUFS", joined))
    assert len(ranges) <= 1, ranges
