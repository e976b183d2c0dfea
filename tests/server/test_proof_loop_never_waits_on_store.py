"""Proof: waitress's event-loop thread never waits on the store (issue 30).

A real `trackgrade serve` on the session's PostgreSQL, which is then stopped:
every store call now waits for the pool (5 s) and fails. Meanwhile a request
body is in progress (a head with 2 of its 100 declared bytes) and a 2-byte
unauthenticated `POST /v1/analyses` arrives every second. Before, admitting
each such head from the loop thread asked the store (the maintenance switch),
so `GET /v1/openapi.json`, which needs no store, waited behind it (4.7 s on
about 80 % of tries); now the loop reads only the cached switch and the
document answers at once."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from urllib.parse import urlsplit

import pytest

from tests.server.serve_process import ServeProcess


def _small_posts(url: str, stop: threading.Event) -> None:
    parts = urlsplit(url)
    while not stop.is_set():
        try:
            with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
                sock.sendall(b"POST /v1/analyses HTTP/1.1\r\nHost: x\r\nContent-Type: "
                             b"application/json\r\nContent-Length: 2\r\n\r\n{}")
                sock.settimeout(0.05)
                try:
                    sock.recv(100)
                except OSError:
                    pass
        except OSError:
            pass
        stop.wait(1.0)


def openapi_latency(url: str) -> float:
    parts = urlsplit(url)
    started = time.monotonic()
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request("GET", "/v1/openapi.json")
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 200, resp.status
    finally:
        conn.close()
    return time.monotonic() - started


def stalled_store_latencies(url: str, halt, tries: int = 16) -> list[float]:
    """`halt()` the store, then time `tries` GETs of the OpenAPI document
    while a body is in progress and small POSTs keep coming (a reset: inf)."""
    parts = urlsplit(url)
    openapi_latency(url)                                   # warm
    halt()
    stop = threading.Event()
    poster = threading.Thread(target=_small_posts, args=(url, stop), daemon=True)
    held = socket.create_connection((parts.hostname, parts.port), timeout=10)
    try:
        held.sendall(b"POST /v1/analyses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                     b"\r\nContent-Length: 100\r\n\r\n{\"")          # a body in progress
        poster.start()
        time.sleep(0.5)
        latencies = []
        for _ in range(tries):
            started = time.monotonic()
            try:
                latencies.append(openapi_latency(url))
            except OSError:                   # reset or unanswered: as slow as it gets
                latencies.append(float("inf") if time.monotonic() - started < 30 else 30.0)
            time.sleep(0.25)
        return latencies
    finally:
        stop.set()
        held.close()
        poster.join(15)


@pytest.mark.slow(seconds=20)
def test_the_openapi_document_answers_fast_while_the_store_stalls(postgres_server):
    database = postgres_server.create_database()
    server = ServeProcess(None, database=database, require=True,
                          unset=("TRACKGRADE_DATABASE_URL",))
    try:
        latencies = stalled_store_latencies(server.url, postgres_server.halt)
        shown = ", ".join(f"{s * 1e3:.0f}" for s in latencies)
        print(f"\nGET /v1/openapi.json with PostgreSQL stopped (ms): {shown}")
        assert max(latencies) < 1.0, shown
    finally:
        server.stop()
        if not postgres_server.running():
            postgres_server.resume()
