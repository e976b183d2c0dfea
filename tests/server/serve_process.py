"""`trackgrade serve` as a real child process on loopback, for the hardening
tests: start it, read its "serving on" line, talk to it, kill it."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

CLI = [sys.executable, "-m", "trackgrade"]


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class ServeProcess:
    """`trackgrade serve --data DIR ...` in its own session; `url` once it serves."""

    def __init__(self, data: Path, *extra: str, env: dict | None = None,
                 port: bool = True, timeout: float = 90) -> None:
        self.env = {**os.environ, "TRACKGRADE_DOCS_URL": "https://docs.example.test/e",
                    "PYTHONUNBUFFERED": "1", **(env or {})}
        args = CLI + ["serve", "--data", str(data), *(["--port", "0"] if port else []), *extra]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     env=self.env, start_new_session=True, text=True)
        self.log: list[str] = []
        self.url = None
        deadline = time.monotonic() + timeout
        while self.url is None and time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.log.append(line)
            match = re.search(r"serving on (http://\S+)", line)
            if match:
                self.url = match.group(1)
        if self.url is not None:   # keep draining so the server never blocks on a full pipe
            threading.Thread(target=lambda: self.log.extend(self.proc.stdout),
                             daemon=True).start()

    @property
    def output(self) -> str:
        return "".join(self.log)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
        try:        # the worker processes share the session
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def admin(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(CLI + ["admin", *args], capture_output=True, text=True, timeout=60)
