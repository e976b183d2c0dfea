"""`trackgrade remote …` honours --timeout as a bound on the whole command and
says on stderr what it waits for (CONTRACT section 5 via issue 18). Before:
against a server in maintenance (503 + Retry-After 30) it sat silent for
92 s (three retries of 30 s), ignoring --timeout."""

from __future__ import annotations

import re
import time
import uuid

import pytest
from typer.testing import CliRunner

from tests.server.server_harness import start, wav_bytes

from trackgrade.cli import app  # noqa: E402
from trackgrade.client import APIError, Client  # noqa: E402


@pytest.fixture(scope="module")
def maintenance():
    s = start(maintenance=True, retry_after=30)
    s.test_key = s.key("test")[0]
    yield s
    s.stop()


def run(server, *args):
    env = {"TRACKGRADE_BASE_URL": server.url, "TRACKGRADE_API_KEY": server.test_key}
    started = time.monotonic()
    result = CliRunner().invoke(app, list(args), env=env)
    return result, time.monotonic() - started


def test_remote_analyze_gives_up_within_its_timeout_and_says_why(maintenance, tmp_path):
    track = tmp_path / "t.wav"
    track.write_bytes(wav_bytes(2))
    result, seconds = run(maintenance, "remote", "analyze", str(track), "--wait",
                          "--timeout", "3")
    assert seconds < 6, f"took {seconds:.1f} s"
    assert result.exit_code != 0
    assert "service_unavailable" in result.stderr and "not retried" in result.stderr
    assert re.search(r"next try would start in 3\d s", result.stderr), result.stderr


@pytest.mark.parametrize("command", [("status", "{id}"), ("get", "{id}"), ("cancel", "{id}"), ("list",),
                                     ("account",)])
def test_every_remote_command_takes_a_timeout(maintenance, command):
    args = [part.format(id=uuid.uuid4()) for part in command]
    result, seconds = run(maintenance, "remote", *args, "--timeout", "2")
    assert seconds < 5 and result.exit_code != 0
    assert "service_unavailable" in result.stderr


def test_each_retry_wait_is_announced_on_stderr_and_bounded():
    """Retry-After 1: the client waits and says so on stderr each time; with
    --timeout 3 it stops after about three seconds, not after all retries."""
    s = start(maintenance=True, retry_after=1)
    try:
        key = s.key("test")[0]
        started = time.monotonic()
        result = CliRunner().invoke(app, ["remote", "list", "--timeout", "3"], env={
            "TRACKGRADE_BASE_URL": s.url, "TRACKGRADE_API_KEY": key})
        seconds = time.monotonic() - started
    finally:
        s.stop()
    waits = [line for line in result.stderr.splitlines() if "retrying in" in line]
    assert waits and "503 service_unavailable" in waits[0]
    assert "Retry-After" in waits[0]
    assert seconds < 5.5 and result.exit_code != 0


def test_the_client_deadline_bounds_wait_too():
    s = start(maintenance=True, retry_after=1)
    try:
        seen = []
        client = Client(s.key("test")[0], s.url, deadline=time.monotonic() + 2,
                        on_wait=lambda error, seconds: seen.append((error.code, seconds)))
        started = time.monotonic()
        with pytest.raises(APIError):
            client.analyses.wait(str(uuid.uuid4()), timeout=60)
        assert time.monotonic() - started < 4
        assert seen and seen[0][0] == "service_unavailable"
    finally:
        s.stop()
