"""Races against a real server on loopback with the durable store: identical
idempotent requests, submissions racing the in-flight limit and the last
credit, and the admin CLI (credits, webhooks, maintenance, revoke) in other processes
while clients submit. Never a double spend, a negative balance, two analyses
for one idempotency key, or a 5xx."""

from __future__ import annotations

import threading
import uuid
from collections import Counter

import pytest

from trackgrade.server import accounts
from trackgrade.server.store import open_store

from tests.server.serve_process import admin
from tests.server.server_harness import start


@pytest.fixture
def durable(tmp_path):
    made = []

    def make(**overrides):
        s = start(store=open_store(tmp_path / "data"), **overrides)
        s.data = tmp_path / "data"
        made.append(s)
        return s
    yield make
    for s in made:
        s.stop()
        s.store.close()


def at_once(count: int, call) -> list:
    """Run `call(i)` in `count` threads released together; their results."""
    barrier = threading.Barrier(count)
    results = [None] * count

    def run(i):
        barrier.wait()
        results[i] = call(i)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def rows_of(server, account: str) -> list[dict]:
    return [r for r in server.store.scan("analyses") if r["account_id"] == account]


def test_identical_idempotent_requests_make_one_analysis(durable):
    s = durable(in_flight=50)
    key, account = s.key("live", credits=10)
    replies = at_once(16, lambda i: s.request("POST", "/v1/analyses", key=key, idem="same-key",
                                              body={"file_name": "a.wav"}))
    statuses = Counter(r.status for r in replies)
    assert set(statuses) <= {202, 409}, statuses
    assert all(r.error["code"] == "idempotency_request_in_progress"
               for r in replies if r.status == 409)
    ids = {r.json["id"] for r in replies if r.status == 202}
    assert len(ids) == 1 and len(rows_of(s, account)) == 1
    assert s.credits(account) == 9
    replay = s.request("POST", "/v1/analyses", key=key, idem="same-key",
                       body={"file_name": "a.wav"})
    assert replay.json["id"] in ids and replay.header("Idempotent-Replayed") == "true"


def test_submissions_racing_the_in_flight_limit(durable):
    s = durable(in_flight=3)
    key, account = s.key("live", credits=100)
    replies = at_once(20, lambda i: s.submit(key, idem=f"k{i}"))
    statuses = Counter(r.status for r in replies)
    assert statuses == {202: 3, 429: 17}, statuses
    assert {r.error["code"] for r in replies if r.status == 429} == {"too_many_in_flight"}
    assert len(rows_of(s, account)) == 3 and s.credits(account) == 97


def test_submissions_racing_for_the_last_credit(durable):
    s = durable(in_flight=100)
    key, account = s.key("live", credits=1)
    replies = at_once(20, lambda i: s.submit(key, idem=f"k{i}"))
    statuses = Counter(r.status for r in replies)
    assert statuses == {202: 1, 402: 19}, statuses
    assert s.credits(account) == 0 and len(rows_of(s, account)) == 1


@pytest.mark.slow(seconds=16)
def test_admin_commands_while_serving(durable):
    s = durable(in_flight=1000, rate_per_minute=100000)
    key, account = s.key("live", credits=3)
    spare, _ = s.key("live", credits=5)
    spare_id = s.store.find("keys.hash", accounts.hash_key(spare))["id"]
    outcomes: Counter = Counter()
    stop = threading.Event()

    def submitter(n):
        while not stop.is_set():
            reply = s.submit(key, idem=f"{n}-{uuid.uuid4()}")
            outcomes[reply.status] += 1
            assert reply.status in (202, 402, 503), reply.body

    threads = [threading.Thread(target=submitter, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    try:
        topped = 0
        for _ in range(4):
            done = admin("credits", account, "--add", "2", "--data", str(s.data))
            assert done.returncode == 0, done.stderr
            topped += 2
            hook = admin("webhooks", "add", "http://127.0.0.1:9/hook", "--account", account,
                         "--data", str(s.data))
            assert hook.returncode == 0, hook.stderr
        assert admin("maintenance", "on", "--data", str(s.data)).returncode == 0
        assert s.request("GET", "/v1/genres", key=spare).status == 503
        assert admin("maintenance", "off", "--data", str(s.data)).returncode == 0
        assert admin("keys", "revoke", spare_id, "--data", str(s.data)).returncode == 0
        assert s.request("GET", "/v1/genres", key=spare).status == 401
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    rows = rows_of(s, account)
    balance = s.credits(account)
    assert balance >= 0
    assert len(rows) == outcomes[202] == 3 + topped - balance
    assert outcomes[402] > 0 and outcomes[503] >= 0
