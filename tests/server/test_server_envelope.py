"""Every response has X-Request-Id; every error is the spec 7.1 envelope,
including Flask's own 404/405/413/500 and waitress's framing errors."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import pytest

from trackgrade.errors import ERROR_CODES

from tests.server.server_harness import start


@pytest.fixture(scope="module")
def server():
    s = start()
    yield s
    s.stop()


def check_envelope(reply, code: str, status: int | None = None, param=None) -> dict:
    assert reply.status == (status or ERROR_CODES[code][0]), reply.body
    error = reply.error
    assert set(error) == {"type", "code", "message", "param", "doc_url", "request_id"}
    assert error["code"] == code
    assert error["type"] == ERROR_CODES[code][1]
    doc = urlsplit(error["doc_url"])          # the instance's own reference, absolute
    assert doc.scheme == "http" and doc.netloc and doc.path == f"/v1/errors/{code}"
    assert error["request_id"] == reply.header("X-Request-Id")
    assert error["message"]
    if param is not None:
        assert error["param"] == param
    assert reply.header("Content-Type").startswith("application/json")
    return error


def test_unknown_route_is_route_not_found(server):
    check_envelope(server.request("GET", "/v1/nothing-here"), "route_not_found")
    check_envelope(server.request("GET", "/"), "route_not_found")
    check_envelope(server.request("GET", "/analyses"), "route_not_found")  # no /v1 prefix


def test_wrong_method_is_405_with_allow(server):
    key, _ = server.key("test")
    reply = server.request("DELETE", "/v1/analyses", key=key)
    check_envelope(reply, "method_not_allowed")
    allowed = {m.strip() for m in reply.header("Allow").split(",")}
    assert {"GET", "POST"} <= allowed
    reply = server.request("PUT", "/v1/genres")
    check_envelope(reply, "method_not_allowed")
    assert "GET" in reply.header("Allow")


def test_request_ids_are_unique_and_on_success_too(server):
    key, _ = server.key("test")
    ids = {server.request("GET", "/v1/genres", key=key).header("X-Request-Id") for _ in range(5)}
    ids |= {server.request("GET", "/v1/openapi.json").header("X-Request-Id")}
    assert len(ids) == 6 and all(i and i.startswith("req_") for i in ids)


def test_json_over_64_kib_is_request_too_large(server):
    key, _ = server.key("test")
    body = {"file_name": "a.wav", "external_id": "x" * (70 * 1024)}
    check_envelope(server.request("POST", "/v1/analyses", key=key, idem="big", body=body),
                   "request_too_large")


@pytest.mark.parametrize("raw", [b"{", b"not json", b"\xff\xfe{}", b"[1, 2]", b"null", b"",
                                 b'{"file_name": NaN}', b"[" * 60_000, b"[" * 100_000,
                                 b'{"file_name": "a.wav", "file_name": 3}'])
def test_garbled_json_is_invalid_json(server, raw):
    key, _ = server.key("test")
    reply = server.request("POST", "/v1/analyses", key=key, idem="g", raw=raw,
                           headers={"Content-Type": "application/json"})
    check_envelope(reply, "invalid_json" if len(raw) < 64 * 1024 else "request_too_large")


def raw_exchange(url: str, payload: bytes) -> tuple[bytes, bytes]:
    """Send raw bytes; read until the server closes (waitress closes after errors)."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(payload)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return head, body


def test_malformed_http_gets_the_envelope_from_waitress(server):
    head, body = raw_exchange(server.url, b"GET /v1/genres HTTP/1.1\r\nHost: x\r\n"
                                          b"Content-Length: abc\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400")
    assert b"X-Request-Id: req_" in head
    import json
    error = json.loads(body)["error"]
    assert error["code"] == "parameter_invalid" and error["type"] == "invalid_request_error"


def test_body_over_waitress_limit_is_envelope_413_and_fails_the_analysis():
    small = start(max_upload_bytes=100_000, in_flight=5)
    try:
        key, account = small.key("live", credits=2)
        accepted = small.submit(key).json
        path = urlsplit(accepted["upload"]["url"]).path
        head, body = raw_exchange(small.url, (
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999\r\n"
            f"Authorization: Bearer {accepted['upload']['token']}\r\n\r\n").encode())
        assert head.startswith(b"HTTP/1.1 413") and b"X-Request-Id" in head
        import json
        assert json.loads(body)["error"]["code"] == "file_too_large"
        row = small.store.get("analyses", accepted["id"])
        assert row["status"] == "failed" and row["error"]["code"] == "file_too_large"
        assert small.credits(account) == 2
    finally:
        small.stop()


def test_unexpected_failure_is_api_error_500():
    s = start()
    try:
        key, _ = s.key("test")
        s.store.close()            # the storage underneath breaks
        reply = s.request("GET", "/v1/genres", key=key)
        error = check_envelope(reply, "api_error", 500)
        assert "Traceback" not in reply.body.decode()
        assert error["type"] == "api_error"
    finally:
        s.stop()


def test_doc_url_follows_the_configured_docs_url():
    s = start(docs_url="https://elsewhere.example/ref")
    try:
        reply = s.request("GET", "/v1/missing")
        assert reply.error["doc_url"] == "https://elsewhere.example/ref/route_not_found"
    finally:
        s.stop()
