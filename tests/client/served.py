"""`trackgrade serve` as a real process on a chosen loopback port (so a
restarted server comes back at the same URL), with keys made through the
store like the admin command does."""

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

from trackgrade.server import accounts
from trackgrade.server.store import open_store

CLI = [sys.executable, "-m", "trackgrade"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_key(data: Path, mode: str = "test", *, credits: int = 0,
             limits: dict | None = None) -> tuple[str, str]:
    """(secret, account id) of a new pro account and key in `data`."""
    store = open_store(data)
    try:
        account = accounts.create_account(store, plan="pro", credits=credits)
        if limits:
            with store.transaction() as txn:
                doc = txn.get("accounts", account["id"])
                doc["limits"] = dict(limits)
                txn.put("accounts", doc)
        key, _ = accounts.create_key(store, account["id"], mode=mode)
        return key, account["id"]
    finally:
        store.close()


def credits(data: Path, account_id: str) -> int:
    store = open_store(data)
    try:
        return int(store.get("accounts", account_id)["credits"])
    finally:
        store.close()


class Served:
    """One `trackgrade serve` process; `restart()` brings it back on the same port."""

    def __init__(self, data: Path, *extra: str, port: int | None = None,
                 env: dict | None = None) -> None:
        self.data = data
        self.extra = extra
        self.port = port or free_port()
        self.env = {**os.environ, "TRACKGRADE_DOCS_URL": "https://docs.example.test/e",
                    "PYTHONUNBUFFERED": "1", **(env or {})}
        self.url = f"http://127.0.0.1:{self.port}"
        self.log: list[str] = []
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            CLI + ["serve", "--data", str(self.data), "--port", str(self.port), *self.extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=self.env,
            start_new_session=True, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.log.append(line)
            if re.search(r"serving on http://", line):
                threading.Thread(target=lambda p=self.proc: self.log.extend(p.stdout),
                                 daemon=True).start()
                return
        raise AssertionError("server did not start:\n" + "".join(self.log))

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()

    def restart(self, down_seconds: float = 0.0) -> None:
        self.kill()
        time.sleep(down_seconds)
        self.start()
