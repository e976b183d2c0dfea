"""The dispatcher over a real store, the real HttpSender and a real loopback
receiver, with time moved by a FixedClock (no sleeping through backoff)."""

from __future__ import annotations

import random
import time

import pytest
from standardwebhooks.webhooks import Webhook

from trackgrade import signing
from trackgrade.server import accounts
from trackgrade.server.clock import FixedClock
from trackgrade.server.store import MemoryStore, StoreError, new_event, open_store
from trackgrade.server.webhooks import DispatchOptions, Dispatcher, HttpSender
from trackgrade.server.webhooks import endpoints, state
from trackgrade.server.webhooks.schedule import (
    DEFAULT_SCHEDULE, next_wait, parse_schedule,
)

from tests.poll import wait_for
from tests.webhooks.receiver import Receiver, answer, fail_first

T0 = 1_700_000_000.0


@pytest.fixture(params=["memory", "durable"])
def world(request, tmp_path):
    """Every test runs over each store backend (a new backend joins the list)."""
    store = MemoryStore() if request.param == "memory" else open_store(tmp_path / "data")
    clock = FixedClock(T0)
    account = accounts.create_account(store, credits=10, clock=clock)
    receivers = []

    def receiver(behaviour=None):
        made = Receiver(behaviour or answer(200))
        receivers.append(made)
        return made

    def endpoint(rcv):
        return endpoints.add_endpoint(store, rcv.url, account["id"], clock=clock)

    def dispatcher(**options):
        return Dispatcher(store, clock, HttpSender(), DispatchOptions(**options),
                          rng=random.Random(7))

    def emit(kind="analysis.completed", livemode=True, data=None):
        event = new_event(kind, data or {"id": "an_1", "external_id": "ext-1"},
                          account_id=account["id"], livemode=livemode, created=clock.time())
        with store.transaction() as txn:
            txn.put("events", event)
        return event

    yield type("World", (), dict(store=store, clock=clock, account=account, receiver=receiver,
                                 endpoint=endpoint, dispatcher=dispatcher, emit=emit))
    for made in receivers:
        made.close()
    store.close()


def delivery(store, event, made):
    return store.get("deliveries", state.delivery_id(event["id"], made["id"]))


def test_a_delivery_carries_both_signatures_over_the_exact_body(world):
    rcv = world.receiver()
    made = world.endpoint(rcv)
    event = world.emit(livemode=False)
    outcomes = world.dispatcher().deliver_due()
    assert [o.state for o in outcomes] == ["delivered"]
    (got,) = rcv.deliveries
    assert got.headers["content-type"] == "application/json"
    assert got.event == event["envelope"] and got.event["livemode"] is False
    header = got.headers["service-signature"]
    assert header.startswith(f"t={int(T0)},v1=")
    assert signing.verify(made["secret"], header, got.body, now=T0)["id"] == event["id"]
    assert got.headers["webhook-id"] == event["id"]
    assert got.headers["webhook-timestamp"] == str(int(T0))
    assert signing.verify_standard(made["secret"], got.headers, got.body, now=T0)
    row = delivery(world.store, event, made)
    assert (row["state"], row["attempts"], row["last_status"]) == ("delivered", 1, 200)
    listed = endpoints.list_endpoints(world.store, world.account["id"])
    assert listed[0]["last_status"] == 200 and listed[0]["last_attempt_at"] == T0
    assert world.dispatcher().deliver_due() == []       # acknowledged: never again


def test_the_off_the_shelf_standard_webhooks_verifier_accepts_a_live_delivery(world):
    world.clock.set(time.time())
    rcv = world.receiver()
    made = world.endpoint(rcv)
    event = world.emit()
    world.dispatcher().deliver_due()
    (got,) = rcv.deliveries
    assert Webhook(made["secret"]).verify(got.body, got.headers)["id"] == event["id"]


def test_a_failing_receiver_gets_retries_on_the_schedule_each_signed_afresh(world):
    rcv = world.receiver(fail_first(2, 500))
    made = world.endpoint(rcv)
    event = world.emit()
    dispatcher = world.dispatcher()
    assert [o.state for o in dispatcher.deliver_due()] == ["pending"]
    row = delivery(world.store, event, made)
    assert T0 + 10 <= row["next_attempt_at"] <= T0 + 11            # 10 s + up to 10 %
    world.clock.advance(9.9)
    assert dispatcher.deliver_due() == []                            # not due yet
    world.clock.advance(1.2)
    assert [o.state for o in dispatcher.deliver_due()] == ["pending"]
    row = delivery(world.store, event, made)
    assert row["attempts"] == 2 and row["last_status"] == 500
    assert 60 <= row["next_attempt_at"] - world.clock.time() <= 66
    world.clock.advance(66.1)
    assert [o.state for o in dispatcher.deliver_due()] == ["delivered"]
    stamps = [signing.parse_header(d.headers["service-signature"])[0] for d in rcv.deliveries]
    assert len(set(stamps)) == 3 and stamps == sorted(stamps)
    bodies = {d.body for d in rcv.deliveries}
    assert len(bodies) == 1                                        # same id, same created
    for got in rcv.deliveries:
        t = signing.parse_header(got.headers["service-signature"])[0]
        assert signing.verify(made["secret"], got.headers["service-signature"], got.body, now=t)


def test_410_disables_the_endpoint_and_cancels_what_was_pending(world):
    gone = world.receiver(answer(410))
    made = world.endpoint(gone)
    first = world.emit()
    dispatcher = world.dispatcher()
    assert [o.state for o in dispatcher.deliver_due()] == ["failed"]
    second = world.emit()
    world.clock.advance(100_000)
    assert dispatcher.deliver_due() == [] and len(gone.deliveries) == 1
    (listed,) = endpoints.list_endpoints(world.store, world.account["id"])
    assert listed["enabled"] is False and "410" in listed["disabled_reason"]
    assert delivery(world.store, first, made)["state"] == "failed"
    assert delivery(world.store, second, made) is None               # never fanned out to it


@pytest.mark.parametrize("status, retry_after, wait", [
    (429, "120", 120), (503, "7200", 3600), (429, None, None), (500, "120", None),
])
def test_retry_after_is_honoured_on_429_and_503_capped_at_an_hour(world, status, retry_after,
                                                                   wait):
    rcv = world.receiver(answer(status, {"Retry-After": retry_after} if retry_after else {}))
    made = world.endpoint(rcv)
    event = world.emit()
    world.dispatcher().deliver_due()
    row = delivery(world.store, event, made)
    assert row["state"] == "pending" and row["last_status"] == status
    took = row["next_attempt_at"] - T0
    if wait is None:
        assert 10 <= took <= 11                                      # the schedule's
    else:
        assert took == wait


def test_redirects_are_not_followed(world):
    rcv = world.receiver(answer(307, {"Location": "http://127.0.0.1:9/elsewhere"}))
    made = world.endpoint(rcv)
    event = world.emit()
    assert [o.state for o in world.dispatcher().deliver_due()] == ["pending"]
    assert len(rcv.deliveries) == 1 and delivery(world.store, event, made)["last_status"] == 307


def test_a_used_up_schedule_fails_the_delivery_and_an_unreachable_one_retries(world):
    rcv = world.receiver(answer(500))
    made = world.endpoint(rcv)
    event = world.emit()
    dispatcher = world.dispatcher(schedule=(0, 1))
    dispatcher.deliver_due()
    world.clock.advance(2)
    assert [o.state for o in dispatcher.deliver_due()] == ["failed"]
    world.clock.advance(1000)
    assert dispatcher.deliver_due() == [] and len(rcv.deliveries) == 2
    # nobody listening: no status, an error, a retry
    dead = endpoints.add_endpoint(world.store, "http://127.0.0.1:9/x", world.account["id"],
                                  clock=world.clock)
    other = world.emit()
    (outcome,) = [o for o in dispatcher.deliver_due() if o.job.webhook_id == dead["id"]]
    row = delivery(world.store, other, dead)
    assert outcome.state == "pending" and row["last_status"] is None and row["last_error"]
    assert delivery(world.store, event, made)["state"] == "failed"


def test_rotation_overlap_signs_with_both_secrets_until_it_ends(world):
    rcv = world.receiver()
    made = world.endpoint(rcv)
    rotated = endpoints.rotate_secret(world.store, made["id"], overlap=3600, clock=world.clock)
    assert rotated["secret"] != made["secret"] and rotated["secret"].startswith("whsec_")
    world.emit()
    dispatcher = world.dispatcher()
    dispatcher.deliver_due()
    got = rcv.deliveries[-1]
    t, entries = signing.parse_header(got.headers["service-signature"])
    assert len(entries) == 2 and len(got.headers["webhook-signature"].split()) == 2
    for secret in (made["secret"], rotated["secret"]):
        assert signing.verify(secret, got.headers["service-signature"], got.body, now=t)
        assert signing.verify_standard(secret, got.headers, got.body, now=t)
    world.clock.advance(3601)
    world.emit()
    dispatcher.deliver_due()
    got = rcv.deliveries[-1]
    t, entries = signing.parse_header(got.headers["service-signature"])
    assert len(entries) == 1
    assert signing.verify(rotated["secret"], got.headers["service-signature"], got.body, now=t)
    with pytest.raises(signing.SignatureError):
        signing.verify(made["secret"], got.headers["service-signature"], got.body, now=t)
    # overlap 0: the old secret retires at once
    again = endpoints.rotate_secret(world.store, made["id"], overlap=0, clock=world.clock)
    assert again["old_secrets_valid_until"] == []


def test_each_endpoint_of_the_account_gets_its_own_delivery(world):
    ok, failing = world.receiver(), world.receiver(answer(500))
    a, b = world.endpoint(ok), world.endpoint(failing)
    event = world.emit()
    world.dispatcher().deliver_due()
    assert delivery(world.store, event, a)["state"] == "delivered"
    assert delivery(world.store, event, b)["state"] == "pending"
    assert len(ok.deliveries) == 1 and len(failing.deliveries) == 1


def test_delivered_events_are_pruned_to_a_bounded_history_and_resend_works(world):
    rcv = world.receiver()
    world.endpoint(rcv)
    dispatcher = world.dispatcher(history=3)
    events = []
    for _ in range(8):
        events.append(world.emit())
        world.clock.advance(1)
    while dispatcher.deliver_due():
        pass
    assert len(rcv.deliveries) == 8
    assert state.prune(world.store, keep=3) == 5
    kept = [e["id"] for e in world.store.select("events.by_created")]
    assert kept == [e["id"] for e in events[-3:]]
    assert len(world.store.scan("deliveries")) == 3
    resent = endpoints.resend_event(world.store, events[-1]["id"], clock=world.clock)
    assert len(resent["endpoints"]) == 1
    dispatcher.deliver_due()
    assert rcv.deliveries[-1].event["id"] == events[-1]["id"] and len(rcv.deliveries) == 9
    with pytest.raises(Exception) as err:
        endpoints.resend_event(world.store, events[0]["id"], clock=world.clock)
    assert getattr(err.value, "code", None) == "not_found"


def test_an_unfinished_event_is_never_pruned(world):
    rcv = world.receiver(answer(500))
    world.endpoint(rcv)
    world.emit()
    world.dispatcher().deliver_due()
    assert state.prune(world.store, keep=0) == 0
    assert len(world.store.select("events.by_created")) == 1


def test_a_removed_endpoint_gets_nothing_more(world):
    rcv = world.receiver(answer(500))
    made = world.endpoint(rcv)
    event = world.emit()
    dispatcher = world.dispatcher()
    dispatcher.deliver_due()
    removed = endpoints.remove_endpoint(world.store, made["id"])
    assert removed["cancelled_deliveries"] == 1
    world.clock.advance(100)
    assert dispatcher.deliver_due() == [] and len(rcv.deliveries) == 1
    assert delivery(world.store, event, made)["state"] == "cancelled"


def test_a_hanging_endpoint_never_delays_the_others(world):
    hang, fast = world.receiver(lambda d, n: "hang"), world.receiver()
    world.endpoint(hang)
    world.endpoint(fast)
    dispatcher = world.dispatcher(concurrency=6, per_endpoint=2, poll=0.02)
    dispatcher.start()
    try:
        started = time.monotonic()
        for _ in range(10):
            world.emit()
        fast.wait_for(10, timeout=5)
        took = fast.deliveries[-1].at - started
        assert took < 5.0, took                     # the hanging attempts take 10 s each
        assert len(hang.deliveries) <= 2                             # per-endpoint bound
    finally:
        dispatcher.stop()


def test_a_crash_mid_attempt_leaves_a_lease_that_recovery_makes_due_again(world):
    rcv = world.receiver()
    made = world.endpoint(rcv)
    event = world.emit()
    jobs = state.claim_due(world.store, world.clock.time(), {None: 4}, total=4)
    assert len(jobs) == 1                                            # ... and the process dies
    row = delivery(world.store, event, made)
    assert row["lease_until"] is not None and row["next_attempt_at"] > world.clock.time()
    assert state.claim_due(world.store, world.clock.time(), {None: 4}, total=4) == []
    assert state.recover_leases(world.store, world.clock.time()) == 1
    assert [o.state for o in world.dispatcher().deliver_due()] == ["delivered"]
    # a late result of the lost attempt cannot undo the newer one
    assert state.record_results(world.store, [(jobs[0], rcv_result(500))], world.clock.time(),
                                DEFAULT_SCHEDULE, random.Random(1)) == []
    assert delivery(world.store, event, made)["state"] == "delivered"


def rcv_result(status):
    from trackgrade.server.webhooks import SendResult
    return SendResult(status)


def test_schedule_parsing_jitter_and_retry_after():
    assert parse_schedule("") == DEFAULT_SCHEDULE and len(DEFAULT_SCHEDULE) == 11
    assert 3.1 * 86400 < sum(DEFAULT_SCHEDULE) < 3.3 * 86400
    assert parse_schedule("0, 0.5,2") == (0, 0.5, 2)
    with pytest.raises(ValueError, match="TRACKGRADE_WEBHOOK_SCHEDULE"):
        parse_schedule("0,soon")
    rng = random.Random(3)
    waits = [next_wait(3, DEFAULT_SCHEDULE, rng) for _ in range(200)]
    assert 300 <= min(waits) and max(waits) <= 330 and max(waits) - min(waits) > 20
    assert next_wait(11, DEFAULT_SCHEDULE, rng) is None
    assert next_wait(1, DEFAULT_SCHEDULE, rng, status=503, retry_after=99999) == 3600


def test_a_resend_while_an_attempt_is_in_flight_is_not_settled_by_that_attempt(world):
    rcv = world.receiver()
    made = world.endpoint(rcv)
    event = world.emit()
    dispatcher = world.dispatcher()
    dispatcher.deliver_due()
    endpoints.resend_event(world.store, event["id"], clock=world.clock)
    (in_flight,) = state.claim_due(world.store, world.clock.time(), {None: 4}, total=4)
    endpoints.resend_event(world.store, event["id"], clock=world.clock)     # again, meanwhile
    assert state.record_results(world.store, [(in_flight, rcv_result(200))],
                                world.clock.time(), DEFAULT_SCHEDULE, random.Random(1)) == []
    row = delivery(world.store, event, made)
    assert row["state"] == "pending" and row["attempts"] == 0          # still to deliver
    assert [o.state for o in dispatcher.deliver_due()] == ["delivered"]


def slow(status, seconds):
    def behaviour(delivery, n):
        time.sleep(seconds)
        return status, {}
    return behaviour


@pytest.mark.parametrize("how", ["410", "removed"])
def test_attempts_queued_for_an_endpoint_that_went_away_are_never_sent(world, how):
    rcv = world.receiver(slow(410, 0.3) if how == "410" else (lambda d, n: "hang"))
    made = world.endpoint(rcv)
    dispatcher = world.dispatcher(per_endpoint=2, concurrency=4, timeout=0.5, poll=0.02)
    for _ in range(10):
        world.emit()
    dispatcher.start()
    try:
        rcv.wait_for(2, timeout=5)                    # two in flight, the rest queued here
        if how == "removed":
            endpoints.remove_endpoint(world.store, made["id"])
        # settled: no delivery of the endpoint is pending (none in flight, none queued)
        wait_for(lambda: all(r["state"] != "pending" for r in world.store.scan("deliveries")
                             if r["webhook_id"] == made["id"]), timeout=5,
                 what="every delivery to the endpoint settled")
        assert len(rcv.deliveries) == 2
    finally:
        dispatcher.stop()


def test_several_hanging_endpoints_do_not_take_every_thread(world):
    hanging = [world.receiver(lambda d, n: "hang") for _ in range(3)]
    fast = world.receiver()
    ids = [world.endpoint(rcv)["id"] for rcv in hanging]
    world.endpoint(fast)
    dispatcher = world.dispatcher(concurrency=8, per_endpoint=4, timeout=1.0, poll=0.02)
    for _ in range(8):
        world.emit()
    started = time.monotonic()
    dispatcher.start()
    try:
        fast.wait_for(8, timeout=5)
        assert fast.deliveries[-1].at - started < 0.9          # before any hang times out
        # a fair share each (8 threads, 4 endpoints with work): 2, not 4
        assert all(len(rcv.deliveries) <= 2 for rcv in hanging)
        # the first attempts time out; their other events still go, 1 at a time now
        wait_for(lambda: all(len(rcv.deliveries) >= 3 for rcv in hanging), timeout=5,
                 what="a third attempt at every hanging endpoint")
        assert all(dispatcher.slots.busy.get(i, 0) <= 1 for i in ids), dispatcher.slots.busy
    finally:
        dispatcher.stop()


def test_one_accounts_hanging_endpoints_leave_room_for_another_account(world):
    """Eight hanging endpoints of one account, with a backlog, never take the
    whole pool (nor the whole claim): another account's deliveries start at
    once instead of after an attempt's deadline."""
    from trackgrade.server.webhooks.slots import ACCOUNT_SHARE

    hanging = [world.receiver(lambda d, n: "hang") for _ in range(8)]
    for rcv in hanging:
        world.endpoint(rcv)
    for _ in range(6):
        world.emit()
    other = accounts.create_account(world.store, credits=1, clock=world.clock)
    fast = world.receiver()
    endpoints.add_endpoint(world.store, fast.url, other["id"], clock=world.clock)
    dispatcher = world.dispatcher(concurrency=8, per_endpoint=4, timeout=3.0, poll=0.02)
    dispatcher.start()
    try:
        deadline = time.monotonic() + 5
        while sum(len(r.deliveries) for r in hanging) < int(8 * ACCOUNT_SHARE) \
                and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sum(dispatcher.slots.busy.values()) == int(8 * ACCOUNT_SHARE)  # 6 of 8
        event = new_event("analysis.completed", {"id": "an_2"}, account_id=other["id"],
                          livemode=True, created=world.clock.time())
        with world.store.transaction() as txn:
            txn.put("events", event)
        sent = time.monotonic()
        dispatcher.kick()
        (got,) = fast.wait_for(1, timeout=5)
        assert got.at - sent < 1.0, got.at - sent          # not behind a 3 s attempt
    finally:
        dispatcher.stop()


class StoreDownForOneRound(MemoryStore):
    """The real memory store, whose next transaction after `go_down()` fails
    as a database that has just gone away does (StoreError), once."""

    down = False

    def go_down(self) -> None:
        self.down = True

    def transaction(self, **kwargs):
        if self.down:
            self.down = False
            raise StoreError("PostgreSQL: the connection was lost (one round)")
        return super().transaction(**kwargs)


def test_an_answered_attempt_is_recorded_after_a_store_error_and_never_made_again():
    """The round that would record an acknowledged attempt fails: the next
    round records it (before: the result was dropped, the row stayed leased
    and the receiver got the event again once the lease ran out)."""
    store, clock = StoreDownForOneRound(), FixedClock(T0)
    account = accounts.create_account(store, credits=10, clock=clock)

    def acknowledge(delivery, n):
        store.go_down()                   # the store fails while the 2xx is on its way
        return 200, {}

    rcv = Receiver(acknowledge)
    made = endpoints.add_endpoint(store, rcv.url, account["id"], clock=clock)
    event = new_event("analysis.completed", {"id": "an_1", "external_id": "ext-1"},
                      account_id=account["id"], livemode=True, created=clock.time())
    with store.transaction() as txn:
        txn.put("events", event)
    dispatcher = Dispatcher(store, clock, HttpSender(), DispatchOptions(poll=0.02),
                            rng=random.Random(7))
    dispatcher.start()
    try:
        wait_for(lambda: (delivery(store, event, made) or {}).get("state") == "delivered",
                 timeout=10, what="the acknowledged attempt recorded")
        row = delivery(store, event, made)
        assert row["attempts"] == 1 and row["lease_id"] is None
        time.sleep(0.3)                   # rounds go on: nothing is sent again
        assert len(rcv.deliveries) == 1
    finally:
        dispatcher.stop()
        rcv.close()
        store.close()
