"""Secrets, isolation and audio on disk, against a real `trackgrade serve`
process on loopback (its log captured, TMPDIR pointed at an empty directory,
a webhook receiver attached):

- API keys, upload tokens and webhook secrets never appear in the log; keys
  and upload tokens are only hashes at rest; data files are 0600 (directory
  0700);
- test keys never see live data, another account's ids answer exactly like
  unknown ids, the badge shows only the score, the grade and the genre;
- uploads of every format (WAV, AIFF, FLAC and MP3 through the worker,
  and a 150 MB WAV) leave TMPDIR empty, no process of the server ever holds
  a file there open (an unlinked O_TMPFILE spool included), and no file in
  the data directory holds any run of the uploaded bytes.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from trackgrade.server import accounts
from trackgrade.server.store import open_store

from tests.webhooks.receiver import Receiver
from tests.server.serve_process import CLI, ServeProcess
from tests.server.server_harness import multipart, request, wav_bytes
from tests.server.hostile_audio import seeds

BIG_WAV_BYTES = 150 * 1000 * 1000
WINDOW = 32


def body_of(secret: str) -> str:
    """The random part of a key, token or webhook secret (without its prefix)."""
    return re.sub(r"^(svc_(live|test)_|upt_|whsec_)", "", secret)


def windows(data: bytes, count: int = 256) -> list[bytes]:
    """`count` runs of WINDOW bytes spread over the audio (past the header),
    skipping runs too uniform to be evidence (digital silence)."""
    start = min(4096, len(data) // 4)
    step = max(1, (len(data) - start - WINDOW) // count)
    runs = [data[i:i + WINDOW] for i in range(start, len(data) - WINDOW, step)][:count]
    return [run for run in runs if len(set(run)) >= 12]


class FdWatch:
    """Polls /proc/<pid>/fd of the server's process group for files under `root`."""

    def __init__(self, pgid: int, root: Path) -> None:
        self.pgid, self.root = pgid, str(root)
        self.found: set[str] = set()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def pids(self) -> list[int]:
        out = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    if os.getpgid(int(name)) == self.pgid:
                        out.append(int(name))
                except OSError:
                    pass
        return out

    def run(self) -> None:
        while not self.stop.is_set():
            for pid in self.pids():
                try:
                    for fd in os.listdir(f"/proc/{pid}/fd"):
                        target = os.readlink(f"/proc/{pid}/fd/{fd}")
                        if target.startswith(self.root):
                            self.found.add(target)
                except OSError:
                    pass
            time.sleep(0.05)

    def close(self) -> set[str]:
        self.stop.set()
        self.thread.join(10)
        return self.found


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("secrets")
    data, spool = root / "data", root / "tmp"
    spool.mkdir()
    store = open_store(data)
    try:
        live_account = accounts.create_account(store, plan="pro", credits=50)
        live, _ = accounts.create_key(store, live_account["id"], mode="live")
        test, _ = accounts.create_key(store, live_account["id"], mode="test")
        other_account = accounts.create_account(store, plan="pro", credits=5)
        other, _ = accounts.create_key(store, other_account["id"], mode="live")
    finally:
        store.close()
    receiver = Receiver()
    added = subprocess.run(CLI + ["admin", "webhooks", "add", receiver.url, "--account",
                                  live_account["id"], "--data", str(data)],
                           capture_output=True, text=True, timeout=60)
    assert added.returncode == 0, added.stderr
    secret = re.search(r"whsec_[A-Za-z0-9+/=_-]+", added.stdout).group(0)
    server = ServeProcess(data, "--workers", "1", env={
        "TMPDIR": str(spool), "TRACKGRADE_IN_FLIGHT": "50",
        "TRACKGRADE_RATE_PER_MINUTE": "100000",
        "TRACKGRADE_MAX_UPLOAD_BYTES": str(200 * 1024 * 1024)})
    assert server.url, server.output
    watch = FdWatch(os.getpgid(server.proc.pid), spool)
    record = {"server": server, "data": data, "spool": spool, "receiver": receiver,
              "keys": {"live": live, "test": test, "other": other}, "secret": secret,
              "tokens": [], "uploads": {}, "analyses": {}}
    try:
        uploads = {f"seed.{fmt}": audio for fmt, audio in seeds().items()}   # the four formats
        uploads["big.wav"] = wav_bytes(BIG_WAV_BYTES / (44100 * 4), rate=44100, channels=2)
        for name, audio in uploads.items():
            key = test if name == "big.wav" else live
            accepted = request(server.url, "POST", "/v1/analyses", key=key, idem=str(uuid.uuid4()),
                               body={"file_name": name, "external_id": f"secret-{name}"}).json
            record["tokens"].append(accepted["upload"]["token"])
            body, ctype = multipart({"file": (name, audio)})
            reply = request(server.url, "POST", urlsplit(accepted["upload"]["url"]).path,
                            raw=body, timeout=120, headers={
                                "Content-Type": ctype,
                                "Authorization": f"Bearer {accepted['upload']['token']}"})
            assert reply.status == 200, reply.body
            record["uploads"][name] = audio
            record["analyses"][name] = (accepted["id"], key)
        for name, (analysis_id, key) in record["analyses"].items():
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                doc = request(server.url, "GET", f"/v1/analyses/{analysis_id}", key=key).json
                if doc["status"] != "processing" and doc["diagnosis_status"] == "ready":
                    break
                time.sleep(0.1)
            assert doc["status"] == "complete", doc
        receiver.wait_for(2 * 4, timeout=60)            # the live analyses' events
        record["fds"] = watch.close()
        yield record
    finally:
        watch.close()
        server.stop()
        receiver.close()


def test_uploads_of_every_format_leave_tmpdir_empty_and_unopened(served):
    assert len(served["uploads"]["big.wav"]) >= BIG_WAV_BYTES
    # nothing but the fork server's listening socket (trackgrade.pool), which
    # multiprocessing keeps in a pymp-* directory of its own: no bytes, no audio
    assert [p for p in served["spool"].rglob("*")
            if not (p.is_socket() or (p.is_dir() and p.name.startswith("pymp-")))] == []
    assert served["fds"] == set()


def test_no_file_in_the_data_directory_holds_a_run_of_uploaded_bytes(served):
    files = [p for p in served["data"].rglob("*") if p.is_file()]
    stored = [p.read_bytes() for p in files]
    checked = found = 0
    for name, audio in served["uploads"].items():
        for run in windows(audio):
            checked += 1
            found += sum(run in blob for blob in stored)
    assert checked >= 5 * 200 and found == 0


def test_secrets_never_reach_the_log(served):
    log = served["server"].output
    assert "serving on" in log and "POST /v1/uploads/" in log        # the log is the real one
    for secret in [*served["keys"].values(), *served["tokens"], served["secret"]]:
        assert secret not in log and body_of(secret) not in log


def test_keys_and_tokens_are_only_hashes_at_rest_and_files_are_private(served):
    data = served["data"]
    stored = b"".join(p.read_bytes() for p in data.rglob("*") if p.is_file())
    for secret in [*served["keys"].values(), *served["tokens"]]:
        assert secret.encode() not in stored and body_of(secret).encode() not in stored
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    for path in data.rglob("*"):
        if path.is_file():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_test_keys_and_other_accounts_see_a_404_like_an_unknown_id(served):
    url, keys = served["server"].url, served["keys"]
    live_id, _ = served["analyses"]["seed.wav"]
    big_id, _ = served["analyses"]["big.wav"]            # a test-mode analysis

    def answer(key, analysis_id, path="/v1/analyses/{}"):
        reply = request(url, "GET", path.format(analysis_id), key=key)
        error = reply.error
        return reply.status, error["code"], error["param"], \
            error["message"].replace(analysis_id, "<id>")

    unknown = str(uuid.uuid4())
    for path in ("/v1/analyses/{}", "/v1/analyses/{}/status"):
        expected = answer(keys["live"], unknown, path)
        assert expected[0] == 404
        assert answer(keys["test"], live_id, path) == expected      # test key, live analysis
        assert answer(keys["live"], big_id, path) == expected       # live key, test analysis
        assert answer(keys["other"], live_id, path) == expected     # another account
    listed = request(url, "GET", "/v1/analyses?limit=100", key=keys["test"]).json["data"]
    assert [d["id"] for d in listed] == [big_id]
    assert request(url, "GET", "/v1/analyses", key=keys["other"]).json["data"] == []
    foreign = request(url, "GET", f"/v1/analyses?starting_after={live_id}", key=keys["other"])
    assert foreign.status == 404 and foreign.error["code"] == "not_found"


def test_the_badge_shows_only_score_grade_and_genre(served):
    url, data = served["server"].url, served["data"]
    analysis_id, key = served["analyses"]["seed.flac"]
    done = subprocess.run(CLI + ["admin", "embed", analysis_id, "on", "--data", str(data)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    doc = request(url, "GET", f"/v1/analyses/{analysis_id}", key=key).json
    badge = request(url, "GET", f"/v1/embed/{analysis_id}")
    assert badge.status == 200
    visible = re.sub(r"<style>.*?</style>", " ", badge.body.decode(), flags=re.S)
    text = " ".join(re.sub(r"<[^>]+>", " ", visible).split())

    def words(*texts) -> set[str]:
        return {w.lower() for t in texts for w in re.findall(r"\w+", str(t))}
    from trackgrade.grading.wording import document_caption
    # the caption says what the audio is first ("bass line · 3.6 s", CONTRACT section 6) and
    # may read "unclear (best guess: ...)": what the document says, never the file's name
    allowed = words(doc["score"], doc["grade"]["letter"], doc["grade"]["label"],
                    doc["genre"]["name"], document_caption(doc),
                    "track hit potential sound score grade 100")
    assert words(text) <= allowed, text
    for private in (doc["file_name"], doc["external_id"], str(doc["tempo"]["bpm"]),
                    doc["account_id"] if "account_id" in doc else "acct_", str(doc["mix"]
                                                                               ["loudness_lufs"])):
        assert private not in badge.body.decode()


def test_a_compacted_store_is_private_too(tmp_path):
    """Snapshots (written at compaction) are 0600 like the journal."""
    store = open_store(tmp_path / "data")
    try:
        accounts.create_account(store, plan="pro", credits=1)
        store.compact()
    finally:
        store.close()
    files = [p for p in (tmp_path / "data").iterdir() if p.is_file()]
    assert any(p.name.startswith("snapshot-") for p in files)
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in files} == \
        {p.name: 0o600 for p in files}
