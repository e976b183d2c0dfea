"""`trackgrade serve` as a real process: one server per data directory
(CONTRACT.md section 4), admin commands beside it, and TRACKGRADE_HOST /
TRACKGRADE_PORT honoured when no flag is given."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.server.serve_process import CLI, ServeProcess, admin, free_port
from tests.server.server_harness import request


def test_a_second_server_on_the_same_directory_refuses_with_one_line(tmp_path):
    first = ServeProcess(tmp_path, "--workers", "1")
    try:
        assert first.url, first.output
        second = subprocess.run(CLI + ["serve", "--data", str(tmp_path), "--port", "0"],
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 2
        assert second.stdout == ""
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1, second.stderr
        assert str(tmp_path) in lines[0] and "already serving" in lines[0]
        readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
        assert f"the same directory exits {second.returncode} with one line" in readme
        # the first server was not disturbed, and admin commands still work beside it
        assert request(first.url, "GET", "/v1/genres").status == 401
        on = admin("maintenance", "on", "--data", str(tmp_path))
        assert on.returncode == 0, on.stderr
        assert request(first.url, "GET", "/v1/genres").status == 503
        created = admin("keys", "create", "--data", str(tmp_path), "--mode", "test", "--json")
        assert created.returncode == 0, created.stderr
        assert first.proc.poll() is None
    finally:
        first.stop()
    # the lock dies with its server: the directory can be served again
    again = ServeProcess(tmp_path, "--workers", "1")
    try:
        assert again.url, again.output
    finally:
        again.stop()


def test_serve_listens_where_the_environment_says(tmp_path):
    port = free_port("127.0.0.2")
    served = ServeProcess(tmp_path, "--workers", "1", port=False,
                          env={"TRACKGRADE_HOST": "127.0.0.2", "TRACKGRADE_PORT": str(port)})
    try:
        assert served.url == f"http://127.0.0.2:{port}", served.output
        assert request(served.url, "GET", "/v1/openapi.json").status == 200
    finally:
        served.stop()


def test_flags_still_win_over_the_environment(tmp_path):
    served = ServeProcess(tmp_path, "--workers", "1", "--host", "127.0.0.1",
                          env={"TRACKGRADE_HOST": "127.0.0.2", "TRACKGRADE_PORT": "1"})
    try:
        assert served.url and served.url.startswith("http://127.0.0.1:"), served.output
    finally:
        served.stop()


def test_a_stopping_server_ends_even_when_a_thread_will_not():
    """`serve`'s last resort: once it is stopping, the process ends within
    the grace even if a (non-daemon) thread never returns, so neither the
    process nor its server.lock outlives the SIGTERM."""
    import sys
    import time

    code = ("import threading\n"
            "from trackgrade.server.serve import _end_within\n"
            "threading.Thread(target=threading.Event().wait).start()   # never ends\n"
            "_end_within(1.0)\n")
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=30)
    assert run.returncode == 1 and time.monotonic() - started < 10, run.stderr
    assert "did not stop within 1 s" in run.stderr
