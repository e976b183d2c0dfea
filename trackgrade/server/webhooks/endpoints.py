"""Webhook endpoints: the developer console's operations (CONTRACT.md
sections 2 and 4), as library functions the admin CLI calls.

    endpoint {"id": "we_…", "object": "webhook_endpoint", "account_id", "url",
              "secret": "whsec_…", "previous_secrets": [{"secret", "expires_at"}],
              "enabled": bool, "created_at": iso, "last_attempt_at": unix|None,
              "last_status": int|None, "last_error": str|None,
              "disabled_at", "disabled_reason"}

Secrets are `whsec_` + base64 of 32 random bytes; each is returned once (by
`add_endpoint` and `rotate_secret`) and kept only for signing. Rotation keeps
the old secret for an overlap (default 86400 s) during which every delivery
carries one `v1=` entry (and one Standard Webhooks signature) per secret.
"""

from __future__ import annotations

from datetime import datetime, timezone

from trackgrade import signing
from trackgrade.errors import TrackgradeError
from trackgrade.server.clock import Clock, SystemClock, isoformat
from trackgrade.server.store import Store, new_id
from trackgrade.server.webhooks import state
from trackgrade.server.webhooks.addresses import check_url, redacted

DEFAULT_OVERLAP = 86400


def add_endpoint(store: Store, url: str, account_id: str, *,
                 clock: Clock | None = None, allow_private: bool = False) -> dict:
    """Register an endpoint (the rules of `addresses.check_url`; `allow_private`
    lets https:// reach private addresses); returns {"id", "url", "account",
    "secret"} (the URL as every listing shows it: `addresses.redacted`)."""
    check_url(url, allow_private=allow_private)
    clock = clock or SystemClock()
    doc = {"id": new_id("we"), "object": "webhook_endpoint", "account_id": account_id,
           "url": url, "secret": signing.new_secret(), "previous_secrets": [],
           "allow_private": bool(allow_private),
           "enabled": True, "created_at": isoformat(clock.now()), "last_attempt_at": None,
           "last_status": None, "last_error": None}
    with store.transaction() as txn:
        if txn.get("accounts", account_id) is None:
            raise TrackgradeError("not_found", f"no account {account_id!r}", param="account")
        txn.put("webhooks", doc)
    return {"id": doc["id"], "url": redacted(url), "account": account_id,
            "secret": doc["secret"]}


def public_view(endpoint: dict) -> dict:
    """What `admin webhooks list` shows (never a secret)."""
    return {"id": endpoint["id"], "url": redacted(endpoint["url"]),
            "account": endpoint["account_id"],
            "allow_private": bool(endpoint.get("allow_private", False)),
            "enabled": bool(endpoint.get("enabled", True)),
            "created": endpoint.get("created_at"),
            "last_attempt_at": endpoint.get("last_attempt_at"),
            "last_status": endpoint.get("last_status"),
            "last_error": endpoint.get("last_error"),
            "disabled_reason": endpoint.get("disabled_reason")}


def list_endpoints(store: Store, account_id: str | None = None) -> list[dict]:
    """The endpoints of one account (all when None), oldest first."""
    if account_id is not None:
        rows = store.select("webhooks.by_account", (account_id,))
    else:
        rows = sorted(store.scan("webhooks"), key=lambda e: (e.get("created_at") or "", e["id"]))
    return [public_view(row) for row in rows]


def _endpoint(txn, webhook_id: str) -> dict:
    endpoint = txn.get("webhooks", webhook_id)
    if endpoint is None:
        raise TrackgradeError("not_found", f"no webhook endpoint {webhook_id!r}",
                              param="webhook_id")
    return endpoint


def remove_endpoint(store: Store, webhook_id: str) -> dict:
    """Delete an endpoint; its pending deliveries are cancelled."""
    with store.transaction() as txn:
        endpoint = _endpoint(txn, webhook_id)
        cancelled = state.cancel_pending(txn, webhook_id)
        txn.delete("webhooks", webhook_id)
    return {**public_view(endpoint), "cancelled_deliveries": cancelled}


def rotate_secret(store: Store, webhook_id: str, *, overlap: int = DEFAULT_OVERLAP,
                  clock: Clock | None = None) -> dict:
    """A new secret (returned once); the old one keeps signing for `overlap`
    seconds (0: retired at once)."""
    if int(overlap) < 0:
        raise TrackgradeError("parameter_invalid", f"--overlap must be >= 0 seconds; given "
                              f"{overlap}", param="overlap")
    clock = clock or SystemClock()
    now = clock.time()
    with store.transaction() as txn:
        endpoint = _endpoint(txn, webhook_id)
        kept = [old for old in endpoint.get("previous_secrets") or ()
                if float(old.get("expires_at", 0)) > now]
        if overlap > 0:
            kept.insert(0, {"secret": endpoint["secret"], "expires_at": now + int(overlap)})
        endpoint.update(secret=signing.new_secret(), previous_secrets=kept)
        txn.put("webhooks", endpoint)
    return {"id": webhook_id, "url": redacted(endpoint["url"]), "secret": endpoint["secret"],
            "overlap": int(overlap), "old_secrets_valid_until": [
                isoformat(datetime.fromtimestamp(old["expires_at"], timezone.utc))
                for old in kept]}


def resend_event(store: Store, event_id: str, *, clock: Clock | None = None) -> dict:
    """Deliver a kept event again to every enabled endpoint of its account."""
    clock = clock or SystemClock()
    try:
        rows = state.resend(store, event_id, clock.time())
    except LookupError:
        raise TrackgradeError("not_found", f"no event {event_id!r} (only the most recent "
                              "delivered events are kept)", param="event_id") from None
    return {"event_id": event_id, "endpoints": [row["webhook_id"] for row in rows]}
