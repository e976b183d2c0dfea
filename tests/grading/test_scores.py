"""Pillars on hand-built Features: each measured flaw moves its pillar, and
the mastering status changes the loudness thresholds."""

import pytest

from trackgrade.grading import build_analysis
from trackgrade.grading import scores as S
from trackgrade.engine.features import NoiseFloor
from trackgrade.grading.genres import GENRES

from .factory import HOUSE_BANDS, make_features, with_changes

HOUSE = GENRES["house"]


def grade(f, status="master"):
    return build_analysis(f, file_name="t.wav", mastering_status=status)


def test_clean_master_scores_well():
    a = grade(make_features())
    assert a.genre.detected == "house"
    assert a.scores.mix_quality >= 90 and a.scores.frequency_balance >= 90
    assert a.score >= 80


def test_pre_master_at_minus_18_with_6_db_headroom_is_good():
    f = make_features(**{"loudness.integrated_lufs": -18.0, "loudness.true_peak_dbtp": -6.0})
    pre = grade(f, "pre-master")
    master = grade(f, "master")
    assert pre.scores.mix_quality >= 90
    assert master.scores.mix_quality <= pre.scores.mix_quality - 30
    assert any(i.category == "loudness" and i.type == "warn" for i in master.feedback)
    assert any(i.category == "loudness" and i.type == "pass" for i in pre.feedback)


def test_loud_limited_file_is_a_poor_pre_master():
    f = make_features()                       # -9 LUFS, -1 dBTP
    assert grade(f, "pre-master").scores.mix_quality < grade(f, "master").scores.mix_quality - 15


def test_true_peak_over_ceiling_costs_mix_points():
    assert S.true_peak_penalty(-1.0, "master") == 0
    assert S.true_peak_penalty(0.5, "master") > 10
    assert S.true_peak_penalty(-4.0, "pre-master") == 0
    assert S.true_peak_penalty(-1.0, "pre-master") > 5


@pytest.mark.parametrize("change,pillar", [
    ({"dynamics.clipping_pct": 2.0, "dynamics.crest_factor_db": 5.0}, "mix_quality"),
    ({"stereo.correlation": -0.8, "stereo.width": 0.9}, "mix_quality"),
    ({"stereo.correlation": 1.0, "stereo.width": 0.0}, "mix_quality"),
    ({"loudness.integrated_lufs": -21.0}, "mix_quality"),
    ({"rhythm.beat_strength": 0.25, "rhythm.danceability": 0.8, "rhythm.onset_rate": 1.5}, "danceability"),
    ({"rhythm.tempo_salient": False, "rhythm.regularity": 0.1}, "danceability"),
    ({"rhythm.onset_rate": 1.0, "rhythm.beat_strength": 0.2}, "energy"),
])
def test_each_flaw_lowers_its_pillar_and_the_headline(change, pillar):
    clean = grade(make_features())
    broken = grade(make_features(**change))
    assert getattr(broken.scores, pillar) <= getattr(clean.scores, pillar) - 10
    assert broken.score < clean.score


def test_missing_low_end_lowers_frequency_and_danceability():
    thin = dict(HOUSE_BANDS, sub_bass=0.0, bass=26.0, low_mid=38.0, mid=27.0, upper_mid=4.0,
                high=2.5, air=2.5)
    clean, broken = grade(make_features()), grade(make_features(bands=thin))
    assert broken.scores.frequency_balance <= clean.scores.frequency_balance - 25
    assert broken.danceability.breakdown.bass_presence <= 60
    assert broken.score <= clean.score - 10


def test_flat_arrangement_lowers_structure():
    flat = (("drop", 0.0, 120.0, 95), ("drop", 120.0, 240.0, 96))
    clean, broken = grade(make_features()), grade(make_features(sections=flat))
    assert broken.scores.structure <= clean.scores.structure - 40
    assert any(i.category == "structure" and i.type == "warn" for i in broken.feedback)


def test_hiss_needs_a_high_and_steady_floor():
    f = make_features()
    assert S.hiss_penalty(f) == 0                                  # not measured
    loud_steady = with_changes(f, noise_floor=NoiseFloor(floor_db=-20.0, steadiness_db=1.0))
    loud_moving = with_changes(f, noise_floor=NoiseFloor(floor_db=-20.0, steadiness_db=20.0))
    quiet_steady = with_changes(f, noise_floor=NoiseFloor(floor_db=-60.0, steadiness_db=1.0))
    assert S.hiss_penalty(loud_steady) == 25
    assert S.hiss_penalty(loud_moving) == 0 and S.hiss_penalty(quiet_steady) == 0


def test_a_low_cut_costs_frequency_balance_and_bass_presence():
    f = make_features()
    cut = with_changes(f, **{"spectrum.low_rolloff_hz": 143.0})
    assert S.low_cut_share(f) == 0 and S.low_cut_share(cut) == 1
    assert S.bass_presence(cut, HOUSE) < S.bass_presence(f, HOUSE) - 0.5
    bands, ideal = f.spectrum.bands_pct, HOUSE["ideal_bands"]
    assert S.frequency_balance(bands, ideal, 1.0).score <= S.frequency_balance(bands, ideal).score - 30


def test_ambient_is_not_punished_for_having_no_pulse():
    bands = GENRES["ambient"]["ideal_bands"]
    f = make_features(bands=bands, **{"rhythm.tempo_salient": False, "rhythm.bpm": 80.0,
                                      "rhythm.beat_strength": 0.05, "loudness.integrated_lufs": -15.0})
    a = grade(f)
    assert a.genre.detected == "ambient"
    assert "no_pulse" not in a.extras["headline_penalties"]
    assert a.danceability.score < 50


def test_all_scores_are_ints_in_range_for_extreme_inputs():
    extreme = make_features(**{"loudness.integrated_lufs": -70.0, "loudness.true_peak_dbtp": 6.0,
                               "dynamics.clipping_pct": 60.0, "stereo.correlation": -1.0,
                               "rhythm.bpm": 200.0, "rhythm.onset_rate": 40.0,
                               "rhythm.danceability": 3.0, "dynamics.crest_factor_db": 0.5},
                            sections=(("intro", 0.0, 30.0, 0),))
    a = grade(extreme)
    for value in (a.score, *vars(a.scores).values(), *vars(a.danceability.breakdown).values()):
        assert isinstance(value, int) and 0 <= value <= 100


def test_headline_blend_is_documented_weights():
    pillars = {"danceability": 80, "mix_quality": 60, "frequency_balance": 70, "energy": 50, "structure": 90}
    expected = 0.25 * 60 + 0.2 * 70 + 0.2 * 80 + 0.15 * 50 + 0.2 * 90
    assert S.headline(pillars, {}, danceable=True) == round(expected)
    assert S.headline(pillars, {"clipping": 12.0}, danceable=True) == round(expected - 12)


def test_a_noise_floor_never_helps_the_frequency_balance():
    """Hiss that fills an empty air band moves the measured bands toward the
    ideal; the pillar scores the music without it (and the veil it adds)."""
    ideal = HOUSE["ideal_bands"]
    dull = {"sub_bass": 10.0, "bass": 30.0, "low_mid": 47.0, "mid": 10.0, "upper_mid": 2.5,
            "high": 0.49, "air": 0.01}
    noisy = S.without(dull, {"high": -0.25, "air": -0.8})        # the same music plus hiss
    noise = {b: 0.0 for b in dull} | {"high": 0.25, "air": 0.8}
    clean = S.frequency_balance(dull, ideal).score
    assert S.frequency_balance(noisy, ideal).score > clean                  # what hiss did before
    assert S.frequency_balance(noisy, ideal, 0.0, noise, 1.0).score < clean
    assert S.frequency_balance(dull, ideal, 0.0, {b: 0.0 for b in dull}, 0.0).score == clean
    # a band at least half noise counts as empty; the rest keeps its music
    left = S.without({"high": 1.0, "air": 0.8, **{b: 10.0 for b in ("sub_bass", "bass", "low_mid",
                                                                       "mid", "upper_mid")}},
                     {"high": 0.2, "air": 0.5})
    assert left["air"] == 0.0 and left["high"] > 0.0 and abs(sum(left.values()) - 100.0) < 1e-9


def test_hiss_bands_follow_the_floor_and_its_steadiness():
    f = make_features()
    hiss = with_changes(f, noise_floor=NoiseFloor(floor_db=-20.0, steadiness_db=1.0))
    music = with_changes(f, noise_floor=NoiseFloor(floor_db=-20.0, steadiness_db=20.0))
    bands = S.hiss_bands(hiss)
    assert bands["air"] > bands["high"] > bands["upper_mid"] > bands["sub_bass"] > 0
    assert bands["air"] == pytest.approx(3 * bands["high"])         # 12 kHz against 4 kHz of it
    assert all(v == 0 for v in S.hiss_bands(music).values())
