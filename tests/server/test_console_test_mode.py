"""The console's report of a test key's analysis says first that it is a
canned test result; a live analysis's report does not (real HTTP, a real
waitress server, the console's own sign-in)."""

from __future__ import annotations

import pytest

from tests.server.server_harness import start, wav_bytes
from tests.server.test_console_backends import sign_in
from trackgrade.server.clock import SystemClock


@pytest.fixture(scope="module")
def server():
    s = start(clock=SystemClock(), test_rate_per_minute=10_000, test_in_flight=10)
    yield s
    s.stop()


@pytest.mark.parametrize("mode", ["test", "live"])
def test_the_console_report_of_a_canned_result_says_test_first(server, mode):
    key, account = server.key(mode)
    accepted = server.submit(key, "my track.wav").json
    server.upload(accepted, wav_bytes(2))
    server.wait(accepted["id"], key, until=lambda d: d["diagnosis_status"] == "ready")
    _, cookie, _ = sign_in(server, account)
    page = server.request("GET", f"/console/analyses/{accepted['id']}",
                          headers={"Cookie": cookie})
    assert page.status == 200, page.body
    html = page.body.decode()
    if mode == "test":
        assert html.index('id="test-mode"') < html.index("<header")
        assert "TEST MODE: a canned test result, not an analysis of this file" in html
    else:
        assert 'id="test-mode"' not in html and "canned" not in html.lower()
