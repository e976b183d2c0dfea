"""When to try a delivery again (CONTRACT.md "webhook retries" and
"receiver answers").

    DEFAULT_SCHEDULE   attempts at 0 s, then 10 s, 1 min, 5 min, 30 min, 2 h,
                       5 h, 10 h, 14 h, 20 h and 24 h after the previous one
                       (about 3.2 days in all): 11 attempts
    jitter             each wait gets up to +10 % at random, so a receiver
                       that comes back is not hit by every retry at once
    Retry-After        on a 429 or 503 answer the receiver's wait (seconds or
                       an HTTP date) replaces the schedule's, capped at 1 h

`TRACKGRADE_WEBHOOK_SCHEDULE` ("0,1,2": comma-separated seconds, the first
the wait before the first attempt) replaces the schedule, e.g. in tests.
"""

from __future__ import annotations

import random

DEFAULT_SCHEDULE: tuple[float, ...] = (0, 10, 60, 300, 1800, 7200, 18000, 36000, 50400,
                                       72000, 86400)
JITTER = 0.10
RETRY_AFTER_CAP = 3600.0
RETRY_AFTER_STATUSES = (429, 503)


def parse_schedule(text: str | None) -> tuple[float, ...]:
    """The schedule of a TRACKGRADE_WEBHOOK_SCHEDULE value ("" or None:
    the default). Raises ValueError naming the bad entry."""
    if text is None or not text.strip():
        return DEFAULT_SCHEDULE
    waits = []
    for part in text.split(","):
        try:
            wait = float(part)
        except ValueError:
            raise ValueError(f"TRACKGRADE_WEBHOOK_SCHEDULE: {part.strip()!r} is not a number of "
                             f"seconds (expected e.g. '0,10,60')") from None
        if not 0 <= wait < 10 * 86400:
            raise ValueError(f"TRACKGRADE_WEBHOOK_SCHEDULE: {wait:g} s is out of range")
        waits.append(wait)
    return tuple(waits)


def jittered(wait: float, rng: random.Random) -> float:
    """`wait` plus up to 10 % at random."""
    return wait * (1.0 + JITTER * rng.random())


def next_wait(attempts: int, schedule: tuple[float, ...], rng: random.Random, *,
              status: int | None = None, retry_after: float | None = None) -> float | None:
    """Seconds until the next attempt after `attempts` failed ones, or None
    when the schedule is used up (the delivery has failed for good)."""
    if attempts >= len(schedule):
        return None
    if status in RETRY_AFTER_STATUSES and retry_after is not None:
        return min(max(0.0, retry_after), RETRY_AFTER_CAP)
    return jittered(schedule[attempts], rng)
