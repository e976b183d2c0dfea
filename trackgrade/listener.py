"""A local webhook receiver for development (`trackgrade listen`).

It accepts POSTs on loopback, verifies each one over the raw body
(Service-Signature, else the Standard Webhooks headers), reports it to a
callback as a `Received`, and answers the sender:

    invalid signature       400 {"error": {"reason", "message"}}; never forwarded
    valid, no --forward     200 {"received": true}
    valid, --forward URL    the raw body and every header are POSTed to URL (the
                            developer's own handler, which can verify them too);
                            its status, Content-Type and body go back to the sender.
                            Unreachable or timed out: 502. Redirects not followed.

    server = ListenServer(secret, on_delivery=print, forward="http://127.0.0.1:5000/hooks")
    server.serve_forever()
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable
from urllib.parse import urlsplit

from trackgrade import signing
from trackgrade.display import escape_controls

FORWARD_TIMEOUT_S = 10.0
MAX_BODY_BYTES = 16 * 1024 * 1024
HOP_HEADERS = frozenset({"host", "content-length", "connection", "transfer-encoding",
                         "keep-alive", "proxy-connection", "upgrade", "te", "trailer"})


@dataclass
class Received:
    """One delivery as the listener saw it."""
    received_at: float
    headers: dict
    body: bytes
    verified: bool
    reason: str | None = None
    message: str | None = None
    event: object = None
    answer_status: int = 200
    forward_error: str | None = None
    extra: dict = field(default_factory=dict)


def verify_delivery(secret: str, headers: dict, body: bytes, *, tolerance: float,
                    now: float | None = None) -> object:
    """The event of a delivery: Service-Signature when present, else the
    Standard Webhooks headers. Raises signing.SignatureError."""
    lower = {k.lower(): v for k, v in headers.items()}
    header = lower.get(signing.SIGNATURE_HEADER.lower())
    if header is not None or "webhook-signature" not in lower:
        return signing.verify(secret, header or "", body, tolerance=tolerance, now=now)
    return signing.verify_standard(secret, lower, body, tolerance=tolerance, now=now)


def forward(url: str, headers: dict, body: bytes, *,
            timeout: float = FORWARD_TIMEOUT_S) -> tuple[int, str, bytes]:
    """POST the delivery to `url` as received: (status, content type, body).
    Raises OSError / http.client.HTTPException when there is no answer."""
    parts = urlsplit(url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = cls(parts.hostname, parts.port, timeout=timeout)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    sent = {k: v for k, v in headers.items() if k.lower() not in HOP_HEADERS}
    try:
        conn.request("POST", path, body=body, headers=sent)
        answer = conn.getresponse()
        return (answer.status, answer.getheader("Content-Type") or "text/plain",
                answer.read(MAX_BODY_BYTES))
    finally:
        conn.close()


class ListenServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, secret: str, *, host: str = "127.0.0.1", port: int = 0,
                 forward_url: str | None = None, tolerance: float = signing.DEFAULT_TOLERANCE,
                 on_delivery: Callable[[Received], None] = lambda received: None) -> None:
        self.secret = secret
        self.forward_url = forward_url
        self.tolerance = tolerance
        self.on_delivery = on_delivery
        self._report_lock = threading.Lock()
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def handle_delivery(self, headers: dict, body: bytes) -> tuple[int, str, bytes, Received]:
        received = Received(time.time(), headers, body, verified=False)
        try:
            received.event = verify_delivery(self.secret, headers, body,
                                             tolerance=self.tolerance)
            received.verified = True
        except signing.SignatureError as err:
            received.reason, received.message = err.reason, err.message
            payload = json.dumps({"error": {"reason": err.reason, "message": err.message}})
            received.answer_status = 400
            return 400, "application/json", payload.encode(), received
        if not self.forward_url:
            return 200, "application/json", b'{"received":true}', received
        try:
            status, ctype, answer = forward(self.forward_url, headers, body)
        except (OSError, http.client.HTTPException) as exc:
            received.forward_error = f"{type(exc).__name__}: {exc}"
            received.answer_status = 502
            payload = json.dumps({"error": {"reason": "forward_failed",
                                            "message": received.forward_error}})
            return 502, "application/json", payload.encode(), received
        received.answer_status = status
        return status, ctype, answer, received

    def report(self, received: Received) -> None:
        with self._report_lock:
            self.on_delivery(received)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ListenServer

    def do_POST(self):  # noqa: N802 - http.server's name
        try:
            size = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            size = -1
        if not 0 <= size <= MAX_BODY_BYTES:
            self._answer(413 if size > 0 else 411, "application/json",
                         b'{"error":{"reason":"bad_length"}}')
            return
        body = self.rfile.read(size)
        status, ctype, payload, received = self.server.handle_delivery(dict(self.headers.items()),
                                                                       body)
        self._answer(status, ctype, payload)
        self.server.report(received)

    def do_GET(self):  # noqa: N802
        self._answer(405, "application/json", b'{"error":{"reason":"post_only"}}',
                     {"Allow": "POST"})

    def _answer(self, status: int, ctype: str, payload: bytes, extra: dict | None = None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def summary(received: Received) -> str:
    """One readable line: time, type, id, analysis, score or error, verdict;
    every text from the delivery with its control characters escaped (an
    external_id's escape sequence or right-to-left override never reaches
    the terminal as such)."""
    return escape_controls(_summary(received))


def _summary(received: Received) -> str:
    stamp = datetime.fromtimestamp(received.received_at, timezone.utc).strftime("%H:%M:%S")
    if not received.verified:
        return f"{stamp}  REJECTED  {received.reason}: {received.message}  -> 400"
    event = received.event if isinstance(received.event, dict) else {}
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    parts = [stamp, str(event.get("type", "?")), str(event.get("id", "?"))]
    if event.get("livemode") is False:
        parts.append("test")
    if str(event.get("type", "")).startswith("analysis."):
        parts.append(f"analysis {data.get('id', '?')}")
        if data.get("external_id"):
            parts.append(f"external_id {data['external_id']}")
        if isinstance(data.get("error"), dict):
            parts.append(f"error {data['error'].get('code')}")
        elif data.get("score") is not None:
            grade = data.get("grade") if isinstance(data.get("grade"), dict) else {}
            parts.append(f"score {data['score']} ({grade.get('letter', '?')})")
    elif "credits_remaining" in data:
        parts.append(f"credits {data['credits_remaining']} (threshold {data.get('threshold')})")
    parts.append("signature ok")
    tail = f"-> {received.answer_status}"
    if received.forward_error:
        tail += f" (forward failed: {received.forward_error})"
    return "  ".join(parts) + "  " + tail


def json_line(received: Received) -> str:
    """The --json form: one object per delivery, the raw body as received."""
    return json.dumps({"received_at": received.received_at, "verified": received.verified,
                       "reason": received.reason, "answer_status": received.answer_status,
                       "forward_error": received.forward_error,
                       "body": received.body.decode("utf-8", "replace")},
                      separators=(",", ":"))
