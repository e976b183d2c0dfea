"""Hand-written hostile requests against a real server on loopback (the
schemathesis run only sends well-formed HTTP): invalid UTF-8, lone
surrogates, duplicate keys, deep nesting, huge numbers, oversized headers and
bodies, chunked bodies, slow and half-open clients, wrong methods. Every
answer is the envelope with the documented code, never a 5xx, and the server
keeps answering everyone else."""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from urllib.parse import urlsplit

import pytest

from tests.server.server_harness import request, start

# fixed ids: test ids must be the same in every process (pytest -n collects in each worker)
PATHS = ("/v1/analyses", f"/v1/analyses/{uuid.UUID(int=1)}", f"/v1/analyses/{uuid.UUID(int=2)}/status",
         f"/v1/uploads/{uuid.UUID(int=3)}", "/v1/genres", f"/v1/embed/{uuid.UUID(int=4)}",
         "/v1/openapi.json")


@pytest.fixture(scope="module")
def server():
    s = start(test_in_flight=1000, test_rate_per_minute=100000)
    s.test_key = s.key("test")[0]
    yield s
    s.stop()


def exchange(url: str, payload: bytes, *, timeout: float = 15) -> tuple[int, dict, bytes]:
    """Raw bytes in; (status, headers, body) of the first response out."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as sock:
        sock.sendall(payload)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in
                   (line.partition(":") for line in lines[1:])}
        length = int(headers.get("content-length", 0))
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
    return int(lines[0].split()[1]), headers, body


def envelope(status: int, headers: dict, body: bytes) -> dict:
    assert status < 500, body
    assert headers.get("x-request-id", "").startswith("req_")
    error = json.loads(body)["error"]
    assert set(error) >= {"type", "code", "message", "request_id"}
    return error


def post_json(server, raw: bytes) -> tuple[int, dict, bytes]:
    head = (f"POST /v1/analyses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.test_key}\r\n"
            f"Idempotency-Key: {uuid.uuid4()}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(raw)}\r\nConnection: close\r\n\r\n").encode()
    return exchange(server.url, head + raw)


@pytest.mark.parametrize("raw,code", [
    (b'{"file_name": "\xc3\x28.wav"}', "invalid_json"),             # invalid UTF-8
    (b'{"file_name": "\xed\xa0\x80.wav"}', "invalid_json"),         # a surrogate as UTF-8 bytes
    (b'{"file_name": "\\ud800.wav"}', "parameter_invalid"),         # a lone surrogate escape
    (b'{"file_name": "a.wav", "file_name": "b.wav"}', "invalid_json"),
    (b'{"file_name": "a.wav", "external_id": ' + b"[" * 5000 + b"]" * 5000 + b"}",
     "invalid_json"),                                               # nested too deeply
    (b'{"file_name": "a.wav", "external_id": ' + b"[" * 50 + b"]" * 50 + b"}",
     "parameter_invalid"),
    (b'{"file_name": "a.wav", "x": ' + b"{\"a\":" * 8000 + b"1" + b"}" * 8000 + b"}",
     "invalid_json"),
    (b'{"file_name": "a.wav", "external_id": 1e99999}', "invalid_json"),
    (b'{"file_name": "a.wav", "external_id": ' + b"7" * 4400 + b"}", "invalid_json"),
    (b'{"file_name": "a.wav", "external_id": -0.0e-99999}', "parameter_invalid"),
    (b"\xef\xbb\xbf" + b'{"file_name": "a.wav"}', "invalid_json"),  # a BOM is not JSON
])
def test_hostile_json_bodies(server, raw, code):
    error = envelope(*post_json(server, raw))
    assert error["code"] == code, error


@pytest.mark.parametrize("raw", [
    b"GET /v1/genres HTTP/1.1\r\n\tfolded\r\n\r\n",           # a continuation line first
    b"GET /v1/genres HTTP/1.1\r\nBad Header\r\n\r\n",            # no colon
    b"GET /v1/genres HTTP/1.1\r\nX: a\x00b\r\n\r\n",              # NUL in a value
    b"GET /v1/genres HTTP/1.1\r\nX : y\r\n\r\n",                 # space before the colon
    b"GET /v1/genres HTTP/1.1\r\nX\xff: y\r\n\r\n",              # a byte no header name holds
    b"GET\r\n\r\n",                                          # no target, no version
])
def test_unparseable_request_heads_are_answered_at_once(server, raw):
    """These used to get no answer at all (the error page needed the path
    of a request whose head never parsed): the client hung until its timeout."""
    started = time.monotonic()
    status, headers, body = exchange(server.url, raw, timeout=5)
    assert status == 400 and time.monotonic() - started < 5
    assert envelope(status, headers, body)["code"] == "parameter_invalid"


def test_oversized_header_is_the_envelope(server):
    status, headers, body = exchange(server.url, (
        "GET /v1/genres HTTP/1.1\r\nHost: x\r\nX-Big: " + "a" * 300_000 + "\r\n\r\n").encode())
    assert status in (400, 413, 431)
    envelope(status, headers, body)


def test_many_headers_are_answered(server):
    many = "".join(f"X-H{i}: {i}\r\n" for i in range(2000))
    status, headers, body = exchange(server.url, (
        f"GET /v1/genres HTTP/1.1\r\nHost: x\r\n{many}Connection: close\r\n\r\n").encode())
    assert status in (400, 401, 413, 431)
    envelope(status, headers, body)


def test_chunked_json_over_the_limit_is_413(server):
    chunk = b'{"file_name": "a.wav", "external_id": "' + b"x" * 70_000 + b'"}'
    body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(chunk), chunk)
    status, headers, reply = exchange(server.url, (
        f"POST /v1/analyses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.test_key}\r\n"
        f"Idempotency-Key: {uuid.uuid4()}\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n").encode() + body)
    assert envelope(status, headers, reply)["code"] == "request_too_large"


def test_lying_content_length_is_the_envelope(server):
    status, headers, body = exchange(server.url, (
        "POST /v1/analyses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Content-Length: 99999999999999999999\r\n\r\n").encode())
    assert status in (400, 413)
    envelope(status, headers, body)


ALLOWED = {PATHS[1]: {"DELETE"}}       # DELETE /v1/analyses/{id} cancels (CONTRACT.md 5)


@pytest.mark.parametrize("method,path", [
    (method, path) for path in PATHS for method in ("PUT", "PATCH", "DELETE", "TRACE", "PROPFIND")
    if method not in ALLOWED.get(path, ())])
def test_wrong_methods_are_405_with_allow(server, path, method):
    reply = request(server.url, method, path, key=server.test_key)
    assert reply.status == 405, reply.body
    assert reply.error["code"] == "method_not_allowed" and reply.header("Allow")


def test_slow_and_half_open_clients_do_not_hold_up_others(server):
    """A slowloris dribbling its headers and 40 connections that never finish
    their request: other clients are still answered at once."""
    parts = urlsplit(server.url)
    stop = threading.Event()

    def dribble():
        with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
            for byte in b"GET /v1/genres HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"s" * 1000:
                if stop.is_set():
                    return
                sock.send(bytes([byte]))
                time.sleep(0.01)

    half_open = []
    for i in range(40):
        sock = socket.create_connection((parts.hostname, parts.port), timeout=10)
        sock.sendall(b"POST /v1/analyses HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"
                     if i % 2 else b"GET /v1/gen")
        half_open.append(sock)
    slow = [threading.Thread(target=dribble, daemon=True) for _ in range(4)]
    for thread in slow:
        thread.start()
    try:
        for _ in range(10):
            started = time.monotonic()
            reply = request(server.url, "GET", "/v1/genres", key=server.test_key, timeout=5)
            assert reply.status == 200
            assert time.monotonic() - started < 2.0
    finally:
        stop.set()
        for sock in half_open:
            sock.close()
        for thread in slow:
            thread.join(15)


def test_a_client_that_vanishes_mid_body_leaves_the_server_serving(server):
    parts = urlsplit(server.url)
    for _ in range(20):
        sock = socket.create_connection((parts.hostname, parts.port), timeout=10)
        sock.sendall(b"POST /v1/analyses HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n"
                     b"Content-Type: application/json\r\n\r\n{\"file_na")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.close()                        # RST
    assert request(server.url, "GET", "/v1/genres", key=server.test_key).status == 200
