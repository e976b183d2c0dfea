"""Per-key request windows and the X-RateLimit headers (spec 7.3, CONTRACT.md).

`MinuteWindow` is a fixed window per API key, aligned to the clock's minute:
`X-RateLimit-Reset` is the Unix second the current minute ends. Requests over
the ceiling are answered 429 `rate_limited` and are not counted. The window
lives in memory (one server process owns it; a restart opens a fresh window).
`StoreMinuteWindow` is the same window kept in the store's "counters"
collection (one small row per key, locked for the read-modify-write), for
several servers sharing one database: the limit holds across all of them.

`limits_for(settings, mode)` gives the three ceilings of a key: per minute,
in flight, per UTC day (None: no daily quota, as for test keys).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from trackgrade.config import Settings
from trackgrade.errors import TrackgradeError
from trackgrade.server.clock import Clock
from trackgrade.server.store import Store

WINDOW_SECONDS = 60


@dataclass(frozen=True)
class Limits:
    per_minute: int
    in_flight: int
    daily: int | None


def limits_for(settings: Settings, mode: str) -> Limits:
    if mode == "test":
        return Limits(settings.test_rate_per_minute, settings.test_in_flight, None)
    return Limits(settings.rate_per_minute, settings.in_flight, settings.daily_quota)


@dataclass(frozen=True)
class WindowState:
    limit: int
    remaining: int
    reset: int               # Unix seconds

    def headers(self) -> dict[str, str]:
        return {"X-RateLimit-Limit": str(self.limit),
                "X-RateLimit-Remaining": str(self.remaining),
                "X-RateLimit-Reset": str(self.reset)}


def over_limit(limit: int, now: float, reset: int) -> TrackgradeError:
    state = WindowState(limit, 0, reset)
    return TrackgradeError(
        "rate_limited", f"more than {limit} requests this minute for this key; "
        f"retry after the window resets", headers={
            **state.headers(), "Retry-After": str(retry_after(now, reset))})


class MinuteWindow:
    """Fixed one-minute windows per key (thread-safe)."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._counts: dict[str, tuple[int, int]] = {}   # key -> (window index, count)

    def hit(self, key: str, limit: int) -> WindowState:
        """Count one request; raise 429 `rate_limited` (not counted) when over."""
        now = self._clock.time()
        window = int(now // WINDOW_SECONDS)
        reset = (window + 1) * WINDOW_SECONDS
        with self._lock:
            index, count = self._counts.get(key, (window, 0))
            if index != window:
                count = 0
            if count >= limit:
                raise over_limit(limit, now, reset)
            self._counts[key] = (window, count + 1)
            if len(self._counts) > 100_000:
                self._forget_old(window)
        return WindowState(limit, limit - count - 1, reset)

    def _forget_old(self, window: int) -> None:
        for key in [k for k, (i, _) in self._counts.items() if i != window]:
            del self._counts[key]


class StoreMinuteWindow:
    """`MinuteWindow` in the store: shared by every server on it."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    def hit(self, key: str, limit: int) -> WindowState:
        now = self._clock.time()
        window = int(now // WINDOW_SECONDS)
        reset = (window + 1) * WINDOW_SECONDS
        with self._store.transaction(durable=False) as txn:   # a lost count is harmless
            doc = txn.get("counters", f"rate:{key}") or {"id": f"rate:{key}"}
            count = int(doc.get("count", 0)) if doc.get("window") == window else 0
            if count < limit:
                txn.put("counters", {"id": doc["id"], "window": window, "count": count + 1})
        if count >= limit:
            raise over_limit(limit, now, reset)
        return WindowState(limit, limit - count - 1, reset)


def retry_after(now: float, until: float) -> int:
    """Whole seconds to wait, at least 1."""
    return max(1, math.ceil(until - now))
