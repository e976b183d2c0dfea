"""Store outage (CONTRACT.md 5): a store that cannot be read or written
answers 503 `service_unavailable` with Retry-After, never a 500, and serves
again once the store is back; a submission refused during the outage runs
once when retried with its Idempotency-Key.

Real `trackgrade serve` processes: the embedded store's disk "fills" (the
server process's file-size limit lowered to the journal's size: every append
fails as on a full disk), and the session's real PostgreSQL is stopped and
started again under a running server.
"""

from __future__ import annotations

import resource
import time

import pytest

from tests.server.serve_process import ServeProcess, make_key
from tests.server.server_harness import request

ENV = {"TRACKGRADE_RETRY_AFTER": "7", "TRACKGRADE_IN_FLIGHT": "20"}


def submit(url: str, key: str, idem: str):
    return request(url, "POST", "/v1/analyses", key=key, idem=idem,
                   body={"file_name": "outage.wav"}, timeout=30)


def assert_unavailable(reply) -> None:
    assert reply.status == 503, (reply.status, reply.body)
    assert reply.error["code"] == "service_unavailable"
    assert reply.header("Retry-After") == "7"
    assert reply.header("X-Request-Id")


def until_served(call, timeout: float = 30.0):
    """Call until the answer is not a 503 (never anything but 503 or success)."""
    deadline = time.monotonic() + timeout
    while True:
        reply = call()
        assert reply.status in (200, 202, 503), (reply.status, reply.body)
        if reply.status != 503 or time.monotonic() > deadline:
            return reply
        time.sleep(0.25)


def test_a_full_disk_answers_503_with_retry_after_then_serves_again(tmp_path):
    data = tmp_path / "data"
    key, _ = make_key("live", 10, data_dir=data)
    server = ServeProcess(data, env=ENV, require=True)
    try:
        first = submit(server.url, key, "before")
        assert first.status == 202
        journal = sorted(data.glob("journal-*.log"))[-1]
        size = journal.stat().st_size
        soft, hard = resource.prlimit(server.proc.pid, resource.RLIMIT_FSIZE)
        resource.prlimit(server.proc.pid, resource.RLIMIT_FSIZE, (size, hard))   # the disk is full
        assert_unavailable(submit(server.url, key, "during"))
        assert journal.stat().st_size == size                   # nothing half-written is left
        read = request(server.url, "GET", f"/v1/analyses/{first.json['id']}", key=key)
        assert read.status == 200                               # reads still work
        resource.prlimit(server.proc.pid, resource.RLIMIT_FSIZE, (soft, hard))
        again = submit(server.url, key, "during")               # the retry runs, once
        assert again.status == 202 and again.header("Idempotent-Replayed") is None
        assert submit(server.url, key, "during").header("Idempotent-Replayed") == "true"
        assert len(request(server.url, "GET", "/v1/analyses", key=key).json["data"]) == 2
    finally:
        server.stop()


@pytest.mark.slow(seconds=14)
def test_postgres_down_or_restarting_answers_503_then_serves_again(postgres_server):
    database = postgres_server.create_database()
    key, _ = make_key("live", 10, database=database, pool_size=2)
    server = ServeProcess(None, database=database, env=ENV, require=True,
                          unset=("TRACKGRADE_DATABASE_URL",))
    try:
        first = submit(server.url, key, "before")
        assert first.status == 202
        postgres_server.halt()                                      # down
        started = time.monotonic()
        assert_unavailable(request(server.url, "GET", f"/v1/analyses/{first.json['id']}",
                                   key=key, timeout=30))
        assert_unavailable(submit(server.url, key, "during"))
        assert time.monotonic() - started < 15                      # answered, never hung
        postgres_server.resume()                                    # back (a restart)
        again = until_served(lambda: submit(server.url, key, "during"))
        assert again.status == 202 and again.header("Idempotent-Replayed") is None
        read = request(server.url, "GET", f"/v1/analyses/{again.json['id']}", key=key)
        assert read.status == 200
        assert submit(server.url, key, "during").header("Idempotent-Replayed") == "true"
    finally:
        server.stop()
        if not postgres_server.running():
            postgres_server.resume()
