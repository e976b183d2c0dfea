"""compare(a, b) and album(documents): pure functions of Analysis documents."""

import json

from tests.delivery.signals import club_loop, gained, high_passed, wav_bytes
from trackgrade import compare
from trackgrade.delivery.album import album
from trackgrade.engine.features import BAND_NAMES
from trackgrade.pipeline import analyze

BASE = club_loop()


def doc(x, name="x.wav"):
    return analyze(wav_bytes(x), file_name=name, enhanced=False).to_dict()


A = doc(BASE, "a.wav")


def test_a_3_db_gain_reads_3_db_in_every_band_and_0_once_matched():
    result = compare(A, doc(gained(BASE, 3.0), "b.wav"))
    assert all(abs(result["bands_db"][b] - 3.0) <= 0.1 for b in BAND_NAMES), result["bands_db"]
    assert all(abs(result["matched_bands_db"][b]) <= 0.1 for b in BAND_NAMES)
    assert abs(result["loudness_lufs_db"] - 3.0) <= 0.1
    assert abs(result["true_peak_db"] - 3.0) <= 0.1
    assert set(result) >= {"a", "b", "bands_db", "matched_bands_db", "loudness_lufs_db",
                           "true_peak_db", "lra_db", "width", "pillars", "score"}
    assert result["a"]["file"] == "a.wav" and result["b"]["file"] == "b.wav"
    assert result["score"] == result["b"]["score"] - result["a"]["score"]


def test_a_120_hz_high_pass_shows_in_the_sub_band_and_not_in_the_mids():
    result = compare(A, doc(high_passed(BASE), "hp.wav"))
    assert result["bands_db"]["sub_bass"] <= -10.0
    for band in ("low_mid", "mid", "upper_mid", "high", "air"):
        assert abs(result["bands_db"][band]) <= 0.3, (band, result["bands_db"])


def test_compare_reads_a_saved_document_like_a_fresh_one():
    saved = json.loads(json.dumps(A))
    assert compare(saved, A)["bands_db"] == {b: 0.0 for b in BAND_NAMES}


def test_an_album_names_the_track_5_lu_quieter_with_a_5_db_match():
    quiet = doc(gained(BASE, -5.0), "quiet.wav")
    result = album([A, A, quiet, A], files=["1.wav", "2.wav", "quiet.wav", "4.wav"])
    assert result["median_lufs"] == A["mix"]["loudness_lufs"]
    tracks = {t["file"]: t for t in result["tracks"]}
    assert tracks["quiet.wav"]["outlier"] is True
    assert abs(tracks["quiet.wav"]["gain_to_match_db"] - 5.0) <= 0.1
    assert "quieter" in tracks["quiet.wav"]["reasons"][0]
    assert all(abs(v) <= 0.1 for v in tracks["quiet.wav"]["band_offsets_db"].values())
    assert [t["outlier"] for t in result["tracks"]] == [False, False, True, False]
    assert set(result["tracks"][0]) == {"file", "lufs", "gain_to_match_db", "band_offsets_db",
                                        "outlier", "reasons"}


def test_an_album_names_a_track_whose_low_end_is_missing():
    result = album([A, A, doc(high_passed(BASE), "hp.wav")], files=["1", "2", "hp"])
    hp = result["tracks"][2]
    assert hp["outlier"] and any("sub-bass" in r for r in hp["reasons"])


def test_an_album_gain_that_would_push_the_true_peak_over_the_ceiling_says_so():
    spiky = gained(BASE, -5.0)
    spiky[len(spiky) // 2] = [0.98, 0.98]            # one click just under full scale
    track = doc(spiky, "spiky.wav")
    peak = track["mix"]["peak_dbfs"]
    assert peak > -1.0
    result = album([A, A, track, A], files=["1.wav", "2.wav", "spiky.wav", "4.wav"])
    spiky_row = next(t for t in result["tracks"] if t["file"] == "spiky.wav")
    gain = spiky_row["gain_to_match_db"]
    assert gain >= 4.0
    reached = round(peak + gain, 1)
    assert f"{gain:+.1f} dB matches it, but its true peak would reach {reached:+.1f} dBTP" \
        in spiky_row["reasons"][0], spiky_row["reasons"]
    master = analyze(wav_bytes(BASE), file_name="m.wav", mastering_status="master",
                     enhanced=False).to_dict()
    quiet = analyze(wav_bytes(gained(BASE, -5.0)), file_name="q.wav", mastering_status="master",
                    enhanced=False).to_dict()
    assert master["mix"]["peak_dbfs"] < -1.0          # the master ceiling
    row = album([master, master, quiet])["tracks"][2]
    assert row["outlier"] and row["reasons"][0].endswith("dB matches it"), row["reasons"]
