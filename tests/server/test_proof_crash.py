"""Crash proof (CONTRACT.md section 3): 20 cycles (two runs of 10, on two
data directories, so two test workers share them) of concurrent submissions
and uploads against a real `trackgrade serve`, each ended by SIGKILL at a
random moment while webhook deliveries are pending, then a restart on the
same data: the store always loads, every 202 and every accepted upload is
there, credits balance exactly (spent + restored = submissions), and every
event the store recorded is delivered after the last restart with a valid
signature. benchmarks/bench_hardening.py runs more."""

from __future__ import annotations


import pytest

from tests.server import crash_cycles


@pytest.mark.slow(seconds=28)
@pytest.mark.parametrize("seed", [9, 10])
def test_ten_sigkills_lose_nothing_acknowledged(tmp_path, seed):
    report = crash_cycles.run(tmp_path / "data", 10, seed=seed)
    assert report.problems == []
    assert report.cycles == 10
    assert report.accepted >= 20 and report.uploaded >= 10, report
    assert report.events >= 10 and report.events_delivered == report.events
    assert report.bad_signatures == 0 and report.attempts > report.events
