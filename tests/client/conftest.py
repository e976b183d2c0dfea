"""Fixtures for the client and `remote` tests: real servers on loopback.

`harness`: the server of tests/server/server_harness.py (real waitress and
app in a thread, injected clock) for the retry and limit tests. `Served`
(served.py): `trackgrade serve` as a real process."""

from __future__ import annotations


