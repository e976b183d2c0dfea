"""Slow clients cannot lock anyone out (CONTRACT section 5, "slow clients"):
a request head must arrive within `head_timeout`, a body at `min_body_rate`
or faster, one address holds at most `max_connections_per_address`
connections, and a new client is answered within 1 s while 100 slow
connections are open. Before: waitress's `channel_timeout` counted only
silence, so sockets trickling a header line every few seconds stayed open
for ever, and 100 of them filled its connection limit (nobody else was
accepted)."""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

import pytest

from tests.server.server_harness import request, start


def connect(url: str, source: str = "127.0.0.1", timeout: float = 10) -> socket.socket:
    """A connection to the server from the loopback address `source`
    (127.0.0.0/8 is all loopback on Linux, so tests can be many clients)."""
    parts = urlsplit(url)
    return socket.create_connection((parts.hostname, parts.port), timeout=timeout,
                                    source_address=(source, 0))


def closed_within(sock: socket.socket, seconds: float) -> float | None:
    """Seconds until the server closed `sock` (None: still open after `seconds`)."""
    started = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except (socket.timeout, TimeoutError):
        return None
    except OSError:
        pass
    return time.monotonic() - started


def fresh_request_seconds(url: str, key: str) -> float:
    started = time.monotonic()
    reply = request(url, "GET", "/v1/genres", key=key, timeout=5)
    assert reply.status == 200, reply.body
    return time.monotonic() - started


def test_a_new_client_is_answered_within_a_second_while_100_slow_connections_are_open():
    """100 connections from four addresses, each sending a partial head and
    then a header line every 0.5 s (never silent, never done): fresh requests
    are answered within 1 s (before: not at all, the connection limit was full)."""
    s = start()
    slow = []
    try:
        key = s.key("test")[0]
        for i in range(100):
            sock = connect(s.url, f"127.0.0.{2 + i % 4}")
            sock.sendall(b"GET /v1/genres HTTP/1.1\r\nHost: x\r\n")
            slow.append(sock)
        worst = 0.0
        for round_ in range(6):
            for i, sock in enumerate(slow):
                try:
                    sock.sendall(f"X-Slow-{round_}: {i}\r\n".encode())
                except OSError:
                    pass
            worst = max(worst, fresh_request_seconds(s.url, key))
            time.sleep(0.5)
        assert worst < 1.0, f"a fresh request took {worst:.2f} s"
    finally:
        for sock in slow:
            sock.close()
        s.stop()


@pytest.fixture(scope="module")
def quick():
    """A server with short deadlines, so the tests take seconds."""
    s = start(head_timeout=2.0, min_body_rate=1000, max_connections_per_address=8)
    s.test_key = s.key("test")[0]
    yield s
    s.stop()


def test_a_head_trickled_line_by_line_is_cut_at_the_head_deadline(quick):
    sock = connect(quick.url, "127.0.0.20")
    sock.sendall(b"GET /v1/genres HTTP/1.1\r\n")
    started = time.monotonic()
    try:
        for i in range(12):                         # a header line every 0.5 s: never silent
            time.sleep(0.5)
            try:
                sock.sendall(f"X-Slow-{i}: y\r\n".encode())
            except OSError:
                break
        seconds = closed_within(sock, 1.0)
    finally:
        sock.close()
    elapsed = time.monotonic() - started
    assert seconds is not None and elapsed < 4.5, f"still open after {elapsed:.1f} s"


def test_a_connection_that_sends_nothing_is_closed_at_the_head_deadline(quick):
    sock = connect(quick.url, "127.0.0.21")
    try:
        seconds = closed_within(sock, 4.5)
    finally:
        sock.close()
    assert seconds is not None and seconds >= 1.5


def test_a_body_slower_than_the_minimum_rate_is_cut(quick):
    """A JSON body at 100 bytes/s (the minimum is 1000): closed after one
    5-second measuring window, though it is never silent."""
    sock = connect(quick.url, "127.0.0.22")
    sock.sendall(b"POST /v1/analyses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 4000\r\n\r\n")
    started = time.monotonic()
    try:
        while time.monotonic() - started < 9:
            try:
                sock.sendall(b" " * 10)
            except OSError:
                break
            time.sleep(0.1)
            sock.setblocking(False)
            try:
                if sock.recv(1) == b"":
                    break
            except BlockingIOError:
                pass
            except OSError:
                break
            finally:
                sock.setblocking(True)
    finally:
        sock.close()
    elapsed = time.monotonic() - started
    assert elapsed < 8, f"a 100 B/s body was still accepted after {elapsed:.1f} s"


def test_a_steady_body_above_the_rate_is_not_cut(quick):
    """The same body at 4000 bytes/s completes (400 after 1 s of trickle: the
    JSON is not an object, but it was read whole)."""
    body = b'"' + b"x" * 3998 + b'"'
    sock = connect(quick.url, "127.0.0.23")
    try:
        sock.sendall(b"POST /v1/analyses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Authorization: Bearer " + quick.test_key.encode()
                     + b"\r\nContent-Length: 4000\r\nConnection: close\r\n\r\n")
        for i in range(0, len(body), 400):
            sock.sendall(body[i:i + 400])
            time.sleep(0.1)
        sock.settimeout(5)
        answer = sock.recv(65536)
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]


def test_one_address_holds_at_most_its_connection_cap(quick):
    """8 idle connections from one address: the 9th is answered 429 at once;
    another address is still served."""
    held = [connect(quick.url, "127.0.0.30") for _ in range(8)]
    try:
        extra = connect(quick.url, "127.0.0.30", timeout=2)
        try:
            answer = extra.recv(65536)
        finally:
            extra.close()
        assert answer.startswith(b"HTTP/1.1 429") and b'"rate_limited"' in answer, answer[:300]
        assert b"X-Request-Id: req_" in answer and b"Retry-After:" in answer
        assert fresh_request_seconds(quick.url, quick.test_key) < 1.0
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.3)                                 # the closes reach the server
    again = connect(quick.url, "127.0.0.30", timeout=2)
    try:
        again.sendall(b"GET /v1/genres HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert again.recv(12).startswith(b"HTTP/1.1 401")
    finally:
        again.close()


def test_an_idle_keep_alive_connection_is_not_cut_by_the_head_deadline(quick):
    """Between requests a kept-alive connection is idle, not slow: after an
    answer, 3 s of silence (head_timeout is 2 s) and the next request is served."""
    sock = connect(quick.url, "127.0.0.24")
    request_bytes = (b"GET /v1/genres HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                     + quick.test_key.encode() + b"\r\n\r\n")
    try:
        for _ in range(2):
            sock.sendall(request_bytes)
            answer = b""
            while b"\r\n\r\n" not in answer:
                answer += sock.recv(65536)
            assert answer.startswith(b"HTTP/1.1 200"), answer[:100]
            length = int(answer.split(b"Content-Length: ", 1)[1].split(b"\r\n", 1)[0])
            body = answer.split(b"\r\n\r\n", 1)[1]
            while len(body) < length:
                body += sock.recv(65536)
            time.sleep(3)
    finally:
        sock.close()
