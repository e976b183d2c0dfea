"""Issue 29, item 2, as a proof against a real `trackgrade serve`: an account
whose 16 endpoints trickle their answer (a status line, then a header byte
every 2 s, for ever) while TRACKGRADE_WEBHOOK_TIMEOUT is 3. Every attempt
ends at its total deadline, the attacker holds at most its share of the
delivery slots, another account's deliveries arrive at once, SIGTERM ends
the process within seconds with `server.lock` held until it has ended, and
after a restart every abandoned attempt is made again. (On the code before
the fix: the victim is never delivered, SIGTERM never ends the process and
the lock is free while it still runs.)"""

from __future__ import annotations

import pytest

from tests.webhooks.trickle import TIMEOUT_S, run_attack
from trackgrade.server.webhooks.slots import ACCOUNT_SHARE


@pytest.mark.slow(seconds=15)
def test_a_trickling_receiver_starves_no_one_and_sigterm_still_ends_the_server(tmp_path):
    report = run_attack(tmp_path / "data", victim_wait=8.0, exit_cap=15.0)
    print("\n" + "\n".join(report.lines()))
    assert all(x is not None for x in report.victim_latencies), report
    assert max(report.victim_latencies) < TIMEOUT_S, report   # never behind an attacker's attempt
    assert report.peak_trickling <= int(16 * ACCOUNT_SHARE) + 1, report
    assert report.sigterm_exit_s is not None and report.sigterm_exit_s < 5, report
    assert not report.lock_free_while_running, report
    assert report.acknowledged_after_restart == report.expected_after_restart, report
