"""A one-bar break has a tempo: its length is a bar (CONTRACT.md section 5,
parts). Synthetic breaks cut to the bar, and the real 1.4-1.9 s breaks of
../shared/truth/real, through the real decoder and engine."""

from pathlib import Path

import pytest

from trackgrade.pipeline import analyze

from tests.one_bar import one_bar_wav
from tests.truth import need_real, real_manifest, real_params


@pytest.mark.parametrize("bpm", [100, 125, 140, 160, 174, 190])
def test_a_synthetic_one_bar_break_reads_its_bar(bpm):
    a = analyze(one_bar_wav(bpm), file_name="break.wav", mastering_status="master", enhanced=False)
    assert a.duration_seconds == pytest.approx(240 / bpm, abs=0.01)
    assert a.tempo.bpm == pytest.approx(bpm, rel=0.02)
    assert a.structure.judged is False


BREAKS = [r for r in real_manifest()
          if r["variant"] == "original" and r["bpm_truth"] and 1.0 <= float(r["duration_s"]) < 2.0]


def test_the_real_short_breaks_are_there():
    need_real()
    assert len(BREAKS) >= 6, [r["file"] for r in BREAKS]


@pytest.mark.parametrize("row", real_params(BREAKS, ids=lambda r: Path(r["file"]).name))
def test_a_real_one_bar_break_is_graded_with_its_tempo(row):
    a = analyze(Path(row["path"]).read_bytes(), file_name=Path(row["file"]).name,
                mastering_status="master", enhanced=False)
    assert a.tempo.bpm == pytest.approx(float(row["bpm_truth"]), rel=0.04)
    assert a.structure.judged is False
