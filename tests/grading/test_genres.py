import pytest

from trackgrade.engine.features import BAND_NAMES
from trackgrade.errors import TrackgradeError
from trackgrade.grading.genres import (FAMILIES, FAMILY_KEYS, GENRES, detect_genre, family_of,
                                       genre_list, get_profile, tempo_fit)


def test_genre_list_families_first_then_labels():
    data = genre_list()
    assert len(FAMILIES) == 11
    families, labels = data[:11], data[11:]
    assert all("family" not in g for g in families)
    assert labels and all(g["family"] in FAMILY_KEYS for g in labels)
    assert [g["key"] for g in families] == list(FAMILY_KEYS)
    keys = [g["key"] for g in data]
    assert len(keys) == len(set(keys))
    for g in data:
        assert set(g) <= {"key", "name", "bpm_range", "ideal_bands", "family"}
        assert g["key"].isidentifier() and g["key"] == g["key"].lower()
        lo, hi = g["bpm_range"]
        assert 40 <= lo < hi <= 200
        assert list(g["ideal_bands"]) == list(BAND_NAMES)
        assert abs(sum(g["ideal_bands"].values()) - 100.0) <= 0.1


def test_genre_list_is_a_fresh_copy():
    data = genre_list()
    data[0]["ideal_bands"]["bass"] = -1
    assert genre_list()[0]["ideal_bands"]["bass"] != -1


def test_families_carry_scoring_targets():
    for g in FAMILIES:
        for status in ("master", "pre-master"):
            lo, hi = g["loudness_lufs"][status]
            assert -30 < lo < hi < 0
        assert g["crest_db"][0] < g["crest_db"][1]
        assert g["lra_lu"][0] < g["lra_lu"][1]
        assert g["structure"]


def test_get_profile_and_family_of():
    assert get_profile("melodic_techno")["family"] == "techno"
    assert family_of("melodic_techno")["key"] == "techno"
    assert family_of("house")["key"] == "house"
    with pytest.raises(TrackgradeError) as err:
        get_profile("polka")
    assert err.value.code == "parameter_invalid"


def test_tempo_fit_inside_outside_and_half_time():
    assert tempo_fit(122.5, (115, 130)) == 1.0 and 0.95 < tempo_fit(124, (115, 130)) < 1.0
    assert tempo_fit(150, (115, 130)) < 0.05
    assert tempo_fit(70, (136, 150), half_time=True) > 0.9
    assert tempo_fit(70, (136, 150)) == pytest.approx(0.6 * tempo_fit(140, (136, 150)))


@pytest.mark.parametrize("family", [g["key"] for g in FAMILIES])
def test_each_family_detected_from_its_own_profile(family):
    g = GENRES[family]
    bpm = sum(g["bpm_range"]) / 2
    guess = detect_genre(bpm=bpm, bands=g["ideal_bands"], tempo_salient=family != "ambient")
    assert guess.key == family
    assert 0.0 <= guess.confidence <= 1.0
    assert [k for k, _ in guess.candidates][0] == family


def test_confidence_lower_where_tempo_ranges_overlap():
    bands = GENRES["drum_and_bass"]["ideal_bands"]
    alone = detect_genre(bpm=174, bands=bands)            # only drum_and_bass covers 174
    trance = GENRES["trance"]["ideal_bands"]
    crowded = detect_genre(bpm=136, bands=trance)          # techno, trance, dubstep, breakbeat, garage
    assert alone.key == "drum_and_bass" and crowded.key == "trance"
    assert crowded.confidence < alone.confidence
    assert alone.confidence >= 0.6


def test_no_pulse_reads_as_ambient():
    guess = detect_genre(bpm=120, bands=GENRES["ambient"]["ideal_bands"], tempo_salient=False)
    assert guess.key == "ambient"


def test_get_profile_returns_a_copy():
    get_profile("house")["bpm_range"][0] = 1
    assert GENRES["house"]["bpm_range"][0] != 1
