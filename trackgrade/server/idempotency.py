"""Idempotency-Key handling for POST /analyses (spec 4.1, 7.2; CONTRACT.md).

- The key is scoped to the API key: `scope(key_id, idempotency_key)`.
- The fingerprint is the method, the path and the *parsed* body (so key
  order and whitespace do not matter).
- While the first request with a key runs, a repeat gets 409
  `idempotency_request_in_progress` (`InFlightKeys`, in memory: a request in
  progress cannot outlive the process).
- The finished response (status + body) is stored by the store in the same
  write as the analysis it created, so a crash after a 202 cannot turn a
  retry into a second analysis. A stored response replays within the window
  (24 h by default) with a fresh X-Request-Id and `Idempotent-Replayed:
  true`; a different fingerprint gets 409 `idempotency_key_reused`. 400s,
  429s and 5xx are never stored, so a retry runs again.
"""

from __future__ import annotations

import hashlib
import json
import threading
from contextlib import contextmanager
from typing import Iterator

from trackgrade.errors import TrackgradeError

HEADER = "Idempotency-Key"
MAX_LENGTH = 255


def parse_key(value: str | None) -> str:
    """Validate the header: present, 1-255 printable characters."""
    if value is None or value.strip() == "":
        raise TrackgradeError("parameter_missing", f"the {HEADER} header is required on "
                              "POST /analyses", param=HEADER)
    if len(value) > MAX_LENGTH:
        raise TrackgradeError("parameter_invalid", f"{HEADER} may be at most {MAX_LENGTH} "
                              f"characters (given {len(value)})", param=HEADER)
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise TrackgradeError("parameter_invalid", f"{HEADER} contains control characters",
                              param=HEADER)
    return value


def scope(key_id: str, idempotency_key: str) -> str:
    """The stored key: the API key's id and the client's key, hashed to a fixed size."""
    digest = hashlib.sha256(f"{key_id}\x00{idempotency_key}".encode("utf-8")).hexdigest()
    return f"idem_{digest}"


def fingerprint(method: str, path: str, body: object) -> str:
    text = json.dumps([method.upper(), path, body], sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def storable(status: int) -> bool:
    """Which outcomes are remembered: not 400s, not 429s, not 5xx."""
    return status < 500 and status not in (400, 429)


def check_replay(record: dict | None, fp: str, now: float, ttl: float) -> dict | None:
    """The stored response to replay, or None to run the request; 409 on a
    different fingerprint. `record` has `fingerprint`, `status`, `body`, `created`."""
    if record is None or now - float(record["created"]) > ttl:
        return None
    if record["fingerprint"] != fp:
        raise TrackgradeError("idempotency_key_reused", "this Idempotency-Key was used with a "
                              "different request body; use a new key for a new request",
                              param=HEADER)
    return record


class InFlightKeys:
    """Scopes whose first request is still running (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, str] = {}

    @contextmanager
    def claim(self, key_scope: str, fp: str) -> Iterator[None]:
        with self._lock:
            running = self._running.get(key_scope)
            if running is not None:
                if running == fp:
                    raise TrackgradeError(
                        "idempotency_request_in_progress", "a request with this "
                        "Idempotency-Key is still in progress; retry shortly to get its "
                        "response", param=HEADER, headers={"Retry-After": "1"})
                raise TrackgradeError("idempotency_key_reused", "this Idempotency-Key is in "
                                      "use by a request with a different body", param=HEADER)
            self._running[key_scope] = fp
        try:
            yield
        finally:
            with self._lock:
                self._running.pop(key_scope, None)
