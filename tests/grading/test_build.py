"""build_analysis: the whole document, extras, words and feedback."""

import copy
import dataclasses
import json

import numpy as np
import pytest

from trackgrade.errors import TrackgradeError
from trackgrade.grading import build_analysis, round_bands
from trackgrade.grading.diagnosis import enhanced_diagnosis
from tests.document_check import validate_document
from trackgrade.model import Extras

from .factory import make_features

EXTRAS = {"truncated", "declared_duration_s", "sample_rate", "channels", "container",
          "integrated_lufs", "true_peak_dbtp", "sample_peak_dbfs", "loudness_curve",
          "energy_curve", "beat_strength", "tempo_confidence", "genre_candidates"}


def build(f=None, status="master", name="track.wav"):
    return build_analysis(f or make_features(), file_name=name, mastering_status=status)


@pytest.mark.parametrize("bad", ["premaster", "Master", "", None, "mastered"])
def test_mastering_status_is_validated(bad):
    with pytest.raises(TrackgradeError) as err:
        build(status=bad)
    assert err.value.code == "parameter_invalid" and err.value.param == "mastering_status"


@pytest.mark.parametrize("status", ["pre-master", "master"])
def test_document_is_valid_and_pending(status):
    a = build(status=status)
    doc = a.to_dict()
    assert validate_document(doc) == []
    assert doc["diagnosis_status"] == "pending" and a.diagnosis.status == "pending"
    assert doc["mastering_status"] == status
    assert json.loads(json.dumps(doc)) == doc


def test_extras_are_complete_and_json_safe():
    a = build()
    assert isinstance(a.extras, Extras)
    as_json = a.extras.to_dict()
    assert EXTRAS <= set(as_json)
    assert json.loads(json.dumps(as_json)) == json.loads(json.dumps(as_json, default=list))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.extras.truncated = True                                    # typed and frozen
    with pytest.raises(KeyError):
        a.extras["no_such_fact"]
    curve = a.extras["loudness_curve"]
    assert curve["hop_s"] in (0.5, 1.0)
    assert len(curve["short_term_lufs"]) == pytest.approx(a.duration_seconds / curve["hop_s"], abs=1)
    assert all(v == round(v, 1) for v in curve["short_term_lufs"])
    assert len(a.extras["energy_curve"]["values"]) == len(curve["short_term_lufs"])
    cands = a.extras["genre_candidates"]
    assert len(cands) == 3 and cands[0]["key"] == a.genre.detected
    assert cands[0]["score"] >= cands[1]["score"] >= cands[2]["score"]


def test_long_track_curves_use_one_second_hop():
    sections = (("intro", 0.0, 200.0, 40), ("drop", 200.0, 500.0, 90), ("outro", 500.0, 700.0, 40))
    a = build(make_features(sections=sections, duration=700.0))
    assert a.extras["loudness_curve"]["hop_s"] == 1.0
    assert len(a.extras["loudness_curve"]["short_term_lufs"]) == 700


def test_rounding_and_sections_cover_the_track():
    f = make_features(sections=(("intro", 0.0, 7.123456, 40), ("drop", 7.123456, 89.987, 90),
                                ("outro", 89.987, 90.0, 45)), duration=90.0)
    doc = build(f).to_dict()
    secs = doc["structure"]["sections"]
    assert secs[0]["start"] == 0.0 and secs[-1]["end"] == doc["duration_seconds"]
    assert all(a["end"] == b["start"] for a, b in zip(secs, secs[1:]))
    assert secs[0]["end"] == 7.12
    assert validate_document(doc) == []


def test_a_part_has_one_section_labelled_part_and_other_music_section():
    """CONTRACT.md section 6: a part has one `part` section spanning it, with the
    sections' mean energy, weighted by length (music that is not electronic: test_content_real.py)."""
    f = make_features(sections=(("intro", 0.0, 10.0, 40), ("drop", 10.0, 30.0, 90)), duration=30.0)
    a = build(f)
    assert a.content.part is True and a.structure.judged is False
    assert [(s.start, s.end, s.label, s.energy) for s in a.structure.sections] == [(0.0, 30.0, "part", 73)]
    club = build(make_features())
    assert club.extras.electronic and club.content.part is False
    assert [s.label for s in club.structure.sections] == ["intro", "buildup", "drop", "breakdown",
                                                          "drop", "outro"]
    assert validate_document(a.to_dict()) == [] and validate_document(club.to_dict()) == []


def test_round_bands_sums_to_exactly_100():
    raw = {"sub_bass": 33.333, "bass": 33.333, "low_mid": 33.334, "mid": 0.0, "upper_mid": 0.0,
           "high": 0.0, "air": 0.0}
    out = round_bands(raw)
    assert round(sum(out.values()), 6) == 100.0
    assert all(v == round(v, 1) for v in out.values())


def test_atonal_audio_has_null_key():
    a = build(make_features(**{"tonality.key": None}))
    assert a.to_dict()["key"] is None
    assert any(i.category == "key" for i in a.feedback)
    assert validate_document(a.to_dict()) == []


def test_truncated_file_gets_a_file_warning():
    a = build(make_features(truncated=True, declared_duration_s=120.0))
    assert a.extras["truncated"] is True and a.extras["declared_duration_s"] == 120.0
    warn = [i for i in a.feedback if i.category == "file"]
    assert warn and warn[0].type == "warn" and "120.0" in warn[0].text
    assert build().score > a.score


def test_feedback_ordered_warn_tip_pass_with_numbers():
    broken = make_features(**{"dynamics.clipping_pct": 1.5, "stereo.correlation": -0.7,
                              "loudness.integrated_lufs": -16.0})
    items = build(broken).feedback
    order = {"warn": 0, "tip": 1, "pass": 2}
    assert [order[i.type] for i in items] == sorted(order[i.type] for i in items)
    assert items[0].type == "warn" and items[0].category in ("stereo", "mix", "loudness")
    cats = {"frequency", "mix", "loudness", "dynamics", "stereo", "rhythm", "structure", "key", "genre", "file"}
    assert all(i.category in cats for i in items)
    assert all(any(ch.isdigit() for ch in i.text) for i in items if i.type != "pass")


def test_template_words_use_the_numbers():
    a = build()
    d = a.diagnosis
    assert str(a.score) in d.summary and a.grade.letter in d.summary
    assert "LUFS" in d.mix and f"{a.mix.loudness_lufs:.1f}" in d.mix
    assert d.frequency and d.danceability


def test_enhanced_narrative_is_pure_and_specific():
    a = build()
    before = copy.deepcopy(a.to_dict())
    one, two = enhanced_diagnosis(a), enhanced_diagnosis(a)
    assert one == two and one.status == "ready"
    assert a.to_dict() == before
    assert "drop at 1:32" in one.summary
    assert "Spotify" in one.mix and "-14 LUFS" in one.mix and "Apple Music" in one.mix
    # the diagnosis does not repeat the band table (the table is in `frequency`)
    assert "house ideal" in one.frequency and "%" not in one.frequency
    assert len(one.summary) > len(a.diagnosis.summary)
    ready = a.with_diagnosis(one).to_dict()
    assert ready["diagnosis_status"] == "ready" and validate_document(ready) == []


def test_enhanced_narrative_gives_fixes_for_a_broken_master():
    broken = make_features(**{"dynamics.clipping_pct": 1.5, "loudness.true_peak_dbtp": 0.8,
                              "loudness.integrated_lufs": -16.0})
    d = enhanced_diagnosis(build(broken))
    assert "Fixes:" in d.mix and "dBTP" in d.mix and "LUFS" in d.mix


def test_pre_master_narrative_talks_about_headroom():
    f = make_features(**{"loudness.integrated_lufs": -18.0, "loudness.true_peak_dbtp": -6.0})
    d = enhanced_diagnosis(build(f, status="pre-master"))
    assert "headroom" in d.mix


def test_non_finite_measurements_do_not_leak():
    f = make_features(**{"loudness.true_peak_dbtp": float("-inf"),
                         "loudness.short_term_lufs": np.full(300, -np.inf)})
    a = build(f)
    doc = a.to_dict()
    json.dumps(doc, allow_nan=False)
    json.dumps(a.extras.to_dict(), allow_nan=False)
    assert validate_document(doc) == []


def test_low_key_confidence_is_a_tip():
    from trackgrade.engine.features import Key
    a = build(make_features(**{"tonality.key": Key("D", "major", "10B", 0.2)}))
    tips = [i for i in a.feedback if i.category == "key"]
    assert tips[0].type == "tip" and "0.20" in tips[0].text and "10B" in tips[0].text


def test_words_survive_an_analysis_without_extras():
    """The server may rebuild an Analysis from stored JSON without extras."""
    from dataclasses import replace

    from trackgrade.grading.feedback import feedback_items
    from trackgrade.model import Extras
    a = replace(build(make_features(**{"dynamics.clipping_pct": 1.0})), extras=Extras())
    d = enhanced_diagnosis(a)
    assert d.status == "ready" and "Spotify" in d.mix
    assert feedback_items(a)


@pytest.mark.parametrize("seed", range(12))
def test_hostile_measurements_still_give_a_valid_document(seed):
    """NaN, infinities and out-of-range engine values never leak into the document."""
    rng = np.random.default_rng(seed)
    odd = [float("nan"), float("inf"), float("-inf"), -1e9, 1e9, 0.0, -0.0]
    fields = ["loudness.integrated_lufs", "loudness.loudness_range_lu", "loudness.true_peak_dbtp",
              "loudness.sample_peak_dbfs", "dynamics.crest_factor_db", "dynamics.clipping_pct",
              "dynamics.dynamic_complexity_db", "dynamics.rms_mean", "stereo.width",
              "stereo.correlation", "spectrum.centroid_hz", "rhythm.regularity", "rhythm.onset_rate",
              "rhythm.beat_strength", "rhythm.danceability", "rhythm.tempo_confidence"]
    picked = rng.choice(fields, size=5, replace=False)
    changes = {str(name): odd[int(rng.integers(len(odd)))] for name in picked}
    a = build(make_features(**changes))
    doc = a.to_dict()
    assert validate_document(doc) == [], changes
    json.dumps(doc, allow_nan=False)
    json.dumps(a.extras.to_dict(), allow_nan=False)
    enhanced_diagnosis(a)


@pytest.mark.parametrize("sections", [
    (("intro", 0.0, 10.0, 40), ("drop", 10.0, 30.0, 90), ("outro", 30.0, 30.0, 40)),   # empty tail
    (("intro", 0.0, 12.0, 40), ("drop", 12.0, 45.0, 90), ("outro", 45.0, 50.0, 40)),   # past the end
    (("verse", 0.0, 15.0, 40), ("drop", 15.0, 30.0, float("nan"))),                   # odd label/energy
    (("drop", 2.0, 20.0, 90),),                                                       # gap at the start
])
def test_engine_sections_are_made_contiguous(sections):
    doc = build(make_features(sections=sections, duration=30.0)).to_dict()
    assert validate_document(doc) == []
    secs = doc["structure"]["sections"]
    assert secs[0]["start"] == 0.0 and secs[-1]["end"] == 30.0
