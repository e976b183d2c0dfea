"""The state machine over a durable store, driven directly: recovery after
a crash at each stage, one restore per failure, the idempotency purge."""

from __future__ import annotations

import pytest

from trackgrade.server import accounts
from trackgrade.server.clock import FixedClock
from trackgrade.server.lifecycle import Caller, Lifecycle, Submission
from trackgrade.server.store import open_store
from trackgrade.testmode import canned_analysis
from trackgrade.server import queries


@pytest.fixture
def world(tmp_path):
    clock = FixedClock(1_800_000_000.0)
    store = open_store(tmp_path / "data")
    account = accounts.create_account(store, plan="pro", credits=3, clock=clock)
    _, key = accounts.create_key(store, account["id"], mode="live", clock=clock)
    caller = Caller(key_id=key["id"], account_id=account["id"], livemode=True,
                    credit_billed=True, per_minute=30, in_flight=10, daily=None)
    yield tmp_path / "data", store, clock, caller
    store.close()


def lifecycle(store, clock):
    return Lifecycle(store, clock, docs_url="https://d.test/e", upload_ttl=900,
                     idempotency_ttl=86400)


def submit(life, caller, n=0):
    outcome, _ = life.create(caller, Submission(f"t{n}.wav", "pre-master", f"x{n}"),
                             idem_id=f"idem{n}", fingerprint="fp",
                             upload_url=lambda i: f"http://h/v1/uploads/{i}")
    body = outcome.body
    return body["id"], body["upload"]["token"]


def reopen(path, store, clock):
    store.close()
    again = open_store(path)
    return again, lifecycle(again, clock)


def test_restart_fails_uploaded_work_and_finishes_scored_work(world):
    path, store, clock, caller = world
    life = lifecycle(store, clock)
    lost, lost_token = submit(life, caller, 1)
    scored, scored_token = submit(life, caller, 2)
    waiting, _ = submit(life, caller, 3)
    life.accept_upload(lost, lost_token, 1000)
    life.accept_upload(scored, scored_token, 1000)
    life.scores_ready(scored, canned_analysis("t2.wav", "pre-master"))
    assert store.get("accounts", caller.account_id)["credits"] == 0
    # -- the process dies here --
    store, life = reopen(path, store, clock)
    assert sorted(life.recover()) == sorted([lost, scored])
    lost_row, scored_row, waiting_row = (store.get("analyses", i) for i in (lost, scored, waiting))
    assert lost_row["status"] == "failed" and lost_row["error"]["code"] == "engine_error"
    assert scored_row["status"] == "complete" and scored_row["diagnosis_status"] == "ready"
    assert waiting_row["status"] == "processing"
    assert store.get("accounts", caller.account_id)["credits"] == 1
    types = sorted(e["type"] for e in queries.pending_events(store))
    assert types == ["analysis.completed", "analysis.failed", "analysis.scores_ready"]
    assert life.recover() == []                        # nothing left to recover
    clock.advance(901)
    assert life.sweep() == [waiting]
    assert store.get("accounts", caller.account_id)["credits"] == 2
    store.close()


def test_a_failure_restores_the_credit_once(world):
    _, store, clock, caller = world
    life = lifecycle(store, clock)
    analysis_id, _ = submit(life, caller)
    assert life.fail(analysis_id, "engine_error", "x") is True
    assert life.fail(analysis_id, "engine_error", "x") is False
    life.scores_ready(analysis_id, canned_analysis("t0.wav", "pre-master"))
    assert store.get("analyses", analysis_id)["status"] == "failed"
    assert store.get("accounts", caller.account_id)["credits"] == 3


def test_sweep_purges_expired_idempotency_records(world):
    _, store, clock, caller = world
    life = lifecycle(store, clock)
    submit(life, caller, 1)
    assert store.get("idempotency", "idem1") is not None
    clock.advance(86400 + 1)
    life.sweep()
    assert store.get("idempotency", "idem1") is None


def test_markers_an_older_release_kept_in_settings_are_adopted_and_honoured(world):
    path, store, clock, caller = world
    life = lifecycle(store, clock)
    lost, token = submit(life, caller, 1)
    waiting, _ = submit(life, caller, 2)
    life.accept_upload(lost, token, 1000)
    with store.transaction() as txn:          # the layout before the "uploads"/"jobs" collections
        for collection, prefix, analysis_id in (("jobs", "server.job:", lost),
                                                ("uploads", "server.upload:", waiting)):
            marker = txn.get(collection, analysis_id)
            txn.delete(collection, analysis_id)
            txn.put("settings", {"id": prefix + analysis_id, "analysis_id": analysis_id,
                                 "at": marker["at"], **({"node": ""} if collection == "jobs"
                                                        else {})})
    store, life = reopen(path, store, clock)
    assert life.recover() == [lost]
    assert store.get("analyses", lost)["error"]["code"] == "engine_error"
    assert not [d for d in store.scan("settings") if d["id"].startswith("server.")]
    clock.advance(901)
    assert life.sweep() == [waiting]
    assert store.get("analyses", waiting)["error"]["code"] == "upload_incomplete"
    store.close()


def test_the_awaiting_uploads_follow_creation_and_every_end_of_the_upload_phase(world):
    """What the connection layer reads on the event loop instead of the store:
    an analysis is known once created; accepted, failed and canceled ones are
    forgotten; another node (a second Lifecycle on the same store) learns of
    them at its next sweep and forgets them when they end elsewhere."""
    _, store, clock, caller = world
    here, there = lifecycle(store, clock), lifecycle(store, clock)
    first, token = submit(here, caller, 1)
    second, _ = submit(here, caller, 2)
    entry = here.awaiting.get(first)
    assert (entry.account_id, entry.key_id, entry.file_name) == \
        (caller.account_id, caller.key_id, "t1.wav")
    assert entry.expires_at == clock.time() + 900
    assert first not in there.awaiting
    there.sweep()
    assert first in there.awaiting and second in there.awaiting
    here.accept_upload(first, token, 10)
    here.cancel(second)
    assert first not in here.awaiting and second not in here.awaiting
    there.sweep()
    assert len(there.awaiting) == 0
    third, _ = submit(here, caller, 3)
    clock.advance(901)
    here.sweep()                                   # expired: failed, forgotten
    assert third not in here.awaiting
