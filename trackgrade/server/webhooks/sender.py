"""The `WebhookSender` seam: POST one signed body to one URL, report what
the receiver answered. The dispatcher never talks HTTP itself.

`HttpSender` is the real one (stdlib `http.client`): a fresh connection per
attempt to an address checked as it connects (`addresses.address_refusal`:
the name is resolved here and the checked address is the one connected to,
so a name re-pointed at a private address is refused), TLS verified for
https://, a total deadline (10 s by default) over
connecting, sending and reading the answer, redirects never followed (a 3xx
is just a non-2xx answer), at most 64 KiB of the answer body read.
"""

from __future__ import annotations

import http.client
import socket
import ssl
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

    def send(self, url: str, body: bytes, headers: dict[str, str], *,
             timeout: float = TIMEOUT_S, allow_private: bool = False) -> SendResult:
        started = time.monotonic()
        deadline = started + timeout
        try:
            conn, path = self._connection(url, timeout, allow_private)
        except ValueError as exc:           # an unusable URL: a failed attempt, not a crash
            return SendResult(None, None, _describe(exc), time.monotonic() - started)
        all_headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT,
                       "Connection": "close", **headers}
        try:
            conn.request("POST", path, body=body, headers=all_headers)
            _shorten(conn, deadline)
            answer = conn.getresponse()
            _drain(answer, conn, deadline)
            retry_after = parse_retry_after(answer.getheader("Retry-After"), time.time())
            return SendResult(answer.status, retry_after, None, time.monotonic() - started)
        except (socket.timeout, TimeoutError):
            return SendResult(None, None, f"timed out after {timeout:g} s",
                              time.monotonic() - started)
        except (OSError, http.client.HTTPException, ValueError) as exc:
            return SendResult(None, None, _describe(exc), time.monotonic() - started)
        finally:
            conn.close()


    def _connection(self, url: str, timeout: float, allow_private: bool
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
        return conn, path


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

    def connect(self):
        self.sock = connect_checked("http", self.host, self.port, self.timeout,
                                    self.allow_private)


class CheckedHTTPSConnection(http.client.HTTPSConnection):
    allow_private = False

    def connect(self):
        sock = connect_checked("https", self.host, self.port, self.timeout, self.allow_private)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def _shorten(conn: http.client.HTTPConnection, deadline: float) -> None:
    """Give the next socket wait only what is left of the total deadline."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise socket.timeout("deadline passed")
    if conn.sock is not None:
        conn.sock.settimeout(left)


def _drain(answer: http.client.HTTPResponse, conn, deadline: float) -> None:
    read = 0
    while read < MAX_ANSWER_BYTES:
        _shorten(conn, deadline)
        chunk = answer.read1(min(16384, MAX_ANSWER_BYTES - read)) \
            if hasattr(answer, "read1") else answer.read(16384)
        if not chunk:
            return
        read += len(chunk)


def _describe(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:200]
