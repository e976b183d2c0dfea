"""Accounts, keys and credits (trackgrade/server/accounts.py) on both stores."""

from __future__ import annotations

import re

import pytest

from trackgrade.errors import TrackgradeError
from trackgrade.server import accounts
from trackgrade.server.clock import FixedClock
from trackgrade.server.store import MemoryStore, open_store
from trackgrade.server import queries


@pytest.fixture(params=["memory", "journal"])
def store(request, tmp_path):
    opened = MemoryStore() if request.param == "memory" else open_store(tmp_path / "data")
    yield opened
    opened.close()


@pytest.fixture
def clock():
    return FixedClock(1_763_856_000)   # 2025-11-23T00:00:00Z


def test_a_key_is_shown_once_and_stored_only_as_its_hash(store, clock):
    account = accounts.create_account(store, plan="pro", credits=3, clock=clock)
    key, doc = accounts.create_key(store, account["id"], mode="live", clock=clock)
    assert re.fullmatch(r"svc_live_[A-Za-z0-9_\-]{43}", key)
    stored = store.get("keys", doc["id"])
    assert key not in repr(stored) and key[9:] not in repr(stored)
    assert stored["hash"] == accounts.hash_key(key)
    assert stored["hint"].startswith("svc_live_") and stored["livemode"] is True
    test_key, test_doc = accounts.create_key(store, account["id"], mode="test", clock=clock)
    assert test_key.startswith("svc_test_") and test_doc["livemode"] is False
    assert accounts.create_key(store, account["id"])[0] != key


def test_authenticate_finds_the_key_and_its_account(store, clock):
    account = accounts.create_account(store, plan="studio", billing="comp", clock=clock)
    key, doc = accounts.create_key(store, account["id"], clock=clock)
    found, owner = accounts.authenticate(store, key)
    assert found["id"] == doc["id"] and owner["id"] == account["id"]
    assert accounts.authenticate(store, f"Bearer {key}")[0]["id"] == doc["id"]


@pytest.mark.parametrize("presented", [None, "", "svc_live_short", "sk_live_" + "a" * 40,
                                       "svc_prod_" + "a" * 43, "svc_live_" + "a" * 43])
def test_missing_malformed_or_unknown_keys_are_401(store, presented):
    with pytest.raises(TrackgradeError) as err:
        accounts.authenticate(store, presented)
    assert err.value.code == "invalid_api_key" and err.value.http_status == 401


def test_a_revoked_key_is_refused_at_once(store, clock):
    account = accounts.create_account(store, clock=clock)
    key, doc = accounts.create_key(store, account["id"], clock=clock)
    revoked = accounts.revoke_key(store, doc["id"], clock=clock)
    assert revoked["revoked_at"] == "2025-11-23T00:00:00.000000Z"
    with pytest.raises(TrackgradeError) as err:
        accounts.authenticate(store, key)
    assert err.value.code == "invalid_api_key"
    clock.advance(60)
    assert accounts.revoke_key(store, doc["id"], clock=clock)["revoked_at"] == revoked["revoked_at"]
    with pytest.raises(TrackgradeError) as err:
        accounts.revoke_key(store, "key_unknown")
    assert err.value.code == "not_found"


@pytest.mark.parametrize("plan,eligible", [("free", False), ("pro", True), ("studio", True),
                                           ("partner", True)])
def test_only_paid_and_partner_plans_have_api_access(store, clock, plan, eligible):
    account = accounts.create_account(store, plan=plan, clock=clock)
    key, _ = accounts.create_key(store, account["id"], clock=clock)
    if eligible:
        assert accounts.authenticate(store, key)[1]["plan"] == plan
    else:
        with pytest.raises(TrackgradeError) as err:
            accounts.authenticate(store, key)
        assert err.value.code == "not_eligible" and err.value.http_status == 403


def test_invalid_plan_billing_or_mode_is_refused(store, clock):
    for kwargs in ({"plan": "gold"}, {"billing": "free"}, {"credits": -1}):
        with pytest.raises(TrackgradeError) as err:
            accounts.create_account(store, clock=clock, **kwargs)
        assert err.value.code == "parameter_invalid"
    account = accounts.create_account(store, clock=clock)
    with pytest.raises(TrackgradeError):
        accounts.create_key(store, account["id"], mode="prod")
    with pytest.raises(TrackgradeError) as err:
        accounts.create_key(store, "acct_missing")
    assert err.value.code == "not_found"


def test_limits_live_defaults_overrides_and_fixed_test_limits():
    live, test = {"livemode": True}, {"livemode": False}
    assert accounts.key_limits(live, {"limits": {}}) == accounts.Limits(30, 1, 500)
    assert accounts.key_limits(live, {"limits": {"per_minute": 60, "daily": None}}) == \
        accounts.Limits(60, 1, None)
    assert accounts.key_limits(test, {"limits": {"per_minute": 5}}) == accounts.Limits(100, 20, None)


def low_events(store):
    return [e for e in queries.pending_events(store) if e["type"] == "credit.balance.low"]


def test_spending_never_goes_below_zero(store, clock):
    account = accounts.create_account(store, credits=1, clock=clock)
    with store.transaction() as txn:
        assert accounts.spend_credit(txn, account["id"], clock=clock)["credits"] == 0
    with pytest.raises(TrackgradeError) as err:
        with store.transaction() as txn:
            txn.put("analyses", {"id": "an_1", "account_id": account["id"], "key_id": "k",
                                 "livemode": True, "status": "processing", "created_at": "x"})
            accounts.spend_credit(txn, account["id"], clock=clock)
    assert err.value.code == "insufficient_credits" and err.value.http_status == 402
    assert store.get("accounts", account["id"])["credits"] == 0
    assert store.get("analyses", "an_1") is None            # nothing of that transaction stayed


def test_low_balance_event_fires_once_per_crossing(store, clock):
    account = accounts.create_account(store, credits=7, clock=clock)

    def spend():
        with store.transaction() as txn:
            return accounts.spend_credit(txn, account["id"], clock=clock)["credits"]

    assert spend() == 6 and low_events(store) == []
    assert spend() == 5                                          # 6 -> 5 crosses
    events = low_events(store)
    assert len(events) == 1
    assert events[0]["envelope"]["data"] == {"credits_remaining": 5, "threshold": 5}
    assert events[0]["envelope"]["type"] == "credit.balance.low"
    assert events[0]["envelope"]["created"] == 1_763_856_000
    assert spend() == 4 and len(low_events(store)) == 1          # 5 -> 4 does not
    with store.transaction() as txn:
        accounts.restore_credit(txn, account["id"], clock=clock)  # 4 -> 5: no event
    assert len(low_events(store)) == 1
    assert accounts.add_credits(store, account["id"], 10, clock=clock)["credits"] == 15
    for _ in range(9):
        spend()
    assert store.get("accounts", account["id"])["credits"] == 6 and len(low_events(store)) == 1
    spend()                                                       # re-armed by the top-up
    assert len(low_events(store)) == 2


def test_add_credits_rejects_non_positive_amounts(store, clock):
    account = accounts.create_account(store, clock=clock)
    for amount in (0, -3):
        with pytest.raises(TrackgradeError) as err:
            accounts.add_credits(store, account["id"], amount, clock=clock)
        assert err.value.code == "parameter_invalid"
    with pytest.raises(TrackgradeError) as err:
        accounts.add_credits(store, "acct_missing", 5)
    assert err.value.code == "not_found"


def test_credit_billing_applies_to_live_credit_keys_only():
    assert accounts.is_credit_billed({"livemode": True}, {"billing": "credits"})
    assert not accounts.is_credit_billed({"livemode": False}, {"billing": "credits"})
    assert not accounts.is_credit_billed({"livemode": True}, {"billing": "comp"})
    assert not accounts.is_credit_billed({"livemode": True}, {"billing": "metered"})
