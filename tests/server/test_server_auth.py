"""Keys (401/403; revocation by the admin CLI: test_server_process.py), the per-minute window
and the X-RateLimit headers (injected clock, no sleeping)."""

from __future__ import annotations


import pytest

from tests.server.server_harness import start


RATE_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")


@pytest.fixture(scope="module")
def server():
    s = start()
    yield s
    s.stop()


@pytest.mark.parametrize("header", [None, "", "Bearer", "Basic abc", "Bearer svc_live_short",
                                    "Bearer sk_live_" + "a" * 40, "Bearer svc_prod_" + "a" * 40,
                                    "Bearer svc_live_" + "a" * 43, "svc_live_" + "a" * 43])
def test_missing_malformed_unknown_keys_are_401(server, header):
    reply = server.request("GET", "/v1/genres",
                           headers={"Authorization": header} if header is not None else {})
    assert reply.status == 401
    assert reply.error["code"] == "invalid_api_key"
    assert reply.error["type"] == "authentication_error"
    assert reply.header("X-Request-Id") == reply.error["request_id"]
    assert reply.header("X-RateLimit-Limit") is None


def test_free_plan_is_403_not_eligible(server):
    key, _ = server.key("live", plan="free")
    reply = server.request("GET", "/v1/analyses", key=key)
    assert reply.status == 403
    assert reply.error["code"] == "not_eligible" and reply.error["type"] == "permission_error"
    reply = server.submit(key)
    assert reply.status == 403


@pytest.mark.parametrize("plan", ["pro", "studio", "partner"])
def test_eligible_plans_get_in(server, plan):
    key, _ = server.key("live", plan=plan)
    assert server.request("GET", "/v1/genres", key=key).status == 200


def test_rate_headers_on_every_authenticated_response(server):
    key, _ = server.key("live")
    for method, path in (("GET", "/v1/genres"), ("GET", "/v1/analyses"),
                         ("GET", "/v1/analyses/00000000-0000-4000-8000-000000000000")):
        reply = server.request(method, path, key=key)
        for name in RATE_HEADERS:
            assert reply.header(name) is not None and reply.header(name).isdigit(), (path, name)
    bad = server.request("POST", "/v1/analyses", key=key, idem="k", raw=b"{")
    assert bad.status == 400 and bad.header("X-RateLimit-Remaining") is not None


def test_minute_window_429_then_resets_with_the_clock():
    s = start(rate_per_minute=5)
    try:
        s.clock.set(1_800_000_000.0 + 7)       # 7 s into a minute
        key, _ = s.key("live")
        remaining = [int(s.request("GET", "/v1/genres", key=key).header("X-RateLimit-Remaining"))
                     for _ in range(5)]
        assert remaining == [4, 3, 2, 1, 0]
        reply = s.request("GET", "/v1/genres", key=key)
        assert reply.status == 429
        assert reply.error["code"] == "rate_limited" and reply.error["type"] == "rate_limit_error"
        assert reply.header("X-RateLimit-Limit") == "5"
        assert reply.header("X-RateLimit-Remaining") == "0"
        reset = int(reply.header("X-RateLimit-Reset"))
        assert reset == 1_800_000_060               # the end of the clock's minute
        assert int(reply.header("Retry-After")) == reset - int(s.clock.time())
        other, _ = s.key("live")                   # windows are per key
        assert s.request("GET", "/v1/genres", key=other).status == 200
        s.clock.advance(reset - s.clock.time())
        reply = s.request("GET", "/v1/genres", key=key)
        assert reply.status == 200 and reply.header("X-RateLimit-Remaining") == "4"
    finally:
        s.stop()


def test_test_keys_have_their_own_ceiling(server):
    key, _ = server.key("test")
    assert server.request("GET", "/v1/genres", key=key).header("X-RateLimit-Limit") == "100"
    live, _ = server.key("live")
    assert server.request("GET", "/v1/genres", key=live).header("X-RateLimit-Limit") == "30"


def test_genres_list(server):
    from trackgrade.grading.genres import genre_list

    assert server.request("GET", "/v1/genres").status == 401
    key, _ = server.key("test")
    reply = server.request("GET", "/v1/genres", key=key)
    assert reply.status == 200
    assert reply.json == {"object": "list", "data": genre_list()}
    families = [g for g in reply.json["data"] if "family" not in g]
    assert len(families) == 11
    bad = server.request("GET", "/v1/genres?x=1", key=key)
    assert bad.status == 400 and bad.error["code"] == "parameter_unknown"
