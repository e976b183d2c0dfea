"""Test mode: canned analyses are pure functions of (file_name, mastering_status)."""

import json
import subprocess
import sys

import pytest

from trackgrade.errors import TrackgradeError
from trackgrade.grading.diagnosis import enhanced_diagnosis
from tests.document_check import validate_document
from trackgrade.testmode import FAILURE_CODES, FAILURE_MESSAGES, canned_analysis, failure_code

NAMES = ["kick.wav", "a.mp3", "b.flac", "c.aiff", "deep/dir/d.wav", "x" * 200 + ".wav",
         "no_extension", "ÄÖÜ.wav", "e.WAV", "f.g.h.mp3", "song_v2.wav", "loop 128bpm.wav"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("status", ["pre-master", "master"])
def test_canned_documents_are_valid_and_pending(name, status):
    a = canned_analysis(name, status)
    doc = a.to_dict()
    assert validate_document(doc) == []
    assert doc["file_name"] == name and doc["mastering_status"] == status
    assert doc["diagnosis_status"] == "pending"
    ready = a.with_diagnosis(enhanced_diagnosis(a)).to_dict()
    assert validate_document(ready) == []
    json.dumps(a.extras.to_dict(), allow_nan=False)


def test_pure_function_of_the_arguments():
    one = canned_analysis("same.wav", "master")
    two = canned_analysis("same.wav", "master")
    assert one.to_dict() == two.to_dict() and one.extras == two.extras
    assert canned_analysis("same.wav").to_dict() == canned_analysis("same.wav", "pre-master").to_dict()


def test_names_vary_tempo_key_genre_and_scores():
    docs = [canned_analysis(f"track_{i}.wav", "master").to_dict() for i in range(40)]
    assert len({d["tempo"]["bpm"] for d in docs}) > 20
    assert len({d["key"]["camelot"] for d in docs}) > 10
    assert len({d["genre"]["detected"] for d in docs}) >= 4
    assert len({d["score"] for d in docs}) > 5


def test_mastering_status_changes_only_the_loudness_side():
    pre, master = canned_analysis("x.wav", "pre-master"), canned_analysis("x.wav", "master")
    assert pre.tempo == master.tempo and pre.key == master.key and pre.genre == master.genre
    assert pre.mix.loudness_lufs < master.mix.loudness_lufs


def test_invalid_status_rejected():
    with pytest.raises(TrackgradeError) as err:
        canned_analysis("x.wav", "final")
    assert err.value.param == "mastering_status"


def test_never_touches_the_engine():
    """In a fresh interpreter, a canned analysis imports no decoder or extractor."""
    code = ("import sys; from trackgrade.testmode import canned_analysis; "
            "canned_analysis('x.wav', 'master'); "
            "print(sorted(m for m in sys.modules if m.split('.')[-1] in "
            "('decode', 'extract', 'loudness', 'rhythm', 'frames')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("code", FAILURE_CODES)
def test_failure_codes_from_the_stem(code):
    assert failure_code(f"kick_fail_{code}.wav") == code
    assert failure_code(f"dir/sub/kick_fail_{code}.mp3") == code
    assert failure_code(f"kick_fail_{code}") == code
    assert code in FAILURE_MESSAGES


@pytest.mark.parametrize("name", ["kick.wav", "kick_fail_banana.wav", "fail_safe.wav",
                                  "kick_fail_engine_error_v2.wav", "kick_fail_Engine_Error.wav",
                                  "kick_fail_engine_error.wav/other.wav", "kick_fail_.wav"])
def test_other_names_do_not_fail(name):
    assert failure_code(name) is None


def test_every_warning_and_tip_names_a_number():
    for i in range(40):
        for status in ("pre-master", "master"):
            for item in canned_analysis(f"n{i}.wav", status).feedback:
                if item.type != "pass":
                    assert any(ch.isdigit() for ch in item.text), item


def test_a_canned_result_says_so_first_in_both_stages_and_stays_pure():
    from trackgrade.testmode import CANNED_NOTE, canned_diagnosis, is_canned

    a = canned_analysis("my track.wav", "master")
    assert a.diagnosis.summary.startswith(CANNED_NOTE)
    assert canned_diagnosis(a).summary.startswith(CANNED_NOTE)
    assert canned_diagnosis(a).status == "ready"
    assert is_canned(a) and is_canned(a.to_dict())
    assert canned_analysis("my track.wav", "master").to_dict() == a.to_dict()   # pure


def test_a_measured_analysis_is_never_marked_canned():
    from tests.delivery.signals import club_loop, wav_bytes
    from trackgrade.pipeline import analyze
    from trackgrade.testmode import is_canned

    assert not is_canned(analyze(wav_bytes(club_loop(4.0)), file_name="loop.wav"))


def test_the_report_and_the_screen_of_a_canned_result_say_test_first():
    import io

    from rich.console import Console

    from trackgrade.cli.render import render_analysis
    from trackgrade.model_read import analysis_from_dict
    from trackgrade.report import render_report

    a = analysis_from_dict(canned_analysis("my track.wav", "master").to_dict())   # as served
    html = render_report(a)
    assert html.index('id="test-mode"') < html.index("<header")
    assert "<title>TEST · " in html
    out = io.StringIO()
    Console(file=out, width=100, color_system=None).print(render_analysis(a))
    assert out.getvalue().startswith("TEST MODE: a canned test result, not an analysis of this "
                                     "file")


def test_canned_bands_come_from_the_profiles_they_are_graded_against():
    """profiles.json once carried its own band shares, which drifted from
    genres.json (house sub-bass 22.0 % against an ideal of 7.4 %): the canned
    bands are now the family's ideal, nudged by a few percent."""
    import json
    from pathlib import Path

    import trackgrade
    from trackgrade.grading.genres import get_profile
    from trackgrade.testmode import BAND_NUDGE, _Dice, canned_bands

    data = json.loads((Path(trackgrade.__file__).parent / "canned" / "profiles.json").read_text())
    assert all("bands" not in template for template in data["templates"])
    for template in data["templates"]:
        ideal = get_profile(template["family"])["ideal_bands"]
        for name in ("kick.wav", "club_edit.flac", "x"):
            bands = canned_bands(template["family"], _Dice(name))
            assert set(bands) == set(ideal)
            assert all(abs(bands[b] / ideal[b] - 1) <= BAND_NUDGE / 2 for b in ideal), (template, bands)
