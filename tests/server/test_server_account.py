"""GET /v1/account (CONTRACT.md section 4): the key's account, limits and usage,
on a real waitress server; its shape matches the OpenAPI Account schema."""

from __future__ import annotations


import pytest

from tests.server.server_harness import start, wav_bytes


@pytest.fixture(scope="module")
def server():
    s = start(rate_per_minute=5, in_flight=2, daily_quota=7)
    yield s
    s.stop()


def schema(server, name):
    return server.request("GET", "/v1/openapi.json").json["components"]["schemas"][name]


def test_live_credit_key_sees_balance_limits_and_usage(server):
    key, account_id = server.key("live", plan="studio", credits=4)
    before = server.request("GET", "/v1/account", key=key)
    assert before.status == 200 and before.header("X-Request-Id")
    assert before.header("X-RateLimit-Limit") == "5"
    assert before.json == {
        "object": "account", "id": account_id, "plan": "studio", "billing": "credits",
        "livemode": True, "credits_remaining": 4,
        "limits": {"rate_per_minute": 5, "in_flight": 2, "daily_quota": 7},
        "usage": {"today": 0, "in_flight": 0}}
    accepted = server.submit(key, "a.wav").json
    after = server.request("GET", "/v1/account", key=key).json
    assert after["credits_remaining"] == 3
    assert after["usage"] == {"today": 1, "in_flight": 1}
    # the test-mode engine is not involved: fail the upload so it leaves flight
    assert server.upload(accepted, b"not audio at all" * 10).status == 422
    done = server.request("GET", "/v1/account", key=key).json
    assert done["usage"] == {"today": 1, "in_flight": 0}


def test_test_key_has_no_credits_and_no_daily_quota(server):
    key, account_id = server.key("test", credits=9)
    doc = server.request("GET", "/v1/account", key=key).json
    assert doc["livemode"] is False and doc["credits_remaining"] is None
    assert doc["limits"]["daily_quota"] is None
    assert doc["limits"]["in_flight"] == 20
    accepted = server.submit(key, "t.wav").json
    assert server.upload(accepted, wav_bytes(2)).status == 200
    server.wait(accepted["id"], key, until=lambda d: d["status"] == "complete")
    assert server.request("GET", "/v1/account", key=key).json["usage"] == \
        {"today": 1, "in_flight": 0}


def test_comp_billing_has_null_credits(server):
    key, _ = server.key("live", billing="comp", credits=0)
    assert server.request("GET", "/v1/account", key=key).json["credits_remaining"] is None


def test_errors_401_429_and_unknown_query(server):
    reply = server.request("GET", "/v1/account")
    assert reply.status == 401 and reply.error["code"] == "invalid_api_key"
    key, _ = server.key("live")
    reply = server.request("GET", "/v1/account?expand=x", key=key)
    assert reply.status == 400 and reply.error["code"] == "parameter_unknown"
    codes = [server.request("GET", "/v1/account", key=key).status for _ in range(5)]
    assert codes[-1] == 429
    last = server.request("GET", "/v1/account", key=key)
    assert last.error["code"] == "rate_limited" and last.header("Retry-After")


def test_matches_the_openapi_schema(server):
    key, _ = server.key("live")
    doc = server.request("GET", "/v1/account", key=key).json
    account = schema(server, "Account")
    assert set(doc) == set(account["properties"]) == set(account["required"])
    for part in ("limits", "usage"):
        assert set(doc[part]) == set(account["properties"][part]["properties"])
