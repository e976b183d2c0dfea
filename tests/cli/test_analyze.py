"""`trackgrade analyze`: the Rich screen and the Analysis JSON, on real rendered audio."""

from __future__ import annotations

import json
import re

from trackgrade.cli import app
from trackgrade.cli.errors import EXIT_USAGE
from trackgrade.pipeline import analyze as pipeline_analyze

DOCUMENT_KEYS = ["file_name", "mastering_status", "diagnosis_status", "duration_seconds",
                 "score", "grade", "scores", "tempo", "key", "genre", "frequency", "mix",
                 "structure", "danceability", "energy", "diagnosis", "feedback", "delivery",
                 "content"]


def test_json_for_one_file_is_the_pipeline_document(runner, tracks, rendered_tracks):
    result = runner.invoke(app, ["analyze", str(tracks[0]), "--json", "--mastering", "master"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)          # nothing but JSON on stdout
    assert list(document) == DOCUMENT_KEYS        # no server-only fields
    expected = pipeline_analyze(tracks[0].read_bytes(), file_name=tracks[0].name,
                                mastering_status="master").to_dict()
    assert document == json.loads(json.dumps(expected))
    assert document["mastering_status"] == "master"
    assert document["diagnosis_status"] == "ready"
    truth = rendered_tracks[1][0]
    assert abs(document["duration_seconds"] - truth["seconds"]) < 0.1


def test_json_for_several_files_is_an_array_in_order(runner, tracks):
    result = runner.invoke(app, ["analyze", str(tracks[1]), str(tracks[0]), "--json"])
    assert result.exit_code == 0, result.output
    documents = json.loads(result.stdout)
    assert isinstance(documents, list) and len(documents) == 2
    assert [d["file_name"] for d in documents] == [tracks[1].name, tracks[0].name]
    assert all(d["mastering_status"] == "pre-master" for d in documents)


def test_every_file_is_tried_and_each_failure_is_one_line(runner, tracks, garbage_wav,
                                                         tmp_path):
    """CONTRACT.md section 4: a missing, a folder and an undecodable file among
    good ones; every file is tried, one stderr line per failure, exit 2."""
    missing, folder = tmp_path / "missing.wav", tmp_path / "a-folder"
    folder.mkdir()
    files = [missing, tracks[0], garbage_wav, folder, tracks[1]]
    result = runner.invoke(app, ["analyze", *map(str, files), "--json"])
    assert result.exit_code == 2
    entries = json.loads(result.stdout)
    assert len(entries) == 5
    assert entries[0] == {"file": str(missing), "error": {
        "code": "parameter_invalid",
        "message": f"cannot read '{missing}': No such file or directory"}}
    assert entries[1]["file_name"] == tracks[0].name and "score" in entries[1]
    assert entries[2]["file"] == str(garbage_wav)
    assert entries[2]["error"]["code"] == "unprocessable_audio"
    assert list(entries[2]) == ["file", "error"] and list(entries[2]["error"]) == ["code",
                                                                                   "message"]
    assert entries[3]["file"] == str(folder) and "Is a directory" in entries[3]["error"]["message"]
    assert entries[4]["file_name"] == tracks[1].name
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 3
    assert lines[0] == f"trackgrade: cannot read '{missing}': No such file or directory"
    assert lines[1].startswith(f"trackgrade: cannot analyze '{garbage_wav}'")
    assert lines[2].startswith(f"trackgrade: cannot read '{folder}': Is a directory")


def test_a_one_bar_break_is_analysed(runner, tmp_path):
    """Audio from 1 s up (CONTRACT.md section 5, parts): a 1.5 s one-bar break
    at 160 BPM is graded as a part, with its bar's tempo."""
    from tests.one_bar import one_bar_wav

    path = tmp_path / "break.wav"
    path.write_bytes(one_bar_wav(160))
    result = runner.invoke(app, ["analyze", str(path), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert abs(document["tempo"]["bpm"] - 160) <= 3.2
    assert document["structure"]["judged"] is False


def test_the_screen_also_goes_on_past_a_failure(runner, tracks, tmp_path):
    missing = tmp_path / "gone.wav"
    result = runner.invoke(app, ["analyze", str(missing), str(tracks[0])],
                           env={"COLUMNS": "120"})
    assert result.exit_code == 2
    assert tracks[0].name in result.stdout and "Pillars" in result.stdout
    assert result.stderr.strip() == f"trackgrade: cannot read '{missing}': No such file or directory"


def test_one_missing_file_alone_is_a_usage_error(runner, tmp_path):
    result = runner.invoke(app, ["analyze", str(tmp_path / "nope.wav"), "--json"])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip().endswith("No such file or directory")


def test_screen_shows_what_a_producer_needs(runner, tracks):
    result = runner.invoke(app, ["analyze", str(tracks[0])], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    doc = json.loads(runner.invoke(app, ["analyze", str(tracks[0]), "--json"]).stdout)
    screen = result.stdout
    head = screen[:screen.index("Pillars")]
    assert tracks[0].name in head
    assert re.search(rf"\b{doc['score']}\b\s+{re.escape(doc['grade']['letter'])}\s+"
                     rf"{doc['grade']['label']}", head)
    assert f"{doc['tempo']['bpm']:.1f} BPM" in head
    if doc["key"]:
        assert f"{doc['key']['key']} {doc['key']['scale']}" in head
        assert doc["key"]["camelot"] in head
    assert doc["genre"]["name"] in head
    for title in ("Danceability", "Mix quality", "Frequency balance", "Energy", "Structure"):
        assert re.search(rf"{title}\s+\S+\s+{doc['scores'][title.lower().replace(' ', '_')]}\b",
                         screen), title
    for band in ("Sub bass", "Bass", "Low mids", "Mids", "Upper mids", "Highs", "Air"):
        assert band in screen
    assert f"{doc['frequency']['bands']['sub_bass']:.1f}%" in screen
    assert f"{doc['frequency']['ideal']['sub_bass']:.1f}%" in screen
    assert f"{doc['mix']['loudness_lufs']:.1f} LUFS" in screen
    assert f"{doc['mix']['peak_dbfs']:+.1f} dBTP" in screen
    for section in doc["structure"]["sections"]:
        assert section["label"] in screen
    ranks = {"warn": 0, "tip": 1, "pass": 2}
    shown = [ranks[m] for m in re.findall(r"[▲●✓] (warn|tip|pass)", screen)]
    # warnings and tips each on a line, the passes on one line (--verbose lists them)
    assert len(shown) == sum(1 for f in doc["feedback"] if f["type"] != "pass") + any(
        f["type"] == "pass" for f in doc["feedback"])
    assert shown == sorted(shown)
    assert "Diagnosis" not in screen and len(screen.splitlines()) <= 70   # fits a screen


def test_verbose_adds_the_diagnosis_and_every_check(runner, tracks):
    result = runner.invoke(app, ["analyze", str(tracks[0]), "--verbose"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    doc = json.loads(runner.invoke(app, ["analyze", str(tracks[0]), "--json"]).stdout)
    shown = re.findall(r"[▲●✓] (warn|tip|pass)", result.stdout)
    assert len(shown) == len(doc["feedback"])
    assert "Diagnosis" in result.stdout and "Structure" in result.stdout


def test_json_is_clean_when_stdout_is_piped(tracks, tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "trackgrade", "analyze", str(tracks[1]),
                           "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["file_name"] == tracks[1].name
    assert done.stderr == ""


def test_several_files_end_with_a_side_by_side_table(runner, tracks):
    result = runner.invoke(app, ["analyze", str(tracks[0]), str(tracks[1])],
                           env={"COLUMNS": "140"})
    assert result.exit_code == 0, result.output
    docs = json.loads(runner.invoke(app, ["analyze", str(tracks[0]), str(tracks[1]),
                                          "--json"]).stdout)
    table = result.stdout[result.stdout.index("Side by side"):]
    for doc in docs:
        row = next(line for line in table.splitlines() if doc["file_name"] in line)
        assert re.search(rf"\b{doc['score']}\s+{re.escape(doc['grade']['letter'])}\s", row)
        assert f"{doc['tempo']['bpm']:.1f}" in row


def test_near_silence_is_refused_naming_its_peak(runner, tmp_path):
    """CONTRACT.md section 6: 60 s of a -80 dBFS hum is refused like digital
    silence (unprocessable_audio; the message names near-silence and the peak),
    not graded and told to raise the mix bus."""
    import numpy as np
    import soundfile as sf

    t = np.arange(60 * 22050) / 22050
    hum = 10 ** (-80 / 20) * np.sin(2 * np.pi * 50 * t)
    path = tmp_path / "hum.wav"
    sf.write(path, np.stack([hum, hum], axis=1), 22050, subtype="PCM_24")
    result = runner.invoke(app, ["analyze", str(path), "--json"])
    assert result.exit_code == EXIT_USAGE, result.output
    assert "near-silence (peak -80.0 dBFS" in result.stderr
    assert "mix bus" not in result.output
