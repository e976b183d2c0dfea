"""A real webhook receiver on loopback for the tests: a threaded
http.server that records every delivery (headers, raw body, arrival time)
and answers what its `behaviour` says."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


@dataclass
class Delivery:
    headers: dict
    body: bytes
    at: float                   # time.monotonic() on arrival
    path: str = "/"

    @property
    def event(self) -> dict:
        return json.loads(self.body)


# behaviour(delivery, n) -> (status, headers) or "hang"; n counts this receiver's requests
Behaviour = Callable[[Delivery, int], object]


def answer(status: int, headers: dict | None = None) -> Behaviour:
    return lambda delivery, n: (status, headers or {})


def fail_first(count: int, status: int = 500) -> Behaviour:
    return lambda delivery, n: (status, {}) if n <= count else (200, {})


@dataclass
class Receiver:
    behaviour: Behaviour = field(default_factory=lambda: answer(200))
    deliveries: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._release = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 - http.server's name
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size)
                delivery = Delivery({k.lower(): v for k, v in self.headers.items()}, body,
                                    time.monotonic(), self.path)
                with owner._lock:
                    owner.deliveries.append(delivery)
                    n = len(owner.deliveries)
                reply = owner.behaviour(delivery, n)
                if reply == "hang":
                    owner._release.wait(60)
                    return
                status, headers = reply
                payload = b"ok"
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def events(self) -> list[dict]:
        with self._lock:
            return [d.event for d in self.deliveries]

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Delivery]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.deliveries) >= count:
                    return list(self.deliveries)
            time.sleep(0.01)
        with self._lock:
            raise AssertionError(f"{len(self.deliveries)} deliveries arrived, {count} expected")

    def close(self) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()
