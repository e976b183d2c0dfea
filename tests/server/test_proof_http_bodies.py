"""Bodies are refused from the request head, before a byte of them is read
(CONTRACT section 5, "bodies"), and the body bytes held in flight are bounded.

Each test sends only a request head (or a head and part of a body) to a real
waitress on loopback and expects the envelope at once: before the guard,
waitress read every body whole before the app could refuse it, so these
requests hung waiting for bytes that never came, and four unauthenticated
150 MiB bodies grew the server by about 600 MB."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import uuid
from urllib.parse import urlsplit

import pytest

from tests.server.hostile_http import MiB, read_answer, send_body, vm_kb
from tests.server.server_harness import start
from tests.server.serve_process import ServeProcess, make_key


@pytest.fixture(scope="module")
def server():
    s = start(test_in_flight=1000, test_rate_per_minute=100000, in_flight=100,
              rate_per_minute=100000)
    yield s
    s.stop()


def head_only(url: str, head: str, *, timeout: float = 3.0) -> tuple[int, dict, dict]:
    """Send a request head, no body; (status, headers, envelope error) of the
    answer, which must come within `timeout` seconds."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as sock:
        sock.sendall(head.encode("latin-1"))
        return read_answer(sock)


def accepted_upload(s, name="track.wav", mode="live"):
    key, account = s.key(mode, credits=5)
    accepted = s.submit(key, file_name=name).json
    return accepted, account


def upload_head(accepted: dict, length: int, *, token: str | None = None,
                extra: str = "") -> str:
    path = urlsplit(accepted["upload"]["url"]).path
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {token or accepted['upload']['token']}\r\n"
            "Content-Type: multipart/form-data; boundary=b\r\n"
            f"Content-Length: {length}\r\n{extra}\r\n")


def test_a_get_with_a_body_is_refused_before_it_is_read(server):
    status, _, error = head_only(server.url, "GET /v1/genres HTTP/1.1\r\nHost: x\r\n"
                                             f"Content-Length: {100 * MiB}\r\n\r\n")
    assert status == 413 and error["code"] == "request_too_large"


def test_a_delete_takes_no_body_either(server):
    """413 once DELETE /v1/analyses/{id} (cancel) is routed; 405 while it is not:
    either way from the head."""
    status, _, error = head_only(server.url, f"DELETE /v1/analyses/{uuid.uuid4()} HTTP/1.1\r\n"
                                             f"Host: x\r\nContent-Length: {100 * MiB}\r\n\r\n")
    assert (status, error["code"]) in ((413, "request_too_large"), (405, "method_not_allowed"))


@pytest.mark.parametrize("method,path,status,code", [
    ("TRACE", "/v1/uploads/8df35f5b-ac0d-4610-8670-8804c5d93c8b", 405, "method_not_allowed"),
    ("PUT", "/v1/analyses", 405, "method_not_allowed"),
    ("POST", "/v1/nowhere", 404, "route_not_found"),
])
def test_a_wrong_method_or_route_with_a_body_is_answered_from_its_head(server, method, path,
                                                                      status, code):
    """The app's routing answer (405 with Allow, 404), before the body is read."""
    got, headers, error = head_only(server.url, f"{method} {path} HTTP/1.1\r\nHost: x\r\n"
                                                f"Content-Length: {150 * MiB}\r\n\r\n")
    assert (got, error["code"]) == (status, code)
    if status == 405:
        assert headers["allow"]


def test_an_unauthenticated_150_mib_json_body_is_refused_from_its_head(server):
    status, _, error = head_only(server.url, "POST /v1/analyses HTTP/1.1\r\nHost: x\r\n"
                                             "Content-Type: application/json\r\n"
                                             f"Content-Length: {150 * MiB}\r\n\r\n")
    assert status == 413 and error["code"] == "request_too_large"
    assert str(64 * 1024) in error["message"]


def test_a_json_body_just_over_max_json_bytes_is_refused_from_its_head(server):
    status, _, error = head_only(server.url, "POST /v1/analyses HTTP/1.1\r\nHost: x\r\n"
                                             "Content-Type: application/json\r\n"
                                             f"Content-Length: {64 * 1024 + 1}\r\n\r\n")
    assert status == 413 and error["code"] == "request_too_large"


def test_a_chunked_json_body_is_cut_off_at_max_json_bytes(server):
    """No declared length: the body is refused as soon as it grows past the
    limit, not after the client has sent all of it."""
    parts = urlsplit(server.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=3) as sock:
        sock.sendall(b"POST /v1/analyses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                     b"\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"x" * 32768
        for _ in range(3):                      # 96 KiB, then silence
            sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        status, _, error = read_answer(sock)
    assert status == 413 and error["code"] == "request_too_large"


def test_an_upload_with_a_bad_token_is_401_before_its_body(server):
    accepted, _ = accepted_upload(server)
    status, headers, error = head_only(server.url, upload_head(
        accepted, 150 * MiB, token="upl_not_the_token"))
    assert status == 401 and error["code"] == "upload_token_invalid"
    # the token is untouched: the real holder still uploads
    row = server.store.get("analyses", accepted["id"])
    assert row["status"] == "processing"


def test_an_upload_over_its_declared_format_limit_is_413_before_its_body(server):
    """A `.mp3` may be at most 48 MiB: 49 MiB declared is refused from the
    head, and the analysis fails with its credit restored, as the route would."""
    accepted, account = accepted_upload(server, name="big.mp3")
    status, _, error = head_only(server.url, upload_head(accepted, 49 * MiB))
    assert status == 413 and error["code"] == "file_too_large" and "48 MiB" in error["message"]
    row = server.wait(accepted["id"], None, until=lambda d: d["status"] == "failed", timeout=5)
    assert server.credits(account) == 5
    assert server.store.get("analyses", accepted["id"])["status"] == "failed", row


def test_a_refused_upload_never_gets_100_continue(server):
    accepted, _ = accepted_upload(server)
    parts = urlsplit(server.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=3) as sock:
        sock.sendall(upload_head(accepted, 150 * MiB, token="upl_wrong",
                                 extra="Expect: 100-continue\r\n").encode())
        first = sock.recv(12)
    assert first.startswith(b"HTTP/1.1 401"), first


def test_a_refusal_is_readable_by_a_client_that_sends_its_whole_body(server):
    """http.client sends the whole body before it reads: the server drains
    what follows a refusal, so the client reads the answer, not a reset."""
    parts = urlsplit(server.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.request("POST", "/v1/analyses", body=b"x" * (8 * MiB),
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        assert resp.status == 413
        assert json.loads(resp.read())["error"]["code"] == "request_too_large"
    finally:
        conn.close()


def test_the_body_budget_answers_503_with_retry_after_when_full():
    """Budget of one largest upload: while one upload is half sent, a second
    one is refused from its head (503 engine_at_capacity, Retry-After); once
    the first is answered, its bytes are returned and the second goes through."""
    from tests.server.server_harness import multipart, wav_bytes

    s = start(max_upload_bytes=400_000, max_body_bytes_in_flight=0, in_flight=5)
    try:
        first, _ = accepted_upload(s)
        second, _ = accepted_upload(s)
        body, ctype = multipart({"file": ("a.wav", wav_bytes(5, rate=8000))})
        parts = urlsplit(s.url)
        budget = s.running.server.trackgrade_gate.budget
        # the JSON bodies of the submissions above are held until their requests
        # end, which may be a moment after their answers came: wait for them
        deadline = time.monotonic() + 10
        while budget.held and time.monotonic() < deadline:
            time.sleep(0.02)
        assert budget.held == 0, budget.held
        held = socket.create_connection((parts.hostname, parts.port), timeout=10)
        big = 400_000 + 64 * 1024            # the largest body the budget holds
        held.sendall(upload_head(first, big).encode() + b"x" * 1000)
        deadline = time.monotonic() + 30
        while budget.held < big and time.monotonic() < deadline:   # the first head is in
            time.sleep(0.02)
        if budget.held < big:                 # say what the server answered instead
            held.settimeout(2)
            raise AssertionError(f"the first upload's head was never admitted: {held.recv(2000)!r}")
        # the answer's status is the proof, not its latency (tests run 2 workers a core)
        status, headers, error = head_only(s.url, upload_head(second, len(body)), timeout=15)
        assert status == 503 and error["code"] == "engine_at_capacity"
        assert int(headers["retry-after"]) > 0
        held.close()                          # the first goes away: its bytes come back
        deadline = time.monotonic() + 5
        while budget.held and time.monotonic() < deadline:
            time.sleep(0.05)
        reply = s.upload(second, wav_bytes(5, rate=8000))
        assert reply.status == 200, reply.body
    finally:
        s.stop()


def test_unauthenticated_bodies_do_not_grow_the_server(tmp_path):
    """Four unauthenticated 150 MiB POST bodies sent whole, at once, to a real
    `trackgrade serve`: the server's peak memory grows by less than 40 MB
    (before the guard: about 600 MB, each body buffered before the 401)."""
    serve = ServeProcess(tmp_path / "data", require=True)
    try:
        key, _ = make_key("live", data_dir=str(tmp_path / "data"))
        parts = urlsplit(serve.url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        conn.request("GET", "/v1/genres", headers={"Authorization": f"Bearer {key}"})
        assert conn.getresponse().status == 200
        conn.close()
        before = vm_kb(serve.proc.pid, "VmHWM")
        answers: list = []
        heads = [b"POST /v1/analyses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n" % (150 * MiB),
                 b"POST /v1/uploads/%s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
                 % (str(uuid.uuid4()).encode(), 150 * MiB)] * 2
        threads = [threading.Thread(target=send_body, args=(serve.url, head, 150 * MiB, answers))
                   for head in heads]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        grown_mb = (vm_kb(serve.proc.pid, "VmHWM") - before) / 1024
        assert grown_mb < 40, f"the server grew by {grown_mb:.0f} MB"
        assert sorted(a for a in answers if a) and set(answers) <= {401, 413, None}
    finally:
        serve.stop()


def test_refusals_from_the_head_are_in_the_access_log(server, caplog):
    """The server's access log counts every answer, those given from the head too."""
    import logging

    caplog.set_level(logging.INFO, logger="trackgrade.access")
    status, _, error = head_only(server.url, "GET /v1/genres HTTP/1.1\r\nHost: x\r\n"
                                             "Content-Length: 10\r\n\r\n")
    lines = [r.getMessage() for r in caplog.records if r.name == "trackgrade.access"]
    assert any(line.startswith("GET /v1/genres 413 ") and error["request_id"] in line
               for line in lines), lines
