"""GET /v1/embed/{id}: the public badge (no key), only score, grade and genre."""

from __future__ import annotations

import uuid

import pytest

from trackgrade.server import admin, documents

from tests.server.server_harness import start, wav_bytes


@pytest.fixture(scope="module")
def server():
    s = start(test_in_flight=50)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def complete(server):
    key, _ = server.key("test")
    accepted = server.submit(key, "badge.wav").json
    server.upload(accepted, wav_bytes(2))
    doc = server.wait(accepted["id"], key, until=lambda d: d["diagnosis_status"] == "ready")
    return key, doc


def test_badge_needs_embedding_switched_on(server, complete):
    key, doc = complete
    off = server.request("GET", f"/v1/embed/{doc['id']}")
    assert off.status == 404 and off.error["code"] == "not_found"
    admin.set_embed(server.store, doc["id"], True)
    try:
        reply = server.request("GET", f"/v1/embed/{doc['id']}")
        assert reply.status == 200
        assert reply.header("Content-Type").startswith("text/html")
        assert reply.header("X-Request-Id")
        html = reply.body.decode()
        assert f">{doc['score']}<" in html
        # a test key's canned result: marked TEST, its made-up grade not shown
        assert doc["livemode"] is False and ">TEST<" in html and "Canned test result" in html
        assert f">{doc['grade']['letter']}<" not in html and doc["grade"]["label"] not in html
        assert doc["genre"]["name"] in html
        assert doc["diagnosis"]["summary"][:40] not in html
        for item in doc["feedback"]:
            assert item["text"][:40] not in html
        assert "badge.wav" not in html
    finally:
        admin.set_embed(server.store, doc["id"], False)
    assert server.request("GET", f"/v1/embed/{doc['id']}").status == 404


def test_themes_and_sizes(server, complete):
    _, doc = complete
    admin.set_embed(server.store, doc["id"], True)
    try:
        bodies = {}
        for theme in ("dark", "light"):
            for size in ("sm", "md"):
                reply = server.request("GET", f"/v1/embed/{doc['id']}?theme={theme}&size={size}")
                assert reply.status == 200
                bodies[theme, size] = reply.body
        assert len(set(bodies.values())) == 4
        default = server.request("GET", f"/v1/embed/{doc['id']}").body
        assert default == bodies["dark", "md"]
        for query, param in (("theme=blue", "theme"), ("size=lg", "size"),
                             ("theme=dark&theme=light", "theme")):
            reply = server.request("GET", f"/v1/embed/{doc['id']}?{query}")
            assert reply.status == 400 and reply.error["code"] == "parameter_invalid"
            assert reply.error["param"] == param
    finally:
        admin.set_embed(server.store, doc["id"], False)


def test_unknown_processing_failed_and_disabled_look_alike(server, complete):
    key, doc = complete
    processing = server.submit(key, "p.wav").json["id"]
    failed = server.submit(key, "f_fail_engine_error.wav").json
    server.upload(failed, b"x")
    server.wait(failed["id"], key)
    for analysis_id in (processing, failed["id"]):
        admin.set_embed(server.store, analysis_id, True)
    bodies = set()
    for analysis_id in (processing, failed["id"], doc["id"], str(uuid.uuid4()), "zzz"):
        reply = server.request("GET", f"/v1/embed/{analysis_id}")
        assert reply.status == 404
        error = reply.error
        error.pop("request_id")
        bodies.add(str(error))
    assert len(bodies) == 1


def test_everything_is_escaped(server, complete):
    _, doc = complete
    with server.store.transaction() as txn:
        row = txn.get("analyses", doc["id"])
        result = documents.result_of(row)
        result["genre"]["name"] = '<script>alert("x")</script>&'
        result["grade"]["letter"] = "<b>"
        row["embed"] = True
        documents.render(row, result)
        txn.put("analyses", row)
    html = server.request("GET", f"/v1/embed/{doc['id']}").body.decode()
    assert "<script>" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;" in html


def test_badge_says_not_electronic(server):
    """Music that is not electronic (CONTRACT.md section 5): the badge shows
    `genre.name`, "Not electronic (nearest: <family>)"."""
    from tests.acoustic_like import acoustic

    key, _ = server.key("live", credits=2)
    accepted = server.submit(key, "played.wav").json
    assert server.upload(accepted, acoustic()).status == 200
    doc = server.wait(accepted["id"], key, until=lambda d: d["status"] != "processing", timeout=120)
    assert doc["status"] == "complete", doc.get("error")
    assert doc["genre"]["name"].startswith("Not electronic (nearest: ")
    admin.set_embed(server.store, doc["id"], True)
    try:
        html = server.request("GET", f"/v1/embed/{doc['id']}").body.decode()
        assert doc["genre"]["name"] in html
    finally:
        admin.set_embed(server.store, doc["id"], False)
