"""Defects never help (CONTRACT.md section 5), on every real clip of 5 s or
more that has a low end (../shared/truth/real, read in place), through the
real engine, graded as a master:

- removing the low end (a brick-wall high-pass at 100, 150 or 200 Hz) never
  raises the frequency pillar;
- a master 6 LU or more below its target loudness has a lower mix pillar than
  the same master brought to its target (the bottom of its loudness range, or
  as near as it goes with its true peak under the -1 dBTP ceiling)."""


from functools import lru_cache

import pytest

from trackgrade.engine.extract import extract
from trackgrade.grading import build_analysis

from tests.truth import need_real, real_params

from .real_audio import _originals, load, low_cut, turned_down

CLIPS = [r["file"] for r in _originals() if float(r["duration_s"] or 0) >= 5.0]


@lru_cache(maxsize=None)
def graded(clip: str, high_pass_hz: float | None = None, gain_db: float = 0.0):
    audio = load(clip)
    if high_pass_hz:
        audio = low_cut(audio, high_pass_hz)
    if gain_db:
        audio = turned_down(audio, -gain_db)
    return build_analysis(extract(audio, parallel=False), file_name=clip.rsplit("/", 1)[-1],
                          mastering_status="master")


def test_the_material_is_there():
    need_real()
    assert len(CLIPS) >= 20, CLIPS


@pytest.mark.parametrize("hz", [100, 150, 200])
@pytest.mark.parametrize("clip", real_params(CLIPS, ids=lambda c: c.rsplit("/", 1)[-1]))
def test_a_high_pass_never_raises_the_frequency_pillar(clip, hz):
    clean, cut = graded(clip), graded(clip, hz)
    assert cut.scores.frequency_balance <= clean.scores.frequency_balance, \
        (clean.genre.detected, cut.genre.detected, clean.scores, cut.scores)


@pytest.mark.parametrize("under", [6, 10])
@pytest.mark.parametrize("clip", real_params(CLIPS, ids=lambda c: c.rsplit("/", 1)[-1]))
def test_a_quiet_master_has_a_lower_mix_pillar(clip, under):
    clean = graded(clip)
    low = clean.extras.targets["loudness_lufs"][0]
    to_target = low - clean.mix.loudness_lufs
    # the same master as near its target as it goes under the -1 dBTP ceiling
    reference = round(min(to_target, -1.0 - clean.extras.true_peak_dbtp), 1)
    at_target = graded(clip, gain_db=reference)
    quiet = graded(clip, gain_db=round(to_target - under, 1))
    assert quiet.mix.loudness_lufs <= quiet.extras.targets["loudness_lufs"][0] - under + 0.5
    assert quiet.scores.mix_quality < at_target.scores.mix_quality, \
        (at_target.mix, quiet.mix, at_target.extras.pillars["mix_quality"],
         quiet.extras.pillars["mix_quality"])
