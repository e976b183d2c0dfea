"""Accounts, API keys and credits (spec sections 1, 5, 6.4; CONTRACT.md).

Documents (collections "accounts" and "keys" of the store):

    account  {"id": "acct_…", "object": "account", "plan": "free|pro|studio|partner",
              "billing": "credits|comp|metered", "credits": int >= 0,
              "low_balance_threshold": 5, "limits": {}, "created_at": iso}
             `limits` holds only explicit overrides of the live-key defaults
             ({"per_minute": 30, "in_flight": 1, "daily": 500}); test keys
             always get 100/min, 20 in flight, no daily quota.
    key      {"id": "key_…", "object": "api_key", "account_id", "mode": "live|test",
              "livemode": bool, "hash": sha256 hex of the whole key,
              "hint": "svc_live_AbCd…wxyz", "created_at": iso, "revoked_at": iso|None,
              "last_used_at": iso|None (to the minute: `note_use`)}

A key is `svc_live_<secret>` / `svc_test_<secret>` with a 43-character
urlsafe random secret (256 bits). Only its SHA-256 is stored (a fast hash is
right for a high-entropy secret); lookups go by hash and the match is
confirmed with `hmac.compare_digest`. Revocation is one store write, which
every process sees on its next read.

Credits: `spend_credit` / `restore_credit` run inside the caller's
transaction (so the analysis row, the balance and the outbox event commit
together); the balance never goes below zero (`insufficient_credits`, 402,
nothing spent). `credit.balance.low` is emitted each time a change takes the
balance from above the account's threshold to at or below it (6 -> 5 sends,
5 -> 4 does not; a top-up above re-arms it by construction).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from trackgrade.errors import TrackgradeError
from trackgrade.server.clock import Clock, SystemClock, isoformat
from trackgrade.server.store import Store, StoreError, Txn, new_event, new_id

PLANS = ("free", "pro", "studio", "partner")
ELIGIBLE_PLANS = frozenset({"pro", "studio", "partner"})
BILLING = ("credits", "comp", "metered")
MODES = ("live", "test")
LOW_BALANCE_THRESHOLD = 5
KEY_PATTERN = re.compile(r"svc_(live|test)_[A-Za-z0-9_\-]{32,200}")


@dataclass(frozen=True)
class Limits:
    """The effective limits of one key (None: no daily quota)."""
    per_minute: int
    in_flight: int
    daily: int | None


LIVE_LIMITS = Limits(per_minute=30, in_flight=1, daily=500)
TEST_LIMITS = Limits(per_minute=100, in_flight=20, daily=None)


def hash_key(key: str) -> str:
    """The stored form of an API key: SHA-256 hex of the whole key."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def key_hint(key: str) -> str:
    """A recognisable, non-secret rendering: `svc_live_AbCd…wxyz`."""
    prefix = key[:9]
    secret = key[9:]
    return f"{prefix}{secret[:4]}…{secret[-4:]}"


def _check_choice(value: str, choices: tuple[str, ...], param: str) -> str:
    if value not in choices:
        raise TrackgradeError("parameter_invalid",
                              f"{param} must be one of {', '.join(choices)}; given {value!r}",
                              param=param)
    return value


def new_account(*, plan: str = "pro", billing: str = "credits", credits: int = 0,
                clock: Clock | None = None, account_id: str | None = None) -> dict:
    """An account document (not stored)."""
    _check_choice(plan, PLANS, "plan")
    _check_choice(billing, BILLING, "billing")
    if int(credits) < 0:
        raise TrackgradeError("parameter_invalid", f"credits must be >= 0; given {credits}",
                              param="credits")
    clock = clock or SystemClock()
    return {"id": account_id or new_id("acct"), "object": "account", "plan": plan,
            "billing": billing, "credits": int(credits),
            "low_balance_threshold": LOW_BALANCE_THRESHOLD, "limits": {},
            "created_at": isoformat(clock.now())}


def create_account(store: Store, *, plan: str = "pro", billing: str = "credits",
                   credits: int = 0, clock: Clock | None = None) -> dict:
    """Create and store an account; returns its document."""
    account = new_account(plan=plan, billing=billing, credits=credits, clock=clock)
    with store.transaction() as txn:
        txn.put("accounts", account)
    return account


def create_key(store: Store, account_id: str, *, mode: str = "live",
               clock: Clock | None = None) -> tuple[str, dict]:
    """Create a key for an existing account: (plaintext key, key document).
    The plaintext exists only in the return value."""
    with store.transaction() as txn:
        return issue_key(txn, account_id, mode=mode, clock=clock)


def issue_key(txn: Txn, account_id: str, *, mode: str = "live",
              clock: Clock | None = None) -> tuple[str, dict]:
    """`create_key` inside an open transaction."""
    _check_choice(mode, MODES, "mode")
    if txn.get("accounts", account_id) is None:
        raise TrackgradeError("not_found", f"no account {account_id!r}", param="account")
    clock = clock or SystemClock()
    key = f"svc_{mode}_{secrets.token_urlsafe(32)}"
    doc = {"id": new_id("key"), "object": "api_key", "account_id": account_id,
           "mode": mode, "livemode": mode == "live", "hash": hash_key(key),
           "hint": key_hint(key), "created_at": isoformat(clock.now()), "revoked_at": None}
    txn.put("keys", doc)
    return key, doc


def authenticate(store: Store, bearer: str | None) -> tuple[dict, dict]:
    """(key document, account document) for a presented API key.

    `bearer` is the key itself (a leading "Bearer " is tolerated). Raises
    TrackgradeError `invalid_api_key` (401) for a missing, malformed,
    unknown or revoked key, `not_eligible` (403) for a free-plan account."""
    token = (bearer or "").strip()
    if token[:7].lower() == "bearer ":
        token = token[7:].strip()
    if not KEY_PATTERN.fullmatch(token):
        raise TrackgradeError("invalid_api_key", "the API key is missing or malformed; "
                              "keys look like svc_live_… or svc_test_…")
    digest = hash_key(token)
    key = store.find("keys.hash", digest)
    if key is None or not hmac.compare_digest(key.get("hash", ""), digest) \
            or key.get("revoked_at"):
        raise TrackgradeError("invalid_api_key", "the API key is unknown or has been revoked")
    account = store.get("accounts", key["account_id"])
    if account is None:
        raise TrackgradeError("invalid_api_key", "the API key's account no longer exists")
    if account.get("plan") not in ELIGIBLE_PLANS:
        raise TrackgradeError("not_eligible", "this account's plan does not include API access; "
                              "upgrade to Pro or Studio (or ask about partner access)")
    return key, account


NOTE_USE_EVERY_S = 60.0
_noted: dict[str, float] = {}      # key id -> when this process last wrote its last use


def note_use(store: Store, key_id: str, clock: Clock) -> None:
    """Record when a key was last used (the console's "last used"): at most
    one small write per key per minute per process, never for a revoked key."""
    now = clock.time()
    if now - _noted.get(key_id, float("-inf")) < NOTE_USE_EVERY_S:
        return
    _noted[key_id] = now
    try:
        with store.transaction(durable=False) as txn:
            key = txn.get("keys", key_id)
            if key is not None and not key.get("revoked_at"):
                key["last_used_at"] = isoformat(clock.now())
                txn.put("keys", key)
    except StoreError:          # a store that cannot write (disk full): reads still answer
        _noted.pop(key_id, None)


def key_limits(key: dict, account: dict) -> Limits:
    """The effective limits: test keys fixed; live keys the defaults with the
    account's overrides ("per_minute", "in_flight", "daily")."""
    if not key.get("livemode"):
        return TEST_LIMITS
    custom = account.get("limits") or {}
    daily = custom.get("daily", LIVE_LIMITS.daily)
    return Limits(per_minute=int(custom.get("per_minute", LIVE_LIMITS.per_minute)),
                  in_flight=int(custom.get("in_flight", LIVE_LIMITS.in_flight)),
                  daily=None if daily is None else int(daily))


def revoke_key(store: Store, key_id: str, *, clock: Clock | None = None) -> dict:
    """Revoke a key at once (idempotent: a revoked key keeps its first
    revocation time). Unknown id: TrackgradeError `not_found`."""
    clock = clock or SystemClock()
    with store.transaction() as txn:
        key = txn.get("keys", key_id)
        if key is None:
            raise TrackgradeError("not_found", f"no API key {key_id!r}", param="key_id")
        if not key.get("revoked_at"):
            key["revoked_at"] = isoformat(clock.now())
            txn.put("keys", key)
    return key


def is_credit_billed(key: dict, account: dict) -> bool:
    """Whether an analysis by this key spends a credit (live + credits billing)."""
    return bool(key.get("livemode")) and account.get("billing") == "credits"


def _change_balance(txn: Txn, account: dict, delta: int, clock: Clock) -> dict:
    before = int(account.get("credits", 0))
    after = before + delta
    account["credits"] = after
    txn.put("accounts", account)
    threshold = int(account.get("low_balance_threshold", LOW_BALANCE_THRESHOLD))
    if before > threshold >= after:
        txn.put("events", new_event(
            "credit.balance.low", {"credits_remaining": after, "threshold": threshold},
            account_id=account["id"], livemode=True, created=clock.time()))
    return account


def _account(txn: Txn, account_id: str) -> dict:
    account = txn.get("accounts", account_id)
    if account is None:
        raise TrackgradeError("not_found", f"no account {account_id!r}", param="account")
    return account


def spend_credit(txn: Txn, account_id: str, *, amount: int = 1,
                 clock: Clock | None = None) -> dict:
    """Take `amount` credits inside `txn`; returns the updated account.
    Only for credit-billed use (see `is_credit_billed`). Raises
    `insufficient_credits` (402) and changes nothing when the balance is short."""
    account = _account(txn, account_id)
    if int(account.get("credits", 0)) < amount:
        raise TrackgradeError("insufficient_credits", "the account has no credits left; "
                              "top up to submit more analyses")
    return _change_balance(txn, account, -int(amount), clock or SystemClock())


def restore_credit(txn: Txn, account_id: str, *, amount: int = 1,
                   clock: Clock | None = None) -> dict:
    """Give back `amount` credits inside `txn` (a failed analysis)."""
    return _change_balance(txn, _account(txn, account_id), int(amount), clock or SystemClock())


def add_credits(store: Store, account_id: str, amount: int, *,
                clock: Clock | None = None) -> dict:
    """Top up an account (admin); returns the updated account."""
    if int(amount) <= 0:
        raise TrackgradeError("parameter_invalid", f"--add must be a positive number of "
                              f"credits; given {amount}", param="add")
    with store.transaction() as txn:
        return _change_balance(txn, _account(txn, account_id), int(amount),
                               clock or SystemClock())
