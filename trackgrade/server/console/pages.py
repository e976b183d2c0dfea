"""What each console page shows, read from the store through the same
library functions as `trackgrade admin` and the v1 routes (no Flask here).

Every lookup by id goes through an `owned_*` function: a thing of another
account (or no such thing) is TrackgradeError `not_found`, which the console
answers 404, exactly like the API.
"""

from __future__ import annotations

from datetime import datetime, timezone

from trackgrade.display import score_tier
from trackgrade.errors import TrackgradeError
from trackgrade.server import admin, documents, queries
from trackgrade.server.auth import caller_for
from trackgrade.server.lifecycle.rows import AWAITING_UPLOAD
from trackgrade.server.routes.account import account_document
from trackgrade.server.routes.common import is_uuid
from trackgrade.server.webhooks import endpoints

PAGE_SIZE = 20
DELIVERY_LOG_SIZE = 50
MODES = ("live", "test")


def when(value) -> str:
    """An ISO text or Unix time as `2026-11-27 22:41 UTC` ("" for none)."""
    if value in (None, ""):
        return ""
    if isinstance(value, (int, float)):
        moment = datetime.fromtimestamp(float(value), timezone.utc)
    else:
        try:
            moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            return str(value)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _missing(kind: str, given: str, param: str) -> TrackgradeError:
    return TrackgradeError("not_found", f"no {kind} {given!r} in this account", param=param)


def owned_key(store, account_id: str, key_id: str) -> dict:
    key = store.get("keys", key_id) if key_id.startswith("key_") else None
    if key is None or key.get("account_id") != account_id:
        raise _missing("API key", key_id, "key_id")
    return key


def owned_endpoint(store, account_id: str, endpoint_id: str) -> dict:
    endpoint = store.get("webhooks", endpoint_id) if endpoint_id.startswith("we_") else None
    if endpoint is None or endpoint.get("account_id") != account_id:
        raise _missing("webhook endpoint", endpoint_id, "endpoint_id")
    return endpoint


def owned_event(store, account_id: str, event_id: str) -> dict:
    event = store.get("events", event_id) if 0 < len(event_id) <= 100 else None
    if event is None or event.get("account_id") != account_id:
        raise _missing("event", event_id, "event_id")
    return event


def owned_analysis(store, account_id: str, analysis_id: str) -> dict:
    row = store.get("analyses", analysis_id) if is_uuid(analysis_id) else None
    if row is None or row.get("account_id") != account_id:
        raise _missing("analysis", analysis_id, "id")
    return row


def overview(ctx, account_id: str) -> dict:
    """The account (plan, billing, credits) and, per active key, today's
    usage against its limits: the v1 `GET /account` document of each key."""
    account = ctx.store.get("accounts", account_id) or {"id": account_id}
    usage = []
    for key in ctx.store.select("keys.by_account", (account_id,)):
        if key.get("revoked_at"):
            continue
        doc = account_document(ctx, caller_for(key, account, ctx.settings))
        usage.append({"hint": key.get("hint"), "mode": key.get("mode"),
                      "limits": doc["limits"], "usage": doc["usage"]})
    credit_billed = account.get("billing") == "credits"
    return {"account": {"id": account["id"], "plan": account.get("plan"),
                        "billing": account.get("billing"),
                        "credits": int(account.get("credits", 0)) if credit_billed else None,
                        "eligible": account.get("plan") != "free"},
            "usage": usage}


def keys(store, account_id: str) -> list[dict]:
    return [{**row, "created": when(row["created_at"]), "last_used": when(row["last_used_at"]),
             "revoked": when(row["revoked_at"])}
            for row in reversed(admin.list_keys(store, account_id))]


def webhooks(store, account_id: str) -> list[dict]:
    return [{**row, "created_text": when(row["created"]),
             "last_attempt": when(row["last_attempt_at"])}
            for row in reversed(endpoints.list_endpoints(store, account_id))]


def endpoint_log(store, account_id: str, endpoint_id: str) -> dict:
    """One endpoint (as `admin webhooks list` shows it) and its newest
    deliveries: event id, type, state, attempts, last status, next retry."""
    endpoint = endpoints.public_view(owned_endpoint(store, account_id, endpoint_id))
    rows = store.select("deliveries.by_webhook", (endpoint_id,), newest_first=True,
                        limit=DELIVERY_LOG_SIZE)
    log = []
    for row in rows:
        event = store.get("events", row["event_id"])
        retry = row["next_attempt_at"] if row["state"] == "pending" else None
        log.append({"event_id": row["event_id"], "type": event["type"] if event else "",
                    "kept": event is not None, "state": row["state"],
                    "attempts": row["attempts"], "last_status": row.get("last_status"),
                    "last_error": row.get("last_error") or "",
                    "last_attempt": when(row.get("last_attempt_at")),
                    "next_retry": when(retry) if retry is not None else "",
                    "created": when(row.get("created"))})
    return {"endpoint": {**endpoint, "created_text": when(endpoint["created"])}, "log": log}


def analyses(store, account_id: str, mode: str, *, after: str | None = None,
             before: str | None = None) -> dict:
    """One page of the account's analyses of one mode, newest first, with
    the ids that page older (`after`) and newer (`before`)."""
    livemode = mode == "live"
    after = after if is_uuid(after or "") else None
    before = before if is_uuid(before or "") and after is None else None
    try:
        rows, more = queries.list_analyses(store, account_id, livemode, PAGE_SIZE,
                                           starting_after=after, ending_before=before)
    except TrackgradeError:          # a cursor of another account or mode
        raise _missing("analysis", after or before or "", "id") from None
    items = [analysis_item(row) for row in rows]
    older = rows[-1]["id"] if rows and (more if before is None else True) else None
    newer = rows[0]["id"] if rows and ((after is not None) if before is None else more) else None
    return {"items": items, "older": older, "newer": newer}


def analysis_item(row: dict) -> dict:
    doc = documents.document(row)
    complete = row["status"] == "complete"
    grade = doc.get("grade") or {}
    genre = doc.get("genre") or {}
    return {"id": row["id"], "file_name": row["file_name"], "status": row["status"],
            "external_id": row.get("external_id"),
            "score": doc.get("score") if complete else None,
            "tier": score_tier(doc["score"]) if complete and "score" in doc else "",
            "grade": grade.get("letter", "") if complete else "",
            "genre": genre.get("name", "") if complete else "",
            "error": (doc.get("error") or {}).get("code", "") if row["status"] == "failed" else "",
            "created": when(row["created_at"]), "complete": complete,
            "cancelable": row["status"] == "processing" and row.get("phase") == AWAITING_UPLOAD,
            "embed": bool(row.get("embed")), "livemode": bool(row.get("livemode"))}


def embed_snippet(base_url: str, analysis_id: str) -> str:
    """The `<iframe>` of an analysis's public badge (the md size, 320x92)."""
    return (f'<iframe src="{base_url}/v1/embed/{analysis_id}" width="320" height="92" '
            f'style="border:0" title="trackgrade score"></iframe>')
