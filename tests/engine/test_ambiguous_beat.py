"""Ambiguous beat level (CONTRACT.md section 5): where half or double the
tempo is about as plausible (a samba, a waltz, a Greek song read at the
eighth-note level), `tempo.confidence` is at most 0.5 and the other reading is
among the alternatives; a steady four-on-the-floor keeps its confidence.
Real clips of ../shared/truth/real through the real decoder and engine."""

from pathlib import Path

import pytest

from trackgrade.pipeline import analyze

from tests.truth import real_manifest, real_only

pytestmark = real_only()

AMBIGUOUS = ("mirdata__brid_0001_M4-01-SA.wav", "mirdata__ballroom_Waltz_Media-105901.wav",
             "mirdata__simac_01_H_mikri_Rallou.flac")
ROWS = {Path(r["file"]).name: r for r in real_manifest()}


def tempo(name: str):
    row = ROWS[name]
    return analyze(Path(row["path"]).read_bytes(), file_name=name, mastering_status="master",
                   enhanced=False).tempo, float(row["bpm_truth"])


@pytest.mark.parametrize("name", AMBIGUOUS)
def test_an_ambiguous_beat_level_is_not_sure_and_names_the_other_reading(name):
    t, truth = tempo(name)
    assert t.confidence <= 0.5
    readings = [t.bpm] + [a.bpm for a in t.alternatives]
    assert any(abs(b - truth) <= 0.04 * truth for b in readings), (t, truth)
    assert any(a.relation in ("half", "double") for a in t.alternatives)


def test_a_steady_four_on_the_floor_stays_sure():
    t, truth = tempo("beatnet__808kick120bpm.mp3")
    assert abs(t.bpm - truth) <= 0.04 * truth and t.confidence >= 0.9
