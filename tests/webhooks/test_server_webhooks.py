"""Webhooks from a real server (waitress on loopback, the real dispatcher and
HttpSender) to real receivers: the analysis events of test and live mode,
external_id, credit.balance.low once per crossing, a failing receiver."""

from __future__ import annotations

import time

import pytest

from trackgrade import signing
from trackgrade.server.webhooks import endpoints

from tests.webhooks.receiver import Receiver, answer, fail_first
from tests.server.server_harness import start


@pytest.fixture
def server():
    made = start(webhook_schedule="0,0.2,0.2,0.2")
    yield made
    made.stop()


@pytest.fixture
def receivers():
    made = []
    yield lambda behaviour=None: made.append(Receiver(behaviour or answer(200))) or made[-1]
    for rcv in made:
        rcv.close()


def verified(secret, delivery, clock_now):
    return signing.verify(secret, delivery.headers["service-signature"], delivery.body,
                          now=clock_now)


def test_a_test_mode_analysis_delivers_scores_ready_and_completed(server, receivers):
    rcv = receivers()
    key, account = server.key("test")
    hook = endpoints.add_endpoint(server.store, rcv.url, account, clock=server.clock)
    accepted = server.submit(key, file_name="kick.wav", external_id="order-42").json
    assert server.upload(accepted, b"RIFF test bytes").status == 200
    got = rcv.wait_for(2)
    events = [verified(hook["secret"], d, server.clock.time()) for d in got]
    events.sort(key=lambda e: e["type"] == "analysis.completed")     # may arrive in any order
    assert [e["type"] for e in events] == ["analysis.scores_ready", "analysis.completed"]
    for event in events:
        assert event["livemode"] is False and event["object"] == "event"
        assert event["data"]["id"] == accepted["id"]
        assert event["data"]["external_id"] == "order-42"
    assert events[0]["data"]["diagnosis_status"] == "pending"
    assert events[1]["data"]["diagnosis_status"] == "ready"
    assert isinstance(events[1]["data"]["score"], int)
    assert {d.headers["webhook-id"] for d in got} == {e["id"] for e in events}


def test_a_failed_analysis_and_the_low_balance_crossing_are_delivered_once(server, receivers):
    rcv = receivers()
    key, account = server.key("live", credits=6)
    hook = endpoints.add_endpoint(server.store, rcv.url, account, clock=server.clock)
    accepted = server.submit(key, file_name="a.wav", external_id="x-1").json   # 6 -> 5: low
    server.upload(accepted, b"not audio at all")                                # fails: 5 -> 6
    got = rcv.wait_for(2)
    events = [verified(hook["secret"], d, server.clock.time()) for d in got]
    by_type = {}
    for event in events:
        by_type.setdefault(event["type"], []).append(event)
    assert by_type["credit.balance.low"][0]["data"] == {"credits_remaining": 5, "threshold": 5}
    assert by_type["credit.balance.low"][0]["livemode"] is True
    failed = by_type["analysis.failed"][0]["data"]
    assert failed["id"] == accepted["id"] and failed["status"] == "failed"
    assert failed["external_id"] == "x-1" and failed["error"]["code"]
    # 6 -> 5 again crosses again; 5 -> 4 does not
    second = server.submit(key, file_name="b.wav").json
    server.upload(second, b"still not audio")
    server.wait(second["id"], key)
    rcv.wait_for(4)
    time.sleep(0.3)
    lows = [e for e in rcv.events() if e["type"] == "credit.balance.low"]
    assert len(lows) == 2 and len(rcv.deliveries) == 4


def test_a_receiver_failing_its_first_attempts_still_gets_the_event(server, receivers):
    rcv = receivers(fail_first(2, 503))
    key, account = server.key("test")
    hook = endpoints.add_endpoint(server.store, rcv.url, account, clock=server.clock)
    accepted = server.submit(key, file_name="kick_fail_unprocessable_audio.wav").json
    server.upload(accepted, b"bytes")
    first = rcv.wait_for(1)[0]
    delivery_id = f"{first.event['id']}:{hook['id']}"
    for attempt in (1, 2):                  # the FixedClock moves through the schedule
        row = recorded(server, delivery_id, attempt)
        assert row["state"] == "pending" and row["last_status"] == 503
        server.clock.advance(0.25)
        rcv.wait_for(attempt + 1)
    got = rcv.wait_for(3)
    assert len({d.body for d in got}) == 1 and first.event["type"] == "analysis.failed"
    row = recorded(server, delivery_id, 3)
    assert (row["state"], row["attempts"], row["last_status"]) == ("delivered", 3, 200)


def recorded(server, delivery_id: str, attempts: int, timeout: float = 30.0) -> dict:
    """The delivery row once the answer to attempt `attempts` is recorded
    (the receiver sees a request a moment before the dispatcher records it)."""
    deadline = time.monotonic() + timeout
    while True:
        row = server.store.get("deliveries", delivery_id)
        if row and row["attempts"] >= attempts and row["lease_until"] is None:
            return row
        assert time.monotonic() < deadline, row
        time.sleep(0.01)


def test_one_hanging_endpoint_does_not_delay_another_account(server, receivers):
    hang, fast = receivers(lambda d, n: "hang"), receivers()
    slow_key, slow_account = server.key("test")
    key, account = server.key("test")
    endpoints.add_endpoint(server.store, hang.url, slow_account, clock=server.clock)
    endpoints.add_endpoint(server.store, fast.url, account, clock=server.clock)
    for n in range(6):
        accepted = server.submit(slow_key, file_name=f"s{n}.wav").json
        server.upload(accepted, b"x")
    started = time.monotonic()
    accepted = server.submit(key, file_name="fast.wav").json
    server.upload(accepted, b"x")
    got = fast.wait_for(2, timeout=5)
    assert got[-1].at - started < 5.0              # the hanging attempts take 10 s each
    assert len(hang.deliveries) <= 4                     # webhook_per_endpoint
    # and the API answers meanwhile
    assert server.request("GET", f"/v1/analyses/{accepted['id']}", key=key).status == 200


def test_the_running_server_prunes_delivered_events_to_its_history(receivers):
    server = start(webhook_history=2)
    try:
        rcv = receivers()
        key, account = server.key("test")
        endpoints.add_endpoint(server.store, rcv.url, account, clock=server.clock)
        for n in range(4):
            accepted = server.submit(key, file_name=f"p{n}.wav").json
            server.upload(accepted, b"x")
            server.clock.advance(1)
        rcv.wait_for(8)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            server.clock.advance(6)                       # past the dispatcher's prune interval
            server.ctx.webhooks.kick()
            if len(server.store.select("events.by_created")) <= 2:
                break
            time.sleep(0.05)
        kept = server.store.select("events.by_created")
        assert len(kept) == 2 and len(server.store.scan("deliveries")) == 2
        assert {e["id"] for e in kept} <= {d.event["id"] for d in rcv.deliveries}
    finally:
        server.stop()


def test_the_attempt_timeout_is_a_setting(receivers):
    """TRACKGRADE_WEBHOOK_TIMEOUT: an attempt the receiver leaves unanswered is
    cut after that many seconds (the default is the CONTRACT's 10 s) and
    recorded as failed, to be tried again by the schedule."""
    server = start(webhook_schedule="0,100", webhook_timeout=1.0)
    try:
        hang = receivers(lambda delivery, n: "hang")
        key, account = server.key("test")
        hook = endpoints.add_endpoint(server.store, hang.url, account, clock=server.clock)
        accepted = server.submit(key, file_name="kick.wav").json
        server.upload(accepted, b"x")
        first = hang.wait_for(1)[0]
        row = recorded(server, f"{first.event['id']}:{hook['id']}", 1, timeout=8)
        assert time.monotonic() - first.at < 8           # not the default 10 s
        assert row["state"] == "pending" and row["last_status"] is None
    finally:
        server.stop()
