"""`trackgrade genres`: the profiles as a table and as JSON."""

from __future__ import annotations

import json

from trackgrade.cli import app
from trackgrade.engine.features import BAND_NAMES
from trackgrade.grading.genres import genre_list


def test_genres_json_is_the_genre_list(runner):
    result = runner.invoke(app, ["genres", "--json"])
    assert result.exit_code == 0, result.output
    entries = json.loads(result.stdout)
    assert entries == genre_list()
    families = [e for e in entries if "family" not in e]
    labels = [e for e in entries if "family" in e]
    assert len(families) == 11
    assert entries[:11] == families, "families come first"
    family_keys = {e["key"] for e in families}
    assert labels and all(e["family"] in family_keys for e in labels)
    for entry in entries:
        assert set(entry["ideal_bands"]) == set(BAND_NAMES)
        low, high = entry["bpm_range"]
        assert 0 < low < high


def test_genres_table_lists_every_profile(runner):
    result = runner.invoke(app, ["genres"], env={"COLUMNS": "220"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    for entry in genre_list():
        row = next((line for line in lines if line.split() and line.split()[0] == entry["key"]),
                   None)
        assert row is not None, f"{entry['key']} missing from the table"
        low, high = entry["bpm_range"]
        assert f"{low:g}-{high:g}" in row
        assert f"{entry['ideal_bands']['bass']:.1f}" in row
        if "family" in entry:
            assert entry["family"] in row.split()


def test_an_unknown_genre_on_the_command_line_names_trackgrade_genres(runner, tmp_path):
    track = tmp_path / "a.wav"
    track.write_bytes(b"RIFF")
    for command in (["analyze", str(track)], ["batch", str(track)], ["report", str(track)],
                    ["compare", str(track), str(track)], ["album", str(track)]):
        result = runner.invoke(app, [*command, "--genre", "polka"])
        assert result.exit_code == 2, (command, result.output)
        assert "'trackgrade genres'" in result.stderr and "'polka'" in result.stderr, command
        assert "GET /genres" not in result.output, command
