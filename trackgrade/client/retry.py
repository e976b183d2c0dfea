"""When to retry, how long to wait, and client-side pacing.

Retried (each with the same Idempotency-Key, if the request has one):
connection errors, 409 `idempotency_request_in_progress`, 429 (except
`daily_quota_exceeded`, which lasts until midnight UTC), 503 and every other
5xx. The wait is exponential backoff with "equal jitter" (half fixed, half
random), or the server's `Retry-After` when it sends one (capped at
`max_retry_after`, plus up to 10 % jitter so clients that were told the same
second do not return together).
"""

from __future__ import annotations

import random as _random
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable

from trackgrade.client.errors import APIConnectionError, APIError

NOT_RETRIED_429 = frozenset({"daily_quota_exceeded"})


def is_retryable(error: APIError) -> bool:
    """Whether the same request may succeed if sent again later."""
    if isinstance(error, APIConnectionError):
        return True
    status = error.status
    if status is None:
        return False
    if status == 409:
        return error.code == "idempotency_request_in_progress"
    if status == 429:
        return error.code not in NOT_RETRIED_429
    return status >= 500


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    base_delay: float = 0.5          # seconds before the first retry (before jitter)
    max_delay: float = 8.0           # backoff ceiling
    max_retry_after: float = 60.0    # the most of a server's Retry-After we honour

    def delay(self, retry: int, retry_after: float | None,
              rand: Callable[[], float] = _random.random) -> float:
        """Seconds to wait before retry number `retry` (0-based)."""
        if retry_after is not None:
            wait = min(self.max_retry_after, retry_after)
            return wait + min(wait * 0.1, 1.0) * rand()
        backoff = min(self.max_delay, self.base_delay * (2 ** retry))
        return backoff / 2 + (backoff / 2) * rand()


class Pacer:
    """Keeps this client within `per_minute` requests in any `window`-second
    span (61 s: a second of margin for network delay), so a fixed per-minute
    window on the server never sees more: bursts go at once, and once the
    budget is used each request waits for the oldest of the last `per_minute`
    to leave the window. Shared by every thread of one client."""

    def __init__(self, per_minute: int, *, window: float = 61.0,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if per_minute < 1:
            raise ValueError(f"per_minute must be at least 1, given {per_minute}")
        self.per_minute = int(per_minute)
        self.window = float(window)
        self._clock = clock
        self._sleep = sleep
        self._sent: deque[float] = deque()
        self._lock = threading.Lock()

    def wait(self) -> None:
        """Block until this caller may send its request (and count it as sent)."""
        with self._lock:
            now = self._clock()
            slot = now
            if len(self._sent) >= self.per_minute:
                slot = max(now, self._sent[-self.per_minute] + self.window)
            self._sent.append(slot)
            while len(self._sent) > self.per_minute:
                self._sent.popleft()
        if slot > now:
            self._sleep(slot - now)
