"""trackgrade.client against a real server on loopback (waitress + the app in a
thread, tests/server/server_harness.py): the full flow, paging, errors, the
Idempotency-Key across retries, 429 / in-progress 409 / 503 with real limits,
and the in-process WSGI transport. The server restarted mid-`wait` is in
test_client_process.py."""

from __future__ import annotations

import threading

import pytest
from trackgrade.client import (APIConnectionError, AuthenticationError, Client,
                               ConflictError, InvalidRequestError, NotFoundError,
                               RateLimitError, ServiceUnavailableError, WSGITransport,
                               error_class, is_retryable)
from trackgrade.client.errors import APIError, ServerError, error_from_response
from trackgrade.client.retry import Pacer, RetryPolicy
from trackgrade.server import idempotency
from trackgrade.server.admin import set_maintenance

from tests.server.server_harness import start, wav_bytes


@pytest.fixture(scope="module")
def server():
    s = start(test_rate_per_minute=1000)
    yield s
    s.stop()


def client_for(server, key, **kw) -> Client:
    return Client(key, server.url, **kw)


def test_full_flow_create_wait_get_status_list(server):
    key, _ = server.key("test")
    client = client_for(server, key)
    accepted = client.analyses.create(wav_bytes(2), file_name="kick.wav",
                                      mastering_status="master", external_id="demo-1")
    assert accepted.status == "processing" and accepted.external_id == "demo-1"
    assert accepted.request_id and not accepted.replayed
    done = client.analyses.wait(accepted.id, timeout=30, poll_interval=0.05)
    assert done.status == "complete" and done.mastering_status == "master"
    assert 0 <= done.score <= 100 and done.grade.letter
    assert client.analyses.status(accepted.id).status == "complete"
    ready = client.analyses.wait(accepted.id, until="ready", timeout=30, poll_interval=0.05)
    assert ready.diagnosis_status == "ready"
    # The narrative may turn ready between any two reads, so only a ready
    # document is stable: a second read returns it unchanged, and it is the
    # complete one with its diagnosis filled in.
    assert client.analyses.get(accepted.id) == ready
    moving = {"diagnosis_status", "diagnosis"}
    assert {k: v for k, v in ready.items() if k not in moving} == \
        {k: v for k, v in done.items() if k not in moving}


def test_list_pages_through_everything(server, tmp_path):
    key, _ = server.key("test")
    client = client_for(server, key)
    path = tmp_path / "loop.wav"
    path.write_bytes(wav_bytes(2))
    ids = []
    for i in range(5):
        server.clock.advance(1)                     # distinct created_at
        ids.append(client.analyses.create(path, file_name=f"t{i}.wav").id)
    listed = [doc.id for doc in client.analyses.list(page_size=2)]
    assert listed == ids[::-1]                      # newest first, 3 pages
    assert [d.id for d in client.analyses.list(page_size=2, limit=3)] == ids[::-1][:3]
    assert client.analyses.get(client.analyses.create(path).id).file_name == "loop.wav"


def test_genres_and_account(server):
    key, account_id = server.key("live", credits=3)
    client = client_for(server, key)
    genres = client.genres()
    assert len([g for g in genres if "family" not in g]) == 11
    account = client.account()
    assert account.id == account_id and account.credits_remaining == 3
    assert account.limits.in_flight >= 1 and account.usage.today == 0


def test_live_analysis_spends_one_credit_and_replays_with_its_key(server):
    key, account_id = server.key("live", credits=2)
    client = client_for(server, key)
    first = client.analyses.create(wav_bytes(3, 22050), file_name="a.wav",
                                   idempotency_key="same-key")
    assert first.credits_remaining == 1
    again = client.analyses.create(wav_bytes(3, 22050), file_name="a.wav",
                                   idempotency_key="same-key")
    assert again.replayed and again.id == first.id        # upload skipped: already sent
    assert server.credits(account_id) == 1
    done = client.analyses.wait(first.id, timeout=60, poll_interval=0.1)
    assert done.status == "complete" and done.duration_seconds == pytest.approx(3, abs=0.1)


def test_errors_are_typed_with_code_param_and_request_id(server):
    key, _ = server.key("test")
    client = client_for(server, key)
    with pytest.raises(InvalidRequestError) as bad:
        client.analyses.create(b"x", file_name="a.wav", mastering_status="final")
    err = bad.value
    assert (err.status, err.code, err.param) == (400, "parameter_invalid", "mastering_status")
    assert err.request_id and err.request_id in str(err) and "parameter_invalid" in str(err)
    assert "\n" not in str(err)
    with pytest.raises(NotFoundError) as missing:
        client.analyses.get("00000000-0000-4000-8000-000000000000")
    assert missing.value.code == "not_found"
    with pytest.raises(AuthenticationError) as denied:
        client_for(server, "svc_test_" + "x" * 43).account()
    assert denied.value.status == 401 and denied.value.code == "invalid_api_key"


def test_failed_analysis_is_a_result_not_an_exception(server):
    key, _ = server.key("test")
    client = client_for(server, key)
    accepted = client.analyses.create(wav_bytes(2), file_name="kick_fail_engine_error.wav")
    done = client.analyses.wait(accepted.id, timeout=30, poll_interval=0.05)
    assert done.status == "failed" and done.error.code == "engine_error"


def test_429_rate_limited_honours_retry_after():
    s = start(test_rate_per_minute=3)
    try:
        key, _ = s.key("test")
        slept: list[float] = []

        def sleep(seconds):             # the server's clock moves instead of ours
            slept.append(seconds)
            s.clock.advance(seconds)

        client = client_for(s, key, sleep=sleep)
        retry_after = s.clock.time()
        for _ in range(5):
            assert client.account().object == "account"
        window_left = 60 - retry_after % 60
        assert len(slept) == 1 and window_left <= slept[0] <= window_left * 1.1 + 1
        impatient = client_for(s, key, max_retries=0)
        with pytest.raises(RateLimitError) as limited:
            impatient.genres()          # the 3rd of this window: fine
            impatient.genres()
        assert limited.value.code == "rate_limited" and limited.value.retry_after >= 1
    finally:
        s.stop()


def test_429_too_many_in_flight_waits_for_a_slot():
    s = start(test_in_flight=1)
    try:
        key, _ = s.key("test")
        blocking = s.submit(key, "first.wav").json          # in flight until uploaded + done
        slept: list[float] = []

        def sleep(seconds):
            slept.append(seconds)
            if len(slept) == 1:        # the first one finishes while we back off
                assert s.upload(blocking, wav_bytes(2)).status == 200
                s.wait(blocking["id"], key, until=lambda d: d["status"] == "complete")

        client = client_for(s, key, sleep=sleep)
        accepted = client.analyses.create(wav_bytes(2), file_name="second.wav")
        assert accepted.status == "processing" and slept and slept[0] >= 5
    finally:
        s.stop()


def test_409_in_progress_is_retried_with_the_same_key(server):
    key, account_id = server.key("live", credits=5)
    ctx = server.ctx
    ctx.lifecycle._create_lock.acquire()       # the first request stalls inside its claim
    first: dict = {}
    racer = threading.Thread(target=lambda: first.update(server.submit(
        key, "race.wav", idem="race-key").json))
    try:
        racer.start()
        scope = idempotency.scope(next(k["id"] for k in ctx.store.scan("keys")
                                       if k["account_id"] == account_id), "race-key")
        for _ in range(500):                   # until the first request holds the key
            if scope in ctx.idempotency._running:
                break
            threading.Event().wait(0.01)
        seen: list[float] = []

        def sleep(seconds):
            seen.append(seconds)
            if ctx.lifecycle._create_lock.locked():
                ctx.lifecycle._create_lock.release()
            racer.join(10)

        client = client_for(server, key, sleep=sleep)
        accepted = client.analyses.create(wav_bytes(2), file_name="race.wav",
                                          idempotency_key="race-key")
    finally:
        if ctx.lifecycle._create_lock.locked():
            ctx.lifecycle._create_lock.release()
        racer.join(10)
    assert len(seen) == 1 and seen[0] >= 1           # Retry-After: 1
    assert accepted.replayed and accepted.id == first["id"]
    assert server.credits(account_id) == 4           # one credit for both requests


def test_503_maintenance_is_retried_then_surfaces(server):
    key, _ = server.key("test")
    set_maintenance(server.store, True)
    try:
        calls: list[float] = []

        def sleep(seconds):
            calls.append(seconds)
            if len(calls) == 2:
                set_maintenance(server.store, False)

        assert client_for(server, key, sleep=sleep, max_retry_after=2).account().object == \
            "account"
        assert calls == [pytest.approx(2, abs=0.25)] * 2      # Retry-After 30, capped at 2
        set_maintenance(server.store, True)
        with pytest.raises(ServiceUnavailableError) as down:
            client_for(server, key, sleep=lambda s: None, max_retries=1).account()
        assert down.value.code == "service_unavailable" and down.value.status == 503
    finally:
        set_maintenance(server.store, False)


def test_connection_refused_is_retried_then_raised():
    from tests.client.served import free_port

    slept: list[float] = []
    client = Client("svc_test_x", f"http://127.0.0.1:{free_port()}", max_retries=2,
                    sleep=slept.append)
    with pytest.raises(APIConnectionError) as down:
        client.account()
    assert "connection refused" in str(down.value) and down.value.status is None
    base = RetryPolicy().base_delay          # equal jitter: half fixed, half random, doubling
    assert len(slept) == 2
    assert base / 2 <= slept[0] <= base <= slept[1] <= 2 * base


def test_in_process_wsgi_transport(server):
    key, _ = server.key("test")
    # in process, under the server's own name: a Host outside allowed_hosts would be a 400
    client = Client(key, server.url, transport=WSGITransport(server.app))
    accepted = client.analyses.create(wav_bytes(2), file_name="wsgi.wav")
    done = client.analyses.wait(accepted.id, timeout=30, poll_interval=0.05)
    assert done.status == "complete" and done.file_name == "wsgi.wav"


def test_one_status_to_exception_mapping():
    assert [error_class(s).__name__ for s in (400, 401, 402, 403, 404, 405, 409, 413, 422,
                                              429, 500, 502, 503)] == [
        "InvalidRequestError", "AuthenticationError", "InsufficientCreditsError",
        "PermissionDeniedError", "NotFoundError", "InvalidRequestError", "ConflictError",
        "InvalidRequestError", "InvalidRequestError", "RateLimitError", "ServerError",
        "ServerError", "ServiceUnavailableError"]
    assert issubclass(ServiceUnavailableError, ServerError) and issubclass(ConflictError,
                                                                          InvalidRequestError)
    html = error_from_response(502, {"X-Request-Id": "req_1"}, b"<html>Bad gateway</html>")
    assert isinstance(html, ServerError) and html.request_id == "req_1" and "502" in html.message
    assert is_retryable(error_from_response(409, {}, b'{"error": {"code": '
                                                     b'"idempotency_request_in_progress"}}'))
    assert not is_retryable(error_from_response(409, {}, b'{"error": {"code": '
                                                         b'"idempotency_key_reused"}}'))
    assert not is_retryable(error_from_response(429, {}, b'{"error": {"code": '
                                                         b'"daily_quota_exceeded"}}'))
    assert not is_retryable(APIError("x", status=400))


def test_backoff_grows_with_jitter_and_retry_after_is_capped():
    policy = RetryPolicy(base_delay=0.5, max_delay=8, max_retry_after=10)
    assert [policy.delay(n, None, lambda: 0.0) for n in range(6)] == [0.25, 0.5, 1, 2, 4, 4]
    assert [policy.delay(n, None, lambda: 1.0) for n in range(6)] == [0.5, 1, 2, 4, 8, 8]
    assert policy.delay(0, 3, lambda: 0.0) == 3 and policy.delay(0, 3, lambda: 1.0) == \
        pytest.approx(3.3)
    assert policy.delay(0, 3600, lambda: 0.0) == 10


def test_pacer_keeps_every_minute_within_the_limit():
    now = [0.0]
    sent: list[float] = []
    pacer = Pacer(10, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    for i in range(40):
        pacer.wait()
        sent.append(now[0])
        now[0] += 0.5 if i % 7 else 13.0          # bursts and pauses
    assert sent[:10] == sorted(sent[:10]) and sent[9] < 60     # a burst goes at once
    for first in sent:
        assert sum(1 for t in sent if first <= t < first + 60) <= 10
