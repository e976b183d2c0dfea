"""The client and `batch --remote` across process deaths: a server restarted
while `wait` polls, and a remote batch killed (kill -9) and re-run that
spends exactly one credit per file."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import threading
import time
from urllib.parse import urlsplit

import pytest
from trackgrade.client import APIConnectionError, Client, HTTPTransport

from tests.client.served import CLI, Served, credits, make_key
from tests.server.server_harness import multipart, request, wav_bytes
from tests.truth import render_specs


class CountingTransport(HTTPTransport):
    """The real HTTP transport, counting the requests that got no answer."""

    def __init__(self) -> None:
        super().__init__()
        self.unanswered = 0

    def handle(self, request):
        try:
            return super().handle(request)
        except APIConnectionError:
            self.unanswered += 1
            raise


def test_wait_rides_out_a_server_restart(tmp_path):
    data = tmp_path / "data"
    key, _ = make_key(data, "test")
    server = Served(data, "--workers", "1")
    try:
        accepted = request(server.url, "POST", "/v1/analyses", key=key, idem="restart-1",
                           body={"file_name": "later.wav"}).json   # waits for its bytes
        transport = CountingTransport()
        client = Client(key, server.url, transport=transport, max_retries=1)
        result: dict = {}

        def waiting():
            try:
                result["doc"] = client.analyses.wait(accepted["id"], timeout=90,
                                                     poll_interval=0.1, max_poll_interval=0.3)
            except Exception as exc:  # noqa: BLE001 - reported below
                result["error"] = exc

        poller = threading.Thread(target=waiting)
        poller.start()
        time.sleep(0.5)
        server.restart(down_seconds=1.5)         # kill -9, nobody listening, a new process
        body, ctype = multipart({"file": ("later.wav", wav_bytes(2))})
        uploaded = request(server.url, "POST", urlsplit(accepted["upload"]["url"]).path,
                           raw=body, headers={"Content-Type": ctype, "Authorization":
                                              f"Bearer {accepted['upload']['token']}"})
        assert uploaded.status == 200, uploaded.body
        poller.join(60)
        assert "error" not in result, result.get("error")
        assert result["doc"]["status"] == "complete" and result["doc"]["id"] == accepted["id"]
        assert transport.unanswered >= 2                 # it really saw the server gone
    finally:
        server.stop()


@pytest.mark.slow
def test_batch_killed_and_rerun_spends_one_credit_per_file(tmp_path):
    folder, truth = render_specs([
        {"name": f"rerun_{i}", "style": "techno", "bpm": 126 + i, "seconds": 6, "seed": 70 + i}
        for i in range(5)])
    files = [folder / t["file"] for t in truth]
    data = tmp_path / "data"
    key, account_id = make_key(data, "live", credits=20, limits={"in_flight": 1})
    server = Served(data, "--workers", "1")
    out = tmp_path / "grades.csv"
    env = {**os.environ, "TRACKGRADE_BASE_URL": server.url, "TRACKGRADE_API_KEY": key}
    try:
        first = subprocess.Popen(CLI + ["batch", *map(str, files), "--remote", "--out",
                                        str(out)], env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and first.poll() is None:
            if out.exists() and len(out.read_text().splitlines()) >= 3:   # 2 rows done
                break
            time.sleep(0.05)
        assert first.poll() is None, "the first run finished before it could be killed"
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
        spent_before = 20 - credits(data, account_id)
        assert 2 <= spent_before < len(files)
        second = subprocess.run(CLI + ["batch", *map(str, files), "--remote", "--out",
                                       str(out), "--json"], env=env, capture_output=True,
                                text=True, timeout=300)
        assert second.returncode == 0, second.stderr
        with open(out, newline="") as fh:
            rows = list(csv.DictReader(fh))
        assert [r["status"] for r in rows] == ["ok"] * len(files)
        assert 20 - credits(data, account_id) == len(files)        # exactly one each
        usage = Client(key, server.url).account()["usage"]
        assert usage == {"today": len(files), "in_flight": 0}
    finally:
        server.stop()


def test_real_in_flight_limit_429_then_batch_stays_within_it(tmp_path):
    """Against `trackgrade serve` with a test-key in-flight limit of 1: the
    client meets a real 429 too_many_in_flight, honours its Retry-After and
    gets through; `batch --remote` reads the limit from GET /v1/account and
    never provokes a 429 (the server's access log)."""
    data = tmp_path / "data"
    key, _ = make_key(data, "test")
    server = Served(data, "--workers", "1", env={"TRACKGRADE_TEST_IN_FLIGHT": "1"})
    try:
        blocking = request(server.url, "POST", "/v1/analyses", key=key, idem="first",
                           body={"file_name": "first.wav"}).json
        slept: list[float] = []

        def sleep(seconds):
            slept.append(seconds)
            if len(slept) == 1:        # the first analysis gets its bytes meanwhile
                body, ctype = multipart({"file": ("first.wav", wav_bytes(2))})
                request(server.url, "POST", urlsplit(blocking["upload"]["url"]).path, raw=body,
                        headers={"Content-Type": ctype,
                                 "Authorization": f"Bearer {blocking['upload']['token']}"})
            time.sleep(seconds)

        client = Client(key, server.url, sleep=sleep)
        accepted = client.analyses.create(wav_bytes(2), file_name="second.wav")
        assert accepted.status == "processing" and 5 <= slept[0] <= 6
        assert sum(" 429 " in line for line in server.log) >= 1
        client.analyses.wait(accepted.id, timeout=30, poll_interval=0.1)

        folder = tmp_path / "promos"
        folder.mkdir()
        for i in range(4):
            (folder / f"t{i}.wav").write_bytes(wav_bytes(2) + bytes([i]))
        before = sum(" 429 " in line for line in server.log)
        done = subprocess.run(CLI + ["batch", str(folder), "--remote", "--json"],
                              env={**os.environ, "TRACKGRADE_BASE_URL": server.url,
                                   "TRACKGRADE_API_KEY": key},
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert '"ok": 4' in done.stdout
        assert sum(" 429 " in line for line in server.log) == before
    finally:
        server.stop()
