"""Two real `trackgrade serve --database` processes on one real PostgreSQL:
one idempotent submission raced across both nodes, an upload accepted by the
other node, the per-minute limit across both, each webhook event delivered
once, and a node killed with SIGKILL (the other serves everything; the
restarted node recovers only its own work). Also `admin migrate`."""

from __future__ import annotations

import json
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from trackgrade.server import accounts
from trackgrade.server.store import open_store

from tests.poll import wait_for
from tests.webhooks.receiver import Receiver
from tests.server.serve_process import CLI, ServeProcess, make_key
from tests.server.server_harness import request, upload

RATE = 40
ENV = {"TRACKGRADE_RATE_PER_MINUTE": str(RATE), "TRACKGRADE_IN_FLIGHT": "20",
       "TRACKGRADE_TEST_RATE_PER_MINUTE": "1000", "TRACKGRADE_WEBHOOK_SCHEDULE": "0,1,1,1",
       "TRACKGRADE_SWEEP_INTERVAL": "0.5", "PYTHONUNBUFFERED": "1"}


class Node(ServeProcess):
    """One `trackgrade serve --database URL` process."""

    def __init__(self, database: str, node_id: str, **env: str) -> None:
        super().__init__(None, "--node-id", node_id, "--workers", "1", database=database,
                         env={**ENV, **env}, docs_url=None, unset=("TRACKGRADE_DATABASE_URL",),
                         timeout=90, require=True, stop_wait=15)

    def __call__(self, method, path, **kw):
        return request(self.url, method, path, **kw)


def read(database: str, collection: str, doc_id: str) -> dict | None:
    store = open_store(database=database, pool_size=2)
    try:
        return store.get(collection, doc_id)
    finally:
        store.close()


def deliveries_of(database: str, account_id: str) -> list[dict]:
    store = open_store(database=database, pool_size=2)
    try:
        return [r for r in store.scan("deliveries") if r["account_id"] == account_id]
    finally:
        store.close()


def wait_all_delivered(database: str, account_id: str, count: int, timeout: float = 30) -> None:
    """Until the store holds `count` deliveries for the account, each recorded
    "delivered"; the rows' states, attempts and last answers if it never does."""
    def done() -> bool:
        rows = deliveries_of(database, account_id)
        return len(rows) == count and all(row["state"] == "delivered" for row in rows)
    try:
        wait_for(done, timeout=timeout, what=f"{count} deliveries recorded delivered")
    except AssertionError as exc:
        rows = [(r["id"][-12:], r["state"], r["attempts"], r.get("last_status"), r.get("last_error"))
                for r in deliveries_of(database, account_id)]
        raise AssertionError(f"{exc}; rows: {rows}") from None


def upload_to(node: Node, accepted: dict, data: bytes):
    """POST the bytes to `node`, whatever node issued the upload URL."""
    return upload(node.url, accepted, data, field_name="file", part_name="a.wav")


def wait_status(node: Node, key: str, analysis_id: str, want: str, timeout: float = 120,
                field: str = "status") -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reply = node("GET", f"/v1/analyses/{analysis_id}", key=key)
        assert reply.status == 200, reply.body
        if reply.json[field] == want:
            return reply.json
        time.sleep(1.0)
    raise AssertionError(f"{analysis_id}'s {field} never became {want}: {reply.json[field]}")


def submit(node: Node, key: str, idem: str, name: str = "track.wav"):
    return node("POST", "/v1/analyses", key=key, idem=idem,
                body={"file_name": name, "mastering_status": "master"})


@pytest.fixture(scope="module")
def cluster(postgres_server):
    database = postgres_server.create_database()
    nodes = [Node(database, "node-a"), Node(database, "node-b")]
    yield database, nodes
    for node in nodes:
        node.stop()


def test_one_idempotent_submission_raced_across_both_nodes(cluster):
    database, (a, b) = cluster
    key, account_id = make_key("live", 5, database=database, pool_size=2)

    def post(i):
        return submit((a, b)[i % 2], key, "race-1")

    with ThreadPoolExecutor(10) as pool:
        replies = list(pool.map(post, range(20)))
    accepted = [r for r in replies if r.status == 202]
    assert accepted and all(r.status in (202, 409) for r in replies), \
        [(r.status, r.body) for r in replies]
    assert {r.json["id"] for r in accepted} == {accepted[0].json["id"]}
    assert sum(r.headers.get("idempotent-replayed") == "true" for r in accepted) \
        == len(accepted) - 1
    # every answer, from either node, is the original byte for byte (upload.token too)
    assert {r.body for r in accepted} == {accepted[0].body}
    listed = a("GET", "/v1/analyses", key=key).json["data"]
    assert [row["id"] for row in listed] == [accepted[0].json["id"]]
    assert read(database, "accounts", account_id)["credits"] == 4
    # so whichever answer a client kept, its token uploads (once), to either node
    assert upload_to(b, accepted[0].json, b"RIFF not really audio").status in (200, 422)
    assert upload_to(a, accepted[-1].json, b"RIFF not really audio").status == 401


def test_credits_and_the_in_flight_limit_hold_under_a_race_across_both_nodes(cluster):
    database, (a, b) = cluster
    poor, poor_account = make_key("live", 12, database=database, pool_size=2)
    rich, rich_account = make_key("live", 100, database=database, pool_size=2)

    def race(key):
        with ThreadPoolExecutor(8) as pool:
            return [r.status for r in pool.map(
                lambda i: submit((a, b)[i % 2], key, f"race-{key[-6:]}-{i}"), range(30))]

    statuses = race(poor)                       # 12 credits, 20 may be in flight
    assert statuses.count(202) == 12 and statuses.count(402) == 18, statuses
    assert read(database, "accounts", poor_account)["credits"] == 0
    statuses = race(rich)                       # 100 credits, 20 may be in flight
    assert statuses.count(202) == 20 and statuses.count(429) == 10, statuses
    assert read(database, "accounts", rich_account)["credits"] == 80


def test_an_upload_accepted_by_the_other_node_completes(cluster, track):
    database, (a, b) = cluster
    key, _ = make_key("live", database=database, pool_size=2)
    accepted = submit(a, key, "upload-1").json
    assert accepted["upload"]["url"].startswith(a.url)
    reply = upload_to(b, accepted, track)
    assert reply.status == 200, reply.body
    done = wait_status(a, key, accepted["id"], "complete")
    assert done["tempo"]["bpm"] == pytest.approx(128, abs=1.5)
    # Only a document whose narrative is ready stops changing between reads.
    ready = wait_status(a, key, accepted["id"], "ready", field="diagnosis_status")
    assert b("GET", f"/v1/analyses/{accepted['id']}", key=key).json == ready
    again = upload_to(a, accepted, track)          # single use, on every node
    assert again.status == 401 and again.json["error"]["code"] == "upload_token_invalid"


def test_the_per_minute_limit_holds_across_both_nodes(cluster):
    database, (a, b) = cluster
    for _ in range(2):          # a burst that spans two minute windows is run again (new key)
        key, _ = make_key("live", database=database, pool_size=2)
        window = int(time.time() // 60)

        def get(i, key=key):
            return (a, b)[i % 2]("GET", "/v1/analyses", key=key).status

        with ThreadPoolExecutor(6) as pool:
            statuses = list(pool.map(get, range(RATE + 12)))
        reply = b("GET", "/v1/analyses", key=key)
        if int(time.time() // 60) == window:
            break
    else:
        raise AssertionError("two bursts in a row spanned a minute boundary")
    assert statuses.count(200) == RATE and statuses.count(429) == 12
    assert reply.status == 429 and reply.headers["x-ratelimit-remaining"] == "0"


def test_each_webhook_event_reaches_the_receiver_exactly_once(cluster):
    database, (a, b) = cluster
    key, account_id = make_key("test", database=database, pool_size=2)
    receiver = Receiver()
    try:
        added = subprocess.run(CLI + ["admin", "webhooks", "add", receiver.url, "--account",
                                      account_id, "--database", database, "--json"],
                               capture_output=True, text=True, timeout=60)
        assert added.returncode == 0, added.stderr
        ids = []
        for i in range(6):
            first, second = (a, b) if i % 2 else (b, a)
            accepted = submit(first, key, f"hook-{i}", name=f"take_{i}.wav").json
            assert upload_to(second, accepted, b"RIFF not decoded in test mode").status == 200
            ids.append(accepted["id"])
        receiver.wait_for(12, timeout=60)
        # once the store records all 12 acknowledged, no node attempts any again
        wait_all_delivered(database, account_id, 12)
        events = receiver.events()
        assert len(events) == 12
        assert len({event["id"] for event in events}) == 12
        kinds = sorted((e["data"]["id"], e["type"]) for e in events)
        assert kinds == sorted((i, t) for i in ids
                               for t in ("analysis.scores_ready", "analysis.completed"))
    finally:
        receiver.close()


def test_a_node_killed_with_sigkill_loses_nothing_the_other_serves(postgres_server, track):
    database = postgres_server.create_database()
    a, b = Node(database, "node-a"), Node(database, "node-b")
    try:
        key, account_id = make_key("live", 10, database=database, pool_size=2)
        test_key, _ = make_key("test", database=database, pool_size=2)
        done = submit(a, test_key, "k-done").json                  # finished on a
        upload_to(a, done, b"x")
        wait_status(a, test_key, done["id"], "complete")
        waiting = submit(a, key, "k-waiting").json                 # awaiting its upload
        computing = submit(a, key, "k-computing").json             # a is computing it
        assert upload_to(a, computing, track).status == 200
        a.kill()                                                   # at once: still computing
        others = submit(b, key, "k-other").json                    # b "computing" its own
        store = open_store(database=database, pool_size=2)
        with store.transaction() as txn:                           # (held, as b would)
            row = txn.get("analyses", others["id"])
            row.update(phase="uploaded")
            txn.put("analyses", row)
            txn.put("jobs", {"id": others["id"], "at": time.time(), "node": "node-b"})
            txn.delete("uploads", others["id"])
        store.close()
        # everything a acknowledged, b serves
        assert b("GET", f"/v1/analyses/{done['id']}", key=test_key).json["status"] == "complete"
        assert upload_to(b, waiting, track).status == 200
        wait_status(b, key, waiting["id"], "complete")
        assert read(database, "accounts", account_id)["credits"] == 7
        # a restarts: it fails (and refunds) only what it was computing itself
        a = Node(database, "node-a")
        failed = wait_status(a, key, computing["id"], "failed", timeout=30)
        assert failed["error"]["code"] == "engine_error"
        assert read(database, "accounts", account_id)["credits"] == 8
        assert b("GET", f"/v1/analyses/{others['id']}", key=key).json["status"] == "processing"
    finally:
        a.stop()
        b.stop()


def test_admin_migrate_copies_a_data_directory_and_verifies(tmp_path, postgres_server):
    data = tmp_path / "data"
    store = open_store(data)
    account = accounts.create_account(store, plan="pro", credits=3)
    key, _ = accounts.create_key(store, account["id"], mode="live")
    with store.transaction() as txn:
        for i in range(2500):
            txn.put("analyses", {"id": f"an_{i:05d}", "account_id": account["id"],
                                 "key_id": "key_x", "livemode": True, "status": "complete",
                                 "created_at": f"2026-11-01T00:00:{i % 60:02d}.{i:06d}Z"})
    store.close()
    database = postgres_server.create_database()
    done = subprocess.run(CLI + ["admin", "migrate", "--data", str(data), "--database",
                                 database, "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout)
    assert counts["analyses"] == {"source": 2500, "target": 2500}
    assert counts["accounts"] == {"source": 1, "target": 1}
    moved = open_store(database=database, pool_size=2)
    try:
        assert moved.get("accounts", account["id"])["credits"] == 3
        assert accounts.authenticate(moved, key)[1]["id"] == account["id"]
        assert moved.count("analyses.by_key", ("key_x",)) == 2500
    finally:
        moved.close()
    listed = subprocess.run(CLI + ["admin", "keys", "list", "--database", database, "--json"],
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and json.loads(listed.stdout)[0]["credits"] == 3
    bad = subprocess.run(CLI + ["admin", "keys", "list", "--database",
                                "postgresql://nobody@127.0.0.1:1/none"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


@pytest.mark.slow(seconds=45)
def test_a_dead_nodes_webhook_leases_expire_to_the_other_node(postgres_server):
    """Node a claims both deliveries of an analysis (the receiver holds the
    attempts open) and dies; node b takes them when a's lease runs out (5
    attempt timeouts + 20 s, see dispatcher.py: 40 s with the 4 s timeout
    here, 70 s with the default 10 s), and each event is acknowledged exactly
    once."""
    database = postgres_server.create_database()
    receiver = Receiver(behaviour=lambda delivery, n: "hang" if n <= 2 else (200, {}))
    a = Node(database, "node-a", TRACKGRADE_WEBHOOK_TIMEOUT="4")
    b = None
    try:
        key, account_id = make_key("test", database=database, pool_size=2)
        added = subprocess.run(CLI + ["admin", "webhooks", "add", receiver.url, "--account",
                                      account_id, "--database", database],
                               capture_output=True, text=True, timeout=60)
        assert added.returncode == 0, added.stderr
        accepted = submit(a, key, "lease-1").json
        assert upload_to(a, accepted, b"not decoded in test mode").status == 200
        held = receiver.wait_for(2, timeout=30)          # a's attempts, held open
        a.kill()
        killed_at = time.monotonic()
        b = Node(database, "node-b", TRACKGRADE_WEBHOOK_TIMEOUT="4")
        later = receiver.wait_for(4, timeout=150)[2:]
        assert time.monotonic() - killed_at >= 30        # not before a's lease ran out
        assert sorted(d.event["id"] for d in later) == sorted(d.event["id"] for d in held)
        assert {d.event["type"] for d in later} == {"analysis.scores_ready",
                                                    "analysis.completed"}
        # both recorded delivered (b's write after the 2xx): nothing will attempt them again
        wait_all_delivered(database, account_id, 2)
        assert len(receiver.deliveries) == 4             # acknowledged once: no more attempts
    finally:
        receiver.close()
        a.stop()
        if b is not None:
            b.stop()
