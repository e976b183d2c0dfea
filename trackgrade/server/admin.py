"""The developer console's operations, as library functions.

`trackgrade admin …` (trackgrade/cli/admin.py) parses, calls one of these on
the durable store of a data directory and prints the result. They are safe
while a server runs on the same directory: each is one store transaction,
and the server sees it on its next request.

Errors: TrackgradeError `not_found` (unknown key, account or analysis) and
`parameter_invalid` (a bad value); StoreError for an unusable directory.
"""

from __future__ import annotations

import os
from pathlib import Path

from trackgrade.errors import TrackgradeError
from trackgrade.server import accounts
from trackgrade.server.clock import Clock, SystemClock, isoformat
from trackgrade.server.store import Store, open_store
from trackgrade.server.webhooks import endpoints

DEFAULT_DATA_DIR = "./trackgrade-data"
MAINTENANCE_DOC = "maintenance"


def data_dir(value: str | os.PathLike | None, environ=os.environ) -> Path:
    """--data, else TRACKGRADE_DATA, else ./trackgrade-data."""
    return Path(value or environ.get("TRACKGRADE_DATA") or DEFAULT_DATA_DIR)


def database_url(value: str | None, data: str | os.PathLike | None = None,
                 environ=os.environ) -> str | None:
    """--database, else TRACKGRADE_DATABASE_URL unless --data was given."""
    if value:
        return value
    if data is None:
        return environ.get("TRACKGRADE_DATABASE_URL") or None
    return None


def open_database(url: str) -> Store:
    """The PostgreSQL store of the servers sharing `url` (schema migrated)."""
    return open_store(database=url, pool_size=2)


def open_data(path: str | os.PathLike) -> Store:
    """The durable store of a data directory (created when missing)."""
    return open_store(path)


def create_key(store: Store, *, mode: str = "live", plan: str | None = None,
               billing: str | None = None, credits: int | None = None,
               account_id: str | None = None, clock: Clock | None = None) -> dict:
    """Create a key, and an account unless `account_id` names one.

    New account: `plan` (default pro), `billing` (default credits),
    `credits` (default 0). Existing account: a given plan/billing replaces
    the account's, given credits are added. Returns
    {"key": plaintext (shown once), "key_id", "account", "mode"}."""
    clock = clock or SystemClock()
    with store.transaction() as txn:
        if account_id is None:
            account = accounts.new_account(plan=plan or "pro", billing=billing or "credits",
                                           credits=credits or 0, clock=clock)
            txn.put("accounts", account)
        else:
            account = txn.get("accounts", account_id)
            if account is None:
                raise TrackgradeError("not_found", f"no account {account_id!r}", param="account")
            changed = _update_account(account, plan, billing, credits)
            if changed:
                txn.put("accounts", account)
        key, doc = accounts.issue_key(txn, account["id"], mode=mode, clock=clock)
    return {"key": key, "key_id": doc["id"], "account": account["id"], "mode": mode}


def _update_account(account: dict, plan: str | None, billing: str | None,
                    credits: int | None) -> bool:
    probe = accounts.new_account(plan=plan or account.get("plan", "pro"),
                                 billing=billing or account.get("billing", "credits"),
                                 credits=credits or 0)
    changed = False
    for field in ("plan", "billing"):
        if account.get(field) != probe[field]:
            account[field] = probe[field]
            changed = True
    if credits:
        account["credits"] = int(account.get("credits", 0)) + int(credits)
        changed = True
    return changed


def revoke_key(store: Store, key_id: str, *, clock: Clock | None = None) -> dict:
    """Revoke at once; returns the key document (no secret in it)."""
    return accounts.revoke_key(store, key_id, clock=clock)


def list_keys(store: Store, account_id: str | None = None) -> list[dict]:
    """Every key (of one account when given) with its account's plan, billing
    and balance, oldest first (never secrets)."""
    if account_id is None:
        owners = {a["id"]: a for a in store.scan("accounts")}
        keys = sorted(store.scan("keys"), key=lambda k: (k.get("created_at") or "", k["id"]))
    else:
        owners = {account_id: store.get("accounts", account_id) or {}}
        keys = store.select("keys.by_account", (account_id,))
    rows = []
    for key in keys:
        account = owners.get(key["account_id"], {})
        rows.append({"key_id": key["id"], "account": key["account_id"], "mode": key.get("mode"),
                     "hint": key.get("hint"), "created_at": key.get("created_at"),
                     "revoked_at": key.get("revoked_at"),
                     "last_used_at": key.get("last_used_at"), "plan": account.get("plan"),
                     "billing": account.get("billing"), "credits": account.get("credits")})
    return rows


def console_base_url(given: str | None, environ=os.environ) -> str:
    """Where the console's sign-in links point: --base-url, else the server's
    public_base_url (TRACKGRADE_PUBLIC_BASE_URL), else http://host:port of
    TRACKGRADE_HOST / TRACKGRADE_PORT (default 127.0.0.1:8080)."""
    from trackgrade.config import load_settings

    if given:
        if not given.startswith(("http://", "https://")):
            raise TrackgradeError("parameter_invalid", f"--base-url must start with http:// or "
                                  f"https:// (given {given!r})", param="base_url")
        return given.rstrip("/")
    try:
        settings = load_settings(environ)
    except ValueError as exc:
        raise TrackgradeError("parameter_invalid", str(exc), param="base_url") from None
    if settings.public_base_url:
        return settings.public_base_url.rstrip("/")
    host = settings.host if settings.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{settings.port}"


def console_link(store: Store, account_id: str, base_url: str, *,
                 clock: Clock | None = None) -> dict:
    """A one-time developer-console sign-in URL for an account (10 minutes,
    single use; only its hash is stored): {"url", "expires_at"}."""
    from datetime import datetime, timezone

    from trackgrade.server.console import signin

    link = signin.new_link(store, account_id, base_url, clock=clock)
    return {"url": link.url,
            "expires_at": isoformat(datetime.fromtimestamp(link.expires_at, timezone.utc))}


def add_credits(store: Store, account_id: str, amount: int, *,
                clock: Clock | None = None) -> dict:
    """Top up; returns the account."""
    return accounts.add_credits(store, account_id, amount, clock=clock)


def check_webhook_url(url: str, *, allow_private: bool = False) -> str:
    """The rules of `webhooks.addresses.check_url` (no credentials, https://,
    private addresses only with `allow_private`, http:// to loopback)."""
    return endpoints.check_url(url, allow_private=allow_private)


def add_webhook(store: Store, url: str, account_id: str, *,
                clock: Clock | None = None, allow_private: bool = False) -> dict:
    """Register an endpoint; returns {"id", "url", "account", "secret"} (the
    `whsec_` secret is the HMAC key of every delivery). The other webhook
    operations live in trackgrade.server.webhooks.endpoints."""
    return endpoints.add_endpoint(store, url, account_id, clock=clock,
                                  allow_private=allow_private)


def set_embed(store: Store, analysis_id: str, on: bool) -> dict:
    """The owner's public-badge switch on one analysis; returns the row."""
    with store.transaction() as txn:
        row = txn.get("analyses", analysis_id)
        if row is None:
            raise TrackgradeError("not_found", f"no analysis {analysis_id!r}", param="analysis_id")
        if row.get("embed") is not bool(on):
            row["embed"] = bool(on)
            txn.put("analyses", row)
    return row


def set_maintenance(store: Store, on: bool, *, clock: Clock | None = None) -> dict:
    """The 503 switch a running server reads on every request."""
    clock = clock or SystemClock()
    doc = {"id": MAINTENANCE_DOC, "on": bool(on), "changed_at": isoformat(clock.now())}
    with store.transaction() as txn:
        txn.put("settings", doc)
    return doc


MIGRATE_BATCH = 1000


def migrate(source: Store, target: Store, *, batch: int = MIGRATE_BATCH,
            progress=None) -> dict[str, dict]:
    """Copy every document of an embedded store (`source`: a data directory's)
    into a PostgreSQL store (`target`), `batch` documents per transaction,
    then verify that each collection holds as many documents on both sides.

    Re-running converges (documents are upserted by id). Returns
    {collection: {"source": n, "target": m}}; raises TrackgradeError
    `migration_mismatch`-style `parameter_invalid` when a count differs."""
    from trackgrade.server.store import COLLECTIONS

    counts: dict[str, dict] = {}
    for collection in COLLECTIONS:
        copied = 0
        pending: list[dict] = []
        for doc in source.iter_docs(collection):
            pending.append(doc)
            if len(pending) >= batch:
                copied += _copy(target, collection, pending)
                if progress is not None:
                    progress(collection, copied)
        copied += _copy(target, collection, pending)
        counts[collection] = {"source": copied, "target": target.size(collection)}
    bad = {c: n for c, n in counts.items() if n["source"] != n["target"]}
    if bad:
        detail = ", ".join(f"{c}: {n['source']} copied, {n['target']} in the database"
                           for c, n in bad.items())
        raise TrackgradeError("parameter_invalid", f"the database holds other documents "
                              f"than the data directory ({detail}); migrate into an empty "
                              f"database", param="database")
    return counts


def _copy(target: Store, collection: str, docs: list[dict]) -> int:
    if not docs:
        return 0
    with target.transaction() as txn:
        for doc in docs:
            txn.put(collection, doc)
    copied = len(docs)
    docs.clear()
    return copied
