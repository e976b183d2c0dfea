"""The transport seam: how a `Request` becomes a `Response`.

`Client` builds requests, retries and maps errors; a transport only moves
bytes. Two are provided:

- `HTTPTransport`: stdlib `http.client`, one keep-alive connection per host
  and thread (a stale keep-alive connection is reopened once, transparently).
- `WSGITransport(app)`: calls a WSGI app (e.g. `trackgrade.server.app.create_app`)
  in this process, no socket: for tests and embedding.

Write your own by implementing `handle(request) -> Response` (raise
`APIConnectionError` when no answer came) and `close()`.
"""

from __future__ import annotations

import http.client
import io
import socket
import threading
from dataclasses import dataclass, field
from typing import Mapping, Protocol, runtime_checkable
from urllib.parse import urlsplit

from trackgrade.client.errors import APIConnectionError, header


@dataclass(frozen=True)
class Request:
    method: str
    url: str                                  # absolute: scheme://host[:port]/path?query
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    timeout: float = 30.0                     # seconds, per socket operation


@dataclass(frozen=True)
class Response:
    status: int
    headers: Mapping[str, str]
    body: bytes

    def header(self, name: str) -> str | None:
        return header(self.headers, name)


@runtime_checkable
class Transport(Protocol):
    def handle(self, request: Request) -> Response:
        """Send one request; raise `APIConnectionError` if no answer came."""

    def close(self) -> None:
        """Release connections."""


_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
          ConnectionAbortedError)


class HTTPTransport:
    """http.client with keep-alive, one connection per (scheme, host, port) per thread."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._all: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def _connection(self, scheme: str, host: str, port: int | None,
                    timeout: float) -> tuple[http.client.HTTPConnection, bool]:
        pool = getattr(self._local, "pool", None)
        if pool is None:
            pool = self._local.pool = {}
        key = (scheme, host, port)
        conn = pool.get(key)
        if conn is not None:
            conn.timeout = timeout
            if conn.sock is not None:
                conn.sock.settimeout(timeout)
            return conn, True
        cls = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
        conn = cls(host, port, timeout=timeout)
        pool[key] = conn
        with self._lock:
            self._all.append(conn)
        return conn, False

    def _drop(self, scheme: str, host: str, port: int | None) -> None:
        conn = getattr(self._local, "pool", {}).pop((scheme, host, port), None)
        if conn is not None:
            conn.close()

    def handle(self, request: Request) -> Response:
        parts = urlsplit(request.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise APIConnectionError(f"cannot reach {request.url!r}: not an http(s) URL")
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        where = (parts.scheme, parts.hostname, parts.port)
        for attempt in (0, 1):
            conn, reused = self._connection(*where, request.timeout)
            try:
                conn.request(request.method, target, body=request.body,
                             headers=dict(request.headers))
                reply = conn.getresponse()
                body = reply.read()
                headers = {k: v for k, v in reply.getheaders()}
                if reply.will_close:
                    self._drop(*where)
                return Response(reply.status, headers, body)
            except _STALE as exc:
                self._drop(*where)
                if reused and attempt == 0:
                    continue          # the server closed an idle keep-alive connection
                raise APIConnectionError(_reason(request, exc)) from exc
            except (OSError, http.client.HTTPException) as exc:
                self._drop(*where)
                raise APIConnectionError(_reason(request, exc)) from exc
        raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            conn.close()


def _reason(request: Request, exc: BaseException) -> str:
    parts = urlsplit(request.url)
    where = f"{parts.scheme}://{parts.netloc}"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        what = f"no answer within {request.timeout:g} s"
    elif isinstance(exc, ConnectionRefusedError):
        what = "connection refused"
    else:
        what = str(exc) or type(exc).__name__
    return f"cannot reach {where}: {what}"


class WSGITransport:
    """Run requests through a WSGI app in this process (no network)."""

    def __init__(self, app) -> None:
        self.app = app

    def handle(self, request: Request) -> Response:
        from werkzeug.test import EnvironBuilder, run_wsgi_app

        parts = urlsplit(request.url)
        headers = dict(request.headers)
        content_type = header(headers, "Content-Type")
        builder = EnvironBuilder(
            path=parts.path or "/", query_string=parts.query, method=request.method,
            base_url=f"{parts.scheme}://{parts.netloc}",
            headers={k: v for k, v in headers.items() if k.lower() != "content-type"},
            input_stream=io.BytesIO(request.body or b""),
            content_length=len(request.body or b""), content_type=content_type)
        try:
            environ = builder.get_environ()
        finally:
            builder.close()
        app_iter, status, reply_headers = run_wsgi_app(self.app, environ, buffered=True)
        try:
            body = b"".join(app_iter)
        finally:
            close = getattr(app_iter, "close", None)
            if close is not None:
                close()
        return Response(int(status.split(" ", 1)[0]), dict(reply_headers.items()), body)

    def close(self) -> None:
        pass
