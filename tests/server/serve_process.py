"""`trackgrade serve` as a real child process on loopback, shared by every test
(and benchmark) that needs one: start it in its own session, read its
"serving on" line, keep draining its output, talk to it, kill/stop/restart it."""

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
DOCS_URL = "https://docs.example.test/e"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class ServeProcess:
    """`trackgrade serve --data DIR ...` (or `--database URL`) in its own session.

    `url` is set once it serves (None if it exited or timed out first, unless
    `require` is set: then it is killed and AssertionError carries its log).
    `port`: True for `--port 0`, False for no `--port`, an int for that port
    (so `restart()` comes back at the same URL). `env` is laid over the
    environment (plus `docs_url` unless None); names in `unset` are removed."""

    def __init__(self, data: Path | None, *extra: str, env: dict | None = None,
                 port: bool | int = True, timeout: float = 90, cwd: Path | None = None,
                 database: str | None = None, docs_url: str | None = DOCS_URL,
                 unset: tuple[str, ...] = (), require: bool = False,
                 stop_wait: float = 20) -> None:
        self.data = data
        self.extra = extra
        self.env = {**os.environ, **({"TRACKGRADE_DOCS_URL": docs_url} if docs_url else {}),
                    "PYTHONUNBUFFERED": "1", **(env or {})}
        for name in unset:
            self.env.pop(name, None)
        self.port = port
        self.timeout = timeout
        self.cwd = cwd
        self.database = database
        self.require = require
        self.stop_wait = stop_wait
        self.log: list[str] = []
        self.start()

    def _port_args(self) -> list[str]:
        if self.port is True:
            return ["--port", "0"]
        if self.port is False:
            return []
        return ["--port", str(self.port)]

    def start(self) -> None:
        args = CLI + ["serve", *(["--data", str(self.data)] if self.data is not None else []),
                      *(["--database", self.database] if self.database is not None else []),
                      *self._port_args(), *self.extra]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     env=self.env, start_new_session=True, text=True,
                                     cwd=self.cwd)
        self.url = None
        deadline = time.monotonic() + self.timeout
        while self.url is None and time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.log.append(line)
            match = re.search(r"serving on (http://\S+)", line)
            if match:
                self.url = match.group(1)
        if self.url is not None:   # keep draining so the server never blocks on a full pipe
            threading.Thread(target=lambda p=self.proc: self.log.extend(p.stdout),
                             daemon=True).start()
        elif self.require:
            self.kill()
            raise AssertionError("the server did not start:\n" + self.output)

    @property
    def output(self) -> str:
        return "".join(self.log)

    def kill(self) -> None:
        """SIGKILL to the whole session (the server and its worker processes)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(10)

    def stop(self) -> None:
        """SIGTERM, `stop_wait` seconds to exit, then SIGKILL to whatever is left."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(self.stop_wait)
            except subprocess.TimeoutExpired:
                self.kill()
        try:        # the worker processes share the session
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def restart(self, down_seconds: float = 0.0) -> None:
        """kill -9, stay down `down_seconds`, start again (same port if it was fixed)."""
        self.kill()
        time.sleep(down_seconds)
        self.start()


def make_key(mode: str, credits: int = 10, **store) -> tuple[str, str]:
    """(key, account id): a new pro account with `credits` and one key of
    `mode`, made in the store `open_store(**store)` opens (the data
    directory or the database the server processes use)."""
    from trackgrade.server import accounts
    from trackgrade.server.store import open_store

    opened = open_store(**store)
    try:
        account = accounts.create_account(opened, plan="pro", credits=credits)
        key, _ = accounts.create_key(opened, account["id"], mode=mode)
        return key, account["id"]
    finally:
        opened.close()


def admin(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(CLI + ["admin", *args], capture_output=True, text=True, timeout=60)
