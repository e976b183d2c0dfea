"""`trackgrade serve` as a real process on a chosen loopback port (so a
restarted server comes back at the same URL), with keys made through the
store like the admin command does."""

from __future__ import annotations

from pathlib import Path

from trackgrade.server import accounts
from trackgrade.server.store import open_store

from tests.server.serve_process import CLI, ServeProcess, free_port  # noqa: F401


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


class Served(ServeProcess):
    """One `trackgrade serve` process; `restart()` brings it back on the same port."""

    def __init__(self, data: Path, *extra: str, port: int | None = None,
                 env: dict | None = None) -> None:
        super().__init__(data, *extra, port=port or free_port(), env=env, timeout=60,
                         require=True, stop_wait=15)
        self.url = f"http://127.0.0.1:{self.port}"
