"""`trackgrade compare` and `trackgrade album` on real files and saved JSON,
and `--codec-preview` on `analyze`."""

from __future__ import annotations

import json

import soundfile as sf

from tests.delivery.signals import RATE, club_loop, gained, high_passed
from trackgrade.cli import app
from trackgrade.engine.features import BAND_NAMES


def write(path, x):
    sf.write(path, x, RATE, subtype="FLOAT")
    return path


def test_compare_two_audio_files_as_json(runner, tmp_path):
    base = club_loop(8.0)
    a = write(tmp_path / "a.wav", base)
    b = write(tmp_path / "b.wav", gained(base, 3.0))
    result = runner.invoke(app, ["compare", str(a), str(b), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert list(doc) == ["a", "b", "bands_db", "matched_bands_db", "loudness_lufs_db",
                         "true_peak_db", "lra_db", "width", "correlation", "pillars", "score",
                         "level_only", "verdict"]
    assert all(abs(doc["bands_db"][band] - 3.0) <= 0.1 for band in BAND_NAMES)
    assert doc["a"]["file"] == str(a) and doc["b"]["file"] == str(b)


def test_compare_a_saved_analysis_with_an_audio_file_on_screen(runner, tmp_path):
    base = club_loop(8.0)
    a = write(tmp_path / "a.wav", base)
    saved = runner.invoke(app, ["analyze", str(a), "--json"])
    assert saved.exit_code == 0
    (tmp_path / "a.json").write_text(saved.stdout, encoding="utf-8")
    b = write(tmp_path / "hp.wav", high_passed(base))
    result = runner.invoke(app, ["compare", str(tmp_path / "a.json"), str(b)])
    assert result.exit_code == 0, result.output
    assert "B against A" in result.stdout and "loudness-matched" in result.stdout
    sub = next(line for line in result.stdout.splitlines() if line.strip().startswith("Sub bass"))
    assert float(sub.split()[2]) <= -10.0


def test_compare_an_unreadable_input_exits_2(runner, tmp_path):
    a = write(tmp_path / "a.wav", club_loop(3.0))
    (tmp_path / "bad.json").write_text('{"not": "an analysis"}', encoding="utf-8")
    (tmp_path / "noise.wav").write_bytes(b"RIFF0000WAVEjunk" * 10)
    for other in ("missing.wav", "bad.json", "noise.wav"):
        result = runner.invoke(app, ["compare", str(a), str(tmp_path / other)])
        assert result.exit_code == 2, (other, result.output)
        assert "Traceback" not in result.output


def test_album_names_the_quiet_track(runner, tmp_path):
    base = club_loop(8.0)
    folder = tmp_path / "ep"
    folder.mkdir()
    for name in ("1.wav", "2.wav", "4.wav"):
        write(folder / name, base)
    write(folder / "3_quiet.wav", gained(base, -5.0))
    result = runner.invoke(app, ["album", str(folder), "--jobs", "2", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert list(doc) == ["median_lufs", "tracks"]
    quiet = [t for t in doc["tracks"] if t["outlier"]]
    assert [t["file"] for t in quiet] == ["3_quiet.wav"]
    assert abs(quiet[0]["gain_to_match_db"] - 5.0) <= 0.1
    screen = runner.invoke(app, ["album", str(folder), "--jobs", "2"])
    assert screen.exit_code == 0 and "Outliers" in screen.stdout and "3_quiet.wav" in screen.stdout


def test_analyze_screen_shows_the_delivery_summary(runner, tmp_path):
    a = write(tmp_path / "a.wav", club_loop(6.0))
    result = runner.invoke(app, ["analyze", str(a)])
    assert result.exit_code == 0, result.output
    assert "Streaming" in result.stdout and "Spotify" in result.stdout and "Mono" in result.stdout
    assert "Codecs" not in result.stdout
    verbose = runner.invoke(app, ["analyze", str(a), "-v"])
    assert "Streaming platforms" in verbose.stdout and "SoundCloud" in verbose.stdout


def test_album_on_files_that_all_fail_exits_2_with_one_line_per_file(runner, tmp_path):
    (tmp_path / "empty.wav").write_bytes(b"")
    (tmp_path / "notes.wav").write_text("hello\n", encoding="utf-8")
    for extra in ([], ["--json"]):
        result = runner.invoke(app, ["album", str(tmp_path / "empty.wav"),
                                     str(tmp_path / "notes.wav"), *extra])
        assert result.exit_code == 2, result.output
        assert "internal error" not in result.output and "Traceback" not in result.output
        lines = result.stderr.splitlines()
        assert any("'empty.wav' is empty" in line for line in lines), lines
        assert any("'notes.wav' is not a recognised audio file" in line for line in lines)
        assert "no file could be graded (2 failed)" in lines[-1]
        assert result.stdout == ""


def test_compare_names_a_level_only_change_and_leads_with_the_matched_bands(runner, tmp_path):
    """The same pre-master 3 dB quieter: labelled as a level change, the
    loudness-matched comparison first, the score change put down to level."""
    base = club_loop(8.0)
    a = write(tmp_path / "a.wav", base)
    quieter = write(tmp_path / "quieter.wav", gained(base, -3.0))
    doc = json.loads(runner.invoke(app, ["compare", str(a), str(quieter), "--json"]).stdout)
    assert doc["level_only"] is True
    assert doc["verdict"].startswith("Level only: B is A 3.0 dB quieter")
    screen = runner.invoke(app, ["compare", str(a), str(quieter)], env={"COLUMNS": "200"})
    assert screen.exit_code == 0, screen.output
    lines = [line.strip() for line in screen.stdout.splitlines() if line.strip()]
    assert lines[0].startswith("Level only: B is A 3.0 dB quieter")
    assert lines[1].startswith("Bands (B - A), loudness-matched first")
    assert lines[2].split() == ["band", "loudness-matched", "level"]
    assert "B against A: a level change only" in screen.stdout
    score = next(line for line in lines if line.startswith("score"))
    assert score.endswith("(level)"), score
    changed = write(tmp_path / "hp.wav", high_passed(base))
    other = json.loads(runner.invoke(app, ["compare", str(a), str(changed), "--json"]).stdout)
    assert other["level_only"] is False
    assert other["verdict"].startswith("Loudness-matched, B differs from A in sub-bass")


def test_report_compare_names_a_level_only_change_first(runner, tmp_path):
    base = club_loop(8.0)
    earlier = write(tmp_path / "v1.wav", base)
    later = write(tmp_path / "v2.wav", gained(base, -3.0))
    page = tmp_path / "v2.html"
    result = runner.invoke(app, ["report", str(later), "--compare", str(earlier), "--out",
                                 str(page)])
    assert result.exit_code == 0, result.output
    html = page.read_text(encoding="utf-8")
    verdict = html.index('id="comparison-verdict"')
    assert html.index('id="comparison"') < verdict < html.index('id="comparison-table"')
    assert "Level only: B is A 3.0 dB quieter" in html[verdict:]
    assert "a level change only</h2>" in html
