"""Genre detection through the real engine on short synthetic tracks of
several families (the full 30-track grid is in benchmarks/GENRES.md)."""

import pytest

from trackgrade.grading import build_analysis

from trackgrade.pipeline import measure

from tests.truth import render_specs

SPECS = [
    {"name": "gr_dnb", "style": "drum_and_bass", "bpm": 174, "key": "F", "seconds": 24, "seed": 3},
    {"name": "gr_trance", "style": "trance", "bpm": 138, "key": "D", "seconds": 24, "seed": 3},
    {"name": "gr_downtempo", "style": "downtempo", "bpm": 92, "key": "C", "seconds": 24, "seed": 3,
     "target_lufs": -13},
    {"name": "gr_ambient", "style": "ambient", "bpm": 72, "key": "E", "seconds": 24, "seed": 3,
     "target_lufs": -16},
    {"name": "gr_dubstep", "style": "dubstep", "bpm": 140, "key": "G", "seconds": 24, "seed": 3},
]


@pytest.fixture(scope="module")
def analyses():
    out, tracks = render_specs(SPECS)
    return {t["name"]: (t, build_analysis(measure((out / t["file"]).read_bytes(), file_name=t["file"]),
                                           file_name=t["file"], mastering_status="master"))
            for t in tracks}


@pytest.mark.parametrize("name", [s["name"] for s in SPECS])
def test_family_detected(analyses, name):
    truth, a = analyses[name]
    if truth["genre_family"] == "dubstep":
        # 140 BPM is inside techno's range too, and the research-based ideals
        # differ by a 3 dB sub tilt only: either of the two is a fair reading
        assert "dubstep" in [c["key"] for c in a.extras["genre_candidates"][:2]]
        return
    assert a.genre.detected == truth["genre_family"], a.extras["genre_candidates"]
    assert a.extras["genre_candidates"][0]["key"] == a.genre.detected


def test_confidence_follows_tempo_overlap(analyses):
    # 174 BPM belongs to drum & bass alone; 138 BPM sits in five families' ranges
    assert analyses["gr_dnb"][1].genre.confidence > analyses["gr_trance"][1].genre.confidence


def test_ambient_is_not_scored_as_a_failed_dance_track(analyses):
    a = analyses["gr_ambient"][1]
    assert a.danceability.score < 50 and "no_pulse" not in a.extras["headline_penalties"]
