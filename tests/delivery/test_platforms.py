"""delivery.platforms: each platform's published rule applied to a track."""

from trackgrade.delivery.platforms import PLATFORMS, platform_gains

KEYS = ("spotify", "apple_music", "youtube", "tidal", "amazon_music", "deezer", "soundcloud")


def by_key(lufs, tp):
    return {p.platform: p for p in platform_gains(lufs, tp)}


def test_the_seven_platforms_in_contract_order():
    assert tuple(p.platform for p in platform_gains(-10.0, -1.0)) == KEYS
    assert all(p.source.startswith("https://") for p in PLATFORMS)


def test_a_loud_master_is_turned_down_to_each_reference():
    got = by_key(-8.0, -0.5)
    assert got["spotify"].gain_db == -6.0 and got["spotify"].outcome == "turned_down"
    assert got["spotify"].peak_after_gain_dbtp == -6.5
    assert got["apple_music"].gain_db == -8.0
    assert got["deezer"].gain_db == -7.0
    assert got["soundcloud"].reference_lufs is None
    assert (got["soundcloud"].gain_db, got["soundcloud"].outcome) == (0.0, "unchanged")


def test_a_quiet_track_is_raised_only_where_the_platform_raises_and_only_to_its_ceiling():
    # Spotify's own example: -20 LUFS with a -5 dBTP peak is lifted to -16 LUFS (peak -1 dBTP)
    got = by_key(-20.0, -5.0)
    assert (got["spotify"].gain_db, got["spotify"].outcome) == (4.0, "turned_up_limited")
    assert got["spotify"].peak_after_gain_dbtp == -1.0
    for down_only in ("youtube", "tidal", "amazon_music", "deezer"):
        assert (got[down_only].gain_db, got[down_only].outcome) == (0.0, "unchanged")
    got = by_key(-18.0, -8.0)
    assert (got["spotify"].gain_db, got["spotify"].outcome) == (4.0, "turned_up")
    assert (got["apple_music"].gain_db, got["apple_music"].outcome) == (2.0, "turned_up")


def test_a_track_at_the_reference_is_unchanged():
    got = by_key(-14.0, -1.0)
    assert got["spotify"].outcome == got["youtube"].outcome == "unchanged"
    assert got["apple_music"].outcome == "turned_down"
