"""`trackgrade batch`: discovery, parallel workers, rows that survive failures, summary."""

from __future__ import annotations

import csv
import json
import os
import shutil

import pytest

from trackgrade.cli import app
from trackgrade.cli.batch import CSV_COLUMNS, collect_files


@pytest.fixture()
def library(tracks, garbage_wav, tmp_path):
    """A folder of two good tracks (one nested, one with an upper-case
    extension), one broken file and files that must be ignored."""
    root = tmp_path / "library"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / ".hidden").mkdir()
    shutil.copyfile(tracks[0], root / "techno.wav")
    shutil.copyfile(tracks[1], root / "sub" / "deeper" / "HOUSE.FLAC")
    shutil.copyfile(garbage_wav, root / "sub" / "broken.wav")
    shutil.copyfile(tracks[0], root / ".hidden" / "ignored.wav")
    (root / "notes.txt").write_text("not audio")
    (root / "cover.jpg").write_bytes(b"\xff\xd8\xff")
    return root


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        return reader.fieldnames, list(reader)


def test_discovery(library):
    found = collect_files([library])
    assert sorted(p.relative_to(library).as_posix() for p in found.files) == [
        "sub/broken.wav", "sub/deeper/HOUSE.FLAC", "techno.wav"]
    assert found.folders[str(library / "sub" / "deeper" / "HOUSE.FLAC")] == "sub/deeper"
    assert found.folders[str(library / "techno.wav")] == ""
    # files it will not grade are named (hidden ones are not)
    assert sorted(found.skipped) == [str(library / "cover.jpg"), str(library / "notes.txt")]
    # an explicit file is always included, duplicates only once
    again = collect_files([library / "techno.wav", library, library / "notes.txt"]).files
    assert len(again) == 4 and again[0].name == "techno.wav" and again[-1].name == "notes.txt"


EXPECTED_COLUMNS = (
    "file", "path", "status", "score", "grade", "grade_label", "danceability", "mix_quality",
    "frequency_balance", "energy", "structure", "duration_seconds", "bpm", "tempo_confidence",
    "key", "camelot", "key_confidence", "genre", "genre_confidence", "loudness_lufs",
    "true_peak_dbtp", "loudness_range_lu", "stereo_width", "clipping_pct", "top_warning",
    "error_code", "error_message", "seconds")


def test_parallel_batch_to_csv_keeps_going_past_failures(runner, library, tmp_path):
    out = tmp_path / "rows.csv"
    result = runner.invoke(app, ["batch", str(library), "--jobs", "2", "--out", str(out)],
                           env={"COLUMNS": "160"})
    assert result.exit_code == 1, result.output      # some failed
    header, rows = read_csv(out)
    assert tuple(header) == CSV_COLUMNS == EXPECTED_COLUMNS
    by_name = {row["file"]: row for row in rows}
    # --sort score (the default): graded files best first, the failure last
    assert rows[-1]["file"] == "broken.wav"
    assert int(rows[0]["score"]) >= int(rows[1]["score"])
    assert set(by_name) == {"techno.wav", "HOUSE.FLAC", "broken.wav"}
    broken = by_name["broken.wav"]
    assert broken["status"] == "failed" and broken["error_code"] == "unprocessable_audio"
    assert broken["error_message"] and broken["score"] == ""
    for name in ("techno.wav", "HOUSE.FLAC"):
        row = by_name[name]
        assert row["status"] == "ok" and row["error_code"] == ""
        assert 0 <= int(row["score"]) <= 100 and row["grade"]
        assert float(row["bpm"]) > 0 and float(row["seconds"]) >= 0
        assert float(row["loudness_lufs"]) < 0
        assert row["path"].endswith(name) and row["grade_label"]
        for column in ("danceability", "mix_quality", "frequency_balance", "energy",
                       "structure"):
            assert 0 <= int(row[column]) <= 100
        assert 0 <= float(row["tempo_confidence"]) <= 1
        assert 0 <= float(row["genre_confidence"]) <= 1 and row["genre"]
        assert float(row["duration_seconds"]) > 10
        assert float(row["true_peak_dbtp"]) < 3 and float(row["loudness_range_lu"]) >= 0
        assert float(row["stereo_width"]) >= 0 and float(row["clipping_pct"]) >= 0
    # the screen: ranked table, failures (file, folder, code, message), summary
    screen = result.stdout
    ranked = screen[screen.index("Ranked"):screen.index("Failures")]
    ok = sorted((r for r in rows if r["status"] == "ok"), key=lambda r: -int(r["score"]))
    positions = [ranked.index(r["file"]) for r in ok]
    assert positions == sorted(positions)                          # best first
    for column in ("score", "grade", "genre", "BPM", "key", "LUFS", "top warning"):
        assert column in ranked
    failures = screen[screen.index("Failures"):screen.index("Batch summary")]
    line = next(x for x in failures.splitlines() if "broken.wav" in x)
    assert "unprocessable_audio" in line and " sub " in f" {line} "
    assert str(library) not in failures                            # no cut-off prefixes
    summary = screen[screen.index("Batch summary"):]
    assert "2 of 3" in summary and "2 not audio" in summary
    assert "cover.jpg" in summary and "notes.txt" in summary


def test_sort_by_name_and_the_whole_document_in_jsonl(runner, library, tmp_path):
    out = tmp_path / "rows.csv"
    result = runner.invoke(app, ["batch", str(library), "--sort", "name", "--out", str(out),
                                 "--json"])
    assert result.exit_code == 1
    _, rows = read_csv(out)
    assert [r["file"] for r in rows] == ["broken.wav", "HOUSE.FLAC", "techno.wav"]
    report = json.loads(result.stdout)
    assert [r["file"] for r in report["results"]] == ["broken.wav", "HOUSE.FLAC", "techno.wav"]
    assert report["summary"]["skipped"] == {
        "count": 2, "files": [str(library / "cover.jpg"), str(library / "notes.txt")]}


def test_jobs_one_and_two_give_the_same_results(runner, library, tmp_path):
    rows = {}
    for jobs in (1, 2):
        out = tmp_path / f"rows{jobs}.jsonl"
        result = runner.invoke(app, ["batch", str(library), "-j", str(jobs), "-o", str(out),
                                     "--mastering", "master"])
        assert result.exit_code == 1, result.output
        lines = out.read_text(encoding="utf-8").splitlines()
        assert len(lines) == 3
        objects = [json.loads(line) for line in lines]
        rows[jobs] = {o["path"]: o for o in objects}
    assert rows[1].keys() == rows[2].keys()
    for path, one in rows[1].items():
        two = rows[2][path]
        assert (one["status"], one["score"], one["grade"], one["bpm"], one["key"]) == \
               (two["status"], two["score"], two["grade"], two["bpm"], two["key"])
        if one["status"] == "ok":
            from tests.document_check import validate_document

            assert validate_document(one["analysis"]) == []          # the whole document
            assert one["analysis"]["mastering_status"] == "master"
            assert one["analysis"]["score"] == one["score"]
            assert one["analysis"]["file_name"] == path.rsplit("/", 1)[-1]
        else:
            assert one["analysis"] is None


def test_json_summary_and_exit_zero_when_all_ok(runner, tracks):
    result = runner.invoke(app, ["batch", str(tracks[0]), str(tracks[1]), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    summary = report["summary"]
    assert (summary["files"], summary["ok"], summary["failed"]) == (2, 2, 0)
    scores = [r["score"] for r in report["results"]]
    assert summary["mean_score"] == round(sum(scores) / 2, 1)
    assert sum(summary["grades"].values()) == 2
    assert summary["slowest"]["path"] in {str(tracks[0]), str(tracks[1])}
    assert sorted(r["path"] for r in report["results"]) == sorted([str(tracks[0]),
                                                                   str(tracks[1])])
    assert scores == sorted(scores, reverse=True)                  # --sort score
    assert summary["skipped"] == {"count": 0, "files": []}


def test_no_files_found_is_usage(runner, tmp_path):
    (tmp_path / "readme.txt").write_text("x")
    result = runner.invoke(app, ["batch", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.startswith("trackgrade: no audio files found")
    result = runner.invoke(app, ["batch", str(tmp_path / "missing")])
    assert result.exit_code == 2
    assert "No such file or directory" in result.stderr


def test_bad_out_and_jobs_are_usage(runner, tracks, tmp_path):
    result = runner.invoke(app, ["batch", str(tracks[0]), "--out", str(tmp_path / "rows.xlsx")])
    assert result.exit_code == 2
    assert "--out must end in .csv or .jsonl" in result.stderr
    result = runner.invoke(app, ["batch", str(tracks[0]), "--jobs", "0"])
    assert result.exit_code == 2
    assert "--jobs" in result.stderr


def test_ctrl_c_stops_the_pool_and_keeps_finished_rows(tracks, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(60):
        source = tracks[i % 2]
        os.link(source, folder / f"t{i:02d}{source.suffix}")
    out = tmp_path / "rows.csv"
    process = subprocess.Popen(
        [sys.executable, "-m", "trackgrade", "batch", str(folder), "--jobs", "2", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if out.exists() and len(out.read_text().splitlines()) >= 2:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stderr.strip() == "trackgrade: interrupted"
    assert stdout == ""
    _, rows = read_csv(out)
    assert 1 <= len(rows) < 60
    assert all(row["status"] == "ok" for row in rows)


def test_real_clips_in_place(runner):
    """Real recordings from ../shared/truth/real (read where they are): every
    accepted format goes through, and anything that fails says why."""
    from trackgrade.errors import ERROR_CODES

    from tests.truth import need_real, real_manifest

    need_real()
    rows = real_manifest()
    picked = []
    for suffix in (".wav", ".flac", ".mp3", ".WAV"):
        picked += [r["path"] for r in rows if r["path"].endswith(suffix)][:2]
    assert len(picked) >= 7
    result = runner.invoke(app, ["batch", *picked, "--jobs", "2", "--json"])
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    assert sorted(r["path"] for r in report["results"]) == sorted(picked)
    for row in report["results"]:
        if row["status"] == "ok":
            assert 0 <= row["score"] <= 100 and row["grade"] and row["bpm"] > 0
        else:
            assert row["error_code"] in ERROR_CODES and row["error_message"]
    assert report["summary"]["ok"] >= len(picked) - 1
    assert result.exit_code == (0 if report["summary"]["failed"] == 0 else 1)


def fake_rows(count: int) -> list[dict]:
    from trackgrade.cli.rows import empty_row

    rows = []
    for i in range(count):
        rows.append(empty_row(f"promos/track_{i:02d}_with_a_rather_long_name.wav") | {
            "status": "ok", "score": 40 + i, "grade": "C", "genre": "drum_and_bass",
            "bpm": 174.0, "key": "F# minor", "camelot": "11A", "loudness_lufs": -8.5,
            "top_warning": "True peak 0.4 dBTP is 3.4 dB over the -3 dBTP ceiling for a "
                           "pre-master: lower the output or use a true-peak limiter.",
            "seconds": 1.0})
    return rows


@pytest.mark.parametrize("width", [160, 100, 80, 60])
def test_ranked_table_is_trimmed_to_the_terminal(width):
    from rich.console import Console

    from trackgrade.cli.tables import ranked_table

    rows = fake_rows(30)
    console = Console(width=width, record=True, file=open("/dev/null", "w"))
    console.print(ranked_table(rows, limit=12, width=width))
    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines) <= width
    body = [line for line in lines if "track_" in line]
    assert len(body) == 12                                    # at most `limit` rows
    assert "track_29" in body[0] and "69" in body[0]          # best first
    assert "18 more graded files" in lines[-1]
    header = next(line for line in lines if "score" in line)
    assert ("top warning" in header) == (width > 100)
    if width > 100:
        assert "True peak 0.4 dBTP" in body[0]
    if width == 160:
        assert "track_29_with_a_rather_long_name" in body[0] and "F# minor 11A" in body[0]
        assert "Drum & Bass" in body[0] and "drum_and_bass" not in body[0]   # people read names
    assert "BPM" in header and "grade" in header and "score" in header


def test_summary_names_skipped_files_and_says_how_many_more():
    from rich.console import Console

    from trackgrade.cli.tables import batch_summary_table
    from trackgrade.cli.rows import summarize

    skipped = [f"demos/notes_{i}.txt" for i in range(9)]
    console = Console(width=120, record=True, file=open("/dev/null", "w"))
    console.print(batch_summary_table(summarize(fake_rows(2), 3.0, skipped)))
    text = console.export_text()
    assert "9 not audio: notes_0.txt" in text and "and 3 more" in text
    assert "demos/" not in text


def test_genre_and_reference_set_the_target_of_every_file(runner, tracks, tmp_path):
    out = tmp_path / "rows.jsonl"
    result = runner.invoke(app, ["batch", str(tracks[0]), str(tracks[1]), "-j", "2",
                                 "--genre", "deep_house", "--out", str(out)])
    assert result.exit_code == 0, result.output
    docs = [json.loads(line)["analysis"] for line in out.read_text().splitlines()]
    assert [d["genre"]["target"] for d in docs] == ["deep_house", "deep_house"]
    out2 = tmp_path / "refs.jsonl"
    result = runner.invoke(app, ["batch", str(tracks[0]), "--reference", str(tracks[1]),
                                 "-j", "1", "--out", str(out2)])
    assert result.exit_code == 0, result.output
    (doc,) = [json.loads(line)["analysis"] for line in out2.read_text().splitlines()]
    assert doc["genre"]["target"] == "reference" and tracks[1].name in doc["diagnosis"]["summary"]
    bad = runner.invoke(app, ["batch", str(tracks[0]), "--genre", "polka"])
    assert bad.exit_code == 2


def test_batch_works_under_a_tmpdir_too_long_for_the_fork_servers_socket(tracks, tmp_path):
    """The fork server's Unix socket lives under TMPDIR; where its path would
    pass the kernel's 107 bytes the pool starts its workers by spawn instead
    of failing with "AF_UNIX path too long"."""
    import subprocess
    import sys

    from trackgrade.pool import FORKSERVER_SOCKET, UNIX_PATH_MAX

    deep = tmp_path / ("t" * (UNIX_PATH_MAX - len(str(tmp_path)) - 10))
    deep.mkdir()
    assert len(str(deep)) + len("/pymp-xxxxxxxx") + FORKSERVER_SOCKET > UNIX_PATH_MAX
    out = tmp_path / "rows.csv"
    done = subprocess.run(
        [sys.executable, "-m", "trackgrade", "batch", str(tracks[0]), "--jobs", "1",
         "--out", str(out)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "TMPDIR": str(deep)})
    assert done.returncode == 0, done.stderr
    _, rows = read_csv(out)
    assert [row["status"] for row in rows] == ["ok"]
