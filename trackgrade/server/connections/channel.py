"""waitress's channel and parser, guarded (see the package docstring).

`GuardedParser` asks the server's `Gate` about a request the moment its head
is complete, before a body byte is buffered; a refusal completes the request
with a `RefusedError` (answered by `EnvelopeErrorTask`) and the connection
stops parsing: what the client still sends is read and dropped, and once the
answer is out the connection is half-closed and drained for `LINGER_S` so the
client reads the answer instead of a reset.

`GuardedChannel` counts connections per client address (over the cap: an
immediate 429 envelope) and carries the timestamps `enforce_deadlines`
checks once a second on the server's loop thread.
"""

from __future__ import annotations

import http
import json
import logging
import socket
import time

from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.task import ErrorTask
from waitress.utilities import Error

from trackgrade.errors import TrackgradeError
from trackgrade.server.connections.admission import Admission, Head, Refused, budget_full
from trackgrade.server.envelope import error_body, new_request_id

access_log = logging.getLogger("trackgrade.access")

LINGER_S = 2.0
RATE_WINDOW_S = 5.0
CROWDED_IDLE_S = 5.0         # idle keep-alive once half the connection cap is open

# waitress error status -> our code (status follows from the code)
_WAITRESS_CODES = {400: "parameter_invalid", 413: "request_too_large", 431: "request_too_large",
                   501: "parameter_invalid"}


class RefusedError(Error):
    """A `Refused` as waitress's request error."""

    def __init__(self, refused: Refused) -> None:
        super().__init__(refused.error.message)
        self.refused = refused
        self.code = refused.error.http_status
        self.reason = _phrase(self.code)


def _phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def envelope_parts(err: TrackgradeError, docs_url: str | None
                   ) -> tuple[str, list[tuple[str, str]], bytes]:
    """(status line, headers, body) of `err` as our envelope, with an X-Request-Id."""
    request_id = new_request_id()
    body = json.dumps(error_body(err.code, err.message, param=err.param, request_id=request_id,
                                 docs_url=docs_url)).encode("utf-8")
    headers = [("Content-Type", "application/json"), ("X-Request-Id", request_id),
               *err.headers.items()]
    return f"{err.http_status} {_phrase(err.http_status)}", headers, body


class EnvelopeErrorTask(ErrorTask):
    """waitress's framing errors and our refusals as the envelope (with X-Request-Id)."""

    def execute(self):
        error = self.request.error
        docs_url = getattr(self.channel.server, "trackgrade_docs_url", None)
        if isinstance(error, RefusedError):
            err = error.refused.error
            if error.refused.after is not None:
                error.refused.after()
        else:
            code = _WAITRESS_CODES.get(error.code, "api_error")
            err = TrackgradeError(code, f"{error.reason}: {error.body}".strip().rstrip(":"))
        status, headers, body = envelope_parts(err, docs_url)
        if access_log.isEnabledFor(logging.INFO):   # as the app logs its answers
            started = getattr(self.request, "started", None)
            access_log.info("%s %s %d %.1fms %s", getattr(self.request, "command", None) or "-",
                            getattr(self.request, "path", None) or "-", err.http_status,
                            (time.monotonic() - started) * 1e3 if started else 0.0,
                            dict(headers)["X-Request-Id"])
        self.status = status
        self.response_headers.extend(headers)
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class GuardedParser(HTTPRequestParser):
    """A request parser that lets the gate refuse the request from its head."""

    admission: Admission | None = None
    reserved = 0

    def __init__(self, adj, channel: "GuardedChannel") -> None:
        super().__init__(adj)
        self.channel = channel
        self.started = time.monotonic()
        self.checkpoint = (self.started, 0)

    def received(self, data: bytes) -> int:
        in_head = self.body_rcv is None and not self.completed
        consumed = super().received(data)
        if self.completed:
            self.channel.answered_any = True       # idle keep-alive: channel_timeout's job
        try:
            if in_head and self.headers_finished:
                self._head_complete()
            elif not in_head and self.admission is not None and not self.error:
                self._body_grew()
        except Refused as refused:
            self._refuse(refused)
            return len(data)          # the rest of this read is dropped, not parsed
        return consumed

    def _head_complete(self) -> None:
        self.checkpoint = (time.monotonic(), 0)
        if _both_framings(self):
            # RFC 9112 6.1: the body is framed by Transfer-Encoding (waitress
            # does), and the connection must close after this answer
            self.connection_close = True
            self.headers["CONNECTION"] = "close"
        declared = self.content_length if not self.chunked else 0
        if not (self.chunked or declared > 0) or self.empty:
            return
        if self.error is not None and not _is_body_size_error(self.error):
            return                    # a framing error: waitress's answer stands
        gate = self.channel.gate
        self.admission = gate.admit(Head(self.command, self.path, self.headers, declared,
                                         self.chunked))
        if declared:
            self._reserve(declared)

    def _reserve(self, size: int) -> None:
        """Hold `size` body bytes in all (more as a chunked body grows)."""
        budget = self.channel.gate.budget
        full = budget.reserve(size - self.reserved, self.admission.owners)
        if full is not None:
            raise budget_full(size, budget, full)
        self.reserved = size

    def _body_grew(self) -> None:
        size = self.body_bytes_received
        self.admission.size_check(size)
        if self.chunked and size > self.reserved:
            self._reserve(size)

    def _refuse(self, refused: Refused) -> None:
        self.error = RefusedError(refused)
        self.completed = True
        self.expect_continue = False          # never invite the body of a refused request
        self.channel.discarding = True
        self._release()

    def _release(self) -> None:
        if self.reserved:
            self.channel.gate.budget.release(self.reserved, self.admission.owners)
            self.reserved = 0

    def close(self) -> None:
        self._release()
        super().close()


def _both_framings(parser: HTTPRequestParser) -> bool:
    """Content-Length beside Transfer-Encoding (waitress pops the latter from
    an HTTP/1.1 head once it has read it as chunked)."""
    headers = parser.headers
    return "CONTENT_LENGTH" in headers and (parser.chunked or "TRANSFER_ENCODING" in headers)


def _is_body_size_error(error) -> bool:
    return getattr(error, "code", None) == 413 and not isinstance(error, RefusedError)


class GuardedChannel(HTTPChannel):
    """A connection with the gate's admission, per-address cap and deadlines."""

    error_task_class = EnvelopeErrorTask
    discarding = False        # a request was refused: read and drop what follows
    lingering_until = 0.0     # half-closed after the refusal, draining until then
    counted = False

    def __init__(self, server, sock, addr, adj, map=None) -> None:
        self.gate = server.trackgrade_gate
        self.opened = time.monotonic()
        self.answered_any = False
        super().__init__(server, sock, addr, adj, map=map)
        self.parser_class = lambda adj: GuardedParser(adj, self)
        self.address = addr[0] if isinstance(addr, tuple) else str(addr)
        self.counted = True
        if not self.gate.connections.open(self.address):
            self._answer_now(TrackgradeError(
                "rate_limited", f"too many open connections from {self.address} (at most "
                f"{self.gate.settings.max_connections_per_address}); close some and retry",
                headers={"Retry-After": "1"}))

    def _answer_now(self, err: TrackgradeError) -> None:
        status, headers, body = envelope_parts(err, getattr(self.server, "trackgrade_docs_url",
                                                            None))
        head = "".join(f"{k}: {v}\r\n" for k, v in
                       [*headers, ("Content-Length", str(len(body))), ("Connection", "close")])
        data = f"HTTP/1.1 {status}\r\n{head}\r\n".encode("latin-1") + body
        with self.outbuf_lock:
            self.outbufs[-1].append(data)
            self.current_outbuf_count += len(data)
            self.total_outbufs_len += len(data)
        self.discarding = True
        self.close_when_flushed = True

    def received(self, data):
        if self.discarding:
            return False
        return super().received(data)

    def readable(self):
        if self.lingering_until or (self.discarding and self.connected):
            return True
        return super().readable()

    def writable(self):
        if self.lingering_until:
            return False
        return super().writable()

    def handle_read(self):
        if not self.discarding:
            return super().handle_read()
        try:
            data = self.recv(self.adj.recv_bytes)
        except OSError:
            return self.close_now()
        if not data:
            self.close_now()

    def handle_close(self):
        """After a refusal: half-close once the answer is out and drain."""
        if self.discarding and not self.lingering_until and self.connected \
                and not self.total_outbufs_len and self.socket is not None:
            try:
                self.socket.shutdown(socket.SHUT_WR)
            except OSError:
                return self.close_now()
            self.will_close = False
            self.lingering_until = time.monotonic() + LINGER_S
            return
        self.close_now()

    def close_now(self) -> None:
        request, self.request = self.request, None
        if request is not None:
            request.close()               # returns its budget reservation
        super().handle_close()

    def del_channel(self, map=None):
        if self.counted:
            self.counted = False
            self.gate.connections.close(self.address)
        super().del_channel(map)


def idle_timeout(open_channels: int, max_connections: int, channel_timeout: float) -> float:
    """How long an idle keep-alive connection is kept: `channel_timeout`, or
    CROWDED_IDLE_S once half of `max_connections` are open (idle connections
    then make room for new clients instead of holding the cap)."""
    if max_connections > 0 and open_channels * 2 >= max_connections:
        return min(channel_timeout, CROWDED_IDLE_S)
    return channel_timeout


def enforce_deadlines(server, now: float) -> None:
    """Once a second on the loop thread: a head must be complete within
    `head_timeout` of its first byte (of the connection, for its first
    request); a body must arrive at `min_body_rate` bytes/s or more, measured
    over windows of RATE_WINDOW_S, and an upload's body before its analysis
    stops awaiting bytes (its token's deadline: then its reservation is
    returned at once); an idle keep-alive connection is closed sooner when
    many are open (`idle_timeout`); a drained refusal ends after LINGER_S."""
    gate = server.trackgrade_gate
    settings = gate.settings
    mono = time.monotonic()
    idle_limit = idle_timeout(len(server.active_channels), settings.max_connections,
                              server.adj.channel_timeout)
    for channel in list(server.active_channels.values()):
        if not isinstance(channel, GuardedChannel):
            continue
        if channel.lingering_until:
            if mono >= channel.lingering_until:
                channel.close_now()
            continue
        if channel.requests or channel.discarding:
            # not reading while a request is served: the clocks of the next one wait too
            if channel.request is not None:
                channel.request.started = mono
                channel.request.checkpoint = (mono, channel.request.body_bytes_received)
            continue
        request = channel.request
        if request is None:
            if not channel.answered_any and mono - channel.opened > settings.head_timeout:
                channel.will_close = True
            elif channel.answered_any and now - channel.last_activity > idle_limit:
                channel.will_close = True        # idle keep-alive, crowded server
            continue
        if not request.headers_finished:
            if mono - request.started > settings.head_timeout:
                channel.will_close = True
            continue
        if request.admission is not None and gate.expired(request.admission):
            request.close()                  # the reservation is returned now
            channel.will_close = True
            continue
        since, seen = request.checkpoint
        if mono - since >= RATE_WINDOW_S:
            if request.body_bytes_received - seen < settings.min_body_rate * (mono - since):
                channel.will_close = True
            else:
                request.checkpoint = (mono, request.body_bytes_received)
