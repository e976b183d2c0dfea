"""Fuzzing the HTTP surface with schemathesis from the server's own OpenAPI
document (all checks, stateful via the document's links), with a test key
and a live key: no failure, no 5xx. Bounded here; benchmarks/bench_hardening.py
runs it longer. Hand-written hostile requests are in test_proof_http_hostile.py."""

from __future__ import annotations


import pytest

from tests.server import fuzzing


@pytest.mark.slow(seconds=15)
@pytest.mark.parametrize("mode", ["test", "live"])
def test_schemathesis_finds_nothing(mode):
    result = fuzzing.run(mode, max_examples=12, seed=20261123)
    assert result.exit_code == 0 and result.failures == [] and result.errors == [], result.output
    assert result.generated >= 200, result.output
    assert result.server_errors == 0 and result.server_exceptions == 0, result.statuses
    assert result.served >= result.generated
    if mode == "test":      # the links reached the upload step with valid tokens
        assert result.uploads_accepted >= 1, result.statuses
