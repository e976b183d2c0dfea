"""kill -9 of a real `trackgrade serve` while webhook deliveries are pending,
then restart: every event still arrives (same id, same body, valid
signatures made at their own time), and an acknowledged event is delivered
again at most once (only when the kill fell between the receiver's 2xx and
its record)."""

from __future__ import annotations


import pytest

from tests.webhooks.crashes import run_cycles


@pytest.mark.slow(seconds=11)
def test_deliveries_survive_kill_9_cycles(tmp_path):
    report = run_cycles(tmp_path / "data", cycles=3, analyses=4, seed=7)
    assert report.events >= 3 * 4                   # at least one event per analysis
    assert report.lost == 0, report
    assert report.acknowledged == report.events
    assert report.max_acks_per_event <= 2, report
    assert report.bad_signatures == 0 and report.changed_bodies == 0, report
