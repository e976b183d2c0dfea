"""GET /account (CONTRACT.md section 4): the calling key's account, limits
and usage, so a client can pace itself before it meets a 429.

`limits` are the calling key's effective ceilings (test keys: the test
limits; live keys: the live defaults with the account's overrides) and
`usage` the same key's counters: analyses created today (UTC) and analyses
in flight (from POST until complete or failed). `credits_remaining` is the
account's balance when this key spends credits (a live key on credits
billing), else null.
"""

from __future__ import annotations

from flask import Blueprint

from trackgrade.errors import TrackgradeError
from trackgrade.server import queries
from trackgrade.server.clock import isoformat, utc_day_start
from trackgrade.server.envelope import json_response
from trackgrade.server.lifecycle import Caller
from trackgrade.server.routes.common import authenticated, reject_unknown_query


def account_document(ctx, caller: Caller) -> dict:
    """The Account object of CONTRACT.md section 4 for one authenticated caller."""
    account = ctx.store.get("accounts", caller.account_id)
    if account is None:   # a key whose account vanished cannot authenticate; belt and braces
        raise TrackgradeError("invalid_api_key", "this key's account no longer exists")
    day = isoformat(utc_day_start(ctx.clock.now()))
    return {
        "object": "account",
        "id": account["id"],
        "plan": account.get("plan"),
        "billing": account.get("billing"),
        "livemode": caller.livemode,
        "credits_remaining": int(account.get("credits", 0)) if caller.credit_billed else None,
        "limits": {"rate_per_minute": caller.per_minute, "in_flight": caller.in_flight,
                   "daily_quota": caller.daily},
        "usage": {"today": queries.count_analyses_since(ctx.store, caller.key_id, day),
                  "in_flight": queries.count_in_flight(ctx.store, caller.key_id)},
    }


def blueprint(ctx) -> Blueprint:
    bp = Blueprint("account", __name__)

    @bp.get("/account")
    @authenticated(ctx)
    def get_account(caller: Caller):
        reject_unknown_query(())
        return json_response(account_document(ctx, caller), 200)

    return bp
