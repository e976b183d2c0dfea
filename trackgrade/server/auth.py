"""Bearer-key authentication (spec section 5).

`authenticate(store, header, settings)` turns an `Authorization` header into
a `lifecycle.Caller`, or raises: 401 `invalid_api_key` for a missing,
malformed, unknown or revoked key; 403 `not_eligible` when the account's plan
lacks API access (free). Keys are looked up by hash on every request, and
the store catches up with other processes' writes on every read, so a
revocation by `trackgrade admin keys revoke` takes effect at once.
"""

from __future__ import annotations

from trackgrade.config import Settings
from trackgrade.errors import TrackgradeError
from trackgrade.server import accounts
from trackgrade.server.lifecycle import Caller
from trackgrade.server.ratelimit import limits_for
from trackgrade.server.store import Store



def bearer(header: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, else None."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        return None
    return token


def _unauthorized(message: str) -> TrackgradeError:
    return TrackgradeError("invalid_api_key", message,
                           headers={"WWW-Authenticate": 'Bearer realm="trackgrade"'})


def authenticate(store: Store, header: str | None, settings: Settings) -> Caller:
    """The caller behind an `Authorization` header (accounts.authenticate does
    the key checks); the limits are the settings' defaults per mode with the
    account's explicit overrides for live keys."""
    raw = bearer(header)
    if raw is None:
        raise _unauthorized("send your API key as `Authorization: Bearer svc_live_…` "
                            "(or svc_test_…)")
    try:
        key, account = accounts.authenticate(store, raw)
    except TrackgradeError as err:
        if err.code == "invalid_api_key":
            raise _unauthorized(err.message) from None
        raise
    return caller_for(key, account, settings)


def caller_for(key: dict, account: dict, settings: Settings) -> Caller:
    """The `Caller` of one key of an account: its mode, billing and effective
    limits (the developer console shows these for each key)."""
    livemode = bool(key.get("livemode"))
    defaults = limits_for(settings, "live" if livemode else "test")
    custom = (account.get("limits") or {}) if livemode else {}
    daily = custom.get("daily", defaults.daily)
    return Caller(
        key_id=key["id"], account_id=account["id"], livemode=livemode,
        credit_billed=accounts.is_credit_billed(key, account),
        per_minute=int(custom.get("per_minute", defaults.per_minute)),
        in_flight=int(custom.get("in_flight", defaults.in_flight)),
        daily=None if daily is None else int(daily),
    )
