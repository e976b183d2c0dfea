"""The `WebhookSender` seam: POST one signed body to one URL, report what
the receiver answered. The dispatcher never talks HTTP itself.

`HttpSender` is the real one (stdlib `http.client`): a fresh connection per
attempt to an address checked as it connects (`addresses.address_refusal`:
the name is resolved here and the checked address is the one connected to,
so a name re-pointed at a private address is refused), TLS verified for
https://, redirects never followed (a 3xx is just a non-2xx answer), at
most 64 KiB of the answer body read.

The deadline (10 s by default, TRACKGRADE_WEBHOOK_TIMEOUT) is a total one
over connecting, the TLS handshake, sending, the answer's head and its body:
a socket timeout alone bounds only each wait, so a receiver that trickles one
byte of its head every second would hold the attempt for ever. `Watchdog`
(one daemon thread for every attempt) shuts the connection down when its
deadline passes, whatever call is blocked on it; `HttpSender.abort_all`
does the same at once to that sender's attempts (the server stopping).
"""

from __future__ import annotations

import heapq
import http.client
import itertools
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Protocol, runtime_checkable
from urllib.parse import urlsplit

from trackgrade.retry_after import parse_retry_after
from trackgrade.server.webhooks.addresses import address_refusal, redacted, resolve

TIMEOUT_S = 10.0
MAX_ANSWER_BYTES = 64 * 1024
USER_AGENT = "trackgrade-webhooks/1"


@dataclass(frozen=True)
class SendResult:
    """One attempt's outcome: the receiver's status (None when there was no
    answer: refused, reset, timed out), Retry-After in seconds when given,
    and a short error text when there was no answer."""
    status: int | None
    retry_after: float | None = None
    error: str | None = None
    seconds: float = 0.0

    @property
    def acknowledged(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


@runtime_checkable
class WebhookSender(Protocol):
    def send(self, url: str, body: bytes, headers: dict[str, str], *,
             timeout: float = TIMEOUT_S, allow_private: bool = False) -> SendResult:
        """POST `body` with `headers` to `url`; never raises for network
        trouble (it is a SendResult with status None)."""


class HttpSender:
    """The real sender (see the module docstring)."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None = None) -> None:
        self._ssl = ssl_context or ssl.create_default_context()
        self._live: set[Watch] = set()          # this sender's attempts in flight
        self._lock = threading.Lock()

    def send(self, url: str, body: bytes, headers: dict[str, str], *,
             timeout: float = TIMEOUT_S, allow_private: bool = False) -> SendResult:
        started = time.monotonic()
        watch = WATCHDOG.watch(started + timeout)
        with self._lock:
            self._live.add(watch)
        try:
            conn, path = self._connection(url, timeout, allow_private, watch)
        except ValueError as exc:           # an unusable URL: a failed attempt, not a crash
            self._release(watch)
            return SendResult(None, None, _describe(exc), time.monotonic() - started)
        all_headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT,
                       "Connection": "close", **headers}
        try:
            conn.request("POST", path, body=body, headers=all_headers)
            answer = conn.getresponse()
            _drain(answer)
            if watch.fired:         # the head or body was cut short by the deadline
                raise socket.timeout("deadline passed")
            retry_after = parse_retry_after(answer.getheader("Retry-After"), time.time())
            return SendResult(answer.status, retry_after, None, time.monotonic() - started)
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if watch.fired or isinstance(exc, (socket.timeout, TimeoutError)):
                why = "stopping" if watch.aborted else f"timed out after {timeout:g} s"
                return SendResult(None, None, why, time.monotonic() - started)
            return SendResult(None, None, _describe(exc), time.monotonic() - started)
        finally:
            self._release(watch)
            conn.close()

    def abort_all(self) -> None:
        """End every attempt this sender has in flight now (the server is stopping)."""
        with self._lock:
            watches = list(self._live)
        for watch in watches:
            watch.aborted = True
            WATCHDOG.fire(watch)

    def _release(self, watch: "Watch") -> None:
        with self._lock:
            self._live.discard(watch)
        WATCHDOG.release(watch)

    def _connection(self, url: str, timeout: float, allow_private: bool, watch: "Watch"
                    ) -> tuple[http.client.HTTPConnection, str]:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {redacted(url)!r}")
        if parts.username is not None or parts.password is not None:
            raise ValueError("webhook URLs may not carry credentials")
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if parts.scheme == "https":
            conn = CheckedHTTPSConnection(parts.hostname, parts.port, timeout=timeout,
                                          context=self._ssl)
        else:
            conn = CheckedHTTPConnection(parts.hostname, parts.port, timeout=timeout)
        conn.allow_private = allow_private
        conn.watch = watch
        return conn, path


class Watch:
    """One attempt's deadline; `sock` (a duplicate of its connection's
    socket, so the TLS layer wrapping the original does not matter) is shut
    down when it fires."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.sock: socket.socket | None = None
        self.fired = False
        self.aborted = False
        self.done = False

    def left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0 or self.fired:
            raise socket.timeout("deadline passed")
        return left


class Watchdog:
    """Shuts down the connections of attempts past their deadline (see the
    module docstring): one daemon thread, a heap of deadlines."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, deadline: float) -> Watch:
        watch = Watch(deadline)
        with self._cond:
            heapq.heappush(self._heap, (deadline, next(self._order), watch))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="trackgrade-webhook-deadlines")
                self._thread.start()
            self._cond.notify()
        return watch

    def attach(self, watch: Watch, sock: socket.socket) -> None:
        """Watch `sock` (before any TLS wraps it); shut at once if already late."""
        with self._cond:
            watch.sock = sock.dup()
            late = watch.fired
        if late:
            _shut(watch.sock)

    def release(self, watch: Watch) -> None:
        with self._cond:
            watch.done = True
            sock, watch.sock = watch.sock, None
        if sock is not None:
            sock.close()

    def fire(self, watch: Watch) -> None:
        """Shut `watch`'s connection now (its deadline passed, or an abort)."""
        with self._cond:
            if watch.done:
                return
            watch.fired = True
            sock = watch.sock
        if sock is not None:
            _shut(sock)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap:
                    self._cond.wait()
                deadline, _, watch = self._heap[0]
                wait = deadline - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                heapq.heappop(self._heap)
            self.fire(watch)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


WATCHDOG = Watchdog()


def connect_checked(scheme: str, host: str, port: int, timeout: float,
                    allow_private: bool) -> socket.socket:
    """A connection to the first address `host` resolves to that a delivery
    may reach; ValueError naming why when none may."""
    addresses = resolve(host, port)
    if not addresses:
        raise OSError(f"cannot resolve {host}")
    refusals = []
    for address in addresses:
        why = address_refusal(scheme, address, allow_private=allow_private)
        if why is not None:
            refusals.append(why)
            continue
        return socket.create_connection((address, port), timeout=timeout)
    raise ValueError(refusals[0])


class CheckedHTTPConnection(http.client.HTTPConnection):
    allow_private = False
    watch: Watch

    def connect(self):
        self.sock = connect_checked("http", self.host, self.port, self.watch.left(),
                                    self.allow_private)
        WATCHDOG.attach(self.watch, self.sock)


class CheckedHTTPSConnection(http.client.HTTPSConnection):
    allow_private = False
    watch: Watch

    def connect(self):
        sock = connect_checked("https", self.host, self.port, self.watch.left(),
                               self.allow_private)
        WATCHDOG.attach(self.watch, sock)       # the handshake is inside the deadline
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def _drain(answer: http.client.HTTPResponse) -> None:
    read = 0
    while read < MAX_ANSWER_BYTES:
        chunk = answer.read1(min(16384, MAX_ANSWER_BYTES - read))
        if not chunk:
            return
        read += len(chunk)


def _describe(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:200]
