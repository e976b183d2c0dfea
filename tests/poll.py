"""Polls with deadlines for tests: wait for the event that proves the system
moved on, never for a fixed time."""

from __future__ import annotations

import time
from typing import Callable, TypeVar

T = TypeVar("T")


def wait_for(predicate: Callable[[], T], *, timeout: float = 10.0, interval: float = 0.01,
             what: str = "the condition") -> T:
    """Call `predicate` until it returns something true (returned), or fail
    with AssertionError naming `what` once `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(interval)
