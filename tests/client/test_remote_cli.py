"""`trackgrade remote …` and `trackgrade batch --remote` against a real
`trackgrade serve` process on loopback: every command, its JSON, its errors
(one line with the envelope's code and request id; exit codes of CONTRACT.md
section 2), and a remote analysis drawn exactly like a local one."""

from __future__ import annotations

import csv
import json
import re
import shutil

import pytest
from tests.client.served import Served, credits, free_port, make_key
from tests.server.server_harness import wav_bytes
from tests.truth import render_specs
from typer.testing import CliRunner

from trackgrade.cli import app
from trackgrade.cli.rows import CSV_COLUMNS

TRACKS = [{"name": f"remote_{i}", "style": style, "bpm": bpm, "seconds": 6, "seed": 40 + i}
          for i, (style, bpm) in enumerate((("techno", 130), ("house", 124), ("trance", 138)))]


@pytest.fixture(scope="module")
def tracks():
    folder, truth = render_specs(TRACKS)
    return [folder / t["file"] for t in truth]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    data = tmp_path_factory.mktemp("remote-data")
    keys = {"test": make_key(data, "test")[0]}
    keys["live"], keys["live_account"] = make_key(data, "live", credits=20)
    server = Served(data, "--workers", "1")
    server.keys = keys
    yield server
    server.stop()


def run(served, *args, key="test", env=None):
    runner = CliRunner()
    environment = {"TRACKGRADE_BASE_URL": served.url,
                   "TRACKGRADE_API_KEY": served.keys[key] if key else "", "COLUMNS": "100",
                   **(env or {})}
    return runner.invoke(app, list(args), env=environment)


def test_account_human_and_json(served):
    shown = run(served, "remote", "account")
    assert shown.exit_code == 0, shown.output
    assert "no daily quota" in shown.stdout and "20 per minute" not in shown.stdout
    doc = json.loads(run(served, "remote", "account", "--json").stdout)
    assert doc["object"] == "account" and doc["livemode"] is False
    assert doc["limits"]["in_flight"] == 20


def test_analyze_without_wait_then_status_get_list(served, tmp_path):
    track = tmp_path / "idea.wav"
    track.write_bytes(wav_bytes(2))
    submitted = run(served, "remote", "analyze", str(track), "--json")
    assert submitted.exit_code == 0, submitted.output
    accepted = json.loads(submitted.stdout)
    assert accepted["status"] == "processing" and "upload" not in accepted
    human = run(served, "remote", "analyze", str(track))
    assert "submitted idea.wav as " in human.stdout and "remote status" in human.stdout
    status = run(served, "remote", "status", accepted["id"])
    assert status.exit_code == 0 and accepted["id"] in status.stdout
    from trackgrade.client import Client
    Client(served.keys["test"], served.url).analyses.wait(accepted["id"], timeout=30,
                                                           poll_interval=0.1)
    doc = json.loads(run(served, "remote", "get", accepted["id"], "--json").stdout)
    assert doc["status"] == "complete" and doc["file_name"] == "idea.wav"
    listed = run(served, "remote", "list", "--json", "--limit", "0")
    assert accepted["id"] in [d["id"] for d in json.loads(listed.stdout)]
    table = run(served, "remote", "list", "--limit", "2")
    assert table.exit_code == 0 and "Analyses (2" in table.stdout


def test_remote_analysis_looks_exactly_like_a_local_one(served, tracks):
    """The live engine behind the server and the local engine give the same
    document, and the same renderer draws it: the screens match line by line
    up to the diagnosis (whose narrative may be ready remotely). The one
    local-only detail is the nearest label-layer profile ("closest to …"),
    which the local run keeps outside the Analysis document (its extras)."""
    remote = run(served, "remote", "analyze", str(tracks[0]), "--wait", key="live")
    local = run(served, "analyze", str(tracks[0]), key=None)
    assert remote.exit_code == 0 and local.exit_code == 0, remote.output + local.output

    head, screen = remote.stdout.split("\n", 1)      # first the id, for remote get and cancel
    named = re.fullmatch(rf"submitted {tracks[0].name} as (\S+); waiting for it "
                         rf"\(later: trackgrade remote get (\S+)\)", head)
    assert named and named.group(1) == named.group(2), head
    again = run(served, "remote", "get", named.group(1), "--json", key="live")
    assert json.loads(again.stdout)["file_name"] == tracks[0].name
    remote_lines = screen.split("Diagnosis")[0].splitlines()
    local_lines = local.stdout.split("Diagnosis")[0].splitlines()
    assert len(remote_lines) == len(local_lines) > 20
    assert any("Tonal balance vs" in line for line in remote_lines)
    for mine, theirs in zip(remote_lines, local_lines):
        if "│  Genre" in theirs:
            squeeze = lambda line: " ".join(re.sub(r"closest to .*?   ", "", line).split())  # noqa: E731,E501
            assert squeeze(mine) == squeeze(theirs)
        else:
            assert mine == theirs


def test_wait_json_is_the_server_document(served, tracks):
    shown = run(served, "remote", "analyze", str(tracks[1]), "--wait", "--json",
                "--mastering", "master", key="live")
    assert shown.exit_code == 0, shown.output
    doc = json.loads(shown.stdout)
    assert doc["object"] == "analysis" and doc["status"] == "complete"
    assert doc["mastering_status"] == "master" and doc["livemode"] is True


def test_failed_analysis_exits_1_with_one_line(served, tmp_path):
    track = tmp_path / "kick_fail_engine_error.wav"
    track.write_bytes(wav_bytes(2))
    shown = run(served, "remote", "analyze", str(track), "--wait")
    assert shown.exit_code == 1
    line = shown.stderr.strip()
    assert "\n" not in line and "failed" in line and "code engine_error" in line


def test_bad_audio_exits_1_whether_the_upload_or_the_worker_finds_it(served, tmp_path):
    """ADPCM is refused at the upload (422), digital silence by the worker: both are
    the audio judged bad, a failed analysis, exit 1 (ADPCM used to exit 2)."""
    import io

    import numpy as np
    import soundfile as sf

    key, _ = make_key(served.data, "live", credits=5)
    t = np.arange(3 * 22050) / 22050
    adpcm = io.BytesIO()
    sf.write(adpcm, 0.5 * np.sin(2 * np.pi * 440 * t), 22050, format="WAV", subtype="IMA_ADPCM")
    (tmp_path / "adpcm.wav").write_bytes(adpcm.getvalue())
    (tmp_path / "silence.wav").write_bytes(wav_bytes(3, pattern=b"\x00\x00"))
    codes = {}
    for name in ("adpcm.wav", "silence.wav"):
        shown = run(served, "remote", "analyze", str(tmp_path / name), "--wait", key=None,
                    env={"TRACKGRADE_API_KEY": key})
        assert "Traceback" not in shown.output
        assert "code unprocessable_audio" in shown.stderr, shown.stderr
        codes[name] = shown.exit_code
    assert codes == {"adpcm.wav": 1, "silence.wav": 1}


@pytest.mark.parametrize("args, code, exit_code", [
    (("remote", "get", "00000000-0000-4000-8000-000000000000"), "not_found", 2),
    (("remote", "account", "--key", "svc_live_" + "x" * 43), "invalid_api_key", 2),
    (("remote", "list", "--limit", "5"), None, 0),
])
def test_errors_are_one_line_with_code_and_request_id(served, args, code, exit_code):
    shown = run(served, *args)
    assert shown.exit_code == exit_code, shown.output
    if code:
        line = shown.stderr.strip()
        assert "\n" not in line and line.startswith("trackgrade: ")
        assert f"code {code}" in line and "request req_" in line
        assert "Traceback" not in shown.output


def test_unreachable_server_and_missing_key(served, tmp_path):
    down = run(served, "remote", "account", "--base-url", f"http://127.0.0.1:{free_port()}",
               env={"TRACKGRADE_API_KEY": "svc_test_x"})
    assert down.exit_code == 1 and "connection refused" in down.stderr
    *waits, last = down.stderr.splitlines()        # each retry wait is announced, then the error
    assert "connection refused" in last and "retrying" not in last
    assert len(waits) == 3 and all("no answer from the server" in w and "retrying in" in w
                                   for w in waits)
    missing = run(served, "remote", "account", key=None)
    assert missing.exit_code == 2 and "no API key" in missing.stderr


def test_genre_is_sent_and_graded_against(served, tmp_path):
    track = tmp_path / "g.wav"
    track.write_bytes(wav_bytes(2))
    shown = run(served, "remote", "analyze", str(track), "--genre", "drum_and_bass", "--wait",
                "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["genre"]["target"] == "drum_and_bass"
    unknown = run(served, "remote", "analyze", str(track), "--genre", "polka")
    assert unknown.exit_code == 2
    assert "code parameter_invalid, param genre" in unknown.stderr


def test_batch_remote_writes_the_same_results_file(served, tmp_path):
    folder = tmp_path / "promos"
    folder.mkdir()
    for name in ("a.wav", "b.wav", "c_fail_unprocessable_audio.wav"):
        (folder / name).write_bytes(wav_bytes(2) + name.encode())   # distinct bytes
    out = tmp_path / "grades.csv"
    shown = run(served, "batch", str(folder), "--remote", "--out", str(out))
    assert shown.exit_code == 1, shown.output         # one failed file
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == CSV_COLUMNS
    by_name = {r["path"].rsplit("/", 1)[1]: r for r in rows}
    assert by_name["a.wav"]["status"] == "ok" and by_name["a.wav"]["grade"]
    failed = by_name["c_fail_unprocessable_audio.wav"]
    assert failed["status"] == "failed" and failed["error_code"] == "unprocessable_audio"
    assert "Batch summary" in shown.stdout
    again = run(served, "batch", str(folder / "a.wav"), "--remote", "--json")
    doc = json.loads(again.stdout)
    assert doc["summary"]["ok"] == 1 and doc["results"][0]["score"] == int(by_name["a.wav"]
                                                                           ["score"])


def test_batch_remote_says_what_it_waits_for_without_a_terminal(served, tmp_path, tracks):
    """No terminal, no progress bar: one line per graded file on stderr, and each wait
    named for what it is (here the key's one in-flight slot, held by another
    submission for a moment), never counted as the file's grading time."""
    import threading

    from tests.server.server_harness import request, upload

    key, _ = make_key(served.data, "live", credits=5, limits={"in_flight": 1})
    blocker = request(served.url, "POST", "/v1/analyses", key=key, idem="blocker",
                      body={"file_name": "blocker.wav"}).json
    release = threading.Timer(3.0, upload, (served.url, blocker, wav_bytes(3)))
    release.start()
    try:
        shown = run(served, "batch", str(tracks[0]), "--remote", "--json", key=None,
                    env={"TRACKGRADE_API_KEY": key})
    finally:
        release.join()
    assert shown.exit_code == 0, shown.output
    lines = shown.stderr.splitlines()
    assert any(f"{tracks[0].name}: waiting" in line
               and "a free in-flight slot of the key (too_many_in_flight)" in line
               for line in lines), lines
    assert f"graded 1/1: {tracks[0].name} (" in shown.stderr
    summary = json.loads(shown.stdout)["summary"]
    assert summary["slowest"]["seconds"] < summary["wall_seconds"] - 2.0, summary


def test_batch_remote_bad_key_is_one_line_before_any_file(served, tmp_path):
    track = tmp_path / "x.wav"
    track.write_bytes(wav_bytes(2))
    shown = run(served, "batch", str(track), "--remote", "--key", "svc_test_" + "y" * 43)
    assert shown.exit_code == 2 and "code invalid_api_key" in shown.stderr


def test_batch_remote_copies_of_one_file_under_two_names(served, tmp_path, tracks):
    folder = tmp_path / "dupes"
    folder.mkdir()
    shutil.copyfile(tracks[2], folder / "one.wav")
    shutil.copyfile(tracks[2], folder / "two.wav")
    shown = run(served, "batch", str(folder), "--remote", "--json")
    assert shown.exit_code == 0, shown.output
    assert [r["status"] for r in json.loads(shown.stdout)["results"]] == ["ok", "ok"]


def test_batch_remote_out_of_credits_then_topped_up_pays_once_per_file(served, tmp_path,
                                                                        tracks):
    """The first run runs out of credits (a 402 row, which the server stores
    for replay); after a top-up the re-run grades that file under the next
    derived key, and replays the one already paid for."""
    from trackgrade.server import accounts
    from trackgrade.server.store import open_store

    key, account_id = make_key(served.data, "live", credits=1)
    env = {"TRACKGRADE_API_KEY": key}
    folder = tmp_path / "two"
    folder.mkdir()
    for track in tracks[:2]:
        shutil.copyfile(track, folder / track.name)
    first = run(served, "batch", str(folder), "--remote", "--json", env=env)
    rows = json.loads(first.stdout)["results"]
    assert first.exit_code == 1 and sorted(r["status"] for r in rows) == ["failed", "ok"]
    assert [r["error_code"] for r in rows if r["status"] == "failed"] == ["insufficient_credits"]
    store = open_store(served.data)
    try:
        accounts.add_credits(store, account_id, 5)
    finally:
        store.close()
    second = run(served, "batch", str(folder), "--remote", "--json", env=env)
    assert second.exit_code == 0, second.output
    assert credits(served.data, account_id) == 4            # 1 + 5 - 2: one per file
    third = run(served, "batch", str(folder), "--remote", "--json", env=env)
    assert third.exit_code == 0 and credits(served.data, account_id) == 4


def test_poll_pace_learns_the_batch_analysis_time():
    from trackgrade.cli.remote_batch import PollPace, idempotency_key

    pace = PollPace(weight=0.5)
    assert "initial_delay" not in pace.polling(False)
    pace.learn(4.0)
    pace.learn(2.0)
    assert pace.polling(False) == {"initial_delay": pytest.approx(2.4), "poll_interval": 0.1,
                                   "max_poll_interval": 0.5}
    assert "initial_delay" not in pace.polling(True)          # a replay is usually done
    key = idempotency_key(b"abc", "master", "house")
    assert key == idempotency_key(b"abc", "master", "house")
    assert len({key, idempotency_key(b"abd", "master", "house"),
                idempotency_key(b"abc", "pre-master", "house"),
                idempotency_key(b"abc", "master", None),
                idempotency_key(b"abc", "master", "house", round_=1)}) == 5


def test_remote_cancel_and_client_cancel(served):
    from tests.server.server_harness import request

    from trackgrade.client import Client, ConflictError

    def waiting(key):
        return request(served.url, "POST", "/v1/analyses", key=served.keys[key],
                       idem=f"cancel-{key}-{free_port()}", body={"file_name": "never.wav"}).json

    before = credits(served.data, served.keys["live_account"])
    accepted = waiting("live")
    assert credits(served.data, served.keys["live_account"]) == before - 1
    shown = run(served, "remote", "cancel", accepted["id"], key="live")
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith(f"Canceled {accepted['id']}  failed")
    assert credits(served.data, served.keys["live_account"]) == before
    again = run(served, "remote", "cancel", accepted["id"], key="live")
    assert again.exit_code == 1 and "analysis_not_cancelable" in again.stderr
    other = waiting("test")
    doc = json.loads(run(served, "remote", "cancel", other["id"], "--json").stdout)
    assert doc["status"] == "failed" and doc["error"]["code"] == "analysis_canceled"
    client = Client(served.keys["test"], served.url)
    third = waiting("test")
    assert client.analyses.cancel(third["id"]).error.code == "analysis_canceled"
    with pytest.raises(ConflictError) as caught:
        client.analyses.cancel(third["id"])
    assert caught.value.code == "analysis_not_cancelable" and caught.value.status == 409


def test_a_failed_upload_is_canceled_and_frees_the_slot_and_the_credit(served, tmp_path, tracks):
    """`remote analyze empty.wav --wait` fails at the upload step (400
    upload_incomplete): the analysis it made is canceled at once and it says so,
    so the key's only in-flight slot and the credit are free for the next file
    (no 429 too_many_in_flight, no wait for the token to expire)."""
    key, account_id = make_key(served.data, "live", credits=3, limits={"in_flight": 1})
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    failed = run(served, "remote", "analyze", str(empty), "--wait", key=None,
                 env={"TRACKGRADE_API_KEY": key})
    assert failed.exit_code == 2, failed.output
    assert "code upload_incomplete" in failed.stderr
    canceled = re.search(r"analysis (\S+) was canceled, so it holds no in-flight slot",
                         failed.stderr)
    assert canceled, failed.stderr
    assert credits(served.data, account_id) == 3
    gone = run(served, "remote", "get", canceled.group(1), "--json", key=None,
               env={"TRACKGRADE_API_KEY": key})
    assert json.loads(gone.stdout)["error"]["code"] == "analysis_canceled"
    graded = run(served, "remote", "analyze", str(tracks[0]), "--wait", "--json",
                 "--timeout", "60", key=None, env={"TRACKGRADE_API_KEY": key})
    assert graded.exit_code == 0, graded.output
    assert json.loads(graded.stdout)["status"] == "complete"
    assert "too_many_in_flight" not in graded.stderr and "retrying" not in graded.stderr
    assert credits(served.data, account_id) == 2


def test_the_client_cancels_an_analysis_it_could_not_upload_to(served):
    from trackgrade.client import Client
    from trackgrade.client.errors import InvalidRequestError

    key, account_id = make_key(served.data, "live", credits=2, limits={"in_flight": 1})
    client = Client(key, served.url)
    with pytest.raises(InvalidRequestError) as raised:
        client.analyses.create(b"", file_name="empty.wav")
    error = raised.value
    assert error.code == "upload_incomplete" and error.canceled_analysis_id
    assert "was canceled" in str(error)
    assert client.analyses.get(error.canceled_analysis_id)["status"] == "failed"
    assert client.account()["usage"]["in_flight"] == 0
    assert credits(served.data, account_id) == 2
    accepted = client.analyses.create(wav_bytes(2), file_name="ok.wav")   # the slot is free
    assert client.analyses.wait(accepted["id"], timeout=60)["status"] == "complete"


def test_a_replay_after_the_upload_is_the_original_body_byte_for_byte(served):
    """Against `trackgrade serve`: the same POST /v1/analyses after its upload
    (and after its analysis completed) answers the original body byte for byte,
    upload.token included; that token opens nothing any more."""
    from trackgrade.client import Client
    from tests.server.server_harness import request, upload

    key = served.keys["test"]
    body = {"file_name": "replayed.wav"}
    first = request(served.url, "POST", "/v1/analyses", key=key, idem="replay-me", body=body)
    assert first.status == 202 and first.json["upload"]["token"]
    assert upload(served.url, first.json, wav_bytes(2)).status == 200
    Client(key, served.url).analyses.wait(first.json["id"], timeout=60)
    again = request(served.url, "POST", "/v1/analyses", key=key, idem="replay-me", body=body)
    assert again.status == 202 and again.header("Idempotent-Replayed") == "true"
    assert again.body == first.body
    assert upload(served.url, again.json, wav_bytes(2)).status == 401


def test_a_test_keys_canned_result_says_so_first(served, tmp_path):
    """A test key's result is canned: `remote analyze --wait` says so on its
    first line and again before the drawn analysis; `remote get` starts with
    it; the JSON document's summary opens with it (narrative stage included)."""
    from trackgrade.testmode import CANNED_NOTE

    track = tmp_path / "clip.wav"
    track.write_bytes(wav_bytes(2))
    shown = run(served, "remote", "analyze", str(track), "--wait")
    assert shown.exit_code == 0, shown.output
    first, second = shown.stdout.splitlines()[:2]
    assert "test key: its result will be a canned test result" in first
    assert second.startswith("TEST MODE: a canned test result, not an analysis of this file")
    analysis_id = re.search(r"remote get (\S+)\)", first).group(1)
    again = run(served, "remote", "get", analysis_id)
    assert again.stdout.startswith("TEST MODE: a canned test result")
    from trackgrade.client import Client
    doc = Client(served.keys["test"], served.url).analyses.wait(analysis_id, until="ready",
                                                               timeout=30)
    assert doc["diagnosis_status"] == "ready" and doc["diagnosis"]["summary"].startswith(CANNED_NOTE)
    live = run(served, "remote", "analyze", str(track), "--wait", key="live")
    assert "TEST" not in live.stdout and "canned" not in live.stdout
