"""POST /analyses (validation, credits, limits, idempotency, capacity,
maintenance) and the read endpoints (GET one, status, list)."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from trackgrade.server import accounts, admin
from trackgrade.server.resource import ENVELOPE_REQUIRED
from trackgrade.server.worker import ThreadExecutor

from tests.document_check import validate_document

from tests.server.server_harness import hold_executor, start, wav_bytes


@pytest.fixture(scope="module")
def server():
    s = start(in_flight=50, test_in_flight=50, rate_per_minute=10_000,
              test_rate_per_minute=10_000)
    yield s
    s.stop()


# --- validation -------------------------------------------------------------

@pytest.mark.parametrize("body,code,param", [
    ({}, "parameter_missing", "file_name"),
    ({"file_name": None}, "parameter_missing", "file_name"),
    ({"file_name": 12}, "parameter_invalid", "file_name"),
    ({"file_name": ""}, "parameter_invalid", "file_name"),
    ({"file_name": "a" * 252 + ".wav"}, "parameter_invalid", "file_name"),
    ({"file_name": "bad\x00name.wav"}, "parameter_invalid", "file_name"),
    ({"file_name": "song.ogg"}, "parameter_invalid", "file_name"),
    ({"file_name": "song.M4A"}, "parameter_invalid", "file_name"),
    ({"file_name": "a.wav", "mastering_status": "mastered"}, "parameter_invalid",
     "mastering_status"),
    ({"file_name": "a.wav", "mastering_status": None}, "parameter_invalid", "mastering_status"),
    ({"file_name": "a.wav", "external_id": "x" * 256}, "parameter_invalid", "external_id"),
    ({"file_name": "a.wav", "external_id": 5}, "parameter_invalid", "external_id"),
    ({"file_name": "a.wav", "genre": "polka"}, "parameter_invalid", "genre"),
    ({"file_name": "a.wav", "genre": 5}, "parameter_invalid", "genre"),
    ({"file_name": "a.wav", "tempo": 128}, "parameter_unknown", "tempo"),
    ({"file_name": "a.wav", "livemode": True}, "parameter_unknown", "livemode"),
])
def test_body_validation(server, body, code, param):
    key, _ = server.key("test")
    reply = server.request("POST", "/v1/analyses", key=key, idem=str(uuid.uuid4()), body=body)
    assert reply.status == 400, reply.body
    assert reply.error["code"] == code and reply.error["param"] == param
    if body.get("genre") == "polka":      # the API names its own route, not the CLI
        assert reply.error["message"].startswith("genre must be a key of GET /genres")


@pytest.mark.parametrize("name", ["mix.wav", "mix.WAV", "mix.aiff", "mix.aif", "mix.flac",
                                  "mix.mp3", "mix", "my.final.mix.wav", "a" * 251 + ".wav"])
def test_accepted_file_names(server, name):
    key, _ = server.key("test")
    assert server.submit(key, name).status == 202


def test_idempotency_key_header_rules(server):
    key, _ = server.key("test")
    reply = server.request("POST", "/v1/analyses", key=key, body={"file_name": "a.wav"})
    assert reply.status == 400 and reply.error["code"] == "parameter_missing"
    assert reply.error["param"] == "Idempotency-Key"
    reply = server.submit(key, idem="k" * 256)
    assert reply.status == 400 and reply.error["code"] == "parameter_invalid"
    assert reply.error["param"] == "Idempotency-Key"
    assert server.submit(key, idem="k" * 255).status == 202


# --- the 202 ----------------------------------------------------------------

def test_accepted_response_shape(server):
    key, _ = server.key("live", credits=3)
    reply = server.submit(key, "kick.wav", external_id="ext-1", mastering_status="master")
    assert reply.status == 202
    body = reply.json
    assert list(body) == ["object", "id", "status", "diagnosis_status", "livemode",
                          "external_id", "credits_remaining", "upload"]
    assert body["object"] == "analysis" and body["status"] == "processing"
    assert body["diagnosis_status"] == "pending" and body["livemode"] is True
    assert body["external_id"] == "ext-1" and body["credits_remaining"] == 2
    assert str(uuid.UUID(body["id"])) == body["id"]
    upload = body["upload"]
    assert upload["url"] == f"{server.url}/v1/uploads/{body['id']}"
    assert upload["method"] == "POST" and upload["field"] == "file"
    assert upload["token"] and upload["expires_in"] == 900
    assert reply.header("X-Credits-Remaining") == "2"


def test_public_base_url_builds_upload_urls():
    s = start(public_base_url="https://api.example.com/")
    try:
        key, _ = s.key("test")
        url = s.submit(key).json["upload"]["url"]
        assert url.startswith("https://api.example.com/v1/uploads/")
    finally:
        s.stop()


# --- credits ------------------------------------------------------------------

def test_no_credits_is_402_and_nothing_spent(server):
    key, account = server.key("live", credits=0)
    reply = server.submit(key)
    assert reply.status == 402
    assert reply.error["code"] == "insufficient_credits"
    assert reply.error["type"] == "invalid_request_error"
    assert server.credits(account) == 0
    assert server.request("GET", "/v1/analyses", key=key).json["data"] == []


def test_credit_billing_headers_only_for_credit_billed_keys(server):
    for mode, billing in (("live", "comp"), ("live", "metered"), ("test", "credits")):
        key, account = server.key(mode, billing=billing, credits=4)
        reply = server.submit(key)
        assert reply.status == 202
        assert reply.header("X-Credits-Remaining") is None
        assert "credits_remaining" not in reply.json
        assert server.credits(account) == 4


def test_balance_low_event_when_crossing_the_threshold(server):
    key, account = server.key("live", credits=6)
    server.submit(key)
    events = [e for e in server.events() if e["account_id"] == account]
    assert [e["type"] for e in events] == ["credit.balance.low"]
    assert events[0]["envelope"]["data"] == {"credits_remaining": 5, "threshold": 5}
    server.submit(key)
    assert len([e for e in server.events() if e["account_id"] == account]) == 1


# --- limits -------------------------------------------------------------------

def test_in_flight_limit_counts_until_complete_or_failed():
    s = start()  # live keys: 1 in flight
    try:
        key, account = s.key("live", credits=5)
        first = s.submit(key).json
        reply = s.submit(key)
        assert reply.status == 429 and reply.error["code"] == "too_many_in_flight"
        assert reply.error["type"] == "rate_limit_error"
        assert "1 analysis in flight" in reply.error["message"], reply.error["message"]
        assert int(reply.header("Retry-After")) >= 1
        for name in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"):
            assert reply.header(name) is not None
        assert s.credits(account) == 4
        s.clock.advance(901)                       # the upload never came
        assert s.ctx.lifecycle.sweep() == [first["id"]]
        assert s.credits(account) == 5
        assert s.submit(key).status == 202
    finally:
        s.stop()


def test_daily_quota_resets_at_utc_midnight():
    s = start(daily_quota=2, in_flight=10)
    try:
        key, _ = s.key("live", credits=10)
        assert [s.submit(key).status for _ in range(2)] == [202, 202]
        reply = s.submit(key)
        assert reply.status == 429 and reply.error["code"] == "daily_quota_exceeded"
        midnight = (int(s.clock.time()) // 86400 + 1) * 86400
        assert int(reply.header("Retry-After")) == midnight - int(s.clock.time())
        s.clock.set(midnight + 1)
        assert s.submit(key).status == 202
    finally:
        s.stop()


def test_engine_at_capacity_is_503_with_retry_after():
    executor = ThreadExecutor(1, queue_size=0)
    s = start(executor=executor, in_flight=5)
    try:
        key, account = s.key("live", credits=5)
        release = hold_executor(executor)
        reply = s.submit(key)
        assert reply.status == 503 and reply.error["code"] == "engine_at_capacity"
        assert reply.error["type"] == "api_error" and int(reply.header("Retry-After")) >= 1
        assert s.credits(account) == 5
        release.set()
        for _ in range(200):
            if executor.has_room():
                break
            threading.Event().wait(0.01)
        assert s.submit(key).status == 202
    finally:
        release.set()
        s.stop()


# --- idempotency ------------------------------------------------------------------

def test_replay_same_status_and_body_fresh_request_id(server):
    key, account = server.key("live", credits=5)
    first = server.request("POST", "/v1/analyses", key=key, idem="same",
                           body={"file_name": "a.wav", "external_id": "x"})
    again = server.request("POST", "/v1/analyses", key=key, idem="same",
                           body={"external_id": "x", "file_name": "a.wav"})  # key order differs
    assert again.status == first.status == 202
    # the original body byte for byte, upload token included (CONTRACT 5: derived, not stored)
    assert again.body == first.body
    assert again.header("Idempotent-Replayed") == "true"
    assert first.header("Idempotent-Replayed") is None
    assert again.header("X-Request-Id") != first.header("X-Request-Id")
    assert again.header("X-Credits-Remaining") == first.header("X-Credits-Remaining") == "4"
    assert server.credits(account) == 4
    assert len(server.request("GET", "/v1/analyses", key=key).json["data"]) == 1
    # whoever holds either answer uploads with it (once: the token is single use)
    assert server.upload(first.json, wav_bytes(3)).status == 200
    assert server.upload(again.json, wav_bytes(3)).status == 401
    late = server.request("POST", "/v1/analyses", key=key, idem="same",
                          body={"file_name": "a.wav", "external_id": "x"})
    assert late.body == first.body                   # still the original, token included
    assert server.upload(late.json, wav_bytes(3)).status == 401    # it opens nothing now


def test_reused_key_with_another_body_is_409(server):
    key, _ = server.key("test")
    assert server.submit(key, "a.wav", idem="k1").status == 202
    reply = server.submit(key, "b.wav", idem="k1")
    assert reply.status == 409 and reply.error["code"] == "idempotency_key_reused"


def test_keys_are_scoped_to_the_api_key(server):
    one, _ = server.key("test")
    two, _ = server.key("test")
    a = server.submit(one, "a.wav", idem="shared").json["id"]
    b = server.submit(two, "a.wav", idem="shared").json["id"]
    assert a != b


def test_failed_validation_and_429_are_not_stored():
    s = start(rate_per_minute=2)
    try:
        key, _ = s.key("live", credits=5)
        bad = s.request("POST", "/v1/analyses", key=key, idem="k", body={"file_name": 1})
        assert bad.status == 400
        s.request("GET", "/v1/genres", key=key)
        limited = s.submit(key, idem="k2")
        assert limited.status == 429
        s.clock.advance(60)
        assert s.submit(key, idem="k").status == 202      # runs, not a replay of the 400
        s.clock.advance(60)
        assert s.submit(key, idem="k2").header("Idempotent-Replayed") is None
    finally:
        s.stop()


def test_402_is_stored_and_replayed(server):
    key, account = server.key("live", credits=0)
    first = server.submit(key, idem="poor")
    assert first.status == 402
    admin.add_credits(server.store, account, 3)
    again = server.submit(key, idem="poor")
    assert again.status == 402 and again.header("Idempotent-Replayed") == "true"
    assert again.error["request_id"] == again.header("X-Request-Id")
    assert server.submit(key, idem="fresh").status == 202


def test_replay_window_is_24_hours():
    s = start(in_flight=5)
    try:
        key, _ = s.key("test")
        first = s.submit(key, idem="day").json["id"]
        s.clock.advance(24 * 3600 - 1)
        assert s.submit(key, idem="day").json["id"] == first
        s.clock.advance(2)
        assert s.submit(key, idem="day").json["id"] != first
    finally:
        s.stop()


def test_in_progress_is_409():
    s = start()
    try:
        key, _ = s.key("test")
        results = {}
        with s.ctx.lifecycle._create_lock:   # the first request blocks before its write
            worker = threading.Thread(target=lambda: results.setdefault(
                "first", s.submit(key, idem="slow")))
            worker.start()
            for _ in range(500):
                if s.ctx.idempotency._running:
                    break
                threading.Event().wait(0.01)
            second = s.submit(key, idem="slow")
        worker.join(10)
        assert second.status == 409
        assert second.error["code"] == "idempotency_request_in_progress"
        assert results["first"].status == 202
        third = s.submit(key, idem="slow")
        assert third.status == 202 and third.json["id"] == results["first"].json["id"]
    finally:
        s.stop()


def test_eight_concurrent_identical_requests_create_one_analysis(server):
    key, account = server.key("live", credits=3)
    body = {"file_name": "race.wav"}

    def fire(_):
        return server.request("POST", "/v1/analyses", key=key, idem="race", body=body)

    with ThreadPoolExecutor(8) as pool:
        replies = list(pool.map(fire, range(8)))
    statuses = sorted(r.status for r in replies)
    assert set(statuses) <= {202, 409}, statuses
    ids = {r.json["id"] for r in replies if r.status == 202}
    assert len(ids) == 1
    for r in replies:
        if r.status == 409:
            assert r.error["code"] == "idempotency_request_in_progress"
    assert server.credits(account) == 2
    assert len(server.request("GET", "/v1/analyses", key=key).json["data"]) == 1


# --- maintenance ----------------------------------------------------------------------

def test_maintenance_flag_answers_every_api_route_503():
    s = start(maintenance=True)
    try:
        key, _ = s.key("test")
        for method, path in (("GET", "/v1/genres"), ("GET", "/v1/analyses"),
                             ("POST", "/v1/analyses"), ("GET", f"/v1/analyses/{uuid.uuid4()}"),
                             ("GET", f"/v1/analyses/{uuid.uuid4()}/status"),
                             ("POST", f"/v1/uploads/{uuid.uuid4()}"),
                             ("GET", f"/v1/embed/{uuid.uuid4()}")):
            reply = s.request(method, path, key=key, idem="m", body={"file_name": "a.wav"})
            assert reply.status == 503, path
            assert reply.error["code"] == "service_unavailable" and reply.header("Retry-After")
        assert s.request("GET", "/v1/openapi.json").status == 200
    finally:
        s.stop()


def test_admin_maintenance_toggle_is_seen_by_the_running_server(server):
    key, _ = server.key("test")
    admin.set_maintenance(server.store, True)
    try:
        reply = server.request("GET", "/v1/genres", key=key)
        assert reply.status == 503 and reply.error["code"] == "service_unavailable"
    finally:
        admin.set_maintenance(server.store, False)
    assert server.request("GET", "/v1/genres", key=key).status == 200


# --- reads ------------------------------------------------------------------------------

def test_processing_analysis_has_no_score_fields(server):
    key, _ = server.key("test")
    accepted = server.submit(key, "p.wav", external_id="e").json
    doc = server.request("GET", f"/v1/analyses/{accepted['id']}", key=key).json
    assert list(doc) == list(ENVELOPE_REQUIRED)
    assert doc["status"] == "processing" and doc["completed_at"] is None
    assert doc["external_id"] == "e" and doc["file_name"] == "p.wav"
    assert doc["mastering_status"] == "pre-master" and doc["livemode"] is False
    status = server.request("GET", f"/v1/analyses/{accepted['id']}/status", key=key).json
    assert status == {"object": "analysis.status", "id": accepted["id"], "status": "processing",
                      "diagnosis_status": "pending", "livemode": False}


def test_complete_then_failed_documents(server):
    key, _ = server.key("test")
    ok = server.submit(key, "good.wav").json
    assert server.upload(ok, wav_bytes(2)).status == 200
    doc = server.wait(ok["id"], key, until=lambda d: d["diagnosis_status"] == "ready")
    assert doc["status"] == "complete" and "error" not in doc
    for name in ("score", "grade", "scores", "tempo", "genre", "frequency", "mix", "structure",
                 "danceability", "energy", "diagnosis", "feedback", "duration_seconds"):
        assert name in doc
    assert doc["diagnosis"]["status"] == "ready" and doc["completed_at"]
    bad = server.submit(key, "x_fail_engine_error.wav").json
    assert server.upload(bad, wav_bytes(2)).status == 200
    doc = server.wait(bad["id"], key)
    assert doc["status"] == "failed" and "score" not in doc
    assert doc["error"]["code"] == "engine_error" and doc["error"]["type"] == "api_error"


def test_unknown_and_foreign_ids_are_the_same_404(server):
    mine, _ = server.key("live")
    theirs, _ = server.key("live")
    mine_test, _ = server.key("test")
    foreign = server.submit(theirs).json["id"]
    replies = [server.request("GET", f"/v1/analyses/{aid}", key=mine)
               for aid in (foreign, str(uuid.uuid4()), "not-a-uuid")]
    own_live = server.submit(mine).json["id"]
    replies.append(server.request("GET", f"/v1/analyses/{own_live}", key=mine_test))
    replies.append(server.request("GET", f"/v1/analyses/{foreign}/status", key=mine))
    for reply in replies:
        assert reply.status == 404
        error = dict(reply.error)
        error.pop("request_id")
        assert error["code"] == "not_found" and error["param"] == "id"
        assert "message" in error


def test_list_pages_newest_first_with_cursors():
    s = start(test_in_flight=20)
    try:
        key, _ = s.key("test")
        ids = []
        for i in range(5):
            ids.append(s.submit(key, f"t{i}.wav").json["id"])
            s.clock.advance(1)
        newest_first = ids[::-1]
        other_mode, _ = s.key("live")
        s.submit(other_mode)
        page = s.request("GET", "/v1/analyses?limit=2", key=key).json
        assert page["object"] == "list" and page["has_more"] is True
        assert [d["id"] for d in page["data"]] == newest_first[:2]
        assert page["next_cursor"] == newest_first[1]
        page2 = s.request("GET", f"/v1/analyses?limit=2&starting_after={page['next_cursor']}",
                          key=key).json
        assert [d["id"] for d in page2["data"]] == newest_first[2:4]
        page3 = s.request("GET", f"/v1/analyses?limit=2&starting_after={page2['next_cursor']}",
                          key=key).json
        assert [d["id"] for d in page3["data"]] == newest_first[4:]
        assert page3["has_more"] is False and page3["next_cursor"] is None
        before = s.request("GET", f"/v1/analyses?limit=2&ending_before={newest_first[4]}",
                           key=key).json
        assert [d["id"] for d in before["data"]] == newest_first[2:4]
        everything = s.request("GET", "/v1/analyses", key=key).json
        assert [d["id"] for d in everything["data"]] == newest_first
        assert everything["has_more"] is False
    finally:
        s.stop()


def test_list_shows_the_calling_keys_analyses_and_get_the_accounts():
    """Spec 4.2 lists "the analyses created by the calling key"; by id, an
    analysis is visible to every key of its account (4.3: only other
    accounts' ids are a 404)."""
    s = start(test_in_flight=20)
    try:
        first, account = s.key("test")
        second, _doc = accounts.create_key(s.store, account, mode="test", clock=s.clock)
        mine = s.submit(first, "mine.wav").json["id"]
        theirs = s.submit(second, "theirs.wav").json["id"]
        listed = s.request("GET", "/v1/analyses", key=first).json
        assert [d["id"] for d in listed["data"]] == [mine]
        assert s.request("GET", f"/v1/analyses/{theirs}", key=first).status == 200
        reply = s.request("GET", f"/v1/analyses?starting_after={theirs}", key=first)
        assert reply.status == 404 and reply.error["param"] == "starting_after"
    finally:
        s.stop()


@pytest.mark.parametrize("param", ["starting_after", "ending_before"])
def test_an_unknown_cursor_is_404_like_an_unknown_id(server, param):
    key, _ = server.key("test")
    reply = server.request("GET", f"/v1/analyses?{param}={uuid.uuid4()}", key=key)
    assert reply.status == 404, reply.body
    assert reply.error["code"] == "not_found" and reply.error["param"] == param


@pytest.mark.parametrize("query,param", [("limit=0", "limit"), ("limit=101", "limit"),
                                         ("limit=abc", "limit"), ("limit=-1", "limit"),
                                         ("limit=1&limit=2", "limit"),
                                         ("starting_after=nope", "starting_after"),
                                         ("color=red", "color")])
def test_list_parameter_errors(server, query, param):
    key, _ = server.key("test")
    reply = server.request("GET", f"/v1/analyses?{query}", key=key)
    assert reply.status == 400, reply.body
    assert reply.error["code"] in ("parameter_invalid", "parameter_unknown")
    assert reply.error["param"] == param


# --- delivery (CONTRACT.md section 5): codec_preview on POST /analyses ----------

@pytest.mark.parametrize("value", ["yes", 1, None, [True]])
def test_codec_preview_must_be_a_boolean(server, value):
    key, _ = server.key("test")
    reply = server.request("POST", "/v1/analyses", key=key, idem=str(uuid.uuid4()),
                           body={"file_name": "a.wav", "codec_preview": value})
    assert reply.status == 400, reply.body
    assert reply.error["code"] == "parameter_invalid" and reply.error["param"] == "codec_preview"


@pytest.mark.parametrize("mode", ["test", "live"])
def test_codecs_only_when_asked(server, mode):
    key, _ = server.key(mode)
    docs = {}
    for preview in (False, True):
        accepted = server.submit(key, "delivery.wav", codec_preview=preview).json
        assert server.upload(accepted, wav_bytes(2, 44100, channels=2)).status == 200
        docs[preview] = server.wait(accepted["id"], key,
                                    until=lambda d: d["diagnosis_status"] == "ready", timeout=60)
    for doc in docs.values():
        assert doc["status"] == "complete" and validate_document(doc) == []
        assert [p["platform"] for p in doc["delivery"]["platforms"]][0] == "spotify"
        assert set(doc["delivery"]["mono"]["bands"]) >= {"sub_bass", "air"}
    assert docs[False]["delivery"]["codecs"] is None
    assert [c["codec"] for c in docs[True]["delivery"]["codecs"]] == ["mp3", "aac", "opus"]


def test_codec_preview_is_part_of_the_idempotency_fingerprint(server):
    key, _ = server.key("test")
    idem = str(uuid.uuid4())
    first = server.request("POST", "/v1/analyses", key=key, idem=idem, body={"file_name": "a.wav"})
    assert first.status == 202
    other = server.request("POST", "/v1/analyses", key=key, idem=idem,
                           body={"file_name": "a.wav", "codec_preview": True})
    assert other.status == 409 and other.error["code"] == "idempotency_key_reused"
