"""Proof: one key holder cannot hold the server's body budget against everyone
else (issue 29 item 1), on a real `trackgrade serve` on loopback.

The attack of tests/server/tenant_attacks.py, scaled down by configuration
(1 MiB uploads, a 2.5 MiB body budget, a 8 s upload token): before, the
attacker's three trickled uploads held the whole budget and every other
tenant's 27-byte `POST /v1/analyses` was answered 503 `engine_at_capacity`
for as long as the trickle ran (the token's expiry did not end it). Now a
key holds at most its share: the victim is answered 202 throughout, the
attacker's uploads past its share are refused (503 naming the share), and
the one it holds is closed when its token expires."""

from __future__ import annotations

import pytest

from tests.server.tenant_attacks import body_budget_attack


@pytest.mark.slow(seconds=20)
def test_a_key_holder_trickling_uploads_never_blocks_another_tenant(tmp_path):
    ttl = 8
    result = body_budget_attack(tmp_path / "data", token_ttl=ttl, victim_for=ttl + 3.0)
    print("\n" + result.summary())
    assert result.victim and result.statuses() == {202: len(result.victim)}, result.summary()
    assert max(result.latencies_ms) < 5000, result.summary()      # answered, never held
    held = [t for t in result.trickles if t.refused is None]
    refused = [t for t in result.trickles if t.refused is not None]
    assert len(held) == 1 and len(refused) == 2, result.summary()
    assert all(t.refused == 503 and t.refusal["code"] == "engine_at_capacity"
               and "share" in t.refusal["message"] for t in refused), result.summary()
    # the held upload ends with its token (plus the once-a-second check), not
    # whenever the attacker stops
    assert held[0].closed_after is not None and held[0].closed_after < ttl + 3, result.summary()
