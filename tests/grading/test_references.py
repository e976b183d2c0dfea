"""Targets from the user's own reference tracks (CONTRACT.md section 4):
bands (their mean level in dB), loudness, loudness range and width become the
targets, `genre.target` is `reference`, and the words compare by name. Real
clips (../shared/truth/real, read in place) through the real engine; the CLI
test runs `trackgrade analyze --reference` on files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from trackgrade.cli import app
from trackgrade.engine.features import BAND_NAMES
from trackgrade.grading import build_analysis
from trackgrade.grading.diagnosis import enhanced_diagnosis
from trackgrade.grading.targets import (REFERENCE_LUFS_SPAN, Reference, mean_bands, profile_for,
                                        reference_profile)
from tests.document_check import validate_document

from tests.truth import REAL, need_real

from .real_audio import electronic_clips, features

CLIPS = electronic_clips()


def ref(clip: str) -> Reference:
    return Reference.from_features(clip.rsplit("/", 1)[-1], features(clip))


def test_mean_bands_is_the_mean_level_in_db():
    a = {b: 10.0 for b in BAND_NAMES} | {"sub_bass": 40.0}
    b = {b: 10.0 for b in BAND_NAMES} | {"sub_bass": 10.0}
    r = [Reference("a", a, -9, 5, 0.2), Reference("b", b, -11, 7, 0.4)]
    m = mean_bands(r)
    assert abs(sum(m.values()) - 100.0) < 0.05
    # sub: geometric mean 20 against 10 elsewhere (before renormalising)
    assert m["sub_bass"] == pytest.approx(2 * m["bass"], rel=0.02)
    p = reference_profile(profile_for("house"), r)
    assert p["loudness_lufs"]["master"] == [-10 - REFERENCE_LUFS_SPAN, -10 + REFERENCE_LUFS_SPAN]
    assert p["lra_lu"] == [3.5, 8.5] and p["width"] == [0.2, 0.4]
    assert p["references"] == ["a", "b"] and p["key"] == "reference"


def test_a_track_graded_against_itself_meets_every_target():
    need_real()
    clip = CLIPS[0]
    f = features(clip)
    a = build_analysis(f, file_name="mine.flac", mastering_status="master", references=(ref(clip),))
    assert a.genre.target == "reference"
    assert a.frequency.score == 100
    pens = a.extras["pillars"]["mix_quality"]["penalties"]
    assert "loudness" not in pens and "lra" not in pens and "width_vs_reference" not in pens
    assert validate_document(a.to_dict()) == []


def test_the_diagnosis_names_the_reference_and_the_biggest_differences():
    need_real()
    mine, theirs = CLIPS[2], CLIPS[1]          # an electronic loop against an IDM beat
    a = build_analysis(features(mine), file_name="mine.flac", mastering_status="master",
                       references=(ref(theirs),))
    a = a.with_diagnosis(enhanced_diagnosis(a))
    name = theirs.rsplit("/", 1)[-1]
    assert name in a.diagnosis.frequency
    ideal = np.array([getattr(a.frequency.ideal, b) for b in BAND_NAMES])
    assert np.allclose(ideal, [ref(theirs).bands_pct[b] for b in BAND_NAMES], atol=0.11)
    # the biggest band differences are named in dB, with the reference as the target
    assert "dB" in a.diagnosis.frequency and "biggest gaps" in a.diagnosis.frequency
    assert any(name in i.text for i in a.feedback if i.category == "frequency")
    assert "your reference" in a.diagnosis.mix
    # loudness, loudness range and width against the reference, in the summary
    assert f"Against your reference ({name})" in a.diagnosis.summary
    assert "loudness range" in a.diagnosis.summary and "stereo width" in a.diagnosis.summary
    against_genre = build_analysis(features(mine), file_name="mine.flac", mastering_status="master")
    # the detected family, or the broad electronic targets when no family is clear
    assert against_genre.genre.target in (against_genre.genre.detected, "electronic")
    assert a.frequency.score != against_genre.frequency.score


def test_cli_analyze_with_references():
    need_real()
    runner = CliRunner()
    mine, theirs = (str(REAL / c) for c in (CLIPS[2], CLIPS[3]))
    result = runner.invoke(app, ["analyze", mine, "-m", "master", "--reference", theirs,
                                 "--reference", str(REAL / CLIPS[0]), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["genre"]["target"] == "reference"
    assert CLIPS[3].rsplit("/", 1)[-1] in doc["diagnosis"]["frequency"]
    missing = runner.invoke(app, ["analyze", mine, "--reference", str(REAL / "clips" / "nope.wav")])
    assert missing.exit_code == 2 and "nope.wav" in missing.output
    unknown = runner.invoke(app, ["analyze", mine, "--genre", "polka"])
    assert unknown.exit_code == 2 and "genre" in unknown.output
    chosen = runner.invoke(app, ["analyze", mine, "--genre", "deep_house", "--json"])
    assert json.loads(chosen.stdout)["genre"]["target"] == "deep_house"
