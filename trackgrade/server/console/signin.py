"""Sign-in for the developer console: one-time links and sessions.

    link     {"id": sha256 hex of the token, "kind": "link", "account_id",
              "created_at": unix, "expires_at": unix}
    session  {"id": sha256 hex of the token, "kind": "session", "account_id",
              "csrf": random text, "created_at": unix, "expires_at": unix}

Both live in the store's "sessions" collection under the SHA-256 of their
token: the tokens themselves (the link's, the session cookie's) exist only
in the URL handed to the developer and in their browser. A link is good for
LINK_TTL_S and once: `sign_in` deletes it in the transaction that creates
the session, so two uses of one link can never both succeed. A session lasts
SESSION_TTL_S; its `csrf` value is the hidden field of every console form.
Expired rows are pruned whenever a link is made or used.

Errors: TrackgradeError `not_found` (no such account) from `new_link`;
`SignInRefused` (the console answers 403) from `sign_in` for a used, expired
or unknown token.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from trackgrade.errors import TrackgradeError
from trackgrade.server.clock import Clock, SystemClock
from trackgrade.server.store import Store

LINK_TTL_S = 10 * 60
SESSION_TTL_S = 12 * 3600
LOGIN_PATH = "/console/login"
PRUNE_BATCH = 100


def token_id(token: str) -> str:
    """The stored id of a link or session token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Link:
    url: str
    expires_at: float


@dataclass(frozen=True)
class Session:
    token: str              # the cookie's value (only on the answer that signs in)
    account_id: str
    csrf: str
    expires_at: float


def _prune(txn, now: float) -> None:
    for row in txn.select("sessions.by_expiry", upto=(now,), limit=PRUNE_BATCH):
        txn.delete("sessions", row["id"])


def new_link(store: Store, account_id: str, base_url: str, *,
             clock: Clock | None = None) -> Link:
    """A one-time sign-in URL `<base_url>/console/login?token=…` for an
    existing account, valid LINK_TTL_S."""
    clock = clock or SystemClock()
    now = clock.time()
    token = secrets.token_urlsafe(32)
    with store.transaction() as txn:
        if txn.get("accounts", account_id) is None:
            raise TrackgradeError("not_found", f"no account {account_id!r}", param="account")
        _prune(txn, now)
        txn.put("sessions", {"id": token_id(token), "kind": "link", "account_id": account_id,
                             "created_at": now, "expires_at": now + LINK_TTL_S})
    return Link(f"{base_url.rstrip('/')}{LOGIN_PATH}?token={token}", now + LINK_TTL_S)


class SignInRefused(Exception):
    """A sign-in link that is used, expired or unknown (not an API error: the
    console answers it with a 403 page)."""


def _denied() -> SignInRefused:
    return SignInRefused("this sign-in link has been used, has expired or is unknown; "
                         "ask the operator for a new one")


def sign_in(store: Store, token: str | None, *, clock: Clock | None = None) -> Session:
    """Spend a link token on a new session (`SignInRefused` when it is not a
    live, unused link)."""
    clock = clock or SystemClock()
    now = clock.time()
    if not token or len(token) > 200:
        raise _denied()
    session_token = secrets.token_urlsafe(32)
    csrf = secrets.token_urlsafe(24)
    with store.transaction() as txn:
        link = txn.get("sessions", token_id(token))
        if link is None or link.get("kind") != "link":
            raise _denied()
        txn.delete("sessions", link["id"])          # once, used or expired
        _prune(txn, now)
        usable = float(link["expires_at"]) > now \
            and txn.get("accounts", link["account_id"]) is not None
        if usable:
            txn.put("sessions", {"id": token_id(session_token), "kind": "session",
                                 "account_id": link["account_id"], "csrf": csrf,
                                 "created_at": now, "expires_at": now + SESSION_TTL_S})
    if not usable:
        raise _denied()
    return Session(session_token, link["account_id"], csrf, now + SESSION_TTL_S)


def session_of(store: Store, token: str | None, *, clock: Clock | None = None) -> Session | None:
    """The live session a cookie value names, else None."""
    if not token or len(token) > 200:
        return None
    row = store.get("sessions", token_id(token))
    now = (clock or SystemClock()).time()
    if row is None or row.get("kind") != "session" or float(row["expires_at"]) <= now:
        return None
    if store.get("accounts", row["account_id"]) is None:
        return None
    return Session("", row["account_id"], row["csrf"], float(row["expires_at"]))


def csrf_ok(session: Session | None, given: str | None) -> bool:
    """Whether a form's `csrf` field is its session's (constant-time)."""
    return bool(session and given) and hmac.compare_digest(session.csrf.encode(),
                                                           str(given).encode())


def sign_out(store: Store, token: str | None) -> None:
    if token and len(token) <= 200:
        with store.transaction() as txn:
            txn.delete("sessions", token_id(token))
