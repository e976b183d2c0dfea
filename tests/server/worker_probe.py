"""Functions a spawned analysis worker runs for tests/server/test_worker_one_core.py
(module-level so they pickle)."""

from __future__ import annotations

import threading


def threads_started_by(fn, *args) -> tuple[int, object]:
    """(threads started while `fn(*args)` ran, its result), in this process."""
    started = []
    original = threading.Thread.start

    def counting(self, *a, **kw):
        started.append(self.name)
        return original(self, *a, **kw)

    threading.Thread.start = counting
    try:
        result = fn(*args)
    finally:
        threading.Thread.start = original
    return len(started), result
