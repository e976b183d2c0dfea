"""The injectable clock (STYLE.md habit 6).

Everything time-dependent in the server (created_at stamps, idempotency
expiry, rate windows, daily quotas, webhook backoff, upload-token expiry)
asks a `Clock`, never `datetime.now()` or `time.time()` directly, so tests
move time with a `FixedClock` instead of sleeping.
"""

from __future__ import annotations

import threading
import time as _time
from datetime import datetime, timedelta, timezone
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    """A source of the current time."""

    def now(self) -> datetime:
        """The current time as an aware UTC datetime."""

    def time(self) -> float:
        """The current time as Unix seconds (float)."""


class SystemClock:
    """The real wall clock."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)

    def time(self) -> float:
        return _time.time()


class FixedClock:
    """A clock that only moves when told to (thread-safe).

    >>> clock = FixedClock(1_700_000_000)
    >>> clock.advance(90); clock.time()
    1700000090.0
    """

    def __init__(self, start: float | datetime = 1_700_000_000.0) -> None:
        self._lock = threading.Lock()
        self._t = _to_unix(start)

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.time(), timezone.utc)

    def time(self) -> float:
        with self._lock:
            return self._t

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._t += float(seconds)

    def set(self, when: float | datetime) -> None:
        with self._lock:
            self._t = _to_unix(when)


def _to_unix(when: float | datetime) -> float:
    if isinstance(when, datetime):
        if when.tzinfo is None:
            raise ValueError(f"naive datetime given: {when!r}; pass an aware UTC datetime")
        return when.timestamp()
    return float(when)


def isoformat(when: datetime) -> str:
    """The store's and the API's date-time text: UTC, microseconds, `Z`.

    Fixed width, so the strings sort in time order (the store's ordered
    indexes compare `created_at` as text): `2026-11-23T00:43:16.123456Z`.
    """
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def utc_day_start(when: datetime) -> datetime:
    """Midnight UTC of the day containing `when` (the daily-quota window)."""
    day = when.astimezone(timezone.utc)
    return day.replace(hour=0, minute=0, second=0, microsecond=0)


def next_utc_day(when: datetime) -> datetime:
    """Midnight UTC after `when` (when a daily quota resets)."""
    return utc_day_start(when) + timedelta(days=1)
