"""Crash proof (CONTRACT.md section 3): 20 cycles of concurrent submissions
and uploads against a real `trackgrade serve`, each ended by SIGKILL at a
random moment while webhook deliveries are pending, then a restart on the
same data: the store always loads, every 202 and every accepted upload is
there, credits balance exactly (spent + restored = submissions), and every
event the store recorded is delivered after the last restart with a valid
signature. benchmarks/bench_hardening.py runs more."""

from __future__ import annotations


import pytest

from tests.server import crash_cycles


@pytest.mark.slow
def test_twenty_sigkills_lose_nothing_acknowledged(tmp_path):
    report = crash_cycles.run(tmp_path / "data", 20, seed=9)
    assert report.problems == []
    assert report.cycles == 20
    assert report.accepted >= 40 and report.uploaded >= 20, report
    assert report.events >= 20 and report.events_delivered == report.events
    assert report.bad_signatures == 0 and report.attempts > report.events
