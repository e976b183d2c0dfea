"""Replays, cancel, the in-flight message and test-data retention on BOTH real
stores (the durable data directory and PostgreSQL), through a real server on
loopback, one suite for every backend (the tests/server/test_store_contract.py
pattern: a backend joins by adding a factory to BACKENDS).

- replay: the original body byte for byte, upload.token included, for as
  long as the analysis awaits its bytes; the same after a restart (the token
  is derived from a secret the store keeps), and never stored in clear;
- cancel: DELETE /v1/analyses/{id} while awaiting the bytes: 200, failed
  `analysis_canceled`, credit restored, analysis.failed; then 409
  `analysis_not_cancelable`; the 429 `too_many_in_flight` names the ids;
- test data: test-mode analyses are pruned by the sweeper after
  `test_retention_days`; live ones never.
"""

from __future__ import annotations


import pytest

from tests.server.backends import BACKENDS  # a backend joins there
from tests.server.server_harness import start, wav_bytes

from trackgrade.server.store import COLLECTIONS  # noqa: E402


@pytest.fixture(params=sorted(BACKENDS))
def opener(request, tmp_path):
    return BACKENDS[request.param](request, tmp_path)


@pytest.fixture
def served(opener):
    """(server, opener): a server on a fresh store of the backend."""
    store = opener()
    server = start(store=store, in_flight=2, test_in_flight=2, rate_per_minute=10_000,
                   test_rate_per_minute=10_000, test_retention_days=7)
    yield server, opener
    server.stop()
    store.close()


def test_a_replay_is_the_original_body_byte_for_byte_even_after_a_restart(served):
    server, opener = served
    key, account = server.key("live", credits=5)
    body = {"file_name": "a.wav", "external_id": "x"}
    first = server.request("POST", "/v1/analyses", key=key, idem="same", body=body)
    again = server.request("POST", "/v1/analyses", key=key, idem="same", body=body)
    assert first.status == again.status == 202
    assert again.body == first.body and again.header("Idempotent-Replayed") == "true"
    token = first.json["upload"]["token"]
    # another server on the same store (a restart, another node): the same bytes
    other_store = opener()
    other = start(store=other_store, clock=server.clock)
    try:
        third = other.request("POST", "/v1/analyses", key=key, idem="same", body=body)
        assert third.body == first.body
    finally:
        other.stop()
        other_store.close()
    # the token is never stored in clear
    assert all(token not in repr(server.store.scan(c)) for c in COLLECTIONS)
    assert server.upload(again.json, wav_bytes(2)).status == 200
    assert server.upload(first.json, wav_bytes(2)).status == 401          # single use
    late = server.request("POST", "/v1/analyses", key=key, idem="same", body=body)
    assert late.body == first.body                    # the original, whatever happened since
    assert server.upload(late.json, wav_bytes(2)).status == 401          # opens nothing now
    assert server.credits(account) == 4


def test_a_replay_after_a_cancel_or_an_expiry_is_the_original_and_opens_nothing(served):
    server, _ = served
    key, account = server.key("live", credits=5)
    canceled = {"file_name": "c.wav"}
    first = server.request("POST", "/v1/analyses", key=key, idem="cancel", body=canceled)
    assert server.request("DELETE", f"/v1/analyses/{first.json['id']}", key=key).status == 200
    again = server.request("POST", "/v1/analyses", key=key, idem="cancel", body=canceled)
    assert again.status == 202 and again.body == first.body
    assert server.upload(again.json, wav_bytes(2)).status == 401
    assert server.credits(account) == 5                       # the cancel gave it back
    expiring = {"file_name": "e.wav"}
    first = server.request("POST", "/v1/analyses", key=key, idem="expire", body=expiring)
    server.clock.advance(first.json["upload"]["expires_in"] + 1)
    again = server.request("POST", "/v1/analyses", key=key, idem="expire", body=expiring)
    assert again.status == 202 and again.body == first.body
    assert server.upload(again.json, wav_bytes(2)).status == 401


def test_cancel_while_awaiting_the_bytes_then_409(served):
    server, _ = served
    key, account = server.key("live", credits=5)
    accepted = server.submit(key, "cancel me.wav").json
    assert server.credits(account) == 4
    reply = server.request("DELETE", f"/v1/analyses/{accepted['id']}", key=key)
    assert reply.status == 200, reply.body
    doc = reply.json
    assert doc["id"] == accepted["id"] and doc["status"] == "failed"
    assert doc["error"]["code"] == "analysis_canceled"
    assert server.credits(account) == 5
    assert server.request("GET", f"/v1/analyses/{accepted['id']}", key=key).json == doc
    failed = [e for e in server.events(accepted["id"]) if e["type"] == "analysis.failed"]
    assert len(failed) == 1
    assert failed[0]["envelope"]["data"]["error"]["code"] == "analysis_canceled"
    again = server.request("DELETE", f"/v1/analyses/{accepted['id']}", key=key)
    assert again.status == 409 and again.error["code"] == "analysis_not_cancelable"
    assert server.upload(accepted, wav_bytes(2)).status == 401            # the token is dead
    assert server.credits(account) == 5
    # an analysis whose bytes arrived is past cancelling; others' and unknown ids are 404
    uploaded = server.submit(key, "kept.wav").json
    assert server.upload(uploaded, wav_bytes(2)).status == 200
    late = server.request("DELETE", f"/v1/analyses/{uploaded['id']}", key=key)
    assert late.status == 409 and late.error["code"] == "analysis_not_cancelable"
    stranger, _ = server.key("live")
    assert server.request("DELETE", f"/v1/analyses/{uploaded['id']}",
                          key=stranger).status == 404


def test_too_many_in_flight_names_the_ids_and_cancel_frees_a_slot(served):
    server, _ = served
    key, _ = server.key("live", credits=10)
    held = [server.submit(key, f"t{i}.wav").json["id"] for i in range(2)]
    refused = server.submit(key, "third.wav")
    assert refused.status == 429 and refused.error["code"] == "too_many_in_flight"
    for analysis_id in held:
        assert analysis_id in refused.error["message"]
    assert server.request("DELETE", f"/v1/analyses/{held[0]}", key=key).status == 200
    assert server.submit(key, "third.wav").status == 202


def test_test_analyses_are_pruned_after_the_retention_live_ones_kept(served):
    server, _ = served
    test_key, _ = server.key("test")
    live_key, _ = server.key("live", credits=5)
    old_test = server.submit(test_key, "old.wav").json
    assert server.upload(old_test, b"x").status == 200
    server.wait(old_test["id"], test_key, until=lambda d: d["diagnosis_status"] == "ready")
    live = server.submit(live_key, "live.wav").json
    server.clock.advance(6 * 86400)
    young_test = server.submit(test_key, "young.wav").json
    server.ctx.lifecycle.sweep()
    assert server.request("GET", f"/v1/analyses/{old_test['id']}", key=test_key).status == 200
    server.clock.advance(1 * 86400 + 60)                 # old: 7 days and a minute
    server.ctx.lifecycle.sweep()
    assert server.request("GET", f"/v1/analyses/{old_test['id']}", key=test_key).status == 404
    assert server.request("GET", f"/v1/analyses/{young_test['id']}",
                          key=test_key).status == 200
    assert server.request("GET", f"/v1/analyses/{live['id']}", key=live_key).status == 200
    listed = server.request("GET", "/v1/analyses", key=test_key).json["data"]
    assert [d["id"] for d in listed] == [young_test["id"]]
