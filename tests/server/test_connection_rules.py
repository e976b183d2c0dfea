"""Connection rules of issue 29 item 7, on a real waitress on loopback: a
request framed by both Content-Length and Transfer-Encoding closes its
connection after the answer (RFC 9112 6.1); idle keep-alive connections are
closed sooner once half the connection cap is open; an IPv6 /64 counts as
one address for the per-address cap. And the body budget's shares."""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

import pytest

from tests.server.hostile_http import read_answer
from tests.server.server_harness import start
from trackgrade.server.connections.admission import (
    SERVER, AddressCount, BodyBudget, address_key, shares,
)
from trackgrade.server.connections.channel import CROWDED_IDLE_S, idle_timeout


@pytest.fixture(scope="module")
def server():
    s = start(max_connections=20)
    yield s
    s.stop()


def _connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    return socket.create_connection((parts.hostname, parts.port), timeout=5)


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


def test_a_request_with_both_framings_closes_its_connection(server):
    with _connect(server.url) as sock:
        sock.sendall(b"POST /v1/analyses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                     b"\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"2\r\n{}\r\n0\r\n\r\n")
        status, headers, error = read_answer(sock)
        assert status == 401 and error["code"] == "invalid_api_key"
        assert headers.get("connection", "").lower() == "close"
        assert _closed_by_server(sock, 3)


def test_a_plain_chunked_request_keeps_its_connection(server):
    with _connect(server.url) as sock:
        sock.sendall(b"POST /v1/analyses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                     b"\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
        status, headers, _ = read_answer(sock)
        assert status == 401 and headers.get("connection", "").lower() != "close"


def test_idle_keep_alives_close_sooner_once_half_the_cap_is_open(server):
    """12 idle keep-alive connections of a cap of 20: those idle for
    CROWDED_IDLE_S are closed until fewer than half the cap are open (before:
    all kept for the 60 s channel_timeout)."""
    socks = [_connect(server.url) for _ in range(12)]
    try:
        for sock in socks:
            sock.sendall(b"GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n")
        for sock in socks:
            data = b""
            while b"\r\n\r\n" not in data:
                data += sock.recv(65536)
        started = time.monotonic()
        closed = [_closed_by_server(sock, max(0.1, CROWDED_IDLE_S + 4
                                               - (time.monotonic() - started)))
                  for sock in socks]
        assert sum(closed) >= 3, closed            # at most 9 of the 20 left open
    finally:
        for sock in socks:
            sock.close()


def test_the_idle_timeout_keeps_channel_timeout_below_half_the_cap():
    assert idle_timeout(10, 1000, 60) == 60
    assert idle_timeout(500, 1000, 60) == CROWDED_IDLE_S
    assert idle_timeout(3, 0, 60) == 60


def test_an_ipv6_64_counts_as_one_address():
    count = AddressCount(2)
    assert count.open("2001:db8:1:2::1") and count.open("2001:db8:1:2:ffff::9")
    assert not count.open("2001:db8:1:2:abcd::1")          # a third host of the same /64
    assert count.open("2001:db8:1:3::1")                  # another /64
    assert address_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert address_key("192.0.2.7") == "192.0.2.7"
    count.close("2001:db8:1:2:abcd::1")                   # the refused one goes
    count.close("2001:db8:1:2::1")
    assert count.open("2001:db8:1:2::5")


def test_one_key_holds_at_most_its_share_of_the_body_budget():
    from trackgrade.config import Settings

    largest = 200 * 2**20 + 64 * 1024
    capacity, account, key = shares(Settings(), largest)
    assert (capacity, account, key) == (512 * 2**20, 256 * 2**20, largest)
    budget = BodyBudget(capacity, account, key)
    owners = ("key:k1", "account:a")
    assert budget.reserve(200 * 2**20, owners) is None
    assert budget.reserve(200 * 2**20, owners) == "key:k1"          # 200 + 200 MiB: no
    assert budget.reserve(100 * 2**20, ("key:k2", "account:a")) == "account:a"
    assert budget.reserve(300 * 2**20, ("key:k3", "account:b")) == "key:k3"
    assert budget.reserve(200 * 2**20, ("key:k3", "account:b")) is None
    assert budget.reserve(200 * 2**20, ("key:k4", "account:c")) == SERVER
    budget.release(200 * 2**20, owners)
    assert budget.by_owner == {"account:b": 200 * 2**20, "key:k3": 200 * 2**20}


def test_a_canceled_upload_loses_its_reservation_and_connection_at_once(server):
    """An upload in progress whose analysis is canceled: its connection is
    closed and its bytes returned within the once-a-second check (before,
    they stayed reserved for as long as the client kept trickling)."""
    key, _ = server.key("test")
    accepted = server.submit(key).json
    budget = server.running.server.trackgrade_gate.budget
    path = urlsplit(accepted["upload"]["url"]).path
    declared = 4 * 2**20
    deadline = time.monotonic() + 10
    while budget.held and time.monotonic() < deadline:    # earlier requests' bodies
        time.sleep(0.02)
    with _connect(server.url) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                     f"{accepted['upload']['token']}\r\nContent-Type: multipart/form-data; "
                     f"boundary=b\r\nContent-Length: {declared}\r\n\r\n".encode() + b"x" * 1000)
        while budget.held < declared and time.monotonic() < deadline:
            time.sleep(0.02)
        assert budget.held >= declared
        reply = server.request("DELETE", f"/v1/analyses/{accepted['id']}", key=key)
        assert reply.status == 200 and reply.json["error"]["code"] == "analysis_canceled"
        assert _closed_by_server(sock, 3)
        assert budget.held < declared


def test_an_upload_to_an_analysis_no_longer_awaiting_is_401_from_its_head(server):
    """Its token is genuine but opens nothing any more: refused from the head
    without the store (the server made every analysis it serves), never
    admitted to hold body bytes."""
    key, _ = server.key("test")
    accepted = server.submit(key).json
    assert server.request("DELETE", f"/v1/analyses/{accepted['id']}", key=key).status == 200
    path = urlsplit(accepted["upload"]["url"]).path
    with _connect(server.url) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                     f"{accepted['upload']['token']}\r\nContent-Type: multipart/form-data; "
                     f"boundary=b\r\nContent-Length: {4 * 2**20}\r\n\r\n".encode())
        status, _, error = read_answer(sock)
    assert status == 401 and error["code"] == "upload_token_invalid"
