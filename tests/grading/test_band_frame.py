"""Band advice in the frequency pillar's frame (issue 26), on the one balanced
real mix (`BALANCED`, frequency pillar 98) through the real engine, real EQs
on its audio (scipy lfilter/sosfilt, in memory):

- every band is read as the pillar reads it (`low_end.frame_db`): sub and
  bass against the bands from 250 Hz up, each of those by its share of them;
  so a low shelf moves only the two low readings (the terminal's table too);
- a +12 dB low shelf is told first to cut its low end and no band above 250 Hz
  to boost; a +6 dB shelf names the low end; a mids dip is told to boost the
  mids and nothing about the low end; a high-passed mix is told its low end is
  light and nothing above it to cut; the balanced mix gets no EQ advice;
- the advised change, made as a real EQ on the audio, brings the band back
  inside its tolerance;
- the advice agrees with the pillar on every real mix of 5 s or more and the
  balanced mix's treatments: a pillar of 95 or more gets no EQ advice, one of
  70 or less names a band (or the low cut) that costs it."""

from __future__ import annotations

import io
import re
from functools import lru_cache

import numpy as np
import pytest
from rich.console import Console

from trackgrade.cli.render import bands_table
from trackgrade.engine.extract import extract
from trackgrade.engine.features import BAND_EDGES_HZ, BAND_NAMES
from trackgrade.grading import build_analysis
from trackgrade.grading.diagnosis import enhanced_diagnosis
from trackgrade.grading.low_end import UPPER, change_to_edge_db, frame_db
from trackgrade.grading.wording import band_advice, band_db
from trackgrade.limits import BAND_DB_CAP, BAND_LABELS, BAND_TOLERANCE_DB, BAND_WORDS
from trackgrade.report.context import band_rows

from tests.truth import need_real, real_only, real_params

from .real_audio import _originals, band_gain, load, low_shelf, peaking
from .test_defects_never_help import BALANCED, butterworth

pytestmark = real_only()
LOW_BANDS, UPPER_BANDS = BAND_NAMES[:UPPER.start], BAND_NAMES[UPPER.start:]
TREATMENTS = {
    "clean": lambda a: a,
    "shelf+12": lambda a: low_shelf(a, 12.0),
    "shelf+6": lambda a: low_shelf(a, 6.0),
    "mids-6": lambda a: peaking(a, -6.0),                   # 250-2000 Hz, 3 octaves
    "mids-9": lambda a: peaking(a, -9.0),
    "hp100": lambda a: butterworth(a, 100.0, 24),
    "hp150": lambda a: butterworth(a, 150.0, 24),
}


@lru_cache(maxsize=None)
def graded(clip: str, treatment: str = "clean", then=None):
    audio = TREATMENTS[treatment](load(clip))
    if then is not None:                                    # (band, dB): the advised EQ on it
        audio = band_gain(audio, then[1], *BAND_EDGES_HZ[BAND_NAMES.index(then[0])])
    a = build_analysis(extract(audio, parallel=False), file_name=clip.rsplit("/", 1)[-1],
                       mastering_status="master")
    return a.with_diagnosis(enhanced_diagnosis(a))


def advice(a) -> list[str]:
    """The frequency feedback that asks for something (warn, tip)."""
    return [i.text for i in a.feedback if i.category == "frequency" and i.type != "pass"]


def statements(a) -> list[str]:
    """Every frequency sentence: the feedback (pass included) and the diagnosis's."""
    texts = [i.text for i in a.feedback if i.category == "frequency"] + [a.diagnosis.frequency or ""]
    return [s for t in texts for s in re.split(r"(?<=[.;])\s+", t) if s]


def names(sentence: str, bands) -> bool:
    return any(BAND_LABELS[b].lower() in sentence.lower() for b in bands)


def boosts(sentence: str) -> bool:
    return bool(re.search(r"\bboost\b|bring up", sentence, re.I))


def cuts(sentence: str) -> bool:
    return bool(re.search(r"\bcut\b", sentence, re.I))


def table_rows(a) -> dict[str, tuple]:
    """The terminal's band table as printed: band -> (yours %, ideal %, bar, dB)."""
    console = Console(record=True, width=120, color_system=None, file=io.StringIO())
    console.print(bands_table(a))
    out = {}
    for line in console.export_text().splitlines():
        for b in BAND_NAMES:
            m = re.match(r"\s*" + re.escape(BAND_WORDS[b].title) + r"\s+\d+-\S+\s+([\d.]+)%\s+"
                         r"([\d.]+)%\s+([·█┃]+)\s+([+-]\d+\.\d)\s+±", line)
            if m:
                out[b] = (float(m.group(1)), float(m.group(2)), m.group(3), float(m.group(4)))
    return out


def test_the_balanced_mix_is_there():
    need_real()
    assert len(BALANCED) == 1, BALANCED


@pytest.mark.parametrize("clip", real_params(BALANCED, ids=lambda c: c.rsplit("/", 1)[-1]))
def test_a_low_shelf_moves_only_the_low_readings(clip):
    clean, boomy = graded(clip), graded(clip, "shelf+12")
    before, after = band_db(clean), band_db(boomy)
    for b in UPPER_BANDS:
        assert abs(after[b] - before[b]) <= 0.5, (b, before, after)
    assert after["sub_bass"] >= before["sub_bass"] + 8.0, (before, after)
    # the terminal's table prints the same readings, its bar on the same side of
    # the target's mark, its % the shares of the energy the document holds
    shown = table_rows(boomy)
    assert set(shown) == set(BAND_NAMES), shown
    for b, (mine, ideal, bar, db) in shown.items():
        assert db == after[b], (b, shown[b], after[b])
        assert (mine, ideal) == (round(getattr(boomy.frequency.bands, b), 1),
                                 round(getattr(boomy.frequency.ideal, b), 1)), (b, shown[b])
        under, over = bar.split("┃")
        cells = round(abs(db) / BAND_DB_CAP * len(over))
        assert (over.count("█"), under.count("█")) == ((cells, 0) if db > 0 else (0, cells)), (b, bar)
    # and the report's chart
    assert {r["band"]: r["delta_db"] for r in band_rows(boomy, [])} == after


@pytest.mark.parametrize("clip", real_params(BALANCED, ids=lambda c: c.rsplit("/", 1)[-1]))
def test_a_12_db_low_shelf_is_told_to_cut_the_low_end_first(clip):
    boomy = graded(clip, "shelf+12")
    told = advice(boomy)
    assert told and names(told[0], LOW_BANDS) and "cut about" in told[0], told
    for sentence in statements(boomy):
        assert not (names(sentence, UPPER_BANDS) and boosts(sentence)), sentence
    assert names(boomy.diagnosis.frequency, LOW_BANDS), boomy.diagnosis.frequency


@pytest.mark.parametrize("clip", real_params(BALANCED, ids=lambda c: c.rsplit("/", 1)[-1]))
def test_a_6_db_low_shelf_names_the_low_end(clip):
    boomy = graded(clip, "shelf+6")
    said = statements(boomy)
    assert any(names(s, LOW_BANDS) for s in said), said
    for sentence in said:
        assert not (names(sentence, UPPER_BANDS) and boosts(sentence)), sentence


@pytest.mark.parametrize("treatment", ["mids-6", "mids-9"])
@pytest.mark.parametrize("clip", real_params(BALANCED, ids=lambda c: c.rsplit("/", 1)[-1]))
def test_a_mids_dip_is_told_to_boost_the_mids_and_nothing_about_the_low_end(clip, treatment):
    dipped = graded(clip, treatment)
    told = advice(dipped)
    assert any(names(t, ["mid"]) and boosts(t) for t in told), told
    for sentence in statements(dipped):
        assert not names(sentence, LOW_BANDS), sentence


@pytest.mark.parametrize("treatment, band", [("mids-9", "mid"), ("shelf+12", "sub_bass")])
@pytest.mark.parametrize("clip", real_params(BALANCED, ids=lambda c: c.rsplit("/", 1)[-1]))
def test_the_advised_change_made_as_a_real_eq_brings_the_band_back(clip, treatment, band):
    off = graded(clip, treatment)
    (change,) = [c for b, _, c, _ in band_advice(off) if b == band]
    fixed = graded(clip, treatment, then=(band, float(change)))
    assert abs(band_db(fixed)[band]) <= BAND_TOLERANCE_DB[band], (change, band_db(off), band_db(fixed))


@pytest.mark.parametrize("treatment", ["hp100", "hp150"])
@pytest.mark.parametrize("clip", real_params(BALANCED, ids=lambda c: c.rsplit("/", 1)[-1]))
def test_a_high_passed_mix_is_told_its_low_end_is_light(clip, treatment):
    cut = graded(clip, treatment)
    told = advice(cut)
    assert any(t.startswith("Low cut") or (names(t, LOW_BANDS) and boosts(t)) for t in told), told
    for sentence in statements(cut):
        assert not (names(sentence, UPPER_BANDS) and cuts(sentence)), sentence
        assert not (names(sentence, LOW_BANDS) and cuts(sentence)), sentence


@pytest.mark.parametrize("clip", real_params(BALANCED, ids=lambda c: c.rsplit("/", 1)[-1]))
def test_the_balanced_mix_gets_no_eq_advice(clip):
    clean = graded(clip)
    assert clean.scores.frequency_balance >= 95, clean.frequency
    assert band_advice(clean) == [] and advice(clean) == [], advice(clean)
    assert clean.diagnosis.frequency.endswith("Leave the EQ alone."), clean.diagnosis.frequency


MIXES = [r["file"] for r in _originals() if float(r["duration_s"] or 0) >= 5.0]


@pytest.mark.parametrize("clip", real_params(MIXES, ids=lambda c: c.rsplit("/", 1)[-1]))
def test_the_advice_agrees_with_the_pillar(clip):
    treatments = TREATMENTS if clip in BALANCED else ["clean"]
    for treatment in treatments:
        a = graded(clip, treatment)
        if a.content.kind != "mix":         # a part other than a mix: no band advice at all
            assert not any(names(t, BAND_NAMES) for t in advice(a)), (treatment, advice(a))
            continue
        pillar = a.scores.frequency_balance
        if pillar >= 95:
            assert advice(a) == [], (treatment, pillar, advice(a))
        if pillar <= 70:
            assert advice(a), (treatment, pillar, band_db(a))


def test_the_change_brings_the_reading_to_the_tolerance_edge():
    """Any balance, any band: the boost or cut `change_to_edge_db` gives, made
    on that band alone, moves its `frame_db` reading to the edge asked for."""
    rng = np.random.default_rng(26)
    for _ in range(200):
        bands = dict(zip(BAND_NAMES, rng.dirichlet(np.ones(7)) * 100))
        ideal = dict(zip(BAND_NAMES, rng.dirichlet(np.ones(7) * 4) * 100))
        reading = dict(zip(BAND_NAMES, frame_db(bands, ideal)))
        for k, b in enumerate(BAND_NAMES):
            d = reading[b]
            if abs(d) >= 14.9 or abs(d) <= BAND_TOLERANCE_DB[b]:
                continue
            edge = BAND_TOLERANCE_DB[b] * np.sign(d)
            change = change_to_edge_db(ideal, b, d, edge)
            assert np.sign(change) == -np.sign(d), (b, d, change)
            moved = dict(bands, **{b: bands[b] * 10 ** (change / 10)})
            assert abs(frame_db(moved, ideal)[k] - edge) < 1e-6, (b, d, edge, change)
